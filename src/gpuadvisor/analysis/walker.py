"""The one walk over a module that gathers every fact the rules read.

A single `CSTVisitor` pass, in source order: it keeps the import table and the name
bindings current, evaluates expressions as it meets them (see `evaluate.py`), and records
transfers, syncs, clock reads, GPU work, loops, thread launches and environment writes with
the context each was seen in. Rules run afterwards, on the finished `ModuleFacts`.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gpuadvisor.analysis import knowledge as kb
from gpuadvisor.analysis.array_ops import OperationFinder
from gpuadvisor.analysis.evaluate import DEVICE_PARAMETER_NAMES, MAYBE_GPU_DEVICE, Evaluator, Scope
from gpuadvisor.analysis.facts import (
    Context,
    CreateThenMove,
    EnvWrite,
    Event,
    EventKind,
    FunctionFacts,
    ImportSeen,
    IteratingBuiltin,
    LoopFacts,
    LoopNode,
    ModuleFacts,
    SyncPoint,
    ThreadLaunch,
    Transfer,
)
from gpuadvisor.analysis.imports import ImportTable, dotted_name, keyword_arg, literal_string, positional_arg
from gpuadvisor.analysis.traverse import ReadOnlyVisitor
from gpuadvisor.analysis.values import Kind, Value

_MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "update", "add", "remove", "clear", "setdefault", "sort", "reverse", "fill", "put"}
)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def gather_facts(module: cst.Module) -> ModuleFacts:
    walker = FactWalker(module)
    for statement in module.body:
        walker.top_statement = statement
        walker.walk(statement)
    walker.finish()
    return walker.facts


def _names_in_target(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names_in_target(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _names_in_target(target.value)
    elif isinstance(target, (cst.Attribute, cst.Subscript)):
        base = target.value
        while isinstance(base, (cst.Attribute, cst.Subscript)):
            base = base.value
        if isinstance(base, cst.Name):
            yield base.value
        dotted = dotted_name(target) if isinstance(target, cst.Attribute) else None
        if dotted is not None:
            yield dotted


def _copies_to_host(method: str, receiver: Value, result: Value | None) -> bool:
    """`.cpu()`, `.numpy()`, `.copy_to_host()`, CuPy's `.get()`, `.to("cpu")` of a device array."""
    if method in kb.D2H_METHODS or (method == "get" and receiver.library == "cupy"):
        return True
    return method == "to" and result is not None and not result.on_gpu


