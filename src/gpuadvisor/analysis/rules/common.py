"""Small questions several rules ask about expressions, answered the same way for all."""

from __future__ import annotations

from typing import TypeVar

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.settings import values_bound_to
from gpuadvisor.analysis.facts.module_facts import Context, Event, EventKind, FunctionFacts, LoopFacts, ModuleFacts
from gpuadvisor.analysis.facts.values import Value
from gpuadvisor.analysis.facts.imports import names_in_target, referenced_names
from gpuadvisor.analysis.facts.traverse import calls_in, child_nodes, own_nodes


def has_opaque_call(expr: cst.CSTNode, facts: ModuleFacts) -> bool:
    """Does the expression call something whose result may differ from call to call?"""
    for call in calls_in(expr):
        qualname = facts.imports.qualified_name(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
        if qualname is not None and (
            qualname.rsplit(".", 1)[-1] in kb.RANDOM_FUNCTIONS
            or qualname.startswith(kb.RANDOM_MODULES)
            or qualname in kb.DEVICE_STATE_READS
            or qualname in kb.STATEFUL_BUILTINS
        ):
            return True  # new random data, the memory the device holds now, an iterator's next item, on every call
        if qualname is not None and (kb.library_of(qualname) or qualname.startswith("builtins.")):
            continue
        if isinstance(call.func, cst.Attribute):
            if call.func.attr.value in kb.SAME_DATA_METHODS:
                continue  # `arr.astype(np.float32)`: the same data typed or laid out anew, the same each call
            receiver = facts.value(call.func.value)
            if receiver is not None and receiver.is_array:
                continue
        return True
    return False


def plain_array(value: Value | None) -> bool:
    """An array we know to be one, not an object with fields that may be a model or a pipeline."""
    return value is not None and value.is_array and not value.holds_fields


def is_loop_invariant(expr: cst.BaseExpression, loop: LoopFacts, facts: ModuleFacts) -> bool:
    """True when nothing the expression reads changes from one iteration to the next."""
    if referenced_names(expr) & loop.varying:
        return False
    return not has_opaque_call(expr, facts)


def launches_gpu(event: Event, facts: ModuleFacts) -> bool:
    """GPU work, or a call of a function that launches some."""
    if event.kind is EventKind.GPU_WORK:
        return True
    callee = facts.function_called(event)
    return callee is not None and callee.launches_gpu


def written_by_kernels_in(copied: Value | None, ctx: Context, loop: LoopFacts, facts: ModuleFacts) -> bool:
    """A Warp array read back in a loop that launches GPU work (`wp.launch`, a graph replay, a
    call of a function that launches): kernels write their arrays in place, so the data may be new
    on every iteration although no assignment in the loop names it."""
    if copied is None or copied.library not in kb.IN_PLACE_KERNEL_LIBRARIES:
        return False
    return any(loop in event.ctx.loops() and launches_gpu(event, facts) for event in ctx.function.events)


def guarded_by_iteration(guards: tuple[cst.BaseExpression, ...], loop: LoopFacts) -> bool:
    """Inside `if <something that changes per iteration>:` (lazy init, `if step % 100 == 0`).
    A test that the data is not empty (`n = b.shape[0]; if n:`) holds on nearly every
    iteration, so it makes nothing rare."""
    scope = loop.function.node or _outermost(loop).node  # module code: the loop binds what varies
    return any(referenced_names(test) & loop.varying and not _tests_for_data(test, scope) for test in guards)


def _outermost(loop: LoopFacts) -> LoopFacts:
    while loop.parent is not None:
        loop = loop.parent
    return loop


#: Methods and attributes that give an array's size.
_SIZE_READS = frozenset({"shape", "size", "numel", "nelement", "__len__"})


def _tests_for_data(test: cst.BaseExpression, scope: cst.CSTNode) -> bool:
    """`if n:`, `if n > 0:`, `if len(x):`, `if x.shape[0]:`, with `n` bound only to sizes in
    `scope`: the branch is skipped only when a batch holds nothing."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if not (isinstance(target.operator, (cst.GreaterThan, cst.NotEqual)) and isinstance(target.comparator, cst.Integer) and target.comparator.value == "0"):
            return False
        test = test.left
    if _size_of_data(test):
        return True
    if not isinstance(test, cst.Name):
        return False
    bound = values_bound_to(test.value, scope)
    return bool(bound) and all(value is not None and _size_of_data(value) for value in bound)


def _size_of_data(expression: cst.BaseExpression) -> bool:
    """`len(x)`, `x.shape[0]`, `x.size(0)`, `x.numel()`."""
    if isinstance(expression, cst.Call):
        func = expression.func
        if isinstance(func, cst.Name):
            return func.value == "len"
        return isinstance(func, cst.Attribute) and func.attr.value in _SIZE_READS
    if isinstance(expression, cst.Subscript):
        return isinstance(expression.value, cst.Attribute) and expression.value.attr.value in _SIZE_READS
    return False


def short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def names_bound_in(function: cst.FunctionDef) -> set[str]:
    """Parameters and every name the function assigns: what may differ from call to call."""
    params = function.params
    names = {param.name.value for param in (*params.params, *params.posonly_params, *params.kwonly_params)}
    names.update(star.name.value for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param))
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.Assign):
            targets = [target.target for target in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name] if isinstance(node.name, cst.BaseExpression) else []
        for target in targets:
            names.update(names_in_target(target))
        stack.extend(child_nodes(node))
    return names


def last_assignment(name: str, before: cst.CSTNode, scope: FunctionFacts, facts: ModuleFacts) -> cst.BaseExpression | None:
    """The value last assigned to the plain name `name` before `before`, in the body of `scope`
    (nested functions and classes left out); None when there is none to see."""
    body: cst.CSTNode = scope.node.body if scope.node is not None else facts.module
    found: cst.BaseExpression | None = None
    for node in own_nodes(body):
        if node is before:
            break
        if isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets):
            if not contains(node.value, before):  # `x = x.to(dev)` is the statement itself
                found = node.value
    return found


def contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Is `node` (by identity) `tree` itself or somewhere inside it?"""
    stack = [tree]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(child_nodes(current))
    return False


def statement_slots(module: cst.Module, nodes: set[int]) -> dict[int, tuple[int, int, int]]:
    """For each of `nodes` (by id), where it runs: the id of the innermost block holding its
    statement, the statement's index in that block, and the id of the innermost branch of a
    conditional expression around it (0 outside one). Two nodes in one block at indices i and
    i + 1 run one right after the other; an `if` and its `else` are different blocks, and the
    two sides of `a if c else b` different branches. A `with` body runs whenever its `with`
    statement does, so its statements share that statement's slot in the enclosing block."""
    found: dict[int, tuple[int, int, int]] = {}
    if not nodes:
        return found
    stack: list[tuple[cst.CSTNode, tuple[int, int, int]]] = [(module, (id(module), 0, 0))]
    while stack:
        node, slot = stack.pop()
        if id(node) in nodes:
            found[id(node)] = slot
        if isinstance(node, (cst.Module, cst.IndentedBlock)):
            stack.extend((child, (id(node), index, slot[2])) for index, child in enumerate(node.body))
        elif isinstance(node, cst.IfExp):
            stack += [(node.test, slot), (node.body, (*slot[:2], id(node.body))), (node.orelse, (*slot[:2], id(node.orelse)))]
        elif isinstance(node, cst.With) and isinstance(node.body, cst.IndentedBlock):
            stack.extend((child, slot) for child in (*node.items, *node.body.body))
        else:
            stack.extend((child, slot) for child in child_nodes(node))
    return found


_Statement = TypeVar("_Statement", bound=cst.CSTNode)


def small_statements(module: cst.Module, nodes: set[int]) -> dict[int, cst.BaseSmallStatement]:
    """The simple statement (one line of code: an assignment, a call, a return) holding each
    of `nodes`, by node id."""
    return _innermost(module, nodes, cst.BaseSmallStatement)


def enclosing_statements(module: cst.Module, nodes: set[int]) -> dict[int, cst.BaseSmallStatement | cst.BaseCompoundStatement]:
    """The statement holding each of `nodes`, by node id: a simple statement, or for a node in
    the header of a compound one (the test of an `if`, the items of a `with`, a parameter's
    default), that compound statement."""
    return _innermost(module, nodes, (cst.BaseSmallStatement, cst.BaseCompoundStatement))


def _innermost(module: cst.Module, nodes: set[int], kinds: type[_Statement] | tuple[type[_Statement], ...]) -> dict[int, _Statement]:
    """The innermost node of one of `kinds` around each of `nodes`, by node id (one walk of the module)."""
    found: dict[int, _Statement] = {}
    if not nodes:
        return found  # nothing to look for: no walk of the module
    stack: list[tuple[cst.CSTNode, _Statement | None]] = [(module, None)]
    while stack:
        node, statement = stack.pop()
        if isinstance(node, kinds):
            statement = node
        if id(node) in nodes and statement is not None:
            found[id(node)] = statement
        stack.extend((child, statement) for child in child_nodes(node))
    return found
