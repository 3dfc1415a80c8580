"""The one walk over a module that gathers every fact the rules read.

A single `CSTVisitor` pass, in source order: it keeps the import table and the name
bindings current, evaluates expressions as it meets them (see `evaluate.py`), and records
transfers, syncs, clock reads, GPU work, loops, thread launches and environment writes with
the context each was seen in. Rules run afterwards, on the finished `ModuleFacts`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import reduce
from typing import TYPE_CHECKING

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.array_ops import OperationFinder
from gpuadvisor.analysis.facts.frequency import assigned_in_file, is_sampling_guard, mark_iterating_functions, names_data, resolve_frequencies, sampling_period
from gpuadvisor.analysis.facts.evaluate import (
    HOST_DEVICE,
    MAYBE_GPU_DEVICE,
    Evaluator,
    Scope,
    cudf_element_read,
    is_string_formatting,
    legacy_scalar_read,
    method_receiver,
    parameters_of,
)
from gpuadvisor.analysis.facts.module_facts import (
    is_test_path,
    CallFact,
    Context,
    DebugSwitch,
    EnvWrite,
    Event,
    EventKind,
    ExternalCall,
    FunctionFacts,
    ImportSeen,
    LoopFacts,
    LoopNode,
    ModuleFacts,
    NamedFieldStore,
    ScopedTimer,
    Transfer,
    while_bound,
)
from gpuadvisor.analysis.facts.imports import ImportTable, dotted_name, field_names, is_none, class_methods, keyword_arg, literal_integer, literal_string, names_in_target, positional_arg, referenced_names
from gpuadvisor.analysis.facts.call_facts import CallRecorder
from gpuadvisor.analysis.facts.masked_reads import only_reduced_reads
from gpuadvisor.analysis.facts.traverse import ReadOnlyVisitor, calls_in, child_nodes, own_nodes
from gpuadvisor.analysis.facts.training import (
    TrainedTensors,
    host_only_script,
    may_train,
    names_an_accelerator,
    optimizer_step_in,
    steps_optimizer,
    trained_tensors,
)
from gpuadvisor.analysis.facts.settings import Truth, attribute_defaults, bindings_in, literal_truth, switched_off_parameter, values_bound_to
from gpuadvisor.analysis.facts.values import Device, Kind, Passthrough, Value, array, either, merge_devices, number

if TYPE_CHECKING:
    from gpuadvisor.analysis.facts.project import ProjectContext
    from gpuadvisor.analysis.facts.watch import Seeds

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
#: Iterations up to which a loop counts as "a handful" (see `LoopFacts.few_iterations`).
FEW_ITERATIONS = 8
#: The same for a loop of module code outside any loop, which runs once in the program's life
#: (see `LoopFacts.short_once`).
ONCE_RUN_FEW_ITERATIONS = 16
#: A parameter's default is weaker evidence of a loop's size than a literal bound (callers may
#: pass more): only a default this small (`num_episodes=3`) makes the loop a handful.
FEW_BY_DEFAULT = 3


def _few_by_default(default: cst.BaseExpression) -> Value | None:
    """A literal default of at most `FEW_BY_DEFAULT` (`num_episodes=3`), as a number."""
    value = literal_integer(default)
    return number(value) if value is not None and value <= FEW_BY_DEFAULT else None


def _pair(target: cst.BaseExpression) -> bool:
    """A loop target of two names or parts (`i, p`, `[i, (n, p)]`)."""
    return isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2


def _names_dimensions(expr: cst.BaseExpression) -> bool:
    """Does the expression count an array's dimensions (`x.shape`, `range(x.ndim)`, `axes`)?

    `x.shape[0]` is a length along an axis, not a count of axes, so subscripts are skipped.
    """
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Subscript):
            continue
        if isinstance(node, cst.Attribute) and node.attr.value in kb.DIMENSION_ATTRIBUTES:
            return True
        if isinstance(node, cst.Name) and node.value in kb.DIMENSION_NAMES:
            return True
        stack.extend(child_nodes(node))
    return False


_PYTHON_TYPES = frozenset({"tuple", "list", "dict", "set", "str", "bytes", "int", "float", "bool", "complex"})


def _isinstance_test(test: cst.BaseExpression, imports: ImportTable) -> tuple[str, list[cst.BaseExpression]] | None:
    """`isinstance(name, T)` / `isinstance(name, (T, U))`: the name and the types it is tested against."""
    if not isinstance(test, cst.Call) or imports.qualified_name(test.func) != "builtins.isinstance" or len(test.args) != 2:
        return None
    subject, types = test.args[0].value, test.args[1].value
    if not isinstance(subject, cst.Name):
        return None
    return subject.value, [element.value for element in types.elements] if isinstance(types, cst.Tuple) else [types]


def _narrowed_to_python_object(test: cst.BaseExpression, imports: ImportTable) -> str | None:
    """The name an `isinstance(name, tuple)`-style test proves to be a plain Python object."""
    tested = _isinstance_test(test, imports)
    if tested is not None and all(isinstance(n, cst.Name) and n.value in _PYTHON_TYPES for n in tested[1]):
        return tested[0]
    return None


#: Classes an `isinstance` test names when it asks "is this one array?".
_ARRAY_CLASSES = frozenset({"torch.Tensor", "numpy.ndarray", "cupy.ndarray"})


def _tested_as_array(test: cst.BaseExpression, imports: ImportTable) -> str | None:
    """The name an `isinstance(name, torch.Tensor)` test asks about."""
    tested = _isinstance_test(test, imports)
    if tested is None or len(tested[1]) != 1 or not isinstance(tested[1][0], (cst.Name, cst.Attribute)):
        return None
    return tested[0] if imports.qualified_name(tested[1][0]) in _ARRAY_CLASSES else None


def _last_statement(body: cst.BaseSuite) -> cst.BaseSmallStatement | None:
    if isinstance(body, cst.SimpleStatementSuite):
        return body.body[-1] if body.body else None
    lines = body.body if isinstance(body, cst.IndentedBlock) else []
    last = lines[-1] if lines else None
    return last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else None


def _exits_loop(body: cst.BaseSuite) -> bool:
    """An `if` body that ends in `break` or `return`: a convergence or early-exit test."""
    return isinstance(_last_statement(body), (cst.Break, cst.Return))


def _skips_the_rest(node: cst.If) -> bool:
    """`if total_steps % self.checkpoint_every: return` (or `continue` in a loop): the statements
    after it in its block run once every so many calls, as under `if total_steps % every == 0:`.
    (Only a periodic test: after `if i == 0: continue` the rest runs on all but one iteration.)"""
    exits = node.orelse is None and isinstance(_last_statement(node.body), (cst.Return, cst.Continue))
    return exits and any(isinstance(part, cst.BinaryOperation) and isinstance(part.operator, cst.Modulo) for part in (node.test, *own_nodes(node.test)))


def _returns_period_test(function: cst.FunctionDef) -> bool:
    """The function tests `x % n == 0` and returns only tests and names (no call whose result
    could be anything): `return step % freq == 0`, or `test = ...; return test`."""
    periodic, returns = False, []
    for node in own_nodes(function.body):
        if isinstance(node, cst.Return):
            returns.append(node.value)
        if isinstance(node, cst.Comparison) and isinstance(node.left, cst.BinaryOperation) and isinstance(node.left.operator, cst.Modulo):
            periodic = periodic or any(isinstance(part.operator, cst.Equal) for part in node.comparisons)
    return periodic and bool(returns) and all(isinstance(value, (cst.Name, cst.Comparison, cst.BooleanOperation)) for value in returns)


def _steps_optimizer(body: cst.BaseSuite) -> bool:
    """`if acc_step == 0: ... optimizer.step()`: the branch is the optimizer step of gradient
    accumulation, taken on every training step (every step when accumulating over one batch),
    so what it does is per-step work, not a sampled log."""
    for line in body.body if isinstance(body, cst.IndentedBlock) else []:
        for small in line.body if isinstance(line, cst.SimpleStatementLine) else []:
            call = small.value if isinstance(small, cst.Expr) else None
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "step"):
                continue
            name = (dotted_name(call.func.value) or "").rsplit(".", 1)[-1].lower()
            if any(word in name for word in kb.OPTIMIZER_NAME_WORDS) or name in kb.OPTIMIZER_SHORT_NAMES:
                return True
    return False


def _training_cadence(test: cst.BaseExpression) -> bool:
    """`step % args.replay_frequency == 0`, `t % update_every == 0`: a period named for the
    training step itself (see `kb.TRAINING_CADENCE_WORDS`), every few environment steps."""
    if not isinstance(test, cst.Comparison) or not isinstance(test.left, cst.BinaryOperation):
        return False
    if not isinstance(test.left.operator, cst.Modulo):
        return False
    name = (dotted_name(test.left.right) or "").rsplit(".", 1)[-1].lower()
    return any(word in name for word in kb.TRAINING_CADENCE_WORDS) and not any(word in name for word in kb.SPARSE_EVENT_WORDS)


def _runs_once(body: cst.BaseSuite) -> bool:
    """An `if` body that ends by leaving the loop (`raise`, `break`, `return`): it runs at most once."""
    return isinstance(_last_statement(body), (cst.Raise, cst.Break, cst.Return))


def _within_tolerance(test: cst.BaseExpression) -> bool:
    """`if norm(a - b) < 1e-10:`: a numerical decision against a tolerance (converged, cache
    still valid), whose branch saves or stops work; the wait is the price of deciding."""
    if not isinstance(test, cst.Comparison):
        return isinstance(test, cst.BooleanOperation) and (_within_tolerance(test.left) or _within_tolerance(test.right))
    operands = [test.left, *(comparison.comparator for comparison in test.comparisons)]
    return any(isinstance(operand, cst.Float) and 0 < abs(float(operand.value.replace("_", ""))) <= kb.TOLERANCE for operand in operands)


def _does_nothing(node: cst.FunctionDef) -> bool:
    """A body of only `return`, `pass`, `...`, a docstring, or names bound and never read
    (`tid = wp.tid()  # noqa: F841` in a launch-overhead probe kernel): nothing it computes leaves it."""
    if not isinstance(node.body, cst.IndentedBlock):
        return False
    for line in node.body.body:
        if not isinstance(line, cst.SimpleStatementLine):
            return False
        for small in line.body:
            empty_return = isinstance(small, cst.Return) and small.value is None
            constant = isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis))
            if not (empty_return or constant or isinstance(small, cst.Pass) or _binds_a_bare_call(small)):
                return False
    return True  # no statement reads a name, so what the calls return goes nowhere


def _binds_a_bare_call(small: cst.BaseSmallStatement) -> bool:
    """`tid = wp.tid()`: a name bound from a call handed nothing (it cannot write into an array)."""
    if not isinstance(small, cst.Assign) or not all(isinstance(target.target, cst.Name) for target in small.targets):
        return False
    return isinstance(small.value, cst.Call) and not small.value.args


def _only_raises(body: cst.BaseSuite) -> bool:
    """An `if` body that only raises: the test is input validation."""
    if isinstance(body, cst.SimpleStatementSuite):
        return all(isinstance(small, cst.Raise) for small in body.body)
    lines = body.body if isinstance(body, cst.IndentedBlock) else []
    return bool(lines) and all(
        isinstance(line, cst.SimpleStatementLine) and all(isinstance(small, cst.Raise) for small in line.body)
        for line in lines
    )


#: Walks after the first, each binding parameters one call deeper; most files need none.
_MAX_REWALKS = 4


def gather_facts(
    module: cst.Module,
    path: str = "<string>",
    seeds: Seeds | None = None,
    context: ProjectContext | None = None,
    source: str | None = None,
) -> ModuleFacts:
    """The one shared walk. `seeds` are facts known from a run (the shapes and hit counts
    `gpuadvisor profile` saw): they take the place of what evaluation would say. `context` is
    what the other files of the checked project say about this one (calls, GPU classes).
    `source`, the module's text where the caller has it, spares reading every function for a
    training step in a file that never calls `backward`."""
    if context is not None and context.gpu_project and source is not None and host_only_script(source):
        context = replace(context, gpu_project=False)  # a CPU script in a project that also uses CUDA
    trains = source is None or may_train(source)
    traces = source is None or kb.TRACING_CHECK_TEXT in source
    # Facts of the text alone, the same for every walk below: fields naming a library class, and the
    # losses of a script whose training loop is its top-level code (when it names a device).
    fields = field_names(module)
    script_trains = context is not None and context.gpu_project and trains and (source is None or names_an_accelerator(source))
    script_loss = trained_tensors(module, ImportTable()) if script_trains else TrainedTensors()
    facts = _walk(module, path, seeds, {}, context, trains=trains, traces=traces, fields=fields, script_loss=script_loss)
    bound: dict[tuple[str, str], Value] = {}
    # `GPT.__init__` builds `Block(config)`, a module class defined further down: a second walk
    # knows it is a module from the start.
    # ... and that `AverageMeter` built in `main()` above its class is a plain one (its instances' properties are followed).
    early = dict(facts.class_kinds) if facts.classes_used_early else {}
    rewalk = bool(early) or _results_learnt_late(facts)
    for _ in range(_MAX_REWALKS):
        wanted = parameters_bound_at_call_sites(facts)
        if wanted == bound and not rewalk:
            break
        # Another walk sees those parameters as what the callers pass; a method called with
        # them may hand them on (`Net.forward` -> `Head.forward`), hence more than one.
        bound, rewalk = wanted, False
        earlier = facts.function_results
        facts = _walk(module, path, seeds, bound, context, early, trains, earlier, traces, fields=fields, script_loss=script_loss)
        rewalk = _results_learnt_late(facts, earlier)  # `train_step` -> `step` -> `forward`, each written below its caller
    return facts


def _results_learnt_late(facts: ModuleFacts, earlier: dict[str, Value] | None = None) -> bool:
    """A call asked what a function of this file returns before the walk reached it, and the
    walk has learnt it since, or learnt something else than the walk before handed that call (a
    meter's `avg`, a number until the walk saw what its `update` is handed): another walk hands
    it to that call."""
    earlier = earlier or {}
    return any(key in facts.function_results and facts.function_results[key] != earlier.get(key) for key in facts.results_asked_early)


def _walk(
    module: cst.Module,
    path: str,
    seeds: Seeds | None,
    bound: dict[tuple[str, str], Value],
    context: ProjectContext | None,
    class_kinds: dict[str, bool] | None = None,
    trains: bool = True,
    earlier_results: dict[str, Value] | None = None,
    traces: bool = True,
    *,
    fields: dict[str, cst.Name | cst.Attribute | None],
    script_loss: TrainedTensors,
) -> ModuleFacts:
    walker = FactWalker(module)
    walker.facts.imports.fields = fields
    methods = class_methods(module)
    walker.values.properties = {key for key, is_property in methods.items() if is_property}
    walker.methods_below = set(methods)
    walker.values.earlier_results = dict(earlier_results or {})
    for name, is_module in (class_kinds or {}).items():  # classes the last walk met below their first use
        (walker.values.module_classes if is_module else walker.values.plain_classes).add(name)
    walker.bound_parameters = bound
    walker.facts.test_file = is_test_path(path)
    if seeds is not None:
        walker.facts.values.update(seeds.values)
        walker.facts.ran_repeatedly = seeds.repeated
    if context:
        walker.facts.external_calls = list(context.external_calls)
        walker.facts.gpu_classes.update(context.gpu_classes)
        walker.values.project_classes = dict(context.imported_classes)
        walker.values.autograd_functions.update(context.imported_autograd_functions)
        walker.values.project_results = dict(context.imported_results)
        walker.values.project_passthrough = dict(context.imported_passthrough)
        walker.project_uploads = dict(context.imported_uploads)
        walker.inherited_attributes = {name: dict(attributes) for name, attributes in context.inherited_attributes}
        walker.gpu_project = context.gpu_project
        walker.distribution_checks_off = context.distribution_checks_off
        if context.project_callers is not None:
            walker.facts.project_callers = frozenset(context.project_callers)
        walker.facts.imported_clock_readers = frozenset(context.imported_clock_readers)
        walker.imported_frameworks = dict(context.imported_frameworks)
        walker.imported_compilers = frozenset(context.imported_compilers)
        for name, value in context.imported_values:
            walker.values.store(name, value)  # `from utils import std`: the GPU tensor utils.py made
    walker.trains = trains
    walker.traces = traces
    if script_loss.names:
        # A script whose training loop is its top-level code: the same loss fact as a function's.
        top = walker.values.scopes[0]
        top.trained, top.trained_by, top.trained_found = dict(script_loss.names), script_loss.definitions, dict(script_loss.names)
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            # A function's body runs after the whole module: `main()` may call a `train()`
            # defined below it.
            walker.facts.imports.local_definitions.add(statement.name.value)
    for statement in module.body:
        walker.top_statement = statement
        walker.walk(statement)
    # (before `finish`, which works out how often each function runs: a plain class's
    # constructor runs as often as its objects are built, a module's once)
    walker.facts.class_kinds = {name: True for name in walker.values.module_classes}
    walker.facts.class_kinds.update((name, False) for name in walker.values.plain_classes)
    walker.finish()
    walker.facts.function_results = walker.values.function_results
    walker.facts.results_asked_early = walker.values.results_asked_early
    walker.facts.function_passthrough = walker.values.function_passthrough
    walker.facts.module_values = _top_level_values(walker.values.scopes[0].bindings, walker.facts.imports)
    _move_submodules(walker.facts)
    return walker.facts


def _top_level_values(bindings: dict[str, Value | None], imports: ImportTable) -> dict[str, Value]:
    """The names the module's top level leaves bound to a GPU array or a device, for files that
    import them; what the file itself imported is the other file's to tell."""
    return {
        name: value
        for name, value in bindings.items()
        if value is not None
        and name.isidentifier()
        and name not in imports.from_imports
        and value.on_gpu
        and (value.is_array or value.kind is Kind.DEVICE)
    }


def _move_submodules(facts: ModuleFacts) -> None:
    """A module moved to the GPU takes its submodules along: their classes run there too."""
    pending = list(facts.gpu_classes.items())
    while pending:
        owner, value = pending.pop()
        for name in sorted(facts.submodule_classes.get(owner, ())):
            if name not in facts.gpu_classes:
                facts.gpu_classes[name] = replace(value, class_name=name)
                pending.append((name, facts.gpu_classes[name]))


def _names_tensor(annotation: cst.BaseExpression, facts: ModuleFacts) -> bool:
    """`torch.Tensor`, `Tensor`, `Optional[torch.Tensor]`, `torch.Tensor | None`."""
    if isinstance(annotation, cst.Subscript) and (dotted_name(annotation.value) or "").rsplit(".", 1)[-1] == "Optional":
        element = annotation.slice[0].slice if len(annotation.slice) == 1 else None
        return isinstance(element, cst.Index) and _names_tensor(element.value, facts)
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        left, right = annotation.left, annotation.right
        return (_names_tensor(left, facts) and is_none(right)) or (is_none(left) and _names_tensor(right, facts))
    return isinstance(annotation, (cst.Name, cst.Attribute)) and facts.imports.qualified_name(annotation) == "torch.Tensor"


def _names_tensor_mapping(annotation: cst.BaseExpression, facts: ModuleFacts) -> bool:
    """`Dict[str, torch.Tensor]`, `dict[str, Tensor]`, `Mapping[str, torch.Tensor]`."""
    if not (isinstance(annotation, cst.Subscript) and len(annotation.slice) == 2):
        return False
    if (dotted_name(annotation.value) or "").rsplit(".", 1)[-1] not in ("Dict", "dict", "Mapping", "MutableMapping"):
        return False
    element = annotation.slice[1].slice
    return isinstance(element, cst.Index) and _names_tensor(element.value, facts)


def parameters_bound_at_call_sites(facts: ModuleFacts) -> dict[tuple[str, str], Value]:
    """Parameters of this file's functions that every call site of this file hands a GPU value
    (`train(model, loader, device)` called from `main` with a model on the GPU).

    Unknown (absent) when the call sites disagree, when one leaves the parameter to its
    default or hands a value we cannot evaluate, or when no call site is seen. A call site in
    this file that hands on its own caller's parameter (a public function forwarding what the
    user gave it) is left out of the vote.
    """
    bound = triton_tensor_parameters(facts) | framework_step_parameters(facts)
    for key, method in facts.functions.items():
        owner = key.split(".", 1)[0] if "." in key else None
        if owner in facts.gpu_classes and isinstance(method.node, cst.FunctionDef):
            bound[(key, "self")] = facts.gpu_classes[owner]  # `MoCo().cuda()`: its methods run on the GPU
            if key.rsplit(".", 1)[-1] in kb.PER_CALL_METHODS:
                # `def forward(self, x: torch.Tensor, input_pos: Optional[torch.Tensor])`: the inputs
                # of a module on the GPU meet its parameters there.
                device = facts.gpu_classes[owner].device
                read_as_tensors = _read_as_tensors(method.node, kb.FORWARD_TENSOR_ATTRIBUTES)
                for param in method.node.params.params:
                    if param.annotation is not None and _names_tensor(param.annotation.annotation, facts):
                        bound[(key, param.name.value)] = array("torch", device)
                    elif param.annotation is not None and _names_tensor_mapping(param.annotation.annotation, facts):
                        # `def forward(self, data: Dict[str, torch.Tensor])`: `data["batch"]` is an input tensor
                        bound[(key, param.name.value)] = replace(array("torch", device), holds_fields=True, keyed=True)
                    elif _unannotated_tensor_input(param, read_as_tensors):
                        # `def forward(self, x, batch)` reading `batch.max()`: a tensor by its use,
                        # an input of a module on the GPU as an annotated one would be
                        bound[(key, param.name.value)] = array("torch", device)
    calls_of: dict[str, list[Event]] = {}  # one pass over the events, not one per function
    for scope in facts.scopes:
        for event in scope.events:
            for called in facts.functions_called(event):
                calls_of.setdefault(called.name, []).append(event)
    external: dict[str, list[ExternalCall]] = {}
    for call in facts.external_calls:
        external.setdefault(call.key, []).append(call)
    for key in calls_of.keys() | external.keys():
        function = facts.functions.get(key)
        node = function.node if function is not None else None
        if function is None or not isinstance(node, cst.FunctionDef) or isinstance(node.params.star_arg, cst.Param):
            continue
        events, others = calls_of.get(key, []), external.get(key, [])
        found = [facts.call_of.get(event.node) if isinstance(event.node, cst.Call) else None for event in events]
        sites = [site for site in found if site is not None]
        if len(sites) != len(found) or any(call.has_star for call in others) or not (sites or others):
            continue
        params = [*node.params.posonly_params, *node.params.params]
        through_self = "." in key and bool(params) and params[0].name.value in ("self", "cls")
        for index, param in enumerate(params[1:] if through_self else params):
            name = param.name.value
            values = [_argument(facts, site, index, name) for site in sites]
            values += [_external_argument(call, index, name) for call in others]
            # `PixtralContentFilter(torch.device("cpu"))`, `SpeakerEncoder(device, loss_device)` with
            # `loss_device = torch.device("cpu")` at every call: a device parameter is taken for the
            # GPU by its name (`device`, or `self.loss_device` read in `.to()`) unless every caller
            # names the host
            named_host = [value for value in values if value is not None and value.names_the_host]
            if name in kb.DEVICE_PARAMETER_NAMES and _defaults_to_host(param) and _only_passed_on(node, name):
                # `def _wigner_nj(*irreps, dtype=None, device=None)` called without a device: the host
                left_out = [_leaves_out(site, index, name) for site in sites] + [_external_leaves_out(call, index, name) for call in others]
                named_host += [HOST_DEVICE for value, left in zip(values, left_out) if left and value is None]
            if len(named_host) == len(values):
                bound[(key, name)] = named_host[0]
                continue
            if name in kb.DEVICE_PARAMETER_NAMES:
                continue
            # A caller in this file that hands on its own parameter (the public functional API
            # forwarding the user's tensors, `binary_stat_scores(preds, target)`) says nothing
            # against the GPU callers: the function runs on the GPU for them. Any other value we
            # cannot evaluate, or a default left in place, leaves the parameter unknown.
            forwarded = [value is None and _forwards_parameter(site, index, name) for site, value in zip(sites, values)]
            handed = [value for value, handed_on in zip(values, forwarded + [False] * len(others)) if not handed_on]
            first = next((value for value in handed if value is not None and value.on_gpu), None)
            if first is None or first.kind not in (Kind.ARRAY, Kind.MODULE, Kind.DEVICE, Kind.PARAMETERS):
                continue
            if all(value is not None and value.kind is first.kind and (value.on_gpu or _same_library_array(value, first)) for value in handed):
                agreed_dtype = first.dtype if all(value is not None and value.dtype == first.dtype for value in values) else None
                agreed_shape = first.shape if all(value is not None and value.shape == first.shape for value in values) else None
                agreed = replace(first, shape=agreed_shape, number=None, dtype=agreed_dtype)
                known = bound.get((key, name))
                if known is None or (known.evidence or 0) <= (agreed.evidence or 0):
                    # callers handing the result of a call we cannot see into do not make an
                    # annotated input of a GPU module less surely on the GPU
                    bound[(key, name)] = agreed
    return bound


def _same_library_array(value: Value, gpu_value: Value) -> bool:
    """A host array of the library a GPU caller passes (`mel_spectrogram(audio)` in a dataset's
    `__getitem__`, `mel_spectrogram(y_g_hat)` in the training loop): the function serves both, and
    what it does to its input costs on the GPU for the callers that hand it one there."""
    return value.kind is Kind.ARRAY and gpu_value.kind is Kind.ARRAY and value.library == gpu_value.library and value.device is Device.HOST


def triton_tensor_parameters(facts: ModuleFacts) -> dict[tuple[str, str], Value]:
    """Parameters a function hands to a Triton kernel launch and reads as a tensor
    (`X_stride=_input.stride(-2)`): GPU tensors, as Triton takes no other (a library of kernels,
    `cross_entropy_forward(_input, target, ...)`, whose callers are outside the project)."""
    bound: dict[tuple[str, str], Value] = {}
    for call in facts.calls:
        function = call.ctx.function
        if not isinstance(function.node, cst.FunctionDef) or not _launches_triton(call, facts):
            continue
        params = function.node.params
        names = {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)}
        views = _views_of(function.node)
        handed = {views.get(arg.value.value, arg.value.value) for arg in call.node.args if isinstance(arg.value, cst.Name)} & names
        tensors = {views.get(name, name) for name in _read_as_tensors(function.node)}
        for name in handed & tensors:
            bound[(function.name, name)] = array("torch", Device.GPU)
    return bound


