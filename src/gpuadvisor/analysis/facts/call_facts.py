"""What each call does at run time: GPU work, a sync, a copy, threads, an environment write.

Part of the one shared walk (`FactWalker` mixes this in); kept apart because classifying a
call is the largest single piece of it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.training import steps_optimizer
from gpuadvisor.analysis.facts.module_facts import (
    CallFact,
    Context,
    DebugSwitch,
    EnvWrite,
    EventKind,
    FunctionFacts,
    LoopFacts,
    ModuleFacts,
    SyncPoint,
    ThreadLaunch,
    TimedCall,
    Transfer,
)
from gpuadvisor.analysis.facts.call_sites import parameters_of
from gpuadvisor.analysis.facts.formulas import reduces
from gpuadvisor.analysis.facts.interfaces import GENERIC_METHODS, dispatched_key
from gpuadvisor.analysis.facts.imports import called_name, dotted_name, keyword_arg, literal_string, names_in_target, positional_arg
from gpuadvisor.analysis.facts.values import Kind, Value, array, next_method

if TYPE_CHECKING:
    from gpuadvisor.analysis.facts.evaluate import Evaluator


def _host_sized(qualname: str | None) -> bool:
    """A call of a RAPIDS library that returns with its work done (`kb.HOST_SIZED_LIBRARIES`)."""
    return qualname is not None and qualname.split(".", 1)[0] in kb.HOST_SIZED_LIBRARIES


def _copies_to_host(method: str, receiver: Value, result: Value | None) -> bool:
    """`.cpu()`, `.numpy()`, `.copy_to_host()`, CuPy's `.get()`, `.to("cpu")` of a device array."""
    if method in kb.D2H_METHODS or (method == "get" and receiver.library == "cupy"):
        return True
    if receiver.library == "warp" and method in kb.WARP_HOST_READ_METHODS:
        return True  # `a.list()` of a Warp array
    if receiver.library == "cudf" and method in kb.CUDF_HOST_COPY_METHODS:
        return True  # `df.to_pandas()`, `s.to_numpy()`
    return method == "to" and result is not None and not result.on_gpu