class FactWalker(ReadOnlyVisitor):
    def __init__(self, module: cst.Module) -> None:
        imports = ImportTable()
        module_scope = FunctionFacts("<module>", None, None)
        self.facts = ModuleFacts(module=module, imports=imports, module_scope=module_scope)
        self.facts.scopes.append(module_scope)
        self.values = Evaluator(imports, self.facts.values)
        self.operations = OperationFinder(self.values.evaluate, imports)
        self._scope = module_scope
        self._loop: LoopFacts | None = None
        self._guards: tuple[cst.BaseExpression, ...] = ()
        self._compiled = False
        self._context_cache: Context | None = None
        self._saved: list[tuple[FunctionFacts, LoopFacts | None, tuple[cst.BaseExpression, ...], bool]] = []
        # (name, is a threading.Thread subclass, the scope its body's defs are made in)
        self._classes: list[tuple[str, bool, FunctionFacts]] = []
        self._outer_guards: list[tuple[cst.BaseExpression, ...]] = []
        self._assigned_name: dict[cst.BaseExpression, str] = {}
        self._order = 0
        self.top_statement: cst.CSTNode | None = None  # set by gather_facts

    def _remember(self, node: cst.CSTNode) -> None:
        """Note the top-level statement holding a node a rule may report (for positions)."""
        if self.top_statement is not None:
            self.facts.statement_of[node] = self.top_statement

    # -- context ----------------------------------------------------------------------------
    def context(self) -> Context:
        if self._context_cache is None:
            self._context_cache = Context(self._scope, self._loop, self._guards, self._compiled)
        return self._context_cache

    def _set_state(self, loop: LoopFacts | None, guards: tuple[cst.BaseExpression, ...]) -> None:
        self._loop, self._guards, self._context_cache = loop, guards, None

    def _tick(self) -> int:
        self._order += 1
        return self._order

    def _event(self, kind: EventKind, node: cst.CSTNode, key: str) -> None:
        self._remember(node)
        self._scope.events.append(Event(kind, node, key, self.context()))
        if kind is EventKind.GPU_WORK and self._loop is not None:
            self._loop.gpu_ops += 1

    def _mark_varying(self, name: str) -> None:
        loop = self._loop
        while loop is not None:
            loop.varying.add(name)
            loop = loop.parent

    def _bind(self, target: cst.BaseExpression, value: Value | None, value_node: cst.BaseExpression | None) -> None:
        for name in _names_in_target(target):
            self._mark_varying(name)
        if isinstance(target, cst.Name):
            self.values.store(target.value, value)
        elif isinstance(target, cst.Attribute):
            dotted = dotted_name(target)
            if dotted is not None:
                self.values.store(dotted, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            sources = value_node.elements if isinstance(value_node, (cst.Tuple, cst.List)) else None
            if sources is not None and len(sources) == len(elements):
                for element, source in zip(elements, sources):
                    self._bind(element.value, self.values.evaluate(source.value), source.value)
            else:
                for element in elements:
                    self._bind(element.value, None, None)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, None, None)

    # -- imports and definitions ------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for module in self.facts.imports.add_import(node):
            self.facts.imported.append(ImportSeen(module, self._tick(), self._scope))
        for alias in node.names:
            local = alias.evaluated_alias or dotted_name(alias.name)
            if local:
                self.values.store(local.split(".")[0], None)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        for module in self.facts.imports.add_import_from(node):
            self.facts.imported.append(ImportSeen(module, self._tick(), self._scope))

    def _decorator_names(self, decorators: tuple[cst.Decorator, ...] | list[cst.Decorator]) -> set[str]:
        names = set()
        for decorator in decorators:
            expr = decorator.decorator
            if isinstance(expr, cst.Call):
                expr = expr.func
            qualname = self.facts.imports.qualified_name(expr)
            if qualname is not None:
                names.add(qualname)
        return names

    def _enter_function(self, facts: FunctionFacts, params: cst.Parameters) -> None:
        self._saved.append((self._scope, self._loop, self._guards, self._compiled))
        self._scope = facts
        self._compiled = self._compiled or facts.compiled
        self._set_state(None, ())
        self.facts.scopes.append(facts)
        scope = Scope()
        for param in (*params.params, *params.posonly_params, *params.kwonly_params):
            is_device = param.name.value in DEVICE_PARAMETER_NAMES
            scope.bindings[param.name.value] = MAYBE_GPU_DEVICE if is_device else None
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.bindings[star.name.value] = None
        self.values.scopes.append(scope)

    def _leave_function(self) -> None:
        self.values.scopes.pop()
        scope, loop, guards, compiled = self._saved.pop()
        self._scope, self._compiled = scope, compiled
        self._set_state(loop, guards)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        decorators = self._decorator_names(node.decorators)
        owner = self._classes[-1][0] if self._classes and self._classes[-1][2] is self._scope else None
        key = f"{owner}.{name}" if owner else name
        facts = FunctionFacts(
            key,
            node,
            self._scope,
            compiled=bool(decorators & kb.COMPILING_DECORATORS),
            cuda_kernel=bool(decorators & kb.CUDA_KERNEL_DECORATORS),
        )
        self.facts.functions.setdefault(key, facts)
        if owner and name == "run" and self._classes[-1][1]:
            self.facts.thread_subclasses[owner] = facts
        if not owner:
            self.facts.imports.define_locally(name)
            self.values.store(name, None)
        self._enter_function(facts, node.params)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._leave_function()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        facts = FunctionFacts("<lambda>", node, self._scope)
        self.facts.lambdas[node] = facts
        self._enter_function(facts, node.params)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._leave_function()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        name = node.name.value
        bases = {self.facts.imports.qualified_name(base.value) for base in node.bases}
        is_thread = "threading.Thread" in bases
        if bases & {"torch.nn.Module", "torch.nn.modules.module.Module"}:
            self.values.module_classes.add(name)
        self.facts.imports.define_locally(name)
        self._classes.append((name, is_thread, self._scope))
        if is_thread:
            self.facts.thread_subclasses.setdefault(name, None)
        self.values.class_attributes.append({})

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()
        self.values.class_attributes.pop()

    # -- loops and guards -------------------------------------------------------------------
    def _bind_loop_target(self, loop: LoopFacts, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        iter_value = self.values.evaluate(iterable)
        loop.targets.update(n for n in _names_in_target(target) if "." not in n)
        element: Value | None = iter_value if iter_value is not None and iter_value.is_array else None
        qualname = (
            self.facts.imports.qualified_name(iterable.func) if isinstance(iterable, cst.Call) else None
        )
        if qualname in ("builtins.range", "builtins.enumerate"):
            loop.counts_indices = True
        if qualname == "builtins.enumerate" and isinstance(iterable, cst.Call) and iterable.args:
            inner = self.values.evaluate(iterable.args[0].value)
            if inner is not None and inner.is_array:
                iter_value = inner
            if isinstance(target, cst.Tuple) and len(target.elements) == 2:
                self._bind(target.elements[0].value, None, None)
                self._bind(target.elements[1].value, inner if inner is not None and inner.is_array else None, None)
                loop.iter_value = iter_value
                loop.varying.update(loop.targets)
                return
        loop.iter_value = iter_value
        self._bind(target, element, None)
        loop.varying.update(loop.targets)

    def visit_For(self, node: cst.For) -> None:
        self.values.evaluate(node.iter)

    def _enter_loop(self, node: LoopNode) -> LoopFacts:
        """Guards are tracked per innermost loop: saved on entry, restored on exit."""
        loop = LoopFacts(node=node, parent=self._loop, function=self._scope)
        self._remember(node)
        self._remember(loop.header_end())
        if self._loop is not None:
            self._loop.has_inner_loop = True
        self.facts.loops.append(loop)
        self._scope.has_loop = True
        self._outer_guards.append(self._guards)
        self._set_state(loop, ())
        return loop

    def _exit_loop(self) -> None:
        assert self._loop is not None
        self._set_state(self._loop.parent, self._outer_guards.pop())

    def visit_For_body(self, node: cst.For) -> None:
        loop = self._enter_loop(node)
        self._bind_loop_target(loop, node.target, node.iter)

    def leave_For_body(self, node: cst.For) -> None:
        self._exit_loop()

    def visit_While(self, node: cst.While) -> None:
        self._enter_loop(node)
        self._check_condition(node.test, "a GPU value as the `while` condition")

    def leave_While(self, original_node: cst.While) -> None:
        self._exit_loop()

    def _visit_comprehension(self, node: LoopNode) -> None:
        loop = self._enter_loop(node)
        self.values.scopes.append(Scope())
        comp_for: cst.CompFor | None = node.for_in  # type: ignore[union-attr]
        while comp_for is not None:
            self._bind_loop_target(loop, comp_for.target, comp_for.iter)
            comp_for = comp_for.inner_for_in

    def _leave_comprehension(self, node: LoopNode) -> None:
        self.values.scopes.pop()
        self._exit_loop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension

    def visit_If(self, node: cst.If) -> None:
        self._check_condition(node.test, "a GPU value as an `if` condition")

    def visit_If_body(self, node: cst.If) -> None:
        self._set_state(self._loop, self._guards + (node.test,))

    def leave_If_body(self, node: cst.If) -> None:
        self._set_state(self._loop, self._guards[:-1])

    def visit_If_orelse(self, node: cst.If) -> None:
        self._set_state(self._loop, self._guards + (node.test,))

    def leave_If_orelse(self, node: cst.If) -> None:
        self._set_state(self._loop, self._guards[:-1])

    def visit_Assert(self, node: cst.Assert) -> None:
        self._check_condition(node.test, "a GPU value in an `assert`")

    def _check_condition(self, test: cst.BaseExpression, what: str) -> None:
        """A GPU value used as a Python truth value forces `bool()`: a device->host sync."""
        operands = [test]
        while operands:
            expr = operands.pop()
            if isinstance(expr, cst.BooleanOperation):
                operands += [expr.left, expr.right]
            elif isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
                operands.append(expr.expression)
            else:
                value = self.values.evaluate(expr)
                if value is not None and value.is_gpu_array:
                    self._sync_point(expr, what)

    def _sync_point(self, node: cst.CSTNode, what: str) -> None:
        self._remember(node)
        self.facts.syncs.append(SyncPoint(node, what, self.context()))
        self._event(EventKind.SYNC, node, "sync")

    # -- assignments ------------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            name = dotted_name(node.targets[0].target)
            if name is not None:
                self._assigned_name[node.value] = name

    def _record_operations(self, expression: cst.BaseExpression | None) -> None:
        if expression is None or self._compiled:
            return
        for operation in self.operations.operations(expression):
            self._remember(operation.node)
            self.facts.array_operations.append((operation, self.context()))

    def leave_Expr(self, original_node: cst.Expr) -> None:
        self._record_operations(original_node.value)

    def leave_Return(self, original_node: cst.Return) -> None:
        self._record_operations(original_node.value)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._record_operations(original_node.value)
        value = self.values.evaluate(original_node.value)
        for target in original_node.targets:
            self._record_env_subscript(target.target)
            self._bind(target.target, value, original_node.value)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self._record_operations(original_node.value)
        if original_node.value is not None:
            self._bind(original_node.target, self.values.evaluate(original_node.value), original_node.value)

    def leave_AugAssign(self, original_node: cst.AugAssign) -> None:
        self._scope.has_arithmetic = True
        target_value = self.values.evaluate(original_node.target)
        value = self.values.evaluate(original_node.value)
        arrays = [v for v in (target_value, value) if v is not None and v.is_array]
        if any(v.on_gpu for v in arrays):
            self._event(EventKind.GPU_WORK, original_node, type(original_node.operator).__name__)
        for name in _names_in_target(original_node.target):
            self._mark_varying(name)
        if isinstance(original_node.target, cst.Name) and target_value is None and arrays:
            self.values.store(original_node.target.value, arrays[0])

    def leave_NamedExpr(self, original_node: cst.NamedExpr) -> None:
        self._bind(original_node.target, self.values.evaluate(original_node.value), original_node.value)

    def leave_WithItem(self, original_node: cst.WithItem) -> None:
        if original_node.asname is not None:
            value = self.values.evaluate(original_node.item)
            self._bind(original_node.asname.name, value, None)

    def _record_env_subscript(self, target: cst.BaseExpression) -> None:
        if not isinstance(target, cst.Subscript) or len(target.slice) != 1:
            return
        if self.facts.imports.qualified_name(target.value) != "os.environ":
            return
        index = target.slice[0].slice
        key = literal_string(index.value) if isinstance(index, cst.Index) else None
        if key in kb.THREAD_ENV_VARS:
            self._remember(target)
            self.facts.env_writes.append(EnvWrite(target, key, self._tick()))

    # -- expressions ------------------------------------------------------------------------
    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Subtract) and isinstance(node.left, cst.Call):
            self.facts.elapsed_reads.add(node.left)

    def leave_BinaryOperation(self, original_node: cst.BinaryOperation) -> None:
        self._scope.has_arithmetic = True
        value = self.values.evaluate(original_node)
        if value is not None and value.is_gpu_array:
            self._event(EventKind.GPU_WORK, original_node, type(original_node.operator).__name__)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        base = self.values.evaluate(node.value)
        if base is None or not base.is_gpu_array or self._loop is None:
            return
        indices = []
        for element in node.slice:
            if not isinstance(element.slice, cst.Index) or not isinstance(element.slice.value, cst.Name):
                return
            indices.append(element.slice.value.value)
        loop = self._loop
        while loop is not None:
            if loop.targets.intersection(indices):
                loop.element_reads.append(node)
            loop = loop.parent

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        value = self.values.evaluate(node.expression)
        if value is not None and value.is_gpu_array:
            self._sync_point(node.expression, "formatting a GPU value in an f-string")

    def leave_Call(self, original_node: cst.Call) -> None:
        node = original_node
        self._remember(node)
        func = node.func
        imports = self.facts.imports
        qualname = imports.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        receiver = self.values.evaluate(func.value) if isinstance(func, cst.Attribute) else None
        result = self.values.evaluate(node)
        arg_values = [self.values.evaluate(arg.value) for arg in node.args]
        gpu_args = [v for v in arg_values if v is not None and v.is_gpu_array]

        local = self._local_callee(func)
        if local is not None:
            self._scope.callees.append(f"local.{local}")
        else:
            self._scope.callees.append(qualname or (f"method.{method}" if method else None))
        if local is not None:
            if local == self._scope.name:
                self._scope.is_recursive = True
            self._event(EventKind.LOCAL_CALL, node, local)
            if gpu_args:  # a helper of this file handed GPU arrays runs GPU work
                self._event(EventKind.GPU_WORK, node, local)
        if method is not None and (method in _MUTATING_METHODS or method.endswith("_")):
            for name in _names_in_target(func.value):  # type: ignore[union-attr]
                self._mark_varying(name)

        if qualname in kb.CLOCKS:
            self._event(EventKind.CLOCK, node, qualname)
        elif qualname in kb.TIMEIT_CALLS:
            first = positional_arg(node)
            work = self.facts.lambdas.get(first) if isinstance(first, cst.Lambda) else None
            if work is None and isinstance(first, cst.Name):
                work = self.facts.functions.get(first.value)
            self.facts.timeit_calls.append((node, self.context(), work))

        is_sync = self._classify_sync(node, qualname, method, receiver, result, gpu_args)
        is_work = self._classify_work(node, qualname, method, receiver, result)
        if is_sync:
            self._event(EventKind.SYNC, node, "sync")
        elif is_work is not None:
            self._event(EventKind.GPU_WORK, node, is_work)

        self._record_transfer(node, qualname, method, receiver, result)
        if qualname in kb.ITERATING_BUILTINS and arg_values and arg_values[0] is not None and arg_values[0].is_gpu_array:
            self.facts.iterating_builtins.append(IteratingBuiltin(node, qualname.removeprefix("builtins.")))
        self._record_threads(node, qualname, method, receiver)
        self._record_env_call(node, qualname)
        if self._loop is not None and not self._is_transparent_call(qualname, receiver):
            loop = self._loop
            while loop is not None:
                loop.has_opaque_call = True
                loop = loop.parent

    def _local_callee(self, func: cst.BaseExpression) -> str | None:
        """Name (as in `facts.functions`) of the function of this file a call runs, if any."""
        imports = self.facts.imports
        if isinstance(func, cst.Name) and func.value in imports.local_definitions:
            return func.value
        if isinstance(func, cst.Subscript) and isinstance(func.value, cst.Name):
            return func.value.value if func.value.value in imports.local_definitions else None
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
            and self._classes
        ):
            return f"{self._classes[-1][0]}.{func.attr.value}"
        return None

    @staticmethod
    def _is_transparent_call(qualname: str | None, receiver: Value | None) -> bool:
        """A call whose cost we can see: an array-library function, a builtin, math, or an array method."""
        if receiver is not None and receiver.is_array:
            return True
        if qualname is not None:
            return kb.library_of(qualname) is not None or qualname.split(".")[0] in ("builtins", "math")
        return False

    def _classify_sync(
        self,
        node: cst.Call,
        qualname: str | None,
        method: str | None,
        receiver: Value | None,
        result: Value | None,
        gpu_args: list[Value],
    ) -> bool:
        if qualname in kb.EXPLICIT_SYNCS or method == "synchronize":
            return True
        if receiver is not None and receiver.is_device_array and method is not None:
            if method in kb.SCALAR_SYNC_METHODS:
                self._sync_point(node, f"`.{method}()`")
                return True
            if _copies_to_host(method, receiver, result):
                return True
        if gpu_args and (qualname in kb.SYNCING_BUILTINS or qualname in kb.FORMATTING_BUILTINS):
            self._sync_point(node, f"`{qualname.removeprefix('builtins.')}()` of a GPU value")
            return True
        if gpu_args and method == "format" and isinstance(node.func, cst.Attribute) and isinstance(
            node.func.value, (cst.SimpleString, cst.ConcatenatedString)
        ):
            self._sync_point(node, "formatting a GPU value with `str.format`")
            return True
        return False

    def _classify_work(
        self,
        node: cst.Call,
        qualname: str | None,
        method: str | None,
        receiver: Value | None,
        result: Value | None,
    ) -> str | None:
        """The key of the GPU work this call launches, or None when it launches none."""
        if isinstance(node.func, cst.Subscript) and isinstance(node.func.value, cst.Name):
            kernel = self.facts.functions.get(node.func.value.value)
            if kernel is not None and kernel.cuda_kernel:
                return node.func.value.value
        if receiver is not None and receiver.is_gpu_array and method is not None:
            if method in kb.METADATA_METHODS or method in kb.MODULE_ONLY_METHODS or method.startswith(("is_", "has_")):
                return None
            return f".{method}"
        if receiver is not None and receiver.kind is Kind.MODULE:
            return None  # .to()/.eval() on a module: no kernel worth timing
        if result is not None and result.is_gpu_array:
            if qualname is not None:
                return qualname
            return dotted_name(node.func) or "call"
        return None

    def _record_transfer(
        self, node: cst.Call, qualname: str | None, method: str | None, receiver: Value | None, result: Value | None
    ) -> None:
        func = node.func
        assigned = self._assigned_name.get(node)
        ctx = self.context()
        if isinstance(func, cst.Attribute) and qualname is None:
            source = func.value
            is_module = receiver is not None and receiver.kind is Kind.MODULE
            already_on_gpu = receiver is not None and receiver.is_gpu_array
            moves_to_gpu = method == "cuda" or (method == "to" and result is not None and result.on_gpu)
            if moves_to_gpu and not is_module and not already_on_gpu:
                self.facts.transfers.append(Transfer(node, "h2d", source, ctx, assigned, receiver))
                self._record_create_then_move(node, source)
                return
            if receiver is not None and receiver.is_gpu_array and _copies_to_host(method, receiver, result):
                self.facts.transfers.append(Transfer(node, "d2h", source, ctx, assigned, receiver))
            return
        first = positional_arg(node)
        if qualname is None or first is None:
            return
        first_value = self.values.evaluate(first)
        if qualname in ("torch.tensor", "torch.as_tensor") and result is not None and result.on_gpu:
            if first_value is None or not first_value.on_gpu:
                self.facts.transfers.append(Transfer(node, "h2d", first, ctx, assigned, first_value))
        elif qualname in ("cupy.asarray", "cupy.array", "numba.cuda.to_device"):
            if first_value is None or not first_value.on_gpu:
                self.facts.transfers.append(Transfer(node, "h2d", first, ctx, assigned, first_value))
        elif qualname == "cupy.asnumpy":
            self.facts.transfers.append(Transfer(node, "d2h", first, ctx, assigned, first_value))

    def _record_create_then_move(self, node: cst.Call, source: cst.BaseExpression) -> None:
        if not isinstance(source, cst.Call) or keyword_arg(source, "device") is not None:
            return
        factory = self.facts.imports.qualified_name(source.func) if isinstance(source.func, (cst.Name, cst.Attribute)) else None
        if factory is None or not factory.startswith("torch."):
            return
        name = factory.removeprefix("torch.")
        if name in kb.TORCH_FACTORIES and name not in ("from_numpy", "as_tensor"):
            self.facts.create_then_move.append(CreateThenMove(node, factory, source))

    def _record_threads(self, node: cst.Call, qualname: str | None, method: str | None, receiver: Value | None) -> None:
        func = node.func
        if qualname == "threading.Thread":
            work = keyword_arg(node, "target") or positional_arg(node, 1)
            self._add_thread_launch(node, "threading.Thread(target=...)", work)
        elif receiver is not None and receiver.kind is Kind.THREAD_POOL and method in kb.POOL_SUBMIT_METHODS:
            self._add_thread_launch(node, f"thread pool `.{method}()`", positional_arg(node))
        elif isinstance(func, cst.Name) and func.value in self.facts.thread_subclasses:
            run = self.facts.thread_subclasses[func.value]
            if run is not None:
                self.facts.thread_launches.append(ThreadLaunch(node, f"`{func.value}` (a threading.Thread subclass)", None, run.name))

    def _add_thread_launch(self, node: cst.Call, how: str, work: cst.BaseExpression | None) -> None:
        if isinstance(work, cst.Call) and self.facts.imports.qualified_name(work.func) == "functools.partial":
            work = positional_arg(work)
        function = None
        if isinstance(work, cst.Name):
            function = work.value
        elif isinstance(work, cst.Attribute) and isinstance(work.value, cst.Name) and work.value.value == "self" and self._classes:
            function = f"{self._classes[-1][0]}.{work.attr.value}"
        self.facts.thread_launches.append(ThreadLaunch(node, how, work, function))

    def _record_env_call(self, node: cst.Call, qualname: str | None) -> None:
        if qualname in ("os.environ.setdefault", "os.putenv"):
            first = positional_arg(node)
            key = literal_string(first) if first is not None else None
            if key in kb.THREAD_ENV_VARS:
                self.facts.env_writes.append(EnvWrite(node, key, self._tick()))
        elif qualname == "os.environ.update":
            keys = [arg.keyword.value for arg in node.args if arg.keyword is not None]
            first = positional_arg(node)
            if isinstance(first, cst.Dict):
                keys += [literal_string(el.key) or "" for el in first.elements if isinstance(el, cst.DictElement)]
            for key in keys:
                if key in kb.THREAD_ENV_VARS:
                    self.facts.env_writes.append(EnvWrite(node, key, self._tick()))
                    break

    # -- after the walk ---------------------------------------------------------------------
    def finish(self) -> None:
        """Summarise each function (launches GPU work? synchronises?) through local calls."""
        scopes = self.facts.scopes
        for scope in scopes:
            scope.launches_gpu = any(e.kind is EventKind.GPU_WORK for e in scope.events)
            scope.synchronizes = any(e.kind is EventKind.SYNC for e in scope.events)
        changed = True
        while changed:
            changed = False
            for scope in scopes:
                for event in scope.events:
                    callee = self.facts.function_called(event)
                    if callee is None:
                        continue
                    if callee.launches_gpu and not scope.launches_gpu:
                        scope.launches_gpu = changed = True
                    if callee.synchronizes and not scope.synchronizes:
                        scope.synchronizes = changed = True