def _views_of(function: cst.FunctionDef) -> dict[str, str]:
    """Names bound to a slice or a view of another name (`target_chunk = target[a:b]`, then
    `target_chunk = target_chunk.contiguous()`), each mapped to the name it was first taken from."""
    source: dict[str, str] = {}
    for node in own_nodes(function.body):
        if not isinstance(node, cst.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            continue
        value = node.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in kb.RESHAPING_METHODS:
            value = value.func.value
        base = value.value if isinstance(value, cst.Subscript) else value
        name = node.targets[0].target.value
        if isinstance(base, cst.Name) and base.value != name:
            source[name] = source.get(base.value, base.value)
    return source


def framework_step_parameters(facts: ModuleFacts) -> dict[tuple[str, str], Value]:
    """`forward(self, model, sample)` of a fairseq criterion, `compute_loss(self, model, inputs)`
    of a Hugging Face Trainer: the trainer hands them the model on the accelerator and the batch
    moved there (its fields are tensors on that device); a metric's `update(preds: Tensor, ...)`
    is handed the model's outputs, on that device too."""
    bound: dict[tuple[str, str], Value] = {}
    for owner, framework in facts.framework_classes.items():
        for method in framework.methods:
            function = facts.functions.get(f"{owner}.{method}")
            if function is None or not isinstance(function.node, cst.FunctionDef):
                continue
            names = {param.name.value for param in function.node.params.params}
            if framework.model in names:
                bound[(function.name, framework.model)] = Value(Kind.MODULE, "torch", Device.MAYBE_GPU)
            if framework.batch in names:
                bound[(function.name, framework.batch)] = replace(array("torch", Device.MAYBE_GPU), holds_fields=True, keyed=True)
            for tensor in framework.tensors & names:
                bound[(function.name, tensor)] = array("torch", Device.MAYBE_GPU)
            for param in function.node.params.params if framework.annotated_tensors else ():
                if param.annotation is not None and _names_tensor(param.annotation.annotation, facts):
                    bound[(function.name, param.name.value)] = array("torch", Device.MAYBE_GPU)
    return bound


def _launches_triton(call: CallFact, facts: ModuleFacts) -> bool:
    """`kernel[grid](...)` of a `@triton.jit` kernel of this file, or of a kernel imported from
    the project into a file that imports Triton."""
    func = call.node.func
    if not isinstance(func, cst.Subscript):
        return False
    kernel = func.value
    if isinstance(kernel, cst.Name) and kernel.value in facts.functions:
        return facts.functions[kernel.value].triton_kernel
    qualname = facts.imports.qualified_name(kernel)
    return qualname is not None and kb.library_of(qualname) is None and facts.imports.imports_module("triton")


def _unannotated_tensor_input(param: cst.Param, read_as_tensors: set[str]) -> bool:
    """An input with no annotation and no default but `None` that the method reads what only an
    array has (`x.shape`, `batch.max()`, `mask.all()`): a flag (`return_attn=False`), a count or
    a list has none of them."""
    unset = param.default is None or is_none(param.default)
    return param.annotation is None and unset and param.name.value in read_as_tensors


def _read_as_tensors(function: cst.FunctionDef, attributes: frozenset[str] = kb.TENSOR_ONLY_ATTRIBUTES) -> set[str]:
    """Names the function reads a tensor-only attribute of (`x.stride(0)`, `x.shape`)."""
    return {
        node.value.value
        for node in own_nodes(function.body)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.attr.value in attributes
    }


def _defaults_to_host(param: cst.Param) -> bool:
    """`device=None` or `device="cpu"`: a caller that leaves it out works on the host."""
    return param.default is not None and (is_none(param.default) or literal_string(param.default) == "cpu")


def _only_passed_on(function: cst.FunctionDef, name: str) -> bool:
    """The function only hands the parameter to calls (`torch.eye(n, device=device)`): never
    rebinds or tests it (`device = device or pipe._execution_device` picks another device when
    the caller gave none)."""
    passed: set[int] = set()
    uses: list[cst.Name] = []
    for node in own_nodes(function.body):
        if isinstance(node, cst.Call):
            passed.update(id(part) for arg in node.args for part in (arg.value, arg.keyword) if part is not None)
        elif isinstance(node, cst.Name) and node.value == name:
            uses.append(node)
    return all(id(use) in passed for use in uses)


def _leaves_out(site: CallFact, index: int, name: str) -> bool:
    """The call passes nothing for the parameter: no keyword of that name, fewer positional
    arguments, and no `*args` or `**options` that might hold it."""
    return not any(arg.star for arg in site.node.args) and site.passed(name, index) is None


def _external_leaves_out(call: ExternalCall, index: int, name: str) -> bool:
    """As `_leaves_out`, for a call another file makes."""
    return not call.has_star and name not in dict(call.keywords) and index >= len(call.positional)


def _external_argument(call: ExternalCall, index: int, name: str) -> Value | None:
    """The value a call from another file passes for a parameter (by position or keyword)."""
    keywords = dict(call.keywords)
    if name in keywords:
        return keywords[name]
    return call.positional[index] if index < len(call.positional) else None


def _forwards_parameter(site: CallFact, index: int, name: str) -> bool:
    """The call passes, for the parameter, a parameter of the function it sits in (`def
    binary_stat_scores(preds, target): _validate(preds, target)`)."""
    if any(arg.star for arg in site.node.args):
        return False
    given = site.passed(name, index)
    caller = site.ctx.function.node
    if not isinstance(given, cst.Name) or not isinstance(caller, cst.FunctionDef):
        return False
    params = (*caller.params.posonly_params, *caller.params.params, *caller.params.kwonly_params)
    return any(param.name.value == given.value for param in params)


def _argument(facts: ModuleFacts, site: CallFact, index: int, name: str) -> Value | None:
    """The value a call passes for a parameter (by position or keyword). `f(*args)` leaves every
    position unknown; `f(a, b, **options)` still passes `a` and `b` by position (a keyword in
    `options` naming either would be an error), but any other parameter may be in `options`."""
    if any(arg.star == "*" for arg in site.node.args):
        return None
    keyword = site.keyword(name)
    if keyword is not None:
        return facts.value(keyword)
    return site.args[index] if index < len(site.args) else None


def _passthrough(
    node: cst.FunctionDef, returned: list[cst.BaseExpression | None], rebound: set[str], method: bool
) -> Passthrough | None:
    """Which parameters a function returns unchanged (never reassigned in its body), when every
    `return` agrees; None when none is (see `Passthrough`)."""
    params = [*node.params.posonly_params, *node.params.params]
    if method and params and params[0].name.value in ("self", "cls"):
        params = params[1:]
    position = {param.name.value: index for index, param in enumerate(params)}

    def part(expr: cst.BaseExpression) -> tuple[int, str] | None:
        if isinstance(expr, cst.Name) and expr.value in position and expr.value not in rebound:
            return (position[expr.value], expr.value)
        return None

    shapes = set()
    for expr in returned:
        if expr is None:
            return None
        if isinstance(expr, cst.Tuple):
            shapes.add(Passthrough(tuple(part(element.value) for element in expr.elements), single=False))
        else:
            shapes.add(Passthrough((part(expr),), single=True))
    if len(shapes) != 1:
        return None
    (through,) = shapes
    return through if any(found is not None for found in through.parts) else None


#: Methods on the way from host data to its device copy: dtype casts, and the moves themselves.
_CASTS_AND_MOVES = kb.DTYPE_CASTS | {"to", "cuda", "detach"}
#: Calls that build a tensor or array from the data they are handed first (`device=` moves it).
_FROM_DATA = kb.DATA_WRAPPERS | {"torch.FloatTensor", "torch.LongTensor", "cupy.asarray", "cupy.array"}


def _uploaded_parameter(
    node: cst.FunctionDef, returns: list[tuple[cst.BaseExpression | None, Value | None]], rebound: set[str], method: bool, imports: ImportTable
) -> tuple[int, str] | None:
    """The parameter a helper returns copied to the GPU, when every `return` agrees:
    `return torch.from_numpy(x).float().to(device)`, `return x.cuda()`, rlkit's
    `def from_numpy(*args, **kwargs): return torch.from_numpy(*args, **kwargs).float().to(device)`
    (the first argument of the call). (Position among a call's arguments, name); None otherwise."""
    params = [*node.params.posonly_params, *node.params.params]
    if method and params and params[0].name.value in ("self", "cls"):
        params = params[1:]
    position = {param.name.value: index for index, param in enumerate(params)}
    star = node.params.star_arg.name.value if isinstance(node.params.star_arg, cst.Param) else None
    found: set[tuple[int, str]] = set()
    for expr, value in returns:
        if expr is None or value is None or not (value.is_array and value.on_gpu):
            return None
        moved = False
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _CASTS_AND_MOVES:
            moved = moved or expr.func.attr.value in ("to", "cuda")
            expr = expr.func.value
        if isinstance(expr, cst.Call) and imports.qualified_name(expr.func) in _FROM_DATA and expr.args:
            moved = moved or keyword_arg(expr, "device") is not None or (imports.qualified_name(expr.func) or "").startswith("cupy.")
            first = expr.args[0]
            if first.star == "*" and isinstance(first.value, cst.Name) and first.value.value == star and star not in rebound:
                found.add((len(params), star))  # `*args` handed on: the first argument after the named ones
                continue
            expr = first.value if not first.star and first.keyword is None else expr
        if not (moved and isinstance(expr, cst.Name) and expr.value in position and expr.value not in rebound):
            return None
        found.add((position[expr.value], expr.value))
    return found.pop() if len(found) == 1 else None


def _casts_itself(name: str, value: cst.BaseExpression | None) -> bool:
    """`X = X.float()`, `x = x.to(torch.float32)`: the name rebound to a dtype cast of itself (a
    method of `kb.DTYPE_CASTS`, or `.to(dtype)` with a dtype spelled `torch.*`), the same data."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Name)):
        return False
    if value.func.value.value != name:
        return False
    method = value.func.attr.value
    if method in kb.DTYPE_CASTS:
        return True
    return method == "to" and len(value.args) == 1 and (dotted_name(value.args[0].value) or "").startswith("torch.")


def _breaks_at_once(loop: cst.For | cst.While) -> bool:
    """The body ends with a `break` no test guards (e3nn's `for j in range(ir.dim): ...; break  #
    do not check all components`): the loop runs its body once at most."""
    body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else []
    last = body[-1] if body else None
    return isinstance(last, cst.SimpleStatementLine) and any(isinstance(small, cst.Break) for small in last.body)


def _placing_parameter(node: cst.FunctionDef, returns: list[cst.BaseExpression | None], rebound: set[str], method: bool) -> tuple[int, str] | None:
    """The parameter every `return` makes its array on, when it defaults to the host:
    `def is_train_frame(frame_type, device=None): return torch.tensor(..., device=device)`
    makes a host tensor for the caller that leaves `device` out. (Position among a call's
    arguments, name); None otherwise."""
    params = [*node.params.posonly_params, *node.params.params]
    if method and params and params[0].name.value in ("self", "cls"):
        params = params[1:]
    found: set[str] = set()
    for expr in returns:
        placed = keyword_arg(expr, "device") if isinstance(expr, cst.Call) else None
        if not isinstance(placed, cst.Name) or placed.value in rebound:
            return None
        found.add(placed.value)
    named = [(index, param) for index, param in enumerate(params) if param.name.value in found]
    if len(found) != 1 or len(named) != 1:
        return None
    index, param = named[0]
    return (index, param.name.value) if _defaults_to_host(param) else None


#: What iterating each kind of value hands out: a batch sampler's lists of indices, a generator's
#: items (the array its `yield`s agree on).
_HANDED_OUT = {Kind.INDEX_SAMPLER: Kind.INDEX_LIST, Kind.ITEMS: Kind.ARRAY}


def _steps_beside(inner: LoopNode, outer: LoopNode) -> bool:
    """The outer loop steps an optimizer in its own body, outside the inner loop: each outer
    iteration is one training step, and the inner loop part of it (an RNN encoder's loop over
    time steps), not a pass over data that would make the outer loop an epoch loop."""
    if not isinstance(outer, (cst.For, cst.While)):
        return False
    inside = {id(node) for node in own_nodes(inner)}
    return any(isinstance(node, cst.Call) and id(node) not in inside and steps_optimizer(node) for node in own_nodes(outer.body))


def _made_items(returns: list[list[Value | None] | None]) -> tuple[Value | None, ...]:
    """Per item of the tuple every `return` hands back, the GPU module or array (or device)
    they all agree on, sizes aside; empty when the returns differ in form or none is known."""
    if not returns or any(items is None for items in returns) or len({len(items) for items in returns if items is not None}) != 1:
        return ()
    made: list[Value | None] = []
    for position in zip(*(items for items in returns if items is not None)):
        sizeless = [replace(value, shape=None, ndim=None) if value is not None else None for value in position]
        first = sizeless[0]
        known = first is not None and all(value == first for value in sizeless) and (
            first.kind is Kind.DEVICE or (first.on_gpu and first.kind in (Kind.ARRAY, Kind.MODULE))
        )
        made.append(first if known else None)
    return tuple(made) if any(value is not None for value in made) else ()


def _memoises(node: cst.If, facts: ModuleFacts) -> bool:
    """`if key not in cache: cache[key] = make()`: the body runs once per key, not per call;
    `if self.table is None: self.table = make()` and `if not hasattr(self, "table"): self.table =
    make()`: once, the first time."""
    test = node.test
    if _sets_when_missing(node):
        return True
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    if _fills_when_empty(node, test):
        return True
    if not isinstance(test.comparisons[0].operator, cst.NotIn):
        return False
    key, cache = facts.code(test.left), facts.code(test.comparisons[0].comparator)
    lines = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
    for line in lines:
        for small in line.body if isinstance(line, cst.SimpleStatementLine) else []:
            for target in small.targets if isinstance(small, cst.Assign) else []:
                stored = target.target
                if (
                    isinstance(stored, cst.Subscript)
                    and len(stored.slice) == 1
                    and isinstance(stored.slice[0].slice, cst.Index)
                    and facts.code(stored.value) == cache
                    and facts.code(stored.slice[0].slice.value) == key
                ):
                    return True
    return False


def _sets_when_missing(node: cst.If) -> bool:
    """`if not hasattr(self, "queue"):` whose body sets `self.queue`: an attribute made on first use."""
    test = node.test
    if not (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and isinstance(test.expression, cst.Call)):
        return False
    call = test.expression
    if dotted_name(call.func) != "hasattr" or len(call.args) != 2 or not isinstance(call.args[1].value, cst.SimpleString):
        return False
    owner, attribute = dotted_name(call.args[0].value), call.args[1].value.evaluated_value
    return owner is not None and isinstance(attribute, str) and _body_sets(node, f"{owner}.{attribute}")


def _body_sets(node: cst.If, held: str) -> bool:
    """Some plain statement of the `if`'s body assigns `held` (a dotted name)."""
    lines = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
    return any(
        isinstance(small, cst.Assign) and any(dotted_name(target.target) == held for target in small.targets)
        for line in lines
        if isinstance(line, cst.SimpleStatementLine)
        for small in line.body
    )


def _fills_when_empty(node: cst.If, test: cst.Comparison) -> bool:
    """`if self.table is None:` whose body sets `self.table`: a value made on first use and kept.
    A plain name is no store that outlives the call (`if H is None: H = torch.zeros(...)` of a
    parameter fills again on every call that passes None)."""
    comparison = test.comparisons[0]
    held = dotted_name(test.left)
    if held is None or "." not in held or not isinstance(comparison.operator, cst.Is) or not is_none(comparison.comparator):
        return False
    return _body_sets(node, held)


def _elapsed_side(comparison: cst.Comparison) -> cst.BaseExpression:
    """The side of `elapsed > period` (or `period < elapsed`) that should hold the elapsed time."""
    operator = comparison.comparisons[0].operator
    return comparison.left if isinstance(operator, (cst.GreaterThan, cst.GreaterThanEqual)) else comparison.comparisons[0].comparator


class FactWalker(CallRecorder, ReadOnlyVisitor):
    def __init__(self, module: cst.Module) -> None:
        imports = ImportTable()
        module_scope = FunctionFacts("<module>", None, None)
        self.facts = ModuleFacts(module=module, imports=imports, module_scope=module_scope)
        self.facts.scopes.append(module_scope)
        self.values = Evaluator(imports, self.facts.values)
        self.values.instance_fields = self.facts.class_attributes  # filled as each class is left
        self.operations = OperationFinder(self.values.evaluate, imports)
        self._scope = module_scope
        self._loop: LoopFacts | None = None
        #: While a comprehension binds its targets: the comprehension, the outermost loop they vary in.
        self._binding_scope_of: LoopFacts | None = None
        self._guards: tuple[cst.BaseExpression, ...] = ()
        #: How many guards each open block started with (see `leave_IndentedBlock`).
        self._block_guards: list[int] = []
        self._compiled = False
        #: The checked project names CUDA: the losses its functions train with are GPU tensors.
        self.gpu_project = False
        #: The project builds its `torch.distributions` without checking their parameters.
        self.distribution_checks_off = False
        #: Helpers of other files that return an argument copied to the GPU (see `ProjectContext`).
        self.project_uploads: dict[str, tuple[int, str]] = {}
        #: Bases of other files that are framework classes (see `ProjectContext.imported_frameworks`).
        self.imported_frameworks: dict[str, str] = {}
        #: Wrappers of a compiler in other files, as this file names them (`ProjectContext.imported_compilers`).
        self.imported_compilers: frozenset[str] = frozenset()
        #: The text may call `backward` (False: no function of it is a training step).
        self.trains = True
        self.traces = True  # the text may call `torch._check` (see `_written_for_tracing`)
        self._context_cache: Context | None = None
        self._saved: list[tuple[FunctionFacts, LoopFacts | None, tuple[cst.BaseExpression, ...], bool]] = []
        # (name, is a threading.Thread subclass, the scope its body's defs are made in)
        self._classes: list[tuple[str, bool, FunctionFacts]] = []
        #: Buffers the constructor being walked registers: host tensors while it runs, on the
        #: module's device once it is moved (stored when the constructor's walk ends).
        self._moved_with_module: list[tuple[str, Value]] = []
        #: Comprehensions whose first iterable is being walked, outside their loop (see
        #: `visit_CompFor_iter`): the `for`, its loop and the guards to restore after it.
        self._outer_iterables: list[tuple[cst.CompFor, LoopFacts, tuple[cst.BaseExpression, ...]]] = []
        self._assigned_name: dict[cst.BaseExpression, str] = {}
        #: `now - last_log` in `if now - last_log > 30:` (ids): a throttle's elapsed time, no interval.
        self._throttle_elapsed: set[int] = set()
        #: The clock throttles of each `if` test (ids of the `If`), found once in `visit_If`.
        self._throttles: dict[int, list[cst.Comparison]] = {}
        #: The `elif` of an `if` whose test read a GPU value: the names that test read (see `visit_If`).
        self._elif_heads: dict[int, set[str]] = {}
        #: `x[mask] = 0`: subscripts written to, not read (a masked store can be a `masked_fill_`).
        self._stored_subscripts: set[cst.Subscript] = set()
        #: `out[mask] = src[mask]`: reads whose only use is a store through the same mask, so the
        #: count the read waits for is never needed (`torch.where(mask, src, out)` has none).
        self._masked_copies: set[cst.Subscript] = set()
        #: `x[mask] += 1`: the target of an augmented assignment, read and stored back through the
        #: same index (through a mask, the read's count is never needed either).
        self._masked_updates: set[cst.Subscript] = set()
        self._dispatch_tables: dict[tuple[int, str], tuple[str, ...]] = {}
        #: `pbar = tqdm(range(n))` in a scope: what the progress bar named `pbar` iterates.
        self._progress_bars: dict[tuple[int, str], cst.BaseExpression] = {}
        #: Host indices and masks already recorded, per loop or scope: `a[keep], b[keep]` is one
        #: fix (`keep.nonzero()` once, or the index moved to the GPU once), so one finding.
        self._indices_used: set[tuple[int, str]] = set()
        self._returned: dict[FunctionFacts, list[tuple[cst.BaseExpression | None, Value | None]]] = {}
        #: Per `return` of a tuple, the value of each item there (None for a return of anything else).
        self._returned_items: dict[FunctionFacts, list[list[Value | None] | None]] = {}
        #: What each generator function yields (`yield obs[indices], returns[indices]`).
        self._yielded: dict[FunctionFacts, list[Value | None]] = {}
        #: Per function, the list literals it appended GPU arrays to (`res = []; res.append(acc)`),
        #: with what was appended: handed back, such a list is a pack of GPU arrays.
        self._gpu_lists: dict[FunctionFacts, dict[str, Value]] = {}
        self.methods_below: set[str] = set()  # set by _walk from the text (see `class_methods`)
        self._rebound: dict[FunctionFacts, set[str]] = {}  # names each function assigns
        #: Names each function declares `global`: what it binds to them, the module's functions read.
        self._declared_global: dict[FunctionFacts, set[str]] = {}
        #: Names bound to device->host copies (`y = y_pred.cpu()`), per function: handing the name
        #: to code we cannot see hands it host data (see `_hand_to_host_code`).
        self._host_copies: dict[tuple[FunctionFacts, str], set[cst.Call]] = {}
        #: Each device->host copy seen (`.cpu()`, `.get()`) and the expression whose data it copies.
        self._copies: dict[cst.CSTNode, cst.BaseExpression] = {}
        #: For each `if` body being walked: does it end by leaving (raise/break/return)?
        self._run_once_blocks: list[bool] = []
        #: One entry per enclosing `if` branch: does it run only where no GPU is available (the
        #: `else` of `if torch.cuda.is_available():`, the body of `if not ...is_available():`)?
        self._gpu_absent_branches: list[bool] = []
        #: One entry per enclosing `if` branch of this function: is it an opt-in path (see
        #: `facts.settings`)?
        self._opt_in_branches: list[bool] = []
        self._saved_run_once: list[list[bool]] = []
        self._saved_opt_in: list[list[bool]] = []
        self._order = 0
        self._accumulating = 0  # depth of `x += ...` statements being walked
        #: For each `with` being walked: did it set a default device (see `Evaluator.context_device`)?
        self._device_blocks: list[bool] = []
        #: For each `with` being walked: the block, and per timer it opened whether it synchronises.
        self._timer_blocks: list[tuple[cst.With, list[bool]]] = []
        #: Names each `if` body bound, kept until its `else` is walked (see `merge_branches`).
        self._branch_stores: dict[cst.If, dict[str, Value | None]] = {}
        #: `if isinstance(name, torch.Tensor):` bodies that cannot run for what `name` holds (a
        #: module, its parameters): what they bind is dropped when the body is left.
        self._dead_branches: set[cst.If] = set()
        self.top_statement: cst.CSTNode | None = None  # set by gather_facts
        #: (function key, parameter) -> what every call site passes (see gather_facts).
        self.bound_parameters: dict[tuple[str, str], Value] = {}
        self._local_bases: dict[str, list[str]] = {}  # class -> its bases defined earlier in this file
        #: class -> `self.x` values its base classes in other files set (see ProjectContext).
        self.inherited_attributes: dict[str, dict[str, Value]] = {}

    def _remember(self, node: cst.CSTNode) -> None:
        """Note the top-level statement holding a node a rule may report (for positions)."""
        if self.top_statement is not None:
            self.facts.statement_of[node] = self.top_statement

    # -- context ----------------------------------------------------------------------------
    def context(self) -> Context:
        if self._context_cache is None:
            self._context_cache = Context(self._scope, self._loop, self._guards, self._compiled, any(self._opt_in_branches))
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
        """`name` changes in the current loop and every loop around it; a comprehension's target
        (`i` of `[x[i] for i in idx]`) is a name of the comprehension's own, so the loops around it
        keep whatever `i` they had."""
        if name.startswith("self.") and "." in self._scope.name:
            self._scope.writes_to_self.add(name)
        loop = self._loop
        while loop is not None:
            loop.varying.add(name)
            if loop is self._binding_scope_of:
                return
            loop = loop.parent

    def _bind(self, target: cst.BaseExpression, value: Value | None, value_node: cst.BaseExpression | None) -> None:
        for name in names_in_target(target):
            self._mark_varying(name)
        if isinstance(target, cst.Name):
            if not _casts_itself(target.value, value_node):  # `X = X.float()` keeps the data it was handed
                self._rebound.setdefault(self._scope, set()).add(target.value)  # not `module.flag = True`
            self.values.store(target.value, value)
            if target.value in self._declared_global.get(self._scope, ()):
                self._bind_global(target.value, value)
            self.values.forget_items(target.value)  # a new dict: what the old one held is not in it
        elif isinstance(target, cst.Attribute):
            dotted = dotted_name(target)
            if dotted is not None and dotted.startswith("self.") and value_node is not None and self.values.class_names:
                value = self._held_by_self(value, value_node)
            if dotted is not None:
                self.values.store(dotted, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            sources = value_node.elements if isinstance(value_node, (cst.Tuple, cst.List)) else None
            handed_back = self.values.returned_arguments(value_node) if isinstance(value_node, cst.Call) else None
            items = self.values.returned_list_items(value_node) if isinstance(value_node, cst.Call) else None
            if sources is not None and len(sources) == len(elements):
                for element, source in zip(elements, sources):
                    self._bind(element.value, self.values.evaluate(source.value), source.value)
            elif items is not None and len(items) == len(elements):
                for element, item in zip(elements, items):  # [loss] = du.all_reduce([loss])
                    self._bind(element.value, self.values.evaluate(item), item)
            else:
                # `out, hidden = model(x)`, `a, b = x`: the parts of a GPU array (its rows, or
                # the outputs of a module on the GPU) live where it lives.
                # Inferred: a part may be a tensor or a list of them (`z, log_s_list = model(x)`).
                part = replace(value, shape=None, holds_fields=False, inferred=True) if value is not None and value.is_array and value.on_gpu else None
                if value is not None and value.class_name == kb.APPENDED_ARRAYS:
                    part = replace(value, packed=False, class_name=None)  # each item is one of the arrays appended
                if value is None and isinstance(value_node, cst.Call):
                    part = self.values.parts_of(value_node)  # `_, top_ks = torch.topk(logits, k)`
                if handed_back is not None and len(handed_back) == len(elements):
                    # model, opt, step = load_checkpoint(path, model, opt): what the function hands
                    # back item by item, the parts of its result where an item is not known
                    for element, handed in zip(elements, handed_back):
                        self._bind(element.value, handed if handed is not None else part, None)
                else:
                    for element in elements:
                        self._bind(element.value, part, None)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, None, None)
        elif isinstance(target, cst.Subscript):
            self.values.store_item(target, value)
            constant = (value is not None and value.kind is Kind.NUMBER) or literal_truth(value_node) is not None
            if not constant or self._placed_by_data(target):
                array_stored: cst.BaseExpression = target.value
                while isinstance(array_stored, cst.Subscript):
                    array_stored = array_stored.value  # `onehot[i][j][token] = 1` writes into `onehot`
                self.values.filled_by_host(array_stored)  # `cost[0, 0] = 0`, `mask[0, ids] = False` keep a fill a fill

    def _placed_by_data(self, target: cst.Subscript) -> bool:
        """A constant stored where the data says (`onehot[i][j][token] = 1` with `token = src[i][j]`,
        OpenNMT's graph encoder): an index changes in the loop but is neither the loop's own target
        nor a counter, so the array encodes what the loop read, not a pattern one GPU fill makes."""
        loops = self.context().loops()
        if not loops:
            return False
        varying = set().union(*(loop.varying for loop in loops))
        own = set().union(*(loop.targets | loop.counters for loop in loops))
        indices: set[str] = set()
        node: cst.BaseExpression = target
        while isinstance(node, cst.Subscript):
            for element in node.slice:
                indices |= referenced_names(element)
            node = node.value
        return bool((indices & varying) - own)

    def visit_Global(self, node: cst.Global) -> None:
        self._declared_global.setdefault(self._scope, set()).update(item.name.value for item in node.names)

    def _bind_global(self, name: str, value: Value | None) -> None:
        """`global device; device = torch.device("cuda:0" if use_gpu else "cpu")` in a set-up
        function (rlkit's `set_gpu_mode`): the module's functions read the global when they run,
        after it, so the device joins what the module bound (`device = None`) as a device chosen
        at run time. Only devices, as with the two branches of an `if` (`Evaluator.merge_branches`);
        the functions walked before the set-up function still see the module's own value."""
        if value is None or value.kind is not Kind.DEVICE:
            return
        module = self.values.scopes[0].bindings
        module[name] = either(module.get(name), value)

    def _held_by_self(self, value: Value | None, value_node: cst.BaseExpression) -> Value | None:
        """`self.x = ...` in a class: the module classes built into it are its submodules, and in
        a module on the GPU, submodules and `nn.Parameter`s live on the GPU too (`.cuda()` moves
        them; a plain tensor attribute stays where it was made). In a module whose device this
        file does not show (`self` of an `nn.Module` class), a parameter is wherever the user
        moves the module: its device is unknown, not the host it was made on."""
        built = self._modules_built_in(value_node)
        if built:
            self.facts.submodule_classes.setdefault(self.values.class_names[-1], set()).update(built)
        if value is None:
            return value
        made = self.facts.call_of.get(value_node) if isinstance(value_node, cst.Call) else None
        parameter = value.is_array and made is not None and made.qualname in kb.PARAMETER_CLASSES
        owner = self.values.lookup("self")
        if owner is None or owner.kind is not Kind.MODULE or not owner.on_gpu:
            in_module_class = self.values.class_names[-1] in self.values.module_classes
            return None if parameter and in_module_class else value
        if value.kind is Kind.MODULE or parameter:
            return value.moved_to(owner.device)
        return value

    def _modules_built_in(self, expression: cst.BaseExpression) -> set[str]:
        """Classes of the project whose modules an expression constructs (`Head()`, a list of them,
        `nn.ModuleList([...])`)."""
        built: set[str] = set()
        stack: list[cst.CSTNode] = [expression]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Call):
                made = self.values.evaluate(node)
                if made is not None and made.kind is Kind.MODULE and made.class_name:
                    built.add(made.class_name)
            if not isinstance(node, (cst.Lambda, cst.FunctionDef)):
                stack.extend(child_nodes(node))
        return built

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

    def _targets_cuda(self, decorators: Sequence[cst.Decorator]) -> bool:
        """`@vectorize([...], target="cuda")`: a ufunc that runs on the GPU when called."""
        for decorator in decorators:
            expr = decorator.decorator
            if isinstance(expr, cst.Call) and self.facts.imports.qualified_name(expr.func) in kb.NUMBA_UFUNC_DECORATORS:
                target = keyword_arg(expr, "target")
                if target is not None and literal_string(target) == "cuda":
                    return True
        return False

    def _decorator_names(self, decorators: Sequence[cst.Decorator]) -> set[str]:
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
        self._saved_run_once.append(self._run_once_blocks)
        self._run_once_blocks = []
        self._saved_opt_in.append(self._opt_in_branches)
        self._opt_in_branches = []
        self._scope = facts
        self._compiled = self._compiled or facts.compiled
        self._set_state(None, ())
        self.facts.scopes.append(facts)
        scope = Scope()
        if self.gpu_project and self.trains and isinstance(facts.node, cst.FunctionDef) and not (self.facts.test_file or facts.is_test):
            # (a test builds the model it trains; where that model runs, its code says)
            found = trained_tensors(facts.node, self.facts.imports)
            scope.trained, scope.trained_by, scope.trained_found = dict(found.names), found.definitions, dict(found.names)
        for param in (*params.params, *params.posonly_params, *params.kwonly_params):
            is_device = param.name.value in kb.DEVICE_PARAMETER_NAMES
            passed = self.bound_parameters.get((facts.name, param.name.value))
            scope.bindings[param.name.value] = passed if passed is not None else MAYBE_GPU_DEVICE if is_device else None
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.bindings[star.name.value] = None
        self.values.scopes.append(scope)

    def _leave_function(self) -> None:
        if self._scope.is_constructor:
            for key, moved in self._moved_with_module:
                self.values.store(key, moved)  # the constructor's buffers, where the module is moved
            self._moved_with_module = []
        self.values.scopes.pop()
        scope, loop, guards, compiled = self._saved.pop()
        self._run_once_blocks = self._saved_run_once.pop()
        self._opt_in_branches = self._saved_opt_in.pop()
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
            compiled=bool(decorators & kb.COMPILING_DECORATORS)
            or self._compiled_by_project(node.decorators, decorators)
            or self._calls_kernel_builtin(node)
            or self._written_for_tracing(node),
            cuda_kernel=bool(decorators & kb.CUDA_KERNEL_DECORATORS),
            triton_kernel=bool(decorators & kb.TRITON_KERNEL_DECORATORS),
            cuda_ufunc=self._targets_cuda(node.decorators),
            does_nothing=_does_nothing(node),
        )
        self.facts.functions.setdefault(key, facts)
        if owner and name == "run" and self._classes[-1][1]:
            self.facts.thread_subclasses[owner] = facts
        if not owner:
            self.facts.imports.define_locally(name)
            self.values.store(name, None)
        self._enter_function(facts, node.params)

    def _compiled_by_project(self, decorators: Sequence[cst.Decorator], qualified: set[str]) -> bool:
        """`@torch_compile()` of a project helper that returns `torch.compile(...)`, defined above
        in this file or in another file of the project (`ProjectContext.imported_compilers`)."""
        if qualified & self.imported_compilers:
            return True
        for decorator in decorators:
            expr = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            local = self.facts.functions.get(expr.value) if isinstance(expr, cst.Name) else None
            if local is not None and local.returns_compiled:
                return True
        return False

    def _calls_kernel_builtin(self, node: cst.FunctionDef) -> bool:
        """The body calls what only a compiled kernel can (`wp.tid()`): a Warp kernel handed to
        `wp.Kernel(...)` later rather than decorated; its loops run on the GPU, per thread."""
        if not self.facts.imports.imports_module("warp"):
            return False
        return any(
            isinstance(inner, cst.Call) and self.facts.imports.qualified_name(inner.func) in kb.KERNEL_ONLY_BUILTINS
            for inner in own_nodes(node.body)
        )

    def _written_for_tracing(self, node: cst.FunctionDef) -> bool:
        """The body calls `torch._check(...)` / `torch._check_is_size(...)` whenever it runs: hints
        only a tracer reads (torch.export, torch.compile), the form torchtune's export-only modules
        take. Their `.item()` becomes a symbolic size and their loops are unrolled into the traced
        graph. Checks under an `if` (`if torch.compiler.is_compiling():`) leave an eager path."""
        if not self.traces or not self.facts.imports.imports_module("torch"):
            return False
        stack = list(child_nodes(node.body))
        while stack:
            inner = stack.pop()
            if isinstance(inner, (cst.If, cst.IfExp, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(inner, cst.Call) and self.facts.imports.qualified_name(inner.func) in kb.TRACING_CHECKS:
                return True
            stack.extend(child_nodes(inner))
        return False

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        if "." in self._scope.name and "builtins.setattr" in self._scope.callees:  # the calls the walk recorded: no extra pass otherwise
            self._scope.stores_named_field = self._named_field_store(original_node)
        returns = self._returned.pop(self._scope, [])
        self._scope.returns_compiled = any(
            isinstance(node, cst.Call) and self.facts.imports.qualified_name(node.func) in kb.COMPILING_DECORATORS for node, _ in returns
        )
        rebound = self._rebound.pop(self._scope, set())
        yielded = self._yielded.pop(self._scope, None)
        through = _passthrough(original_node, [node for node, _ in returns], rebound, method="." in self._scope.name)
        made = _made_items(self._returned_items.pop(self._scope, []))
        if made and yielded is None:
            parts = through.parts if through is not None and len(through.parts) == len(made) and not through.single else (None,) * len(made)
            through = Passthrough(parts, single=False, made=made)
        if through is not None and yielded is None:
            self.values.function_passthrough.setdefault(self._scope.name, through)
        uploaded = _uploaded_parameter(original_node, returns, rebound, "." in self._scope.name, self.facts.imports)
        if uploaded is not None and yielded is None:
            self.facts.function_uploads.setdefault(self._scope.name, uploaded)
        # A generator's calls are iterated: what matters is what every `yield` hands out.
        returned = yielded if yielded is not None else [value for _, value in returns]
        result = returned[0] if returned and all(value == returned[0] for value in returned) else None
        if result is None and returned and all(value is not None for value in returned):
            # Returns that differ only in size (`x.prod()` here, `x.cumprod(0)` there) hand back the same kind of value.
            sizeless = [replace(value, shape=None, ndim=None) for value in returned if value is not None]
            result = sizeless[0] if all(value == sizeless[0] for value in sizeless) else None
        if result is None and returned and all(value is not None and value.kind is Kind.DEVICE for value in returned):
            result = reduce(either, returned)  # `return cuda if available else cpu` in two returns
        if yielded is not None:
            result = replace(result, kind=Kind.ITEMS) if result is not None and result.is_device_array else None
        elif result is not None and result.is_array:
            result = replace(result, placed_by=_placing_parameter(original_node, [node for node, _ in returns], rebound, "." in self._scope.name))
        # A module of a class we know is kept even on the host: a factory (`def moco(**kw): return
        # MoCo(**kw)`) hands its caller that class, whose methods run where the caller moves it.
        known_module = result is not None and result.kind is Kind.MODULE and result.class_name is not None
        if result is not None and (result.kind in (Kind.DEVICE, Kind.NUMBER, Kind.ITEMS, Kind.FORMULA) or result.on_gpu and result.kind in (Kind.ARRAY, Kind.MODULE) or known_module):
            self.values.function_results.setdefault(self._scope.name, replace(result, shape=None))
        self._leave_function()

    def _named_field_store(self, node: cst.FunctionDef) -> NamedFieldStore | None:
        """`setattr(self, name, value)` with two parameters of this method, `value` perhaps moved
        first (`value = value.to(torch.device("cuda"))`, under a type test or not)."""
        params = [param.name.value for param in node.params.params[1:]]
        for inner in own_nodes(node.body):
            if not isinstance(inner, cst.Call) or self.facts.imports.qualified_name(inner.func) != "builtins.setattr" or len(inner.args) != 3:
                continue
            owner, name, value = (dotted_name(arg.value) for arg in inner.args)
            if owner != "self" or name not in params or value not in params:
                continue
            return NamedFieldStore(params.index(name), params.index(value), self._moved_to(node, value))
        return None

    def _moved_to(self, node: cst.FunctionDef, name: str) -> Device | None:
        """The device of `name = name.to(device)` / `name = name.cuda()` in the function."""
        for inner in own_nodes(node.body):
            if not isinstance(inner, cst.Assign) or dotted_name(inner.targets[0].target) != name:
                continue
            call = inner.value
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and dotted_name(call.func.value) == name:
                if call.func.attr.value == "cuda":
                    return Device.GPU
                target = positional_arg(call) if call.func.attr.value == "to" else None
                if target is not None:
                    return self.values.target_device(target)
        return None

    def visit_Lambda(self, node: cst.Lambda) -> None:
        facts = FunctionFacts("<lambda>", node, self._scope)
        self.facts.lambdas[node] = facts
        self._enter_function(facts, node.params)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._leave_function()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        name = node.name.value
        bases = {self.facts.imports.qualified_name(base.value) for base in node.bases}
        is_thread = kb.THREAD_CLASS in bases
        local_bases = [base.value.value for base in node.bases if isinstance(base.value, cst.Name) and base.value.value in self.facts.class_attributes]
        project_bases = [base for base in bases if base is not None and base in self.values.project_classes]
        lightning = bool(bases & kb.LIGHTNING_MODULES) or bool(set(local_bases) & self.facts.lightning_classes)
        torch_module = lightning or any(kb.is_module_base(base) for base in bases if base is not None)
        if bases & kb.WORKER_BASES:
            self.facts.worker_classes.add(name)
        if bases & kb.OPTIMIZER_BASES and self.gpu_project:
            self.facts.optimizer_classes.add(name)
        if bases & kb.AUTOGRAD_FUNCTION_BASES:
            self.values.autograd_functions.add(name)  # its `apply` hands back a tensor where its input is
            if self.gpu_project:
                self.facts.autograd_functions.add(name)
        framework = next((kb.FRAMEWORK_STEPS[base] for base in bases if base in kb.FRAMEWORK_STEPS), None)
        framework = framework or next(
            (kb.FRAMEWORK_STEPS[self.imported_frameworks[base]] for base in bases if base in self.imported_frameworks), None
        )
        framework = framework or next((self.facts.framework_classes[base] for base in local_bases if base in self.facts.framework_classes), None)
        if framework is not None and self.gpu_project:
            self.facts.framework_classes[name] = framework
        if lightning:
            self.facts.lightning_classes.add(name)
        if torch_module or set(local_bases) & self.values.module_classes or any(self.values.project_classes[b] for b in project_bases):
            self.values.module_classes.add(name)
            if self.gpu_project:
                # A model of a project that names CUDA is built to run there, wherever (and in
                # whichever file, factory or trainer) it is moved: its methods run on the GPU.
                self.facts.gpu_classes.setdefault(name, Value(Kind.MODULE, "torch", Device.MAYBE_GPU, class_name=name))
        elif all(self._plain_base(base) for base in node.bases):
            self.values.plain_classes.add(name)  # `class EMAHelper:`, `(object)`, `(ABC)`: plain Python
        self.facts.imports.define_locally(name)
        self._classes.append((name, is_thread, self._scope))
        if is_thread:
            self.facts.thread_subclasses.setdefault(name, None)
        # What the base classes set on `self` (`self.device`, `self.policy`) holds in this class's
        # methods too: bases of this file (walked above it), then those of other files.
        inherited: dict[str, Value | None] = {}
        for base in local_bases:
            inherited.update(self.facts.class_attributes[base])
        inherited.update(self.inherited_attributes.get(name, {}))
        self.facts.class_bases[name] = tuple(sorted(base for base in bases if base is not None and "." in base))
        self.facts.local_bases[name] = tuple(local_bases)
        self._local_bases[name] = local_bases
        self.values.class_attributes.append(inherited)
        self.values.class_names.append(name)

    def _inherit_results(self, name: str) -> None:
        """The methods a class inherits from a base of this file, unless it overrides them
        (`UniformSampler.sample` runs `ScheduleSampler.sample`), and what they return."""
        results = self.values.function_results
        for base in self._local_bases.get(name, ()):
            prefix = f"{base}."
            for key in [key for key in self.facts.functions if key.startswith(prefix)]:
                own = f"{name}.{key.removeprefix(prefix)}"
                if own in self.facts.functions or own in self.facts.inherited_methods:
                    continue
                defined = self.facts.inherited_methods.get(key, key)
                self.facts.inherited_methods[own] = defined
                if defined in results:
                    results[own] = results[defined]

    def _plain_base(self, base: cst.Arg) -> bool:
        """A base that keeps a class plain Python: `object`, `ABC`, `Generic[T]`, or a plain
        class of this file or of the project."""
        expr = base.value.value if isinstance(base.value, cst.Subscript) else base.value
        if isinstance(expr, cst.Name) and expr.value in self.values.plain_classes:
            return True
        qualname = self.facts.imports.qualified_name(expr)
        if qualname in kb.PLAIN_CLASS_BASES:
            return True
        return qualname in self.values.project_classes and not self.values.project_classes[qualname]

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        name, _, _ = self._classes.pop()
        self._inherit_results(name)
        attributes = self.values.class_attributes.pop()
        self.facts.class_attributes[name] = {key: value for key, value in attributes.items() if value is not None}
        self.values.class_names.pop()

    # -- loops and guards -------------------------------------------------------------------
    def _progress_wrapped(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """What a progress bar iterates: `tqdm(loader, desc=...)` -> `loader`, `pbar` -> what
        `pbar = tqdm(...)` wrapped in this scope (`trange(n)` is itself: it counts like
        `range`); None for anything else."""
        if isinstance(node, cst.Name):
            return self._progress_bars.get((id(self._scope), node.value))
        if not isinstance(node, cst.Call):
            return None
        qualname = self.facts.imports.qualified_name(node.func)
        if qualname in kb.PROGRESS_RANGES:
            return node
        return positional_arg(node) if qualname in kb.PROGRESS_BARS else None

    def _bind_loop_target(self, loop: LoopFacts, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        iter_value = self.values.evaluate(iterable)
        wrapped = self._progress_wrapped(iterable)
        if wrapped is not None and wrapped is not iterable:
            iterable = wrapped  # a progress bar hands out what it wraps
            iter_value = self.values.evaluate(iterable)
        loop.targets.update(n for n in names_in_target(target) if "." not in n)
        if iter_value is not None and iter_value.library == "cudf":
            iter_value = None  # a frame yields its column names (a Series cannot be iterated)
        if iter_value is not None and iter_value.keyed:
            iter_value = None  # a trainer's batch hands out its keys (a dict) or its examples (a list of them)
        if iter_value is not None and iter_value.kind in _HANDED_OUT:
            # `for indices in BatchSampler(...)`, `for obs, ret in storage.batches()`: what the
            # sampler or generator hands out, not rows of an array.
            loop.iter_value = None
            self._bind(target, replace(iter_value, kind=_HANDED_OUT[iter_value.kind]), None)
            loop.varying.update(loop.targets)
            return
        # Rows of an array (or, for a value only inferred to be one, the tensors of a tuple: GPU values either way).
        element: Value | None = iter_value if iter_value is not None and iter_value.is_array else None
        qualname = (
            self.facts.imports.qualified_name(iterable.func) if isinstance(iterable, cst.Call) else None
        )
        if self._bind_parameters(loop, target, iterable, qualname):
            return
        if self._parameter_names(iterable):
            loop.parameters_of = self.facts.code(iterable)  # `for k in state_dict.keys()`: one parameter per name
        if qualname == "builtins.zip" and self._bind_zipped(loop, target, iterable):
            return
        if qualname in ("builtins.range", "builtins.enumerate") or qualname in kb.PROGRESS_RANGES:
            loop.counts_indices = True
            position = target.elements[0].value if qualname == "builtins.enumerate" and isinstance(target, cst.Tuple) and target.elements else target
            if isinstance(position, cst.Name):
                loop.index_names.add(position.value)
        held = self._held_in_container(iterable)
        if held is not None:
            element, keyed = held
            if keyed and isinstance(target, cst.Tuple) and len(target.elements) == 2:
                self._bind(target.elements[0].value, None, None)
                target = target.elements[1].value
        if qualname == "builtins.enumerate" and isinstance(iterable, cst.Call) and iterable.args:
            zipped = iterable.args[0].value
            counter, pair = (target.elements[0].value, target.elements[1].value) if isinstance(target, cst.Tuple) and len(target.elements) == 2 else (None, None)
            if (
                counter is not None
                and pair is not None
                and isinstance(zipped, cst.Call)
                and self.facts.imports.qualified_name(zipped.func) == "builtins.zip"
                and self._bind_zipped(loop, pair, zipped)
            ):
                self._bind(counter, None, None)  # `for i, (t_cur, t_next) in enumerate(zip(...))`
                loop.varying.update(loop.targets)
                return
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

    def _optimizer_parameters(self, iterable: cst.BaseExpression) -> bool:
        """`for p in group["params"]`, or `for p in self.model.parameters()` of the model it was
        built with (K-FAC), in a method of a custom optimizer (a `torch.optim.Optimizer` subclass)
        of a project that trains on the GPU: the trained model's parameters, on its device,
        visited one by one on every optimizer step."""
        if not (self.gpu_project and self._classes):
            return False
        if isinstance(iterable, cst.Subscript) and len(iterable.slice) == 1:
            index = iterable.slice[0].slice
            if not (isinstance(index, cst.Index) and literal_string(index.value) == "params"):
                return False
        elif isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute):
            held = dotted_name(iterable.func.value) or ""
            if iterable.func.attr.value not in kb.PARAMETER_ITERATORS or not held.startswith("self."):
                return False
        else:
            return False
        return bool(set(self.facts.class_bases.get(self._classes[-1][0], ())) & kb.OPTIMIZER_BASES)

    def _held_in_container(self, iterable: cst.BaseExpression) -> tuple[Value, bool] | None:
        """`loss_dict.items()` / `.values()` of what a GPU model's method returned: a container of
        its tensors (an array has no `.items()`), each one on the model's device. The element and
        whether the loop unpacks `key, value` pairs."""
        if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)):
            return None
        method = iterable.func.attr.value
        if method not in ("items", "values") or iterable.args:
            return None
        container = self.values.evaluate(iterable.func.value)
        if container is None or not container.is_array or not container.on_gpu:
            return None
        return replace(container, shape=None, holds_fields=False, inferred=True), method == "items"

    def _parameter_tensors(self, iterable: cst.BaseExpression) -> tuple[str, Value, bool] | None:
        """`model.parameters()` of a module we know, or a name handed it (`for p in parameters`,
        `parameters = list(filter(..., model.parameters()))`): (its name, one parameter, named?)."""
        if self._optimizer_parameters(iterable):
            return self.facts.code(iterable), Value(Kind.ARRAY, "torch", Device.MAYBE_GPU), False
        func = iterable.func if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) else None
        listed = func is not None and func.attr.value in kb.ALL_PARAMETER_ITERATORS
        owner = func.value if func is not None and listed else iterable
        handed = self.values.evaluate(iterable)
        if listed and handed is None:
            assert func is not None
            module = self._submodule(func.value)
            if module is None:
                return None
            handed = parameters_of(module, func.attr.value)
        if handed is None or handed.kind is not Kind.PARAMETERS:
            return None
        # Named pairs bind the tensor to the pair's second target; a dict by name yields the names.
        named = handed.class_name is not None
        return self.facts.code(owner), Value(Kind.ARRAY, handed.library, handed.device), named

    def _parameter_names(self, iterable: cst.BaseExpression) -> bool:
        """`state_dict`, `state_dict.keys()`, `list(state_dict.keys())` of a module's state: its
        parameter and buffer names, one per iteration."""
        if isinstance(iterable, cst.Call) and len(iterable.args) == 1 and self.facts.imports.qualified_name(iterable.func) in ("builtins.list", "builtins.sorted"):
            iterable = iterable.args[0].value
        held = self.values.evaluate(method_receiver(iterable, "keys") or iterable)
        return held is not None and held.kind is Kind.PARAMETERS and held.class_name == kb.PARAMETERS_BY_NAME

    def _bind_zipped(self, loop: LoopFacts, target: cst.BaseExpression, iterable: cst.BaseExpression) -> bool:
        """`for real, fake in zip(outputs_r, outputs_g)`: each target is one element (row) of
        the matching argument, on its device."""
        if not isinstance(iterable, cst.Call) or not isinstance(target, (cst.Tuple, cst.List)):
            return False
        sources = [self.values.evaluate(arg.value) for arg in iterable.args]
        if len(sources) != len(target.elements) or any(arg.star for arg in iterable.args):
            return False
        for element, source in zip(target.elements, sources):
            row = replace(source, shape=None, holds_fields=False) if source is not None and source.is_array else None
            if source is not None and source.kind is Kind.MODULE:
                row = source.submodule()  # `zip(losses, self.nets["critic"])`: one submodule each
                loop.over_submodules = True
            self._bind(element.value, row, None)
        loop.varying.update(loop.targets)
        return True

    def _submodule(self, node: cst.BaseExpression) -> Value | None:
        """`self.encoder.parameters()` in a module's method: only a module has `.parameters()`,
        and a submodule lives where its parent was moved."""
        if not isinstance(node, cst.Attribute) or not isinstance(node.value, cst.Name) or node.value.value != "self":
            return None
        owner = self.values.lookup("self")
        return owner.submodule() if owner is not None and owner.kind is Kind.MODULE else None

    def _bind_parameters(
        self, loop: LoopFacts, target: cst.BaseExpression, iterable: cst.BaseExpression, qualname: str | None
    ) -> bool:
        """`for p in net.parameters()`, `for (n, p) in net.named_parameters()`, and `zip` of
        two modules' parameters (a Polyak update): each target is one parameter tensor; so is the
        second target of `for pindex, p in enumerate(group["params"])`."""
        if qualname == "builtins.enumerate" and isinstance(iterable, cst.Call) and iterable.args and _pair(target):
            assert isinstance(target, (cst.Tuple, cst.List))
            counted = iterable.args[0].value
            counted_qualname = self.facts.imports.qualified_name(counted.func) if isinstance(counted, cst.Call) and isinstance(counted.func, (cst.Name, cst.Attribute)) else None
            if not self._bind_parameters(loop, target.elements[1].value, counted, counted_qualname):
                return False
            self._bind(target.elements[0].value, None, None)
            loop.counts_indices = True
            if isinstance(target.elements[0].value, cst.Name):
                loop.index_names.add(target.elements[0].value.value)
            return True
        sources = [arg.value for arg in iterable.args] if qualname == "builtins.zip" and isinstance(iterable, cst.Call) else [iterable]
        found = [self._parameter_tensors(source) for source in sources]
        if not any(item is not None for item in found) or any(item is None and self.values.evaluate(source) is not None for item, source in zip(found, sources)):
            return False  # `zip(ema.parameters(), model.parameters())` with `ema` unknown: still one pass per parameter
        targets = target.elements if len(sources) > 1 and isinstance(target, (cst.Tuple, cst.List)) else None
        parts = [element.value for element in targets] if targets is not None else [target]
        if len(parts) != len(sources):
            return False
        for part, item in zip(parts, found):
            if item is None:
                self._bind(part, None, None)
                continue
            name, parameter, named = item
            if named and isinstance(part, (cst.Tuple, cst.List)) and len(part.elements) == 2:
                self._bind(part.elements[0].value, None, None)
                self._bind(part.elements[1].value, parameter, None)
            elif not named:
                self._bind(part, parameter, None)
            else:
                self._bind(part, None, None)
            loop.parameters_of = loop.parameters_of or name
        loop.varying.update(loop.targets)
        return True

    def _few_iterations(self, iterable: cst.BaseExpression, limit: int = FEW_ITERATIONS) -> bool:
        """A loop over a literal list, a constant range of at most `limit`, or an array's dimensions."""
        if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)):
            return True
        if isinstance(iterable, cst.Attribute) and iterable.attr.value in kb.SMALL_COLLECTION_ATTRIBUTES:
            return True
        if isinstance(iterable, (cst.ListComp, cst.SetComp, cst.GeneratorExp)) and iterable.for_in.inner_for_in is None:
            return self._few_iterations(iterable.for_in.iter, limit)  # `[s * 1024 for s in [1, 2, 4]]`: as many as its source
        if isinstance(iterable, cst.Subscript) and any(isinstance(element.slice, cst.Slice) for element in iterable.slice):
            if len(iterable.slice) == 1 and _short_slice(iterable.slice[0].slice):
                return True  # `columns[:3]`: at most three, however long the list
            return self._few_iterations(iterable.value, limit)  # `variants[3:5]` of a short list
        if not isinstance(iterable, cst.Call):
            value = self.values.evaluate(iterable)  # a name bound to a literal list of settings
            return (value is not None and value.kind is Kind.SEQUENCE) or _names_dimensions(iterable)
        qualname = self.facts.imports.qualified_name(iterable.func) if isinstance(iterable.func, (cst.Name, cst.Attribute)) else None
        args = [arg.value for arg in iterable.args if arg.keyword is None]
        if qualname == "builtins.range" and len(args) == 1 and isinstance(args[0], cst.Call):
            if self.facts.imports.qualified_name(args[0].func) in kb.DEVICE_COUNT_CALLS:
                return True  # one iteration per device of the machine: a handful
        if qualname == "builtins.range" and _window_offsets(args):
            return True  # `range(-r, r + 1)`: the offsets of a window around zero, a radius apart
        if qualname == "builtins.range" and args:
            bounds = [self._bound_value(arg) for arg in args[:2]]
            numbers = [b.number for b in bounds if b is not None and b.number is not None]
            if len(numbers) == len(bounds):
                count = numbers[0] if len(numbers) == 1 else numbers[1] - numbers[0]
                return count <= limit
        if qualname in ("builtins.enumerate", "builtins.reversed", "builtins.sorted") and args:
            return self._few_iterations(args[0], limit)
        if isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value in ("keys", "values", "items") and not args:
            # `losses.items()` of a `Dict[str, Tensor]` input, or of what a call handed back for one
            # (an array has no `.items()`), or of a dict display of literal keys: entries named in code
            receiver = iterable.func.value
            if isinstance(receiver, cst.Name) and self._has_literal_keys(receiver.value):
                return True
            held = self.values.evaluate(receiver)
            if held is not None and ((held.holds_fields and held.keyed) or (held.is_array and held.inferred)):
                return True
        if qualname == "builtins.zip":
            return any(self._few_iterations(arg, limit) for arg in args)
        return _names_dimensions(iterable)

    def _few_counted(self, test: cst.BaseExpression) -> bool:
        """`while counter_restarts < self.n_restarts:` with a bound of a handful (a literal, or a
        parameter's or field's small default): a counted loop, as `range(self.n_restarts)`."""
        bound = while_bound(test)
        if bound is None:
            return False
        value = self._bound_value(bound)
        return value is not None and value.number is not None and value.number <= FEW_ITERATIONS

    def _bound_value(self, bound: cst.BaseExpression) -> Value | None:
        """A loop bound as a number where it is one: its value, else a small literal default of
        the parameter or field it names (the author's scale)."""
        return self.values.evaluate(bound) or self._parameter_default(bound) or self._field_default(bound)

    def _parameter_default(self, bound: cst.BaseExpression) -> Value | None:
        """`def eval_model(actor, env, num_episodes=3): for _ in range(num_episodes)`: a bound
        that is a parameter of this function, sized by its literal default (the author's scale)."""
        function = self._scope.node
        if not isinstance(bound, cst.Name) or not isinstance(function, cst.FunctionDef) or bound.value in self._rebound.get(self._scope, ()):
            return None
        for param in (*function.params.params, *function.params.kwonly_params):
            if param.name.value == bound.value and param.default is not None:
                return _few_by_default(param.default)
        return None

    def _field_default(self, bound: cst.BaseExpression) -> Value | None:
        """`for _ in range(self.eot_iter):` in a method, where `__init__(self, ..., eot_iter=1)`
        stored `self.eot_iter = eot_iter`: a field sized by its constructor's literal default (or
        set to a literal there), the author's scale, as for a parameter (`_parameter_default`). Also
        `range(args.rho_num)` for an instance of a class of this file whose `__init__` sets the field."""
        if not (isinstance(bound, cst.Attribute) and isinstance(bound.value, cst.Name)):
            return None
        if bound.value.value == "self" and self._classes:
            owner = self._classes[-1][0]
        else:  # `range(args.rho_num)` with `args = Args()`, a class of this file, and no other store of the field
            held = self.values.evaluate(bound.value)
            if held is None or held.kind is not Kind.INSTANCE or held.class_name is None or assigned_in_file(bound, self.facts):
                return None
            owner = held.class_name
        init = self.facts.inherited_method(owner, "__init__")
        if init is None or not isinstance(init.node, cst.FunctionDef):
            return None
        bound = bound.with_changes(value=cst.Name("self"))  # as `__init__` writes it
        defaults = {param.name.value: param.default for param in (*init.node.params.params, *init.node.params.kwonly_params) if param.default is not None}
        for statement in init.node.body.body:
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and small.targets[0].target.deep_equals(bound)):
                    continue
                source = defaults.get(small.value.value) if isinstance(small.value, cst.Name) else small.value
                return _few_by_default(source) if source is not None else None
        return None

    def visit_For(self, node: cst.For) -> None:
        self.values.evaluate(node.iter)

    def _enter_loop(self, node: LoopNode) -> LoopFacts:
        """Guards are tracked per innermost loop: saved on entry, restored on exit."""
        loop = LoopFacts(node=node, parent=self._loop, function=self._scope, entry_guards=self._guards)
        self._remember(node)
        self._remember(loop.header_end())
        self.facts.loops.append(loop)
        self._scope.has_loop = True
        self._set_state(loop, ())
        return loop

    def _exit_loop(self) -> None:
        assert self._loop is not None
        statement = isinstance(self._loop.node, (cst.For, cst.While))  # `sum(f(q) for q in qs)` is part of a step
        loop = self._loop
        if loop.parent is not None and statement and self._makes_epoch_loop(loop, loop.parent):
            loop.parent.has_inner_loop = True
        self._set_state(loop.parent, loop.entry_guards)

    def _makes_epoch_loop(self, inner: LoopFacts, outer: LoopFacts) -> bool:
        """Does this inner loop make its outer loop an epoch loop (one whose iterations each run
        a whole data loop, so that a sync per outer iteration is amortised)? Not when it runs a
        handful of times (`for g in optimizer.param_groups:`), walks values just copied back,
        runs only on sampled iterations (`if step % 500 == 0:` validation), or when the outer loop
        is named as the step loop (`for step in ...:` with gradient-accumulation micro-steps), or
        when it does no work of its own: moving the parts of a batch (`for i in range(len(x)):
        x[i] = x[i].cuda()`) or a pass over the parameters is part of a step, not a data loop.
        Nor when the outer loop walks a data loader and the inner one is a plain loop that walks no
        data (`for val_data in dataloader: ... for name, opt in metrics.items():`): the outer loop
        steps a batch at a time. (An inner loop with loops or optimizer steps of its own, PPO's
        epochs over minibatches of each rollout, is a whole pass.)"""
        if inner.few_iterations or self._iterates_host_copy(inner.node):
            return False
        walks_data = outer.iterable is not None and names_data(outer.iterable)
        plain_inner = not (inner.iterable is not None and names_data(inner.iterable)) and not inner.has_inner_loop and optimizer_step_in(inner.node) is None
        if walks_data and plain_inner:
            return False
        if inner.parameters_of is not None or not (inner.runs_code or inner.gpu_ops or inner.has_inner_loop):
            return False
        if any(is_sampling_guard(test, outer) for test in inner.entry_guards):
            return False
        names = [target.lower() for target in outer.targets]
        stepping = any(word in name for name in names for word in kb.STEP_WORDS)
        if stepping and not any(word in name for name in names for word in kb.EPOCH_WORDS):
            return False
        return not _steps_beside(inner.node, outer.node)


    def _iterates_host_copy(self, node: LoopNode) -> bool:
        """`for t in ts.cpu().numpy():` walks the values of a GPU array just copied back: per-element
        host work on this iteration's result, not the data loop of an epoch."""
        if not isinstance(node, cst.For):
            return False
        for call in calls_in(node.iter):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in kb.D2H_METHODS | kb.SCALAR_SYNC_METHODS:
                receiver = self.values.evaluate(call.func.value)
                if receiver is not None and receiver.is_device_array:
                    return True
        return False

    def visit_For_body(self, node: cst.For) -> None:
        loop = self._enter_loop(node)
        self._bind_loop_target(loop, node.target, node.iter)
        trained = self.values.scopes[-1].trained
        for name in names_in_target(node.target) if trained else ():
            trained.pop(name, None)  # `for key, loss in logs.items():` binds the name to something else
        loop.few_iterations = self._few_iterations(node.iter) or _breaks_at_once(node)
        loop.short_once = self._scope.node is None and loop.parent is None and self._few_iterations(node.iter, ONCE_RUN_FEW_ITERATIONS)

    def leave_For_body(self, node: cst.For) -> None:
        self._exit_loop()

    def visit_While(self, node: cst.While) -> None:
        self._note_condition_calls(node.test)
        loop = self._enter_loop(node)
        loop.timed_repetition = isinstance(node.test, cst.Integer) and f"while {node.test.value}:" == kb.TIMEIT_LOOP_HEADER
        loop.few_iterations = self._few_counted(node.test) or _breaks_at_once(node)
        self._check_condition(node.test, "a GPU value as the `while` condition", validates=True)

    def leave_While(self, original_node: cst.While) -> None:
        self._exit_loop()

    def _visit_comprehension(self, node: LoopNode) -> None:
        loop = self._enter_loop(node)
        enclosing = self.values.scopes[-1]
        self.values.scopes.append(Scope(trained=enclosing.trained, trained_by=enclosing.trained_by, trained_found=enclosing.trained_found))
        comp_for: cst.CompFor | None = node.for_in  # type: ignore[union-attr]
        loop.few_iterations = True
        self._binding_scope_of = loop
        while comp_for is not None:
            self._bind_loop_target(loop, comp_for.target, comp_for.iter)
            loop.few_iterations = loop.few_iterations and self._few_iterations(comp_for.iter)
            comp_for = comp_for.inner_for_in
        self._binding_scope_of = None

    def _leave_comprehension(self, node: LoopNode) -> None:
        self.values.scopes.pop()
        self._exit_loop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension

    def visit_CompFor_iter(self, node: cst.CompFor) -> None:
        """The iterable of a comprehension's first `for` is computed once, before it loops
        (`[f for f in filters ** 0.5]` raises the whole batch to the power once, then hands out
        views): its work belongs where the comprehension is, not to each of its iterations."""
        loop = self._loop
        if loop is not None and getattr(loop.node, "for_in", None) is node:
            self._outer_iterables.append((node, loop, self._guards))
            self._set_state(loop.parent, loop.entry_guards)

    def leave_CompFor_iter(self, node: cst.CompFor) -> None:
        if self._outer_iterables and self._outer_iterables[-1][0] is node:
            _, loop, guards = self._outer_iterables.pop()
            self._set_state(loop, guards)

    def _note_condition_calls(self, test: cst.BaseExpression) -> None:
        stack: list[cst.CSTNode] = [test]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Call):
                self.facts.condition_calls.add(node)
            stack.extend(child_nodes(node))

    def visit_If(self, node: cst.If) -> None:
        self._note_condition_calls(node.test)
        # `if now - last_log > 30:`: an elapsed time tested against a period throttles the branch;
        # it measures nothing, so its subtraction opens no interval (see `visit_BinaryOperation`).
        throttles = list(self._clock_throttles(node.test))
        self._throttles[id(node)] = throttles  # (read again by `visit_If_body`)
        self._throttle_elapsed.update(id(_elapsed_side(test)) for test in throttles)
        if self._scope.optimizer_step is None and self._loop is None and not self._guards and isinstance(node.orelse, cst.Else):
            # `if use_amp: scaler.step(opt) else: opt.step()`: either way, every call steps
            stepping = optimizer_step_in(node.body)
            if stepping is not None and optimizer_step_in(node.orelse.body) is not None:
                self._scope.optimizer_step = stepping
        decides = _only_raises(node.body) or _exits_loop(node.body) or _within_tolerance(node.test)
        # `if kind == A: ... elif kind == B: ...` on one GPU value: each `elif` reads it again, but
        # the chain is one place to fix (compare on the host once, or dispatch on a host copy),
        # reported at its head.
        head = self._elif_heads.pop(id(node), None)
        read = referenced_names(node.test)
        if head is not None and read & head:
            if isinstance(node.orelse, cst.If):
                self._elif_heads[id(node.orelse)] = head
            return
        if self._check_condition(node.test, "a GPU value as an `if` condition", validates=decides) and isinstance(node.orelse, cst.If):
            self._elif_heads[id(node.orelse)] = read

    def visit_If_body(self, node: cst.If) -> None:
        throttles = self._throttles.pop(id(node), [])
        self._gpu_absent_branches.append(self._tests_gpu_present(node.test) is False)
        if _memoises(node, self.facts):
            self.facts.memo_tests.add(node.test)
        if self._loop is not None and (sampling_period(node.test, self.facts) == 1 or _steps_optimizer(node.body) or _training_cadence(node.test)):
            self._loop.every_iteration_tests.add(node.test)
        elif self._loop is not None:
            self._loop.sampling_tests.update(call for call in calls_in(node.test) if self._calls_period_test(call, self._loop))
            self._loop.sampling_tests.update(throttles)
        self.values.open_branch()
        default = self._default_truth(node.test)
        self._opt_in_branches.append(default is False)
        if default is True:
            self.facts.on_by_default_tests.add(node.test)
        self._set_state(self._loop, self._guards + (node.test,))
        # `return` leaves a loop once per call; outside a loop it ends a branch that runs every call.
        self._run_once_blocks.append(_runs_once(node.body) and (self._loop is not None or isinstance(_last_statement(node.body), cst.Raise)))
        narrowed = _narrowed_to_python_object(node.test, self.facts.imports)
        if narrowed is not None:
            self.values.store(narrowed, None)  # `if isinstance(key, tuple):` key is no array here
        tested = _tested_as_array(node.test, self.facts.imports)
        held = self.values.lookup(tested) if tested is not None else None
        if tested is not None and held is not None and held.kind in (Kind.PARAMETERS, Kind.MODULE):
            self._dead_branches.add(node)

    def _tests_gpu_present(self, test: cst.BaseExpression) -> bool | None:
        """True for `torch.cuda.is_available()` or a test that the device is CUDA (`device.type ==
        "cuda"`, `x.is_cuda`), False for their negation or a test naming another device type
        (`device.type == "cpu"`), None for other tests."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._tests_gpu_present(test.expression)
            return None if inner is None else not inner
        if isinstance(test, cst.Call) and self.facts.imports.qualified_name(test.func) in kb.GPU_PRESENT_TESTS:
            return True
        return _tests_cuda_device(test)

    def _default_truth(self, test: cst.BaseExpression) -> Truth:
        """What an `if` test is unless a caller changes a setting: `not flag` of a parameter
        `flag=False`, `self.stratified` that every store in the file sets False (see
        `facts.settings`); what a check for NaN or infinity is while the numbers are sound
        (`torch.isnan(k).any()` False, `torch.isfinite(loss).all()` True: the fallback it
        guards runs only when a step went wrong); None for anything else."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._default_truth(test.expression)
            return None if inner is None else not inner
        finite = _finiteness_check(test)
        if finite is not None:
            return finite
        function = self._scope.node
        if isinstance(test, cst.Name) and isinstance(function, cst.FunctionDef) and switched_off_parameter(function, test.value):
            return False
        if isinstance(test, cst.Name):
            return self._shipped_switch(test)
        if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == "self" and self.values.class_names:
            return attribute_defaults(self.facts.module).get(test.attr.value)
        return None

    def _shipped_switch(self, test: cst.BaseExpression) -> Truth:
        """`use_gpu = False` at a notebook's top, then `if use_gpu: device = torch.device("cuda")`:
        the branch a module switch turns off never runs as the file is shipped, so what it binds is
        not what the names hold afterwards (the device stays the CPU one). Only module switches
        count: a parameter's default is what a caller may change on any call."""
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
        name = test.expression if negated else test  # type: ignore[attr-defined]
        function = self._scope.node
        if not isinstance(name, cst.Name) or (function is not None and name.value in bindings_in(function)):
            return None
        truth = self._module_switch(name.value)
        return None if truth is None else truth != negated

    def _module_switch(self, name: str) -> Truth:
        """`retrain = False` at a script's top, then `if retrain:`: a switch the user edits by
        hand, off as shipped, when every binding of the name in the file writes `False`."""
        bound = bindings_in(self.facts.module).get(name, ())
        off = bool(bound) and all(isinstance(value, cst.Name) and value.value == "False" for value in bound)
        return False if off else None

    def _without_gpu(self) -> bool:
        return any(self._gpu_absent_branches)

    def _clock_throttles(self, test: cst.BaseExpression) -> Iterator[cst.Comparison]:
        """`now - last_logging > args.log_freq_time`, `time.time() - t_log >= 60`: an elapsed
        wall-clock time against a period. The branch runs once per period, whatever the step rate."""
        readings = set(self.facts.clock_names.values())
        stack: list[cst.CSTNode] = [test]
        while stack:
            node = stack.pop()
            stack.extend(child_nodes(node))
            if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
                continue
            operator = node.comparisons[0].operator
            if isinstance(operator, (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)) and self._elapsed(_elapsed_side(node), readings):
                yield node

    def _elapsed(self, expr: cst.BaseExpression, readings: set[str]) -> bool:
        """`now - last` with `now` a clock reading (a name bound to one, or the call itself)."""
        if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Subtract)):
            return False
        now = expr.left
        if isinstance(now, cst.Name):
            return now.value in readings
        return isinstance(now, cst.Call) and self.facts.imports.qualified_name(now.func) in kb.CLOCKS

    def _calls_period_test(self, call: cst.Call, loop: LoopFacts) -> bool:
        """`every_n_steps(train_state, freq)`: a function of this file that returns a
        `step % freq == 0` test, called with something the loop changes."""
        if not isinstance(call.func, cst.Name):
            return False
        callee = self.facts.functions.get(call.func.value)
        if callee is None or not isinstance(callee.node, cst.FunctionDef) or not _returns_period_test(callee.node):
            return False
        return any(referenced_names(arg.value) & loop.varying for arg in call.args)

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        """An `except` body runs only when its `try` raised: a fallback (`cholesky` again with more
        damping after a `LinAlgError`), as rare as the fallback of a NaN check, not part of every step."""
        self._opt_in_branches.append(True)
        self._set_state(self._loop, self._guards)

    def leave_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._opt_in_branches.pop()
        self._set_state(self._loop, self._guards)

    def leave_If_body(self, node: cst.If) -> None:
        self._gpu_absent_branches.pop()
        self._opt_in_branches.pop()
        self._set_state(self._loop, self._guards[:-1])
        self._run_once_blocks.pop()
        stores = self.values.close_branch()
        # `if isinstance(parameters, torch.Tensor): parameters = [parameters]` never runs on a
        # module's parameters: the names keep what they held.
        dead = node in self._dead_branches or self._shipped_switch(node.test) is False
        self._dead_branches.discard(node)
        self._branch_stores[node] = {} if dead else stores

    def leave_If(self, original_node: cst.If) -> None:
        for key, value in self._branch_stores.pop(original_node, {}).items():  # an `if` without `else`
            self.values.store(key, value)
        if _skips_the_rest(original_node):
            self._set_state(self._loop, self._guards + (original_node.test,))  # until the block ends

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._block_guards.append(len(self._guards))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        """Drop the guards early exits of this block added (`if done: return`) for what follows them."""
        self._set_state(self._loop, self._guards[: self._block_guards.pop()])

    def visit_If_orelse(self, node: cst.If) -> None:
        self._gpu_absent_branches.append(self._tests_gpu_present(node.test) is True)
        self._opt_in_branches.append(self._default_truth(node.test) is True)
        self.values.open_branch()
        # The `else` of `if step % 100 == 0:` runs on the other 99 steps: its guard is the test negated.
        self._set_state(self._loop, self._guards + (cst.UnaryOperation(operator=cst.Not(), expression=node.test),))

    def leave_If_orelse(self, node: cst.If) -> None:
        self._gpu_absent_branches.pop()
        self._opt_in_branches.pop()
        self._set_state(self._loop, self._guards[:-1])
        orelse = self.values.close_branch()
        if self._shipped_switch(node.test) is True:
            orelse = {}  # `if not use_gpu: ... else: device = "cuda"` with the switch off as shipped
        self.values.merge_branches(self._branch_stores.pop(node, {}), orelse)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._check_condition(node.test, "a GPU value as the test of `a if test else b`")

    def _enter_branch(self, node: cst.IfExp) -> None:
        """`a if test else b`: each branch runs only when its test says so, like an `if`."""
        self._set_state(self._loop, self._guards + (node.test,))

    def _leave_branch(self, node: cst.IfExp) -> None:
        self._set_state(self._loop, self._guards[:-1])

    visit_IfExp_body = visit_IfExp_orelse = _enter_branch
    leave_IfExp_body = leave_IfExp_orelse = _leave_branch

    def visit_Assert(self, node: cst.Assert) -> None:
        self._check_condition(node.test, "a GPU value in an `assert`")

    def _check_condition(self, test: cst.BaseExpression, what: str, validates: bool = False) -> bool:
        """A GPU value used as a Python truth value forces `bool()`: a device->host sync. One per
        test: `assert m.min() >= 0 and m.max() < n` reads two values back, and is one place to fix.
        Whether the test reads a GPU value."""
        operands = [test]
        read: list[cst.BaseExpression] = []
        while operands:
            expr = operands.pop()
            if isinstance(expr, cst.BooleanOperation):
                operands += [expr.left, expr.right]
            elif isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
                operands.append(expr.expression)
            else:
                value = self.values.evaluate(expr)
                if value is not None and value.holds_fields and isinstance(expr, (cst.Name, cst.Attribute)):
                    # `if hasattr(dec, "project_out") and dec.project_out:` of a thing of unknown type
                    # moved with `.to(dev)`: a presence test (a tensor of several elements has no
                    # truth value), not a read of GPU data.
                    continue
                if value is not None and value.is_gpu_array:
                    read.append(expr)
        if read:
            self._sync_point(read[0] if len(read) == 1 else test, what, validates)
        return bool(read)

    # -- assignments ------------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        self._stored_subscripts.update(t.target for t in node.targets if isinstance(t.target, cst.Subscript))
        picked = self._dispatch_table_pick(node.value)
        wrapped = self._progress_wrapped(node.value)
        for target in node.targets:
            if picked and isinstance(target.target, cst.Name):
                self._dispatch_tables[(id(self._scope), target.target.value)] = picked
            if isinstance(target.target, cst.Name):
                key = (id(self._scope), target.target.value)
                if wrapped is not None:
                    self._progress_bars[key] = wrapped
                else:
                    self._progress_bars.pop(key, None)
        stored, read = (_first_index(node.targets[0].target), _first_index(node.value)) if len(node.targets) == 1 else (None, None)
        if stored is not None and read is not None and self.facts.code(stored) == self.facts.code(read):
            assert isinstance(node.value, cst.Subscript)
            self._masked_copies.add(node.value)
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
        call = original_node.value
        self._confirm_tensor(call)
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in ("cuda", "to"):
            # `model.cuda()` as a statement: a module moves in place (a tensor's copy is dropped),
            # so an object we cannot see moved that way is a module (`model = build_model(cfg); model.cuda()`).
            base = call.func.value
            while isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute) and base.func.attr.value in kb.MODULE_SELF_METHODS:
                base = base.func.value  # `net.train().requires_grad_(True).to(device)`: still `net`, moved in place
            receiver = self.values.evaluate(base)
            moved = self.values.evaluate(call)
            name = dotted_name(base)
            if receiver is None and moved is not None and moved.holds_fields:
                moved = Value(Kind.MODULE, moved.library, moved.device)
            in_place = receiver is None or receiver.kind is Kind.MODULE
            if in_place and moved is not None and moved.kind is Kind.MODULE and name is not None:
                self.values.store(name, moved)

    def _confirm_tensor(self, statement: cst.BaseExpression) -> None:
        """`loss.backward()` as a statement: what only a tensor does. A name held only as a part
        of a GPU module's result (`out, loss = model(x)`: a part may be a list or a number) is
        a tensor from here on, as certain as the result it came from."""
        if not (isinstance(statement, cst.Call) and isinstance(statement.func, cst.Attribute)):
            return
        if statement.func.attr.value not in kb.TENSOR_ONLY_STATEMENTS:
            return
        name = dotted_name(statement.func.value)
        held = self.values.evaluate(statement.func.value) if name is not None else None
        if name is not None and held is not None and held.inferred and held.is_device_array:
            self.values.store(name, replace(held, inferred=False))

    def leave_Return(self, original_node: cst.Return) -> None:
        self._record_operations(original_node.value)
        if isinstance(self._scope.node, cst.FunctionDef):
            value, items = self._handed_value(original_node.value)
            self._returned.setdefault(self._scope, []).append((original_node.value, value))
            self._returned_items.setdefault(self._scope, []).append(items)

    def leave_Yield(self, original_node: cst.Yield) -> None:
        if isinstance(original_node.value, cst.From) or not isinstance(self._scope.node, cst.FunctionDef):
            self._yielded[self._scope] = [None]  # `yield from other()`: what it hands out is not followed
            return
        self._yielded.setdefault(self._scope, []).append(self._handed_value(original_node.value)[0])

    def _handed_value(self, expr: cst.BaseExpression | None) -> tuple[Value | None, list[Value | None] | None]:
        """What a `return` or `yield` hands out, and, for a tuple written out (no `*`), each item.
        `return indices, weights` where every item is an array on the GPU hands back GPU arrays, so
        its unpacked results live there (inferred: which item is which is not kept)."""
        if isinstance(expr, cst.Name) and expr.value in self._gpu_lists.get(self._scope, {}):
            value = self.values.evaluate(expr)
            if value is not None and value.kind is Kind.SEQUENCE:  # `return res` of appended GPU tensors
                appended = self._gpu_lists[self._scope][expr.value]
                return replace(appended, shape=None, ndim=None, packed=True, holds_fields=False, class_name=kb.APPENDED_ARRAYS), None
        if not isinstance(expr, cst.Tuple):
            return (self.values.evaluate(expr) if expr is not None else None), None
        if any(isinstance(element, cst.StarredElement) for element in expr.elements):
            return None, None
        items = [self.values.evaluate(element.value) for element in expr.elements]
        if not items or not all(item is not None and item.is_array and item.on_gpu for item in items):
            return None, items
        first = items[0]
        assert first is not None
        device = merge_devices([item.device for item in items if item is not None])
        return replace(first, device=device or first.device, shape=None, holds_fields=False, inferred=True), items

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._record_operations(original_node.value)
        value = self.values.evaluate(original_node.value)
        scope = self.values.scopes[-1]
        if id(original_node) in scope.trained_by:
            for target in original_node.targets:
                name = target.target.value if isinstance(target.target, cst.Name) else None
                if name in scope.trained_found:
                    scope.trained[name] = scope.trained_found[name]  # the loss again, after a loop reused its name
        elif scope.trained:
            for target in original_node.targets:
                if isinstance(target.target, cst.Name):
                    scope.trained.pop(target.target.value, None)  # rebound: no longer the loss
        for target in original_node.targets:
            self._record_env_subscript(target.target, original_node.value)
            self._bind(target.target, value, original_node.value)
            self._note_literal_keys(target.target, original_node.value)
        if len(original_node.targets) == 1 and isinstance(original_node.targets[0].target, cst.Name):
            key = (self._scope, original_node.targets[0].target.value)
            if isinstance(original_node.value, cst.Call) and original_node.value in self._copies:
                # kept with the copies bound before: under an `if`, the name may hold either
                self._host_copies.setdefault(key, set()).add(original_node.value)
            elif not self._guards:
                self._host_copies.pop(key, None)  # rebound on every path: no longer the copy

    def _has_literal_keys(self, name: str) -> bool:
        """The name, in the innermost scope that binds it (a comprehension reads its enclosing
        function's names), holds a dict display of literal keys (see `Scope.literal_keys`)."""
        for scope in reversed(self.values.scopes):
            if name in scope.bindings:
                return name in scope.literal_keys
        return False

    def _note_literal_keys(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """Keep `Scope.literal_keys`: a name bound to a dict display of literal keys joins it; a
        name bound to anything else, or given a computed key (`results[name] = ...`), leaves it."""
        keys = self.values.scopes[-1].literal_keys
        if isinstance(target, cst.Name):
            if isinstance(value, cst.Dict) and value.elements and all(isinstance(e, cst.DictElement) and isinstance(e.key, (cst.SimpleString, cst.Integer)) for e in value.elements):
                keys.add(target.value)
            else:
                keys.discard(target.value)
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value in keys:
            index = target.slice[0].slice if len(target.slice) == 1 else None
            if not (isinstance(index, cst.Index) and isinstance(index.value, (cst.SimpleString, cst.Integer))):
                keys.discard(target.value.value)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self._record_operations(original_node.value)
        if original_node.value is not None:
            value = self.values.evaluate(original_node.value)
            self._bind(original_node.target, value, original_node.value)
            in_class_body = bool(self._classes) and self._classes[-1][2] is self._scope
            if in_class_body and isinstance(original_node.target, cst.Name) and value is not None and value.kind is Kind.NUMBER:
                # `target_network_frequency: int = 500` in a config class: what its instances hold by default
                self.facts.class_defaults.setdefault(self._classes[-1][0], {})[original_node.target.value] = value

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._accumulating += 1
        if isinstance(node.target, cst.Subscript):
            self._masked_updates.add(node.target)

    def leave_AugAssign(self, original_node: cst.AugAssign) -> None:
        self._accumulating -= 1
        self._scope.has_arithmetic = True
        target_value = self.values.evaluate(original_node.target)
        value = self.values.evaluate(original_node.value)
        arrays = [v for v in (target_value, value) if v is not None and v.is_array]
        if any(v.on_gpu for v in arrays):
            self._event(EventKind.GPU_WORK, original_node, type(original_node.operator).__name__)
        for name in names_in_target(original_node.target):
            self._mark_varying(name)
        counted = isinstance(original_node.operator, cst.AddAssign) and isinstance(original_node.value, cst.Integer)
        if counted and isinstance(original_node.target, cst.Name):
            loop = self._loop
            while loop is not None:
                loop.counters.add(original_node.target.value)
                loop = loop.parent
        if isinstance(original_node.target, cst.Subscript):
            self.values.filled_by_host(original_node.target.value)
        number = target_value is not None and target_value.kind is Kind.NUMBER
        field = dotted_name(original_node.target) if isinstance(original_node.target, cst.Attribute) else None
        if field is not None and field.startswith("self.") and (target_value is None or number) and arrays:
            self.values.store(field, arrays[0])  # a meter's `self.sum += val * n` handed GPU values: a tensor now
        if isinstance(original_node.target, cst.Name) and (target_value is None or number) and arrays:
            self.values.store(original_node.target.value, arrays[0])  # `lossf = 0.0; lossf += loss.detach()`: a tensor now
        elif isinstance(original_node.target, cst.Name) and number and value is None:
            self.values.store(original_node.target.value, None)  # `total = 0.0; total += criterion(out, y)`: no longer known

    def leave_NamedExpr(self, original_node: cst.NamedExpr) -> None:
        self._bind(original_node.target, self.values.evaluate(original_node.value), original_node.value)

    def visit_With(self, node: cst.With) -> None:
        devices = [device for item in node.items if (device := self.values.context_device(item.item)) is not None]
        self._device_blocks.append(bool(devices))
        self.values.default_devices.extend(devices[-1:])
        self._timer_blocks.append((node, []))

    def leave_With(self, original_node: cst.With) -> None:
        if self._device_blocks.pop():
            self.values.default_devices.pop()
        for item in original_node.items:
            call = item.item
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
                if call.func.attr.value in kb.SYNCING_CONTEXT_METHODS:
                    self._event(EventKind.SYNC, original_node, "sync")  # the block's exit waits
        for waits in reversed(self._timer_blocks.pop()[1]):
            if waits:
                self._event(EventKind.SYNC, original_node, "sync")  # `synchronize=True`: the timer waits, then reads
            self._event(EventKind.CLOCK, original_node, "timer")

    def leave_WithItem(self, original_node: cst.WithItem) -> None:
        value = self.values.evaluate(original_node.item)
        if original_node.asname is not None:
            self._bind(original_node.asname.name, value, None)
        if value is not None and value.kind is Kind.INSTANCE and value.class_name in (kb.TIMER_OBJECT, kb.SYNCHRONIZED_TIMER_OBJECT):
            self._open_timer(original_node, value.class_name == kb.SYNCHRONIZED_TIMER_OBJECT)

    def _open_timer(self, item: cst.WithItem, waits: bool) -> None:
        """`with wp.ScopedTimer("step", dict=times):`: the host clock is read here and when the
        block ends (see `leave_With`), after a device-wide wait when it synchronises."""
        timer = item.item
        kept_in = keyword_arg(timer, kb.TIMER_KEEPS_KEYWORD) if isinstance(timer, cst.Call) else None
        asname = item.asname.name.value if item.asname is not None and isinstance(item.asname.name, cst.Name) else None
        block, timers = self._timer_blocks[-1]
        self.facts.scoped_timers.append(ScopedTimer(block, timer, self._scope, not isinstance(timer, cst.Call), kept_in, asname))
        if waits:
            self._event(EventKind.SYNC, timer, "sync")
        self._event(EventKind.CLOCK, timer, "timer")
        timers.append(waits)

    def _record_env_subscript(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if not isinstance(target, cst.Subscript) or len(target.slice) != 1:
            return
        if self.facts.imports.qualified_name(target.value) != "os.environ":
            return
        index = target.slice[0].slice
        key = literal_string(index.value) if isinstance(index, cst.Index) else None
        if key in kb.BLOCKING_LAUNCH_ENV_VARS and literal_string(value) == "1":
            self._remember(target)
            self.facts.debug_switches.append(DebugSwitch(target, "blocking launches", self.context()))
        if key in kb.THREAD_ENV_VARS and not self._restores(key, value):
            self._remember(target)
            self.facts.env_writes.append(EnvWrite(target, key, self._tick()))

    def _restores(self, key: str, value: cst.BaseExpression) -> bool:
        """`os.environ["OMP_NUM_THREADS"] = saved` with `saved = os.environ.get("OMP_NUM_THREADS")`
        earlier in the same function: the variable is put back as it was, nothing is set."""
        if not isinstance(value, cst.Name):
            return False
        stored = values_bound_to(value.value, self._scope.node or self.facts.module)
        return any(saved is not None and self._reads_env(saved, key) for saved in stored)

    def _reads_env(self, expression: cst.BaseExpression, key: str) -> bool:
        """`os.environ.get(key)`, `os.getenv(key)`, `os.environ[key]`."""
        if isinstance(expression, cst.Call) and expression.args:
            reader = self.facts.imports.qualified_name(expression.func) if isinstance(expression.func, (cst.Name, cst.Attribute)) else None
            return reader in ("os.environ.get", "os.getenv") and literal_string(expression.args[0].value) == key
        if isinstance(expression, cst.Subscript) and len(expression.slice) == 1 and isinstance(expression.slice[0].slice, cst.Index):
            return self.facts.imports.qualified_name(expression.value) == "os.environ" and literal_string(expression.slice[0].slice.value) == key
        return False

    # -- expressions ------------------------------------------------------------------------
    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Subtract) and id(node) not in self._throttle_elapsed:
            start = dotted_name(node.right)
            if isinstance(node.left, cst.Call):
                self.facts.elapsed_reads[node.left] = start
            else:
                left = dotted_name(node.left)
                if left is not None and start is not None:
                    self.facts.subtracted_from.setdefault(left, set()).add(start)

    def visit_BinaryOperation_right(self, node: cst.BinaryOperation) -> None:
        if is_string_formatting(node):
            right = node.right
            operands = [element.value for element in right.elements] if isinstance(right, cst.Tuple) else [right]
            for expression in operands:
                value = self.values.evaluate(expression)
                if value is not None and value.is_gpu_array:
                    self._sync_point(expression, "formatting a GPU value with `%`", formats=True)

    def leave_BinaryOperation(self, original_node: cst.BinaryOperation) -> None:
        self._scope.has_arithmetic = True
        value = self.values.evaluate(original_node)
        if value is not None and value.is_gpu_array:
            self._event(EventKind.GPU_WORK, original_node, type(original_node.operator).__name__)
        left = self.values.evaluate(original_node.left)
        if left is not None and left.kind is Kind.FORMULA and isinstance(original_node.operator, cst.MatrixMultiply):
            self._event(EventKind.SYNC, original_node, "sync")  # `K @ b` of a KeOps formula: run, then waited for

    def visit_Subscript(self, node: cst.Subscript) -> None:
        bound = self._gpu_slice_bound(node)
        if bound is not None and self._first_use_of_bound(bound):  # `x[:, vh:vh + s]`, `vh` a GPU scalar
            self._sync_point(bound, "a GPU value as a slice bound", inside=kb.SLICE_BOUND)
        base = self.values.evaluate(node.value)
        if base is not None and base.is_device_array and legacy_scalar_read(node):
            self._sync_point(node, "a legacy `.data[0]` scalar read")
        if base is not None and base.is_device_array and cudf_element_read(node, base, self._holds_position):
            assert isinstance(node.value, cst.Attribute)
            self._sync_point(node, f"reading one element of a cuDF object with `.{node.value.attr.value}[...]`", inside=kb.CUDF_ELEMENT_READ)
        if base is None:
            base = self._indexed_by_gpu_mask(node)
        if base is None or not base.is_gpu_array:
            return
        for element in node.slice:
            index = element.slice.value if isinstance(element.slice, cst.Index) else None
            if index is None:
                continue
            # `output[..., np.r_[:2, 4:n_ch]]`: copied to the device on each use (one finding per index the loop builds)
            built = self.facts.imports.builds_index_array(index) and self._first_use_of_index(element)
            if _literal_index_list(index) or self._range_index(index) or built:  # `t[range(n), labels]` too
                self.facts.transfers.append(
                    Transfer(node, "h2d", index, self.context(), None, self.values.evaluate(index), host_index=True, indexed_library=base.library)
                )
                continue
            value = self.values.evaluate(index)
            if (_index_list(value) or _made_on_host(value)) and self._first_use_of_index(element):
                # `obs[indices]` with a sampler's list of indices (copied to the GPU like `x[[1, 2]]`),
                # `x[torch.arange(n), labels]` with an index made on the host
                self.facts.transfers.append(Transfer(node, "h2d", index, self.context(), None, value, host_index=True, indexed_library=base.library))
            elif value is not None and value.is_gpu_array and value.dtype == "bool" and node not in self._stored_subscripts:
                if node in self._masked_copies:  # the count is only used to store back: avoidable whatever the mask
                    self._sync_point(node, "copying through a boolean mask", inside=kb.MASKED_COPY)
                elif node in self._masked_updates:
                    self._sync_point(node, "updating through a boolean mask", inside=kb.MASKED_UPDATE)
                elif self._first_use_of_index(element):  # `x[x > 0]`: a `nonzero` underneath, sized on the host
                    self._sync_point(node, "indexing with a boolean mask", sized=True, mask=index)
        if self._loop is None:
            return
        indices = []
        for element in node.slice:
            if not isinstance(element.slice, cst.Index) or not isinstance(element.slice.value, cst.Name):
                return
            indices.append(element.slice.value.value)
        if base.packed:
            return  # `preds[i]` of a model's outputs: one of its maps (a refinement's i-th flow), not a row
        loop: LoopFacts | None = self._loop
        while loop is not None:
            if loop.targets.intersection(indices):
                loop.element_reads.append(node)
            loop = loop.parent

    def _gpu_slice_bound(self, node: cst.Subscript) -> cst.BaseExpression | None:
        """The first bound of a slice that is a GPU value: Python slices take integers only, so
        the bound is read back to the host (and the host waits) each time the subscript runs."""
        for element in node.slice:
            if not isinstance(element.slice, cst.Slice):
                continue
            for bound in (element.slice.lower, element.slice.upper, element.slice.step):
                value = self.values.evaluate(bound) if bound is not None else None
                if value is not None and value.is_gpu_array:
                    return bound
        return None

    def _first_use_of_bound(self, bound: cst.BaseExpression) -> bool:
        """The first slice of this loop (or scope) bounded by these names: the later ones read
        the same values, and one `.item()` before them all is the fix of them all."""
        return self._first_use("slice bound " + " ".join(sorted(referenced_names(bound))))

    def _range_index(self, index: cst.BaseExpression) -> bool:
        return isinstance(index, cst.Call) and isinstance(index.func, cst.Name) and self.facts.imports.qualified_name(index.func) == "builtins.range"

    def _indexed_by_gpu_mask(self, node: cst.Subscript) -> Value | None:
        """`dist[mask]` with `mask` a GPU boolean array: an array indexed by a mask must live on the
        mask's device (a host tensor or a NumPy array indexed by a CUDA mask is an error), so `dist`
        is a GPU array even where nothing else says so."""
        first = node.slice[0].slice
        mask = self.values.evaluate(first.value) if isinstance(first, cst.Index) else None
        if mask is None or not mask.is_gpu_array or mask.dtype != "bool":
            return None
        return replace(mask, dtype=None, shape=None)  # as sure as the mask: it must share its device

    def _holds_position(self, index: cst.BaseExpression) -> bool:
        """Is this index one position or label: a string literal or a Python number?"""
        return isinstance(index, cst.SimpleString) or self._python_number(index)

    def _first_use_of_index(self, element: cst.SubscriptElement) -> bool:
        return self._first_use(self.facts.code(element))

    def _first_use(self, what: str) -> bool:
        """The first time this loop (or scope) indexes with `what`."""
        seen = (id(self._loop or self._scope), what)
        first = seen not in self._indices_used
        self._indices_used.add(seen)
        return first

    def leave_FormattedStringExpression(self, original_node: cst.FormattedStringExpression) -> None:
        """The value is formatted once it is computed: its wait comes after the work inside it
        (`f"{x.mean():.3f} {time.time() - t0:.3f}"` has the GPU drained before the clock is read)."""
        node = original_node
        value = self.values.evaluate(node.expression)
        if value is not None and value.is_gpu_array:
            self._sync_point(node.expression, "formatting a GPU value in an f-string", formats=True)

    # -- after the walk ---------------------------------------------------------------------
    def finish(self) -> None:
        """Summarise each function (launches GPU work? synchronises?) through local calls."""
        scopes = self.facts.scopes
        for scope in scopes:
            scope.launches_gpu = any(e.kind is EventKind.GPU_WORK for e in scope.events)
            scope.synchronizes = any(e.kind in (EventKind.SYNC, EventKind.HOST_READ) for e in scope.events)
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
        _vary_with_called_methods(self.facts)
        resolve_frequencies(self.facts)
        mark_iterating_functions(self.facts)
        self.facts.reduced_masked_reads = only_reduced_reads(self.facts)


def _vary_with_called_methods(facts: ModuleFacts) -> None:
    """`while True: self.run_step(batch); if self.step % self.save_interval == 0: ...`: what the
    methods of the class called in a loop write to `self` (`self.step += 1` in `run_step`, also
    through the methods they call) changes from one iteration to the next, as a name the loop
    body rebinds does."""
    writes: dict[str, set[str]] = {}  # per method, with the methods it calls on self

    def written_by(method: FunctionFacts, seen: set[str]) -> set[str]:
        if method.name in writes:
            return writes[method.name]
        seen.add(method.name)
        found = set(method.writes_to_self)
        for event in method.events:
            callee = facts.function_called(event)
            if callee is not None and callee.name not in seen and _same_class(callee, method):
                found |= written_by(callee, seen)
        writes[method.name] = found
        return found

    for scope in facts.scopes:
        for event in scope.events:
            loop = event.ctx.loop
            callee = facts.function_called(event) if loop is not None else None
            if callee is None or not _same_class(callee, scope):
                continue
            changed = written_by(callee, set())
            while loop is not None:
                loop.varying |= changed
                loop = loop.parent


def _same_class(method: FunctionFacts, other: FunctionFacts) -> bool:
    """Two methods of one class (`Trainer.run_step` and `Trainer.run_loop`)."""
    owner = method.name.rpartition(".")[0]
    return bool(owner) and owner == other.name.rpartition(".")[0]


#: Element tests for values that are not finite, and what each is on sound numbers.
_FINITENESS_TESTS = {"isnan": False, "isinf": False, "isposinf": False, "isneginf": False, "isfinite": True}
#: Reductions that keep a finiteness test's answer on sound numbers (`.any()` of all-False is False).
_TRUTH_REDUCTIONS = frozenset({"any", "all", "item"})


def _tests_cuda_device(test: cst.BaseExpression) -> bool | None:
    """`device.type == "cuda"`, `str(device) == "cuda"`, `x.is_cuda`: True; `device.type ==
    "cpu"` or `!= "cuda"`: False (the body runs off CUDA: the host, or an MPS device timed the
    way the host is); None for anything else."""
    if isinstance(test, cst.Attribute) and test.attr.value == "is_cuda":
        return True
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    (comparison,) = test.comparisons
    sides = (test.left, comparison.comparator)
    named = next((side.evaluated_value for side in sides if isinstance(side, cst.SimpleString)), None)
    device = next((side for side in sides if not isinstance(side, cst.SimpleString)), None)
    kind = named.split(":")[0] if isinstance(named, str) else None
    if kind not in ("cuda", "cpu") or not _names_a_device(device):
        return None  # `== "mps"` names another GPU: what runs there is not on the host either
    if isinstance(comparison.operator, cst.Equal):
        return kind == "cuda"
    if isinstance(comparison.operator, cst.NotEqual):
        return False if kind == "cuda" else None
    return None


def _names_a_device(expr: cst.BaseExpression | None) -> bool:
    """`device.type`, `x.device.type`, `args.device`, `device`, `str(device)`."""
    if isinstance(expr, cst.Call) and dotted_name(expr.func) == "str" and len(expr.args) == 1:
        expr = expr.args[0].value
    name = dotted_name(expr) if expr is not None else None
    return name is not None and (name.endswith(".type") or name.rsplit(".", 1)[-1] in kb.DEVICE_PARAMETER_NAMES)


def _finiteness_check(test: cst.BaseExpression) -> bool | None:
    """`torch.isnan(k).any()`, `x.isinf().any().item()`, `torch.any(torch.isnan(x))`,
    `math.isnan(v)`, `np.isfinite(loss).all()`, and `or` / `and` of such tests (`isnan(x).any() or
    isinf(x).any()`): what the test is on finite numbers, else None."""
    if isinstance(test, cst.BooleanOperation):
        left, right = _finiteness_check(test.left), _finiteness_check(test.right)
        if left is None or right is None:
            return None
        return left or right if isinstance(test.operator, cst.Or) else left and right
    node = test
    while isinstance(node, cst.Call):
        name = node.func.attr.value if isinstance(node.func, cst.Attribute) else node.func.value if isinstance(node.func, cst.Name) else None
        if name in _FINITENESS_TESTS:
            return _FINITENESS_TESTS[name]
        if name not in _TRUTH_REDUCTIONS:
            return None
        if isinstance(node.func, cst.Attribute) and not node.args:
            node = node.func.value  # `torch.isnan(x).any()`
        elif len(node.args) == 1:
            node = node.args[0].value  # `torch.any(torch.isnan(x))`
        else:
            return None
    return None


def _short_slice(part: cst.BaseSlice) -> bool:
    """`[:3]`, `[2:5]`: a slice whose literal bounds keep a handful of items."""
    if not isinstance(part, cst.Slice) or part.step is not None or part.upper is None:
        return False
    upper = literal_integer(part.upper)
    lower = literal_integer(part.lower) if part.lower is not None else 0
    return upper is not None and lower is not None and 0 <= lower <= upper and upper - lower <= FEW_ITERATIONS


def _first_index(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """The first index of a subscript (`mask` in `x[mask, :, 2:]`), None for a slice or no subscript."""
    if not isinstance(node, cst.Subscript) or not isinstance(node.slice[0].slice, cst.Index):
        return None
    return node.slice[0].slice.value


def _window_offsets(args: list[cst.BaseExpression]) -> bool:
    """`range(-r, r + 1)`, `range(-r, r)`: every offset of a window around zero. A radius (a
    kernel's half-width, a crop's shift) is small by nature, whatever its value here."""
    if len(args) != 2 or not isinstance(args[0], cst.UnaryOperation) or not isinstance(args[0].operator, cst.Minus):
        return False
    stop = args[1]
    if isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Add) and literal_integer(stop.right) == 1:
        stop = stop.left
    return args[0].expression.deep_equals(stop)


def _literal_index_list(index: cst.BaseExpression) -> bool:
    """`x[:, [-1]]`: a list of integers, which becomes a host tensor copied to the GPU."""
    return isinstance(index, cst.List) and bool(index.elements) and all(literal_integer(item.value) is not None for item in index.elements)


def _index_list(index: Value | None) -> bool:
    """A Python list of indices a batch sampler handed out (see `kb.INDEX_BATCH_SAMPLERS`)."""
    return index is not None and index.kind is Kind.INDEX_LIST


def _made_on_host(index: Value | None) -> bool:
    """`x[torch.arange(n), labels]`: an index array filled or drawn on the host from nothing, so
    building it with `device=` would spare the copy (data read from a file or a sampler is not)."""
    return index is not None and index.is_array and index.device is Device.HOST and index.generated and index.library in ("torch", "numpy")