class CallRecorder:
    """`leave_Call` of the fact walk and the classification behind it."""

    facts: ModuleFacts
    values: Evaluator
    _scope: FunctionFacts
    _loop: LoopFacts | None
    _classes: list[tuple[str, bool, FunctionFacts]]
    _assigned_name: dict[cst.BaseExpression, str]
    _host_copies: dict[tuple[FunctionFacts, str], set[cst.Call]]
    _copies: dict[cst.CSTNode, cst.BaseExpression]
    _run_once_blocks: list[bool]
    _accumulating: int
    #: `sample_fn = {"heun": sample_heun, "dpm": sample_dpm}[name]`, per scope: the functions of
    #: this file a name picked from a dispatch table may be; a call of it runs one of them.
    _dispatch_tables: dict[tuple[int, str], tuple[str, ...]]
    distribution_checks_off: bool
    project_uploads: dict[str, tuple[int, str]]
    _moved_with_module: list[tuple[str, Value]]
    _gpu_lists: dict[FunctionFacts, dict[str, Value]]
    #: Every method of the file's top-level classes, walked yet or not (`imports.class_methods`).
    methods_below: set[str]

    def context(self) -> Context:
        raise NotImplementedError

    def _remember(self, node: cst.CSTNode) -> None:
        raise NotImplementedError

    def _event(self, kind: EventKind, node: cst.CSTNode, key: str) -> None:
        raise NotImplementedError

    @staticmethod
    def _timing_mark(node: cst.Call, qualname: str | None, method: str | None) -> str | None:
        """The key of a CUDA event mark (`start.record()` -> "start") or of a read of the time
        between two (`start.elapsed_time(end)`, `cp.cuda.get_elapsed_time(start, end)` ->
        "start>end"); None for anything else (`logger.record(value)` has an argument that is
        not a stream)."""
        if qualname not in kb.EVENT_ELAPSED_FUNCTIONS and method not in kb.EVENT_TIMING_METHODS:
            return None  # (every call of the walk comes here: nothing more is computed for most)
        names = [dotted_name(arg.value) for arg in node.args]
        if qualname in kb.EVENT_ELAPSED_FUNCTIONS:
            return f"{names[0]}>{names[1]}" if len(names) == 2 and None not in names else None
        receiver = dotted_name(node.func.value) if isinstance(node.func, cst.Attribute) else None
        if receiver is None:
            return None
        if method == "elapsed_time":
            return f"{receiver}>{names[0]}" if len(names) == 1 and names[0] is not None else None
        stream_only = all(arg.keyword is None or arg.keyword.value == "stream" for arg in node.args)
        return receiver if method == "record" and len(node.args) <= 1 and stream_only else None

    def _sync_point(
        self,
        node: cst.CSTNode,
        what: str,
        validates: bool = False,
        formats: bool = False,
        copied: cst.BaseExpression | None = None,
        sized: bool = False,
        inside: str | None = None,
        mask: cst.BaseExpression | None = None,
    ) -> None:
        """Records a point where the host waits for the GPU (the one place the walk and the
        call classification record one)."""
        self._remember(node)
        if copied is not None:
            self._copies[node] = copied
        validates = validates or any(self._run_once_blocks)  # an error message built before `raise`
        accumulates = self._accumulating > 0
        self.facts.syncs.append(SyncPoint(node, what, self.context(), validates, formats, copied, accumulates, sized, inside, mask))
        self._event(EventKind.SYNC, node, "sync")

    def _note_gpu_list(self, func: cst.BaseExpression, held: Value | None, gpu_args: list[Value]) -> None:
        """`res.append(correct_k.mul_(100.0 / n))` on a list literal (`held`, what `res` is): the
        list holds GPU arrays."""
        if not (gpu_args and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return
        if held is not None and held.kind is Kind.SEQUENCE:
            self._gpu_lists.setdefault(self._scope, {})[func.value.value] = gpu_args[0]

    def _mark_varying(self, name: str) -> None:
        raise NotImplementedError

    def _without_gpu(self) -> bool:
        """Inside a branch that runs only where no GPU is available."""
        raise NotImplementedError

    def _tick(self) -> int:
        raise NotImplementedError

    def leave_Call(self, original_node: cst.Call) -> None:
        node = original_node
        self._remember(node)
        func = node.func
        imports = self.facts.imports
        qualname = imports.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if qualname is None and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call):
            qualname = self._handle_method(func.value, func.attr.value)
        receiver = self.values.evaluate(func.value) if isinstance(func, cst.Attribute) else None
        result = self.values.evaluate(node)
        arg_values = [self.values.evaluate(arg.value) for arg in node.args]
        gpu_args = [v for v in arg_values if v is not None and v.is_gpu_array]
        positional = tuple(value for arg, value in zip(node.args, arg_values) if arg.keyword is None and not arg.star)
        call = CallFact(node, qualname, method, receiver, positional, result, self.context())
        self.facts.calls.append(call)
        self.facts.call_of[node] = call

        if qualname is None or not (kb.library_of(qualname) or qualname.startswith("builtins.")):
            for arg in node.args:  # a function we cannot see may fill the arrays it is handed
                self.values.filled_by_host(arg.value)
            array_method = receiver is not None and receiver.is_array and not receiver.holds_fields  # not `metric.update(...)`
            if not array_method and method not in kb.COLLECTING_METHODS:
                self._hand_to_host_code(node)
        if (
            isinstance(func, cst.Name)
            and func.value[:1].isupper()
            and func.value in imports.local_definitions
            and func.value not in self.values.module_classes
            and func.value not in self.values.plain_classes
        ):
            self.facts.classes_used_early = True  # a class defined further down
        local = self._local_callee(func) or self._next_method(qualname, positional)
        for picked in self._dispatched(func):
            # `sample_fn(denoiser, x, sigmas)`: a call of each function the table may pick, with these arguments
            self._scope.callees.append(f"local.{picked}")
            self._event(EventKind.LOCAL_CALL, node, picked)
        if local is not None:
            self._scope.callees.append(f"local.{local}")
        else:
            self._scope.callees.append(qualname or (f"method.{method}" if method else None))
        if local is None and qualname is None and _on_unknown_object(func, receiver, self.context()):
            # `model.train_on_batch(batch)`, `model` of no class we know: an interface's method
            self.facts.dispatched_calls.add(node)
            self._event(EventKind.LOCAL_CALL, node, dispatched_key(func.attr.value))  # type: ignore[attr-defined]
        if local is not None:
            if local == self._scope.name:
                self._scope.is_recursive = True
            self._event(EventKind.LOCAL_CALL, node, local)
            called = self.facts.functions.get(local)
            if gpu_args and not (called is not None and called.does_nothing):  # a helper handed GPU arrays runs GPU work
                self._event(EventKind.GPU_WORK, node, local)
        if result is not None and result.kind is Kind.MODULE and result.class_name and result.on_gpu:
            self.facts.gpu_classes.setdefault(result.class_name, replace(result, shape=None))
        if method == "register_buffer" and isinstance(func, cst.Attribute):
            self._register_buffer(node, func, receiver)
        if local is not None and dotted_name(func.value if isinstance(func, cst.Attribute) else func) == "self":
            self._store_named_field(node, self.facts.functions.get(local))
        if method == "add_module" and isinstance(func, cst.Attribute) and dotted_name(func.value) == "self" and len(node.args) == 2 and self.values.class_names:
            added = self.values.evaluate(node.args[1].value)
            if added is not None and added.kind is Kind.MODULE and added.class_name:
                self.facts.submodule_classes.setdefault(self.values.class_names[-1], set()).add(added.class_name)
        if method == "step" and self._scope.optimizer_step is None and steps_optimizer(node):
            ctx = self.context()
            if ctx.loop is None and not ctx.guards:
                self._scope.optimizer_step = node
        if method in kb.COLLECTING_METHODS:
            self.facts.collected.update(arg.value for arg in node.args)
            self._note_gpu_list(func, receiver, gpu_args)
        if method in kb.HOST_DATA_METHODS and isinstance(func, cst.Attribute) and not self._reads_the_loss(func.value):
            source = func.value
            while True:  # `x.cpu().data.numpy()`, `x.cpu()[i].squeeze(0).numpy()`: the copy feeds NumPy too
                self.facts.to_host_data.add(source)
                if isinstance(source, cst.Attribute) and source.attr.value in ("data", "T"):
                    source = source.value
                elif isinstance(source, cst.Subscript):
                    source = source.value
                elif isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) and source.func.attr.value in kb.RESHAPING_METHODS:
                    source = source.func.value
                else:
                    break
        if method is not None and (method in kb.MUTATING_METHODS or method.endswith("_")):
            for name in names_in_target(func.value):  # type: ignore[attr-defined]
                self._mark_varying(name)
        if qualname in kb.WARP_LAUNCHES:
            self._mark_launch_arguments(node)

        mark = self._timing_mark(node, qualname, method)
        if qualname in kb.CLOCKS and not self._without_gpu():  # a clock where no GPU is present times CPU work
            self._event(EventKind.CLOCK, node, qualname)
            assigned = self._assigned_name.get(node)
            if assigned is not None:
                self.facts.clock_names[node] = assigned
        elif mark is not None and not self._without_gpu():
            self._event(EventKind.TIMING_MARK, node, mark)
        elif qualname in kb.TIMEIT_CALLS:
            self._timed_call(node, "`timeit`", False, [], _timeit_statement(node))
        elif (timer := self._made_timer(func, method)) is not None:
            self._timed_call(node, "`timeit`", False, [], _timeit_statement(timer))
        elif self._benchmark_fixture(func):
            handed = [arg.value for arg in node.args[1:]] if isinstance(func, cst.Name) else _pedantic_arguments(node)
            self._timed_call(node, "pytest-benchmark's `benchmark`", True, handed)

        launch = self._numba_launch(node)
        sized = self._data_sized(node, qualname, method, receiver, gpu_args)
        waits_inside = self._waits_inside(node, qualname, method, receiver, positional)
        is_sync = waits_inside or self._classify_sync(node, qualname, method, receiver, result, gpu_args, sized)
        # `ema.lerp_(p, 0.1)` with `p` on the GPU: the tensor it changes is there too, whatever `ema` is.
        in_place_on_gpu = receiver is None and qualname is None and method in kb.SAME_DEVICE_IN_PLACE_METHODS and bool(gpu_args)
        is_work = launch or (f".{method}" if in_place_on_gpu else self._classify_work(node, qualname, method, receiver, result))
        if is_work is None and qualname in kb.DISTRIBUTED_COLLECTIVES and gpu_args:
            is_work = qualname  # `dist.all_reduce(grad)`: NCCL queues it on the GPU
        if is_work is not None and (sized or waits_inside or not is_sync):  # `x.nonzero()` launches a kernel, then waits for its size
            self._event(EventKind.GPU_WORK, node, is_work)
        if is_sync:
            self._event(EventKind.SYNC, node, "sync")
        elif receiver is None and method in kb.HOST_READ_METHODS and not node.args:
            self._event(EventKind.HOST_READ, node, "host read")
        elif method in kb.DECODE_METHODS and any(value is not None and value.is_device_array for value in arg_values):
            self._event(EventKind.HOST_READ, node, "host read")  # `tokenizer.decode(ids)` reads the ids on the host

        if launch is not None:
            self._record_launch(node, launch)
        else:
            self._record_transfer(node, qualname, method, receiver, result)
        if method in ("to", "cuda") and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call):
            self._move_handed_modules(func.value, result)
        self._record_threads(node, qualname, method, receiver)
        self._record_env_call(node, qualname)
        if self._loop is not None and not in_place_on_gpu and not self._is_transparent_call(qualname, method, receiver):
            moves = method in ("to", "cuda", "cpu") or method in kb.RESHAPING_METHODS  # `inputs[i].cuda()`: data moved
            loop: LoopFacts | None = self._loop
            while loop is not None:
                loop.has_opaque_call = True
                loop.runs_code = loop.runs_code or not moves
                loop = loop.parent

    def _mark_launch_arguments(self, node: cst.Call) -> None:
        """`wp.launch(k, dim, inputs=[x, v], outputs=[f])`, `wp.copy(dst, src)`: a kernel may
        write any array it is handed, so each changes from one iteration to the next."""
        for arg in node.args:
            handed = arg.value.elements if isinstance(arg.value, (cst.List, cst.Tuple)) else [arg]
            for element in handed:
                name = dotted_name(element.value)
                if name is not None:
                    self._mark_varying(name)

    def _reads_the_loss(self, copied: cst.BaseExpression) -> bool:
        """`loss.detach().cpu().numpy()`, `loss.data.cpu().numpy()`: NumPy of the loss the function calls
        `backward()` on without a gradient, which autograd allows only for a one-element tensor: a number read
        for a log line, as `.item()` is, not data host code needs (DeepLabV3Plus' per-step `np_loss`)."""
        node = copied
        while True:
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.args:
                node = node.func.value  # `.cpu()`, `.detach()`
            elif isinstance(node, cst.Attribute) and node.attr.value == "data":
                node = node.value
            else:
                break
        return isinstance(node, cst.Name) and self.values.scopes[-1].trained.get(node.value) is True

    def _hand_to_host_code(self, node: cst.Call) -> None:
        """`sample_manager.add_samples(estimate.cpu())`, `y = y_pred.cpu(); metric(y, ref)`,
        `pool.submit(score, preds.cpu())`: a copy handed to code we cannot see is host data that
        code needs (files, CPU metrics, worker processes), not a value that could stay on the GPU.
        A copied scalar (a 0-d loss for a meter) is still a read that could wait for a log step."""
        for arg in node.args:
            handed = arg.value
            copies = self._host_copies.get((self._scope, handed.value), set()) if isinstance(handed, cst.Name) else {handed}
            for copy in copies:
                copied = self._copies.get(copy)
                value = self.values.evaluate(copied) if copied is not None else None
                if copied is not None and (value is None or value.rank != 0):
                    self.facts.to_host_data.add(copy)

    def _dispatched(self, func: cst.BaseExpression) -> tuple[str, ...]:
        """The functions of this file a call through a dispatch table may run: `table[key](...)`
        on a dict literal of them, or a name bound to such a pick in this scope."""
        if isinstance(func, cst.Name):
            return self._dispatch_tables.get((id(self._scope), func.value), ())
        return self._dispatch_table_pick(func)

    def _dispatch_table_pick(self, expr: cst.BaseExpression) -> tuple[str, ...]:
        """`{"heun": sample_heun, "dpm": sample_dpm}[sampler]`: the functions of this file the
        pick may be (every value must be one), else none."""
        if not (isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Dict) and expr.value.elements):
            return ()
        names = [element.value for element in expr.value.elements if isinstance(element, cst.DictElement)]
        if len(names) != len(expr.value.elements) or not all(isinstance(name, cst.Name) for name in names):
            return ()
        picked = tuple(name.value for name in names if isinstance(name, cst.Name))
        defined = self.facts.imports.local_definitions
        return picked if all(name in defined for name in picked) else ()

    def _local_callee(self, func: cst.BaseExpression) -> str | None:
        """Name (as in `facts.functions`) of the function of this file a call runs, if any."""
        imports = self.facts.imports
        if isinstance(func, cst.Name) and f"{func.value}.__init__" in self.facts.functions:
            return f"{func.value}.__init__"  # `EMA(net)`: building an object of this file's class runs its `__init__`
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
            held = self.values.lookup(f"self.{func.attr.value}")
            if held is not None and held.kind is Kind.MODULE and held.class_name:
                key = f"{held.class_name}.forward"  # `self.head(x)`: a submodule of this file runs
                return key if key in self.facts.functions else None
            return f"{self._classes[-1][0]}.{func.attr.value}"
        return self._method_of_instance(func)

    def _register_buffer(self, node: cst.Call, func: cst.Attribute, owner: Value | None) -> None:
        """`self.register_buffer("queue_ptr", t)`: the name is one of the file's buffers (see
        `ModuleFacts.buffer_names`), and in a module moved to the GPU `self.queue_ptr` is a tensor
        on that device (buffers move with their module)."""
        name = literal_string(node.args[0].value) if node.args else None
        if dotted_name(func.value) != "self" or name is None:
            return
        self.facts.buffer_names.add(name)
        if owner is not None and owner.kind is Kind.MODULE and name.isidentifier():
            moved = Value(Kind.ARRAY, "torch", owner.device)
            if self._scope.is_constructor and len(node.args) > 1:
                # `self.bev_shape = self.shape[dims]` in the constructor copies the buffer as it
                # is built, on the host: only the buffer itself moves with the module, later.
                built = self.values.evaluate(node.args[1].value)
                self.values.store(f"self.{name}", built if built is not None and built.is_array else None)
                self._moved_with_module.append((f"self.{name}", moved))
            else:
                self.values.store(f"self.{name}", moved)

    def _store_named_field(self, node: cst.Call, method: FunctionFacts | None) -> None:
        """`self.register_buffer("ddim_alphas", alphas)` of a method of this class that sets the
        field it is named (`setattr(self, name, attr)`): `self.ddim_alphas` is that value, on the
        device the method moves it to (a tensor, or a value of unknown type, is moved; a NumPy
        array stays an array on the host, as a `type(attr) == torch.Tensor` test leaves it)."""
        store = method.stores_named_field if method is not None else None
        positional = [arg.value for arg in node.args if arg.keyword is None]
        if store is None or max(store.name_index, store.value_index) >= len(positional):
            return
        name = literal_string(positional[store.name_index])
        if name is None or not name.isidentifier():
            return
        value = self.values.evaluate(positional[store.value_index])
        if store.moved_to is not None and (value is None or value.library == "torch"):
            value = array("torch", store.moved_to) if value is None else value.moved_to(store.moved_to)
        self.values.store(f"self.{name}", value)

    def _next_method(self, qualname: str | None, handed: tuple[Value | None, ...]) -> str | None:
        """`next(fetcher)` on an object of this file's class runs that class's `__next__`."""
        key = next_method(qualname, handed)
        return key if key is not None and key in self.facts.functions else None

    def _method_of_instance(self, func: cst.BaseExpression) -> str | None:
        """`ema.update(model)` on `ema = EMAHelper()`, `net(x)` on `net = Net().cuda()`: the
        method of this file's class the call runs (`forward` when a module is called)."""
        if isinstance(func, cst.Attribute):
            owner = self.values.evaluate(func.value)
            key = f"{owner.class_name}.{func.attr.value}" if owner is not None and owner.class_name else None
        else:
            instance = self.values.evaluate(func)
            called = "forward" if instance is not None and instance.kind is Kind.MODULE else "__call__"
            key = f"{instance.class_name}.{called}" if instance is not None and instance.class_name else None
        return key if key is not None and (key in self.facts.functions or key in self.methods_below) else None

    @staticmethod
    def _is_transparent_call(qualname: str | None, method: str | None, receiver: Value | None) -> bool:
        """A call whose cost we can see: an array-library function, a builtin, math, or an array
        method; `.item()`, `.tolist()` and size queries run no user code whatever they are called on."""
        if (receiver is not None and receiver.is_array) or method in kb.NO_USER_CODE_METHODS:
            return True
        if qualname is not None:
            return kb.library_of(qualname) is not None or qualname.split(".")[0] in ("builtins", "math")
        return False

    def _timed_call(
        self, node: cst.Call, timer: str, fixture: bool, handed: list[cst.BaseExpression], timed: cst.BaseExpression | None = None
    ) -> None:
        first = positional_arg(node) if timed is None else timed
        if isinstance(first, cst.SimpleString):
            # `timeit.timeit("all_gather()", globals=globals())`: the statement names this file's function
            called = _called_in_statement(first)
            work = self.facts.functions.get(called) if called is not None else None
            self.facts.timed_calls.append(TimedCall(node, timer, fixture, self.context(), work, False))
            return
        work = self.facts.lambdas.get(first) if isinstance(first, cst.Lambda) else None
        if work is None and isinstance(first, cst.Name):
            work = self.facts.functions.get(first.value)
        callee = self.values.evaluate(first) if first is not None else None
        values = [self.values.evaluate(expr) for expr in handed]
        named = self.facts.imports.qualified_name(first) if isinstance(first, (cst.Name, cst.Attribute)) else None
        gpu_inputs = not _host_sized(named) and (
            (callee is not None and callee.kind is Kind.MODULE and callee.on_gpu)
            or any(value is not None and value.is_gpu_array for value in values)
        )
        self.facts.timed_calls.append(TimedCall(node, timer, fixture, self.context(), work, gpu_inputs))

    def _made_timer(self, func: cst.BaseExpression, method: str | None) -> cst.Call | None:
        """`timeit.Timer("step()", globals=globals())` when `.timeit(...)`, `.repeat(...)` or
        `.autorange()` is called on it where it is made."""
        if method not in kb.TIMEIT_TIMER_METHODS or not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Call):
            return None
        made = func.value
        return made if self.facts.imports.qualified_name(made.func) == kb.TIMEIT_TIMER else None

    def _benchmark_fixture(self, func: cst.BaseExpression) -> bool:
        """`benchmark(...)` or `benchmark.pedantic(...)` where `benchmark` is a parameter of the
        test function: pytest-benchmark's fixture, which times with the host clock."""
        if isinstance(func, cst.Attribute) and func.attr.value == "pedantic":
            func = func.value
        node = self._scope.node
        if not isinstance(func, cst.Name) or func.value != kb.BENCHMARK_FIXTURE or not isinstance(node, cst.FunctionDef):
            return False
        return any(param.name.value == kb.BENCHMARK_FIXTURE for param in node.params.params)

    def _maps_gpu_values(self, expr: cst.BaseExpression) -> bool:
        """`{"loss": loss}` or `{f"train_{k}": v for k, v in outputs.items()}`: a dict whose values
        are GPU arrays (a model's outputs hold tensors), as logging calls are handed metrics."""
        if isinstance(expr, cst.Dict):
            values = [self.values.evaluate(e.value) for e in expr.elements if isinstance(e, cst.DictElement)]
            return any(value is not None and value.is_gpu_array for value in values)
        if isinstance(expr, cst.DictComp) and not expr.for_in.inner_for_in:
            walked = expr.for_in.iter
            if isinstance(walked, cst.Call) and isinstance(walked.func, cst.Attribute) and walked.func.attr.value in ("items", "values"):
                source = self.values.evaluate(walked.func.value)
                return source is not None and source.is_gpu_array
        return False

    def _classify_sync(
        self,
        node: cst.Call,
        qualname: str | None,
        method: str | None,
        receiver: Value | None,
        result: Value | None,
        gpu_args: list[Value],
        sized: bool,
    ) -> bool:
        if qualname in kb.EXPLICIT_SYNCS or method in kb.SYNCING_METHODS:
            return True
        uploaded = self._uploaded_number(node, qualname, result)
        if uploaded is not None:
            self._sync_point(node, f"copying {uploaded} to the GPU with `{qualname}(..., device=...)`", inside=kb.NUMBER_UPLOAD)
            return True
        logs = method in kb.LOGGING_METHODS or qualname in kb.LOGGING_FUNCTIONS
        if logs and (gpu_args or any(self._maps_gpu_values(arg.value) for arg in node.args)):
            # TensorBoard, W&B, MLflow and friends read the value on the host (`.item()` inside)
            logger = f"`{qualname}()`" if qualname in kb.LOGGING_FUNCTIONS else f"`.{method}()`"
            self._sync_point(node, f"logging a GPU value with {logger}")
            return True
        if (method in kb.HOST_IMAGE_METHODS or qualname in kb.HOST_IMAGE_FUNCTIONS) and node.args:
            return True  # images leave the GPU as PIL images or files
        if sized:
            name = called_name(qualname, method)
            self._sync_point(node, f"a data-sized `{name}()`", sized=True)
            return True
        inside = self._checked_on_host_inside(node, qualname, method, receiver)
        if inside is not None:
            what = kb.HOST_CHECKING_CALLS.get(inside, f"builtin `{inside}()` comparing a GPU value")
            self._sync_point(node, what, inside=inside)
            return True
        if receiver is not None and receiver.is_device_array and method is not None:
            if method in kb.SCALAR_SYNC_METHODS:
                self._sync_point(node, f"`.{method}()`")
                return True
            if receiver.class_name == kb.CUDF_SERIES and method in kb.CUDF_SERIES_REDUCTIONS:
                self._sync_point(node, f"`.{method}()` of a cuDF Series, which hands back a host scalar", inside=kb.CUDF_SERIES_REDUCTION)
                return True
            if _copies_to_host(method, receiver, result):
                copied = node.func.value if isinstance(node.func, cst.Attribute) else None
                self._sync_point(node, f"copying a GPU value to the host with `.{method}()`", copied=copied)
                return True
        if gpu_args and qualname is not None and qualname.split(".", 1)[0] in kb.PYTHON_NUMBER_MODULES:
            self._sync_point(node, f"`{qualname}()` of a GPU value")
            return True
        if gpu_args and (qualname in kb.SYNCING_BUILTINS or qualname in kb.FORMATTING_BUILTINS or qualname in kb.CTYPES_SCALARS):
            what = f"`{qualname.removeprefix('builtins.')}()` of a GPU value"
            self._sync_point(node, what, formats=qualname in kb.FORMATTING_BUILTINS)
            return True
        if gpu_args and method == "format" and isinstance(node.func, cst.Attribute) and isinstance(
            node.func.value, (cst.SimpleString, cst.ConcatenatedString)
        ):
            # Pointed at the value, as for `%` and f-strings: the template may span lines.
            formatted = next(arg.value for arg in node.args if (value := self.values.evaluate(arg.value)) is not None and value.is_gpu_array)
            self._sync_point(formatted, "formatting a GPU value with `str.format`", formats=True)
            return True
        return False

    def _python_number(self, expr: cst.BaseExpression) -> bool:
        """Is this a Python number: a literal, a value known to be one, the counter of an
        enclosing `range`/`enumerate` loop, or arithmetic on them (`64 * (step // 64)`, where
        the other operands, `args.num_iterations`, hold no array we know of)?"""
        if isinstance(expr, (cst.Integer, cst.Float)):
            return True
        if isinstance(expr, cst.UnaryOperation):
            return self._python_number(expr.expression)
        if isinstance(expr, cst.BinaryOperation):
            sides = (expr.left, expr.right)
            return any(self._python_number(side) for side in sides) and all(self._python_number(side) or self._plain_operand(side) for side in sides)
        value = self.values.evaluate(expr)
        if value is not None:
            return value.kind is Kind.NUMBER
        loop = self._loop
        while isinstance(expr, cst.Name) and loop is not None:
            if expr.value in loop.index_names:
                return True
            loop = loop.parent
        return False

    def _plain_operand(self, expr: cst.BaseExpression) -> bool:
        """A name or a field (`total`, `args.lr`) of unknown value: neither an array nor a call."""
        return isinstance(expr, (cst.Name, cst.Attribute)) and self.values.evaluate(expr) is None

    def _uploaded_number(self, node: cst.Call, qualname: str | None, result: Value | None) -> str | None:
        """`torch.tensor(step * 0.5, device="cuda")`: one Python number copied to the GPU. The copy
        is blocking (PyTorch waits for the stream after it, measured on the H100), while
        `torch.full((), value, device=...)` hands the number to a fill kernel with no copy. What is
        copied, in words; None when the call copies no Python number."""
        if qualname not in kb.TENSOR_FROM_DATA or result is None or not result.is_gpu_array:
            return None
        data = positional_arg(node)
        if data is None:
            return None
        if self._python_number(data):
            return "a Python number"
        return "a list of one repeated Python value" if self._repeated_value_list(data) else None

    def _repeated_value_list(self, expr: cst.BaseExpression) -> bool:
        """`[t] * batch_size`: a host list of one value repeated (a diffusion step's timestep for
        every sample), which `torch.full((batch_size,), t, device=...)` fills on the GPU."""
        if not isinstance(expr, cst.BinaryOperation) or not isinstance(expr.operator, cst.Multiply):
            return False
        for listed, count in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(listed, cst.List) and len(listed.elements) == 1 and not isinstance(listed.elements[0], cst.StarredElement):
                element, times = self.values.evaluate(listed.elements[0].value), self.values.evaluate(count)
                return (element is None or element.kind is Kind.NUMBER) and not (times is not None and times.is_array)
        return False

    def _handle_method(self, made: cst.Call, method: str) -> str | None:
        """`cp.cuda.Device().synchronize()`, `torch.cuda.current_stream().synchronize()`: a method of
        a handle the library hands out, named as the tables name it ("cupy.cuda.Device.synchronize")."""
        handle = self.facts.imports.qualified_name(made.func) if isinstance(made.func, (cst.Name, cst.Attribute)) else None
        return f"{handle}.{method}" if handle in kb.DEVICE_HANDLES else None

    def _data_sized(
        self, node: cst.Call, qualname: str | None, method: str | None, receiver: Value | None, gpu_args: list[Value]
    ) -> bool:
        """An op whose output size the host must learn from the GPU before allocating it:
        `x.nonzero()`, `torch.unique(x)`, `cupy.bincount(y)`, `torch.where(mask)` (the one-argument
        form), `x.repeat_interleave(counts)` with GPU counts and no `output_size`."""
        on_gpu = receiver is not None and receiver.is_device_array
        if (on_gpu and method in kb.DATA_SIZED_OPS) or (qualname in kb.DATA_SIZED_FUNCTIONS and gpu_args):
            return not _histogram_bounds_given(node, qualname, method)
        if qualname in kb.ONE_ARGUMENT_DATA_SIZED and gpu_args and len(node.args) == 1 and node.args[0].keyword is None:
            return True
        size_keyword = kb.SIZED_BY_COUNTS.get(called_name(qualname, method))
        if size_keyword is None or keyword_arg(node, size_keyword) is not None or not (on_gpu or gpu_args):
            return False
        counts = keyword_arg(node, "repeats") or positional_arg(node, 0 if on_gpu and method else 1)
        counted = self.values.evaluate(counts) if counts is not None else None
        return counted is not None and counted.is_device_array

    def _checked_on_host_inside(self, node: cst.Call, qualname: str | None, method: str | None, receiver: Value | None) -> str | None:
        """The library call that reads a GPU value on the host inside, if this is one:
        `F.one_hot(y)` without a Python-int `num_classes`, builtin `max(t, 1)` (the truth value of
        its comparison), `scaler.get_scale()`, `torch.allclose(a, b)`, `torch.linalg.solve(A, b)`,
        `clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)`, `torch.tensor([loss, acc])`. These
        calls take only arrays (or, for `max`, compare what they get), so an argument inferred to
        be on the GPU is enough."""
        if method == "get_scale" and receiver is not None and receiver.class_name in kb.GRAD_SCALERS:
            return "get_scale"
        on_gpu_receiver = receiver is not None and receiver.is_device_array and receiver.library == "torch"
        if method in kb.PYTHON_BOOL_COMPARISONS and on_gpu_receiver:
            return "python_bool"  # `a.allclose(b)`, `a.equal(b)`
        if qualname is not None and qualname.startswith("torch.nn.utils.") and qualname.rsplit(".", 1)[-1] in kb.GRADIENT_NORM_FUNCTIONS:
            checks = keyword_arg(node, kb.NONFINITE_CHECK_KEYWORD)
            return "nonfinite_norm" if isinstance(checks, cst.Name) and checks.value == "True" else None
        copies_data = qualname is not None and qualname.startswith("torch.") and qualname.removeprefix("torch.") in kb.TORCH_DATA_COPIES
        if copies_data and node.args and isinstance(node.args[0].value, (cst.List, cst.Tuple)):
            elements = [self.values.evaluate(element.value) for element in node.args[0].value.elements]
            return "gpu_elements" if any(value is not None and value.is_device_array for value in elements) else None
        if qualname is not None and self._validated_distribution(node, qualname):
            return "validated_distribution"
        if qualname not in kb.HOST_CHECKING_FUNCTIONS:
            return None
        values = [self.values.evaluate(arg.value) for arg in node.args]
        on_gpu = [value for value in values if value is not None and value.is_device_array]
        if qualname in kb.CHECKED_SOLVERS and on_gpu:
            return "solver_status" if qualname.startswith("torch.") else "solver_wait"
        if qualname.removeprefix("torch.") in kb.PYTHON_BOOL_COMPARISONS:
            return "python_bool" if on_gpu else None
        if qualname in kb.ONE_HOT_FUNCTIONS and on_gpu:
            classes = keyword_arg(node, "num_classes") or positional_arg(node, 1)
            counted = self.values.evaluate(classes) if classes is not None else None
            looked_up = classes is None or isinstance(classes, cst.UnaryOperation) or (counted is not None and counted.is_device_array)
            return "one_hot" if looked_up else None  # missing, `-1`, or a GPU value (`int(t)` inside)
        if qualname in kb.COMPARING_BUILTINS and on_gpu and positional_arg(node, 1) is not None:
            return qualname.removeprefix("builtins.")
        if qualname in kb.SCALAR_FILL_FUNCTIONS:
            fill = keyword_arg(node, "fill_value") or positional_arg(node, kb.SCALAR_FILL_FUNCTIONS[qualname])
            filled_with = self.values.evaluate(fill) if fill is not None else None
            return "fill_value" if filled_with is not None and filled_with.is_device_array else None
        return None

    def _validated_distribution(self, node: cst.Call, qualname: str) -> bool:
        """`Normal(mu, std)`, `Categorical(logits=out)` on GPU values, with the parameter checks on:
        no `validate_args=False` (an unknown value there is taken as off) and no
        `set_default_validate_args(False)` in the project (what the file learns from the project
        comes last: the file builds checked distributions either way, for the runner to know)."""
        module, _, name = qualname.rpartition(".")
        if not (module == "torch.distributions" or module.startswith("torch.distributions.")) or name not in kb.VALIDATED_DISTRIBUTIONS:
            return False
        validates = keyword_arg(node, kb.DISTRIBUTION_VALIDATION_KEYWORD)
        if validates is not None and not (isinstance(validates, cst.Name) and validates.value == "True"):
            return False
        values = [self.values.evaluate(arg.value) for arg in node.args if arg.keyword is None or arg.keyword.value != kb.DISTRIBUTION_VALIDATION_KEYWORD]
        if not any(value is not None and value.is_device_array and value.library == "torch" for value in values):
            return False
        self.facts.builds_checked_distributions = True
        return not self.distribution_checks_off

    def _waits_inside(
        self, node: cst.Call, qualname: str | None, method: str | None, receiver: Value | None, positional: tuple[Value | None, ...]
    ) -> bool:
        """A call that returns only once its kernels are done, without handing anything to the
        host: a run of a KeOps formula (a reduction, a `Genred` routine called) and a backward
        pass from its result. Not a sync the user wrote, so no loop is blamed for it."""
        if receiver is not None and receiver.kind is Kind.FORMULA:
            return method is not None and reduces(method, node)
        if receiver is not None and method in kb.BACKWARD_METHODS:
            return receiver.backward_waits
        if qualname in kb.GRADIENT_FUNCTIONS:
            return bool(positional) and positional[0] is not None and positional[0].backward_waits
        callee = self.values.evaluate(node.func) if isinstance(node.func, (cst.Name, cst.Attribute)) else None
        return callee is not None and callee.kind is Kind.FORMULA

    def _classify_work(
        self,
        node: cst.Call,
        qualname: str | None,
        method: str | None,
        receiver: Value | None,
        result: Value | None,
    ) -> str | None:
        """The key of the GPU work this call launches, or None when it launches none (numba
        launches are recognised before, by `_numba_launch`)."""
        if any(value is not None and value.library == "cudf" for value in (receiver, result)) or _host_sized(qualname):
            # cuDF sizes most results on the host (readers, joins, filters, group-bys, `unique`) and
            # wraps or relabels columns without kernels (`drop`, `Series(col)`): its calls return
            # with their work done, so they are not asynchronous GPU work to time or to count.
            return None
        if receiver is not None and receiver.is_gpu_array and method is not None:
            if method in kb.METADATA_METHODS or method in kb.MODULE_ONLY_METHODS or method.startswith(("is_", "has_")):
                return None
            return f".{method}"
        if receiver is not None and receiver.kind is Kind.MODULE:
            if receiver.on_gpu and method in kb.MODULE_RUN_METHODS:
                return f".{method}"  # `model.generate(...)` on a GPU model: its forward passes
            return None  # .to()/.eval() on a module: no kernel worth timing
        if receiver is not None and receiver.class_name == kb.WARP_TAPE and method in kb.BACKWARD_METHODS:
            return f"{kb.WARP_TAPE}.{method}"  # the adjoint kernels of the recorded launches
        if qualname in kb.WARP_LAUNCHES:
            kernel = positional_arg(node)
            defined = self.facts.functions.get(kernel.value) if isinstance(kernel, cst.Name) else None
            if defined is not None and defined.does_nothing:
                return None  # `@wp.kernel def k0(): pass`: a launch-overhead probe, as for numba
            return f"{qualname}:{dotted_name(kernel) if kernel is not None else ''}"  # `wp.launch(kernel, ...)`: that kernel
        if method in ("to", "cuda", kb.DEVICE_FOLLOWING_CAST) and not (receiver is not None and receiver.is_gpu_array):
            return None  # a host->device copy: the host waits for it (or it is the data time)
        if qualname in self.project_uploads or (self._local_callee(node.func) or "") in self.facts.function_uploads:
            return None  # `to_device(v, device)`, a helper returning its argument copied: the same copy
        if qualname in kb.TENSOR_WRAPPERS:
            return None  # `Variable(img)`: the same tensor handed back
        if result is not None and result.is_gpu_array:
            if qualname is not None:
                return qualname
            return dotted_name(node.func) or "call"
        return None

    def _numba_launch(self, node: cst.Call) -> str | None:
        """`kernel[blocks, threads](...)` of a `@cuda.jit` kernel, or a call of a CUDA ufunc of this file."""
        func = node.func
        name = func.value if isinstance(func, cst.Subscript) else func
        function = self.facts.functions.get(name.value) if isinstance(name, cst.Name) else None
        if function is None or function.does_nothing:
            return None  # `@cuda.jit def probe(): return`: a launch-overhead probe, no work
        launched = function.cuda_kernel and isinstance(func, cst.Subscript) or function.cuda_ufunc and isinstance(func, cst.Name)
        return function.name if launched else None

    def _record_launch(self, node: cst.Call, launch: str) -> None:
        """A numba launch: the kernel may write into every array it is handed, and numba copies
        each host array in before the launch and back after it, which waits for the kernel."""
        hosts = []
        for arg in node.args:
            name = dotted_name(arg.value)
            if name is not None:
                self._mark_varying(name)
            value = self.values.evaluate(arg.value)
            if arg.keyword is None and value is not None and value.is_array and value.library == "numpy" and not value.on_gpu:
                hosts.append(arg.value)
        if hosts:
            self.facts.transfers.append(
                Transfer(node, "h2d", hosts[0], self.context(), self._assigned_name.get(node), None, launch, tuple(hosts))
            )
            self._event(EventKind.SYNC, node, "copy back")

    def _move_handed_modules(self, built: cst.Call, moved: Value | None) -> None:
        """`trainer = DiffusionTrainer(net, betas).to(device)`: a module holds the modules it is
        built with, and moving it moves them (the same objects), so `net` is on the GPU too."""
        if moved is None or not moved.on_gpu or moved.kind not in (Kind.MODULE, Kind.ARRAY):
            return
        for arg in built.args:
            handed = self.values.evaluate(arg.value)
            name = dotted_name(arg.value)
            if handed is not None and handed.kind is Kind.MODULE and not handed.on_gpu and name is not None:
                self.values.store(name, handed.moved_to(moved.device))

    def _made_like_another(self, expr: cst.BaseExpression) -> bool:
        """`torch.zeros_like(X)`: a tensor made on the device of the one it is handed."""
        if not (isinstance(expr, cst.Call) and isinstance(expr.func, (cst.Name, cst.Attribute))):
            return False
        qualname = self.facts.imports.qualified_name(expr.func) or ""
        return qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] in kb.TORCH_LIKE_FACTORIES and keyword_arg(expr, "device") is None

    def _record_transfer(
        self, node: cst.Call, qualname: str | None, method: str | None, receiver: Value | None, result: Value | None
    ) -> None:
        func = node.func
        assigned = self._assigned_name.get(node)
        ctx = self.context()
        if isinstance(func, cst.Attribute) and qualname is None:
            source = func.value
            is_module = receiver is not None and receiver.kind is Kind.MODULE
            # Even only inferred to be on the GPU (`scales` computed from a GPU array by a helper),
            # a value moved there is not known to be copied from the host.
            already_on_gpu = receiver is not None and receiver.is_device_array
            moves_to_gpu = method == "cuda" or (method in ("to", kb.DEVICE_FOLLOWING_CAST) and result is not None and result.on_gpu)
            if moves_to_gpu and receiver is None and self._made_like_another(source):
                return  # `torch.zeros_like(X).cuda()`: made where `X` is, maybe the GPU already
            if moves_to_gpu and not is_module and not already_on_gpu:
                self.facts.transfers.append(Transfer(node, "h2d", source, ctx, assigned, receiver))
                return
            if method == kb.WARP_ASSIGN_METHOD and already_on_gpu and receiver is not None and receiver.library == "warp" and node.args:
                data = node.args[0].value  # `a.assign([[0.0, -9.8, 0.0]])`: the data is copied into the device array
                data_value = self.values.evaluate(data)
                if data_value is None or not data_value.on_gpu:
                    self.facts.transfers.append(Transfer(node, "h2d", data, ctx, assigned, data_value))
                return
            if method is not None and receiver is not None and receiver.is_gpu_array and _copies_to_host(method, receiver, result):
                self.facts.transfers.append(Transfer(node, "d2h", source, ctx, assigned, receiver))
            return
        uploaded = self.project_uploads.get(qualname) if qualname is not None else None
        if uploaded is not None:
            handed = positional_arg(node, uploaded[0]) or keyword_arg(node, uploaded[1])
            handed_value = self.values.evaluate(handed) if handed is not None else None
            if handed is not None and (handed_value is None or not handed_value.on_gpu):
                self.facts.transfers.append(Transfer(node, "h2d", handed, ctx, assigned, handed_value, through=qualname))
            return
        first = positional_arg(node)
        if qualname is None or first is None:
            return
        first_value = self.values.evaluate(first)
        if qualname in ("torch.tensor", "torch.as_tensor") and result is not None and result.on_gpu:
            if first_value is None or not first_value.on_gpu:
                self.facts.transfers.append(Transfer(node, "h2d", first, ctx, assigned, first_value))
        elif qualname in ("cupy.asarray", "cupy.array", "numba.cuda.to_device") or (
            qualname in kb.WARP_DATA_COPIES and result is not None and result.on_gpu
        ):
            if first_value is None or not first_value.on_gpu:
                self.facts.transfers.append(Transfer(node, "h2d", first, ctx, assigned, first_value))
        elif qualname == "cupy.asnumpy":
            self.facts.transfers.append(Transfer(node, "d2h", first, ctx, assigned, first_value))

    def _record_threads(self, node: cst.Call, qualname: str | None, method: str | None, receiver: Value | None) -> None:
        func = node.func
        if qualname == kb.THREAD_CLASS:
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

    def _record_debug_switch(self, node: cst.Call, qualname: str | None) -> None:
        """`torch.autograd.set_detect_anomaly(True)`, `with torch.autograd.detect_anomaly():`
        and `os.environ.setdefault("CUDA_LAUNCH_BLOCKING", "1")`: only literal switches, so
        `set_detect_anomaly(args.debug)` (off unless asked for) stays out."""
        if qualname in kb.ANOMALY_DETECTION:
            mode = node.args[0].value if node.args else None
            if qualname.endswith("set_detect_anomaly") and not (isinstance(mode, cst.Name) and mode.value == "True"):
                return
            self.facts.debug_switches.append(DebugSwitch(node, "anomaly detection", self.context()))
        elif qualname in ("os.environ.setdefault", "os.putenv") and len(node.args) >= 2:
            key, value = literal_string(node.args[0].value), literal_string(node.args[1].value)
            if key in kb.BLOCKING_LAUNCH_ENV_VARS and value == "1":
                self.facts.debug_switches.append(DebugSwitch(node, "blocking launches", self.context()))

    def _record_env_call(self, node: cst.Call, qualname: str | None) -> None:
        self._record_debug_switch(node, qualname)
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


def _pedantic_arguments(node: cst.Call) -> list[cst.BaseExpression]:
    """What `benchmark.pedantic(fn, args=(x,), kwargs={"y": y})` hands the function."""
    handed: list[cst.BaseExpression] = []
    for name in ("args", "kwargs"):
        given = keyword_arg(node, name)
        if isinstance(given, (cst.Tuple, cst.List)):
            handed.extend(element.value for element in given.elements)
        elif isinstance(given, cst.Dict):
            handed.extend(element.value for element in given.elements if isinstance(element, cst.DictElement))
    return handed


def _timeit_statement(call: cst.Call) -> cst.BaseExpression | None:
    """What `timeit.timeit` / `timeit.Timer` times: its first argument or its `stmt=`."""
    return positional_arg(call) or keyword_arg(call, "stmt")


def _called_in_statement(statement: cst.SimpleString) -> str | None:
    """`"all_gather()"`, `"step(x, y)"`: the name of the one function a statement string calls."""
    value = statement.evaluated_value
    if not isinstance(value, str):
        return None
    try:
        parsed = cst.parse_expression(value.strip())
    except cst.ParserSyntaxError:
        return None
    return parsed.func.value if isinstance(parsed, cst.Call) and isinstance(parsed.func, cst.Name) else None


def _histogram_bounds_given(node: cst.Call, qualname: str | None, method: str | None) -> bool:
    """`torch.histc(x, bins=10, min=0, max=9)`: with its range given, torch's CUDA histogram has its
    bins before it starts (aten's `_histc_cuda_template` reads `x.min()` and `x.max()` back only
    when `min == max`, the default 0 and 0)."""
    if called_name(qualname, method) != "histc":
        return False
    first = 2 if qualname in kb.DATA_SIZED_FUNCTIONS else 1  # torch.histc(input, bins, min, max) / input.histc(bins, min, max)
    low, high = keyword_arg(node, "min") or positional_arg(node, first), keyword_arg(node, "max") or positional_arg(node, first + 1)
    if low is None or high is None:
        return False
    return not (isinstance(low, (cst.Integer, cst.Float)) and isinstance(high, (cst.Integer, cst.Float)) and low.value == high.value)


def _on_unknown_object(func: cst.BaseExpression, receiver: Value | None, ctx: Context) -> bool:
    """`model.log_info(info)`, `self.algo.train_on_batch(batch)`: a method of an object handed to
    the function (a parameter, or a field of `self`) whose value (and so class) the walk does not
    know; `self.method()` is the class's own, and a local bound by a library call (`xp =
    cupy.get_array_module(x)`) or a loop's element is no object the project handed over."""
    if not isinstance(func, cst.Attribute) or receiver is not None or func.attr.value in GENERIC_METHODS:
        return False
    owner = dotted_name(func.value)
    if owner is None or owner == "self":
        return False
    root = owner.split(".", 1)[0]
    node = ctx.function.node
    return root == "self" or (isinstance(node, cst.FunctionDef) and any(param.name.value == root for param in parameters_of(node)))
