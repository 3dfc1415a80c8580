"""Facts about one module, gathered by one walk and read by every rule.

Rules never re-walk the tree to learn what a name holds or which loop they are in; they
read the records below. Each record carries the `Context` it was seen in: the function,
the innermost loop of that function, and the `if` tests between that loop and the node.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Union

import libcst as cst

from gpuadvisor.analysis.facts.array_ops import ArrayOperation
from gpuadvisor.analysis.facts.imports import ImportTable, passed_argument
from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.interfaces import DISPATCHED_PREFIX, interface_implementations
from gpuadvisor.analysis.facts.knowledge import FrameworkStep
from gpuadvisor.analysis.facts.traverse import own_nodes
from gpuadvisor.analysis.facts.values import Device, Passthrough, Value

LoopNode = Union[cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp]


_TEST_PATH = re.compile(r"(^|[/\\])(tests?|testing)[/\\]|(^|[/\\])(test_[^/\\]*|[^/\\]*_test|conftest)\.(py|ipynb)$")


def is_test_path(path: str) -> bool:
    """Files of a test suite: `tests/`, `test_*.py`, `*_test.py`, `conftest.py`."""
    return _TEST_PATH.search(path) is not None


class Runs(enum.Enum):
    """How often a function body runs, judged from its callers."""

    REPEATED = "repeated"  # a call site sits in a loop, or in a function that runs in one
    PER_CALL = "per-call"  # its callers are elsewhere (a `forward`, a method, a library hook)
    #: now and then: every call site is under a sampling test of its loop (`if step % 500 == 0:
    #: sample_images()`), or in code that itself runs so; what it does is a sliver of the run
    SAMPLED = "sampled"
    ONCE = "once"  # module level, `__init__`, a driver function that holds its own loop


@dataclass(frozen=True)
class StepCaller:
    """A caller that runs a function on every step of a hot loop, named for messages."""

    where: str  # "`main()`", "the module", "train.py's `train()`"
    through: str | None = None  # the function in between, when the loop calls it indirectly


@dataclass(frozen=True)
class ExternalCall:
    """A call of one of this file's functions made in another file of the checked project."""

    key: str  # the function, as in `ModuleFacts.functions` ("discriminator_loss", "EMAHelper.update")
    caller: str  # "train.py's `train()`"
    runs: Runs  # how often the call site runs
    per_step: bool  # on every step of a hot loop (not sampled, not per epoch, not in a test)
    #: What the call passes, by position and by keyword (None where unknown).
    positional: tuple[Value | None, ...] = ()
    keywords: tuple[tuple[str, Value | None], ...] = ()
    has_star: bool = False  # `f(*args)` / `f(**kw)`: positions unknown

    @property
    def hands_gpu_values(self) -> bool:
        """Some argument is a GPU value: this caller is one for whom the callee's work runs there."""
        return any(value is not None and value.on_gpu for value in (*self.positional, *(value for _, value in self.keywords)))


@dataclass(frozen=True)
class NamedFieldStore:
    """`def register_buffer(self, name, attr): attr = attr.to(torch.device("cuda")); setattr(self, name, attr)`
    (the samplers of latent diffusion): a call `self.register_buffer("alphas", t)` sets `self.alphas`."""

    name_index: int
    value_index: int
    moved_to: Device | None


@dataclass(eq=False)
class FunctionFacts:
    """A function body (or the module body, `node is None`) and what it does."""

    name: str
    node: cst.FunctionDef | cst.Lambda | None
    parent: FunctionFacts | None
    compiled: bool = False  # numba / Cython / torch.compile: Python-loop rules do not apply
    cuda_kernel: bool = False  # numba.cuda.jit: calling it launches a kernel
    triton_kernel: bool = False  # triton.jit: `kernel[grid](...)` launches it on GPU tensors
    #: A method that stores a value under a name it is handed (`setattr(self, name, attr)`):
    #: the positions of the two parameters, and the device it moves the value to first, if any.
    stores_named_field: NamedFieldStore | None = None
    cuda_ufunc: bool = False  # numba.vectorize/guvectorize(target="cuda"): calling it runs on the GPU
    does_nothing: bool = False  # a body of only `return`/`pass`/a docstring: calling it launches no work
    events: list[Event] = field(default_factory=list)
    callees: list[str | None] = field(default_factory=list)  # qualified names; "local.f" for own defs
    has_loop: bool = False
    has_arithmetic: bool = False
    is_recursive: bool = False
    launches_gpu: bool = False  # resolved after the walk, through calls to other local functions
    synchronizes: bool = False
    #: Each call runs a loop of model calls over iterations (`frequency.mark_iterating_functions`).
    runs_iterations: bool = False
    runs: Runs = Runs.ONCE  # resolved after the walk (see `frequency.resolve_frequencies`)
    #: Set when some caller runs this function on every step of a hot loop.
    stepped_by: StepCaller | None = None
    #: `optimizer.step()` runs on every call (outside loops and conditions): the function is a
    #: training step, run once per optimizer step whoever calls it. The call, for messages.
    optimizer_step: cst.Call | None = None
    #: Some code of this file calls the function: how often it runs is known from there.
    called_in_file: bool = False
    #: Some code of another file of the project calls the function.
    called_from_project: bool = False
    #: A plain class's constructor: where this file builds its objects (one context per call).
    built_at: list[Context] = field(default_factory=list)
    #: Every call of it (all in this file) sits on a path a caller opts into (see `Context.opt_in`).
    opted_into: bool = False
    #: Attributes of `self` the method rebinds (`self.step += 1`, `self.ema = ...`): a loop that
    #: calls the method sees them change from one iteration to the next.
    writes_to_self: set[str] = field(default_factory=set)
    #: Some `return` hands back what a compiler makes (`return torch.compile(*args, **kwargs)`): a
    #: project's wrapper of the compiler, so a function it decorates is compiled.
    returns_compiled: bool = False

    @property
    def reads_clock(self) -> bool:
        """The function reads a host clock itself (it times something)."""
        return any(event.kind is EventKind.CLOCK for event in self.events)

    @property
    def reads_clock_when_called(self) -> bool:
        """A call of it reads a host clock (`timer.toc()`). A generator's reads come between the
        items it hands out (`for batch in logger.log_every(loader)`): they time each step of the
        loop that walks it, on average, rather than the work just before the call."""
        if not self.reads_clock:
            return False
        return not (isinstance(self.node, cst.FunctionDef) and any(isinstance(node, cst.Yield) for node in own_nodes(self.node.body)))

    @property
    def is_constructor(self) -> bool:
        """An `__init__` (a class's constructor)."""
        return self.name.rsplit(".", 1)[-1] == "__init__"

    @property
    def is_test(self) -> bool:
        """`def test_...` (or a function nested in one) that the project itself never calls:
        pytest runs tests, while a `test_split()` that an evaluation loop calls is the project's code.
        So is a reference implementation nothing in the project calls (`sample_farthest_points_naive`,
        `rasterize_meshes_python`): slow on purpose, kept for tests to check the fast one against."""
        function: FunctionFacts | None = self
        while function is not None:
            name = function.name.rsplit(".", 1)[-1]
            if (name.startswith("test_") or _named_reference(name)) and not (function.called_in_file or function.called_from_project):
                return True
            function = function.parent
        return False


def _named_reference(name: str) -> bool:
    """`attention_naive`, `naive_matmul`, `rasterize_python`, `softmax_ref`: a word that names the
    plain version of an operation, at either end of a name of two or more words."""
    words = name.strip("_").split("_")
    return len(words) > 1 and words[0] not in kb.CONVERSION_PREFIXES and (words[-1] in kb.REFERENCE_WORDS or words[0] in kb.REFERENCE_PREFIXES)


@dataclass(eq=False)
class LoopFacts:
    """A for/while loop or a comprehension, and what changes from one iteration to the next."""

    node: LoopNode
    parent: LoopFacts | None
    function: FunctionFacts
    targets: set[str] = field(default_factory=set)
    varying: set[str] = field(default_factory=set)  # targets + names (re)bound or mutated inside
    iter_value: Value | None = None
    counts_indices: bool = False  # iterates range()/enumerate(): the target is an index
    #: The targets that hold an integer position: `i` of `for i in range(n)` and of
    #: `for i, row in enumerate(rows)`.
    index_names: set[str] = field(default_factory=set)
    counters: set[str] = field(default_factory=set)  # names the body adds an integer to (`step += 1`)
    element_reads: list[cst.Subscript] = field(default_factory=list)  # gpu_array[target]
    gpu_ops: int = 0
    has_inner_loop: bool = False  # an outer (epoch-level) loop: per-iteration costs are amortised
    has_opaque_call: bool = False  # calls something we cannot see into (a model, a user function)
    #: Of those calls, one that runs code (not only `.cuda()`/`.to()` on a value of unknown type).
    runs_code: bool = False
    #: Iterates over dimensions, axes, a literal list or a short range: a handful of
    #: iterations, so per-iteration costs do not add up.
    few_iterations: bool = False
    #: A loop of module code outside any loop over at most `ONCE_RUN_FEW_ITERATIONS` (16) constant
    #: iterations (`for k in range(n_samples)`, `n_samples = 10`): it runs once in the program's
    #: life, so a scalar read per iteration is a handful of waits in all (a big copy per iteration
    #: still adds up: only the sync rule reads this).
    short_once: bool = False
    #: Iterates a module's parameter tensors (`for p in model.parameters()`), naming the module.
    parameters_of: str | None = None
    #: `for layer, cache in zip(self.layers, caches)`: each iteration runs one submodule of a
    #: container, a part of one model pass (not one of many model calls, as a sampler's steps are).
    over_submodules: bool = False
    #: A `%timeit` of a notebook: the statement is repeated to time it, and what it waits for
    #: is part of what is measured.
    timed_repetition: bool = False
    #: The `if` tests around the loop statement (inside its parent loop: `if n < 10: for ...`);
    #: the guards in force again once the loop ends.
    entry_guards: tuple[cst.BaseExpression, ...] = ()
    #: `if` tests inside the loop that look like sampling but hold on every iteration
    #: (`step % log_interval == 0` with `log_interval = 1`).
    every_iteration_tests: set[cst.BaseExpression] = field(default_factory=set)
    #: Parts of `if` tests that hold on a few iterations, beyond `step % N == 0`: calls of a
    #: function of this file that returns such a test, handed what the loop changes
    #: (`if every_n_steps(state, log_freq):`), and wall-clock throttles (`if now - last_log >
    #: args.log_freq_time:`, with `now` read from a clock in the loop).
    sampling_tests: set[cst.CSTNode] = field(default_factory=set)

    @property
    def iterable(self) -> cst.BaseExpression | None:
        """What a for loop or comprehension iterates over (None for while loops)."""
        if isinstance(self.node, cst.For):
            return self.node.iter
        if isinstance(self.node, cst.While):
            return None
        return self.node.for_in.iter

    def header_end(self) -> cst.CSTNode:
        """The node whose end closes the loop header (for the reported range)."""
        if isinstance(self.node, cst.For):
            return self.node.iter
        if isinstance(self.node, cst.While):
            return self.node.test
        return self.node


@dataclass(frozen=True)
class Context:
    function: FunctionFacts
    loop: LoopFacts | None
    guards: tuple[cst.BaseExpression, ...] = ()  # `if` tests inside the innermost loop
    compiled: bool = False
    #: Inside a branch that runs only where a caller turns a setting on (see `facts.settings`), or
    #: only when the numbers went wrong (the fallback of a NaN check).
    in_opt_in_branch: bool = False

    @property
    def opt_in(self) -> bool:
        """On a path a caller opts into: such a branch, or a function reached only from them
        (`if use_cpu: fill_indices_cpu(...)`, a reference implementation kept for tests)."""
        return self.in_opt_in_branch or self.function.opted_into

    @property
    def repeated(self) -> bool:
        """Inside a loop that runs more than a handful of times (see `LoopFacts.few_iterations`)."""
        return any(not loop.few_iterations for loop in self.loops())

    def loops(self) -> list[LoopFacts]:
        chain, loop = [], self.loop
        while loop is not None:
            chain.append(loop)
            loop = loop.parent
        return chain


class EventKind(enum.Enum):
    CLOCK = "clock"
    GPU_WORK = "gpu-work"
    SYNC = "sync"
    #: `.item()`, `.tolist()` or `.cpu()` of a value of unknown type (a generator's yield, a field
    #: of an object): a wait if it is a GPU tensor. Rules that must prove no wait happened (an
    #: unsynchronised timed region) stay silent after one.
    HOST_READ = "host-read"
    LOCAL_CALL = "local-call"  # a call of a function of this file; resolved after the walk
    #: A CUDA event marking the stream (`start.record()`, key "start") or the read of the time
    #: between two marks (`start.elapsed_time(end)`, `cp.cuda.get_elapsed_time(start, end)`,
    #: key "start>end"): GPU-side timing, which needs no clock on the host.
    TIMING_MARK = "timing-mark"


@dataclass(frozen=True)
class Event:
    """Something that happens at run time, in source order within its function."""

    kind: EventKind
    node: cst.CSTNode
    key: str  # what work this is ("torch.matmul", ".sum", "model", "@"), for warm-up matching
    ctx: Context


@dataclass(frozen=True)
class SyncPoint:
    """A device->host sync the user wrote (.item(), float(t), print(t), `if t:` ...)."""

    node: cst.CSTNode
    what: str  # human words: "`.item()`", "`float()` of a GPU value"
    ctx: Context
    #: The sync decides control flow: an `if` that only raises (input validation), an `if`
    #: that breaks or returns, a `while` test (convergence); the sync is the price of the check.
    #: Also a sync inside such an `if` body (an error message built before `raise`): it runs once.
    validates: bool = False
    #: Printing or formatting the value (output for people, often behind a verbosity flag).
    formats: bool = False
    #: A device->host copy (`.cpu()`, `.numpy()`): the expression whose data it copies.
    copied: cst.BaseExpression | None = None
    #: Seen inside an accumulation (`total += loss.cpu().item()`): the value is summed on the host.
    accumulates: bool = False
    #: An op whose output size depends on the data (`nonzero`, `unique`): the host waits to size it.
    sized: bool = False
    #: A library call that reads device values on the host inside (`one_hot`, builtin
    #: `max(t, 1)`, a checked solver): its name, so the fix can name the call's sync-free form.
    inside: str | None = None
    #: The GPU boolean mask of `x[mask]` (a data-sized read): whether it changes per pass decides
    #: whether its indices could be taken once.
    mask: cst.BaseExpression | None = None


@dataclass(frozen=True)
class TimedCall:
    """A call that times the callable it is handed: `timeit.timeit(f)`, pytest-benchmark's
    `benchmark(loss, td)` / `benchmark.pedantic(fn, args=...)`."""

    node: cst.Call
    timer: str  # "`timeit`", "pytest-benchmark's `benchmark`"
    fixture: bool  # pytest-benchmark's fixture (it takes a callable, not a statement string)
    ctx: Context
    work: FunctionFacts | None  # the callable, when it is a function or lambda of this file
    #: The callable is a module on the GPU or is handed a GPU array: it launches GPU work we cannot see.
    gpu_inputs: bool


@dataclass(frozen=True)
class ScopedTimer:
    """`with wp.ScopedTimer("step", dict=times):`: a wall-clock timer around the block; the walk
    adds a clock-read event where the block opens (at `item`) and where it ends (at `node`)."""

    node: cst.With
    item: cst.BaseExpression  # the timer, as the `with` names it (a call, or a timer object)
    scope: FunctionFacts
    #: The timer is an object made beforehand (`with tk0:`), kept to read `tk0.elapsed` afterwards.
    named: bool
    #: Where it appends each elapsed time (`dict=self.profiler`), if anywhere.
    kept_in: cst.BaseExpression | None
    #: The name the block binds the timer to (`as timer`), whose `.elapsed` the code may read.
    asname: str | None


@dataclass(frozen=True)
class Transfer:
    """A host<->device copy and the expression whose data it copies: a copy call, or a GPU array
    indexed with a Python list (`x[:, [-1]]`), which PyTorch and CuPy copy to the device first."""

    node: cst.Call | cst.Subscript
    direction: str  # h2d | d2h
    copied: cst.BaseExpression
    ctx: Context
    assigned_to: str | None  # `x_gpu = x.cuda()` -> "x_gpu"
    receiver: Value | None
    #: A numba CUDA kernel or ufunc launched with host arrays: numba copies them in (and back)
    #: itself. The kernel's name, and every host array argument (`copied` is the first).
    launch: str | None = None
    host_arguments: tuple[cst.BaseExpression, ...] = ()
    #: The copy is of a host index of a GPU array (`node` is the subscript): a list literal, or a
    #: host array made from nothing (`torch.arange(n)`), which a GPU-built index would replace.
    host_index: bool = False
    #: The library of the array indexed with a host index: PyTorch's copy of the index blocks
    #: the host until the GPU is idle, CuPy's does not (measured: benchmarks/gpu_truth/sync_h100.json).
    indexed_library: str | None = None
    #: The copy is made by a helper of another file of the project that returns the argument
    #: copied to the GPU (`ptu.from_numpy(x)`): its name as called here.
    through: str | None = None


@dataclass(frozen=True)
class CallFact:
    """One call as the walk saw it: what it names, what it was handed, what it returned.

    Rules that judge a call by its own shape (a factory followed by a move, a builtin
    iterating a GPU array) query these records instead of walking the tree again.
    """

    node: cst.Call
    qualname: str | None  # resolved through the imports: "torch.zeros", "builtins.sum"
    method: str | None  # `x.cuda()` -> "cuda"
    receiver: Value | None  # the value the method was called on
    args: tuple[Value | None, ...]  # positional arguments, in order
    result: Value | None
    ctx: Context

    def keyword(self, name: str) -> cst.BaseExpression | None:
        for arg in self.node.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg.value
        return None

    def passed(self, name: str, index: int | None) -> cst.BaseExpression | None:
        """The expression handed for the parameter `name`, by keyword or at position `index`."""
        return passed_argument(self.node, name, index)


@dataclass(frozen=True)
class ThreadLaunch:
    """Work handed to threads: `Thread(target=f)`, `pool.submit(f)`, `Worker()` of a Thread subclass."""

    node: cst.Call
    how: str
    work: cst.BaseExpression | None  # the callable (Name / Lambda), when it can be seen
    work_function: str | None  # name of a function of this file that runs in the thread


@dataclass(frozen=True)
class EnvWrite:
    node: cst.CSTNode
    variable: str
    order: int  # position in the walk, compared with imports


@dataclass(frozen=True)
class DebugSwitch:
    """A debugging aid turned on in code: autograd anomaly detection, blocking kernel launches."""

    node: cst.CSTNode
    what: str  # "anomaly detection" | "blocking launches"
    ctx: Context


@dataclass(frozen=True)
class ImportSeen:
    module: str
    order: int
    function: FunctionFacts


@dataclass
class ModuleFacts:
    module: cst.Module
    imports: ImportTable
    module_scope: FunctionFacts
    functions: dict[str, FunctionFacts] = field(default_factory=dict)  # local defs by name
    lambdas: dict[cst.Lambda, FunctionFacts] = field(default_factory=dict)
    thread_subclasses: dict[str, FunctionFacts | None] = field(default_factory=dict)  # class -> run()
    loops: list[LoopFacts] = field(default_factory=list)
    scopes: list[FunctionFacts] = field(default_factory=list)
    syncs: list[SyncPoint] = field(default_factory=list)
    transfers: list[Transfer] = field(default_factory=list)
    calls: list[CallFact] = field(default_factory=list)
    #: Calls by node, to look at the call an expression is (`torch.zeros(n).cuda()`'s receiver).
    call_of: dict[cst.Call, CallFact] = field(default_factory=dict)
    timed_calls: list[TimedCall] = field(default_factory=list)
    #: `with` blocks timed by a wall-clock timer object (Warp's `ScopedTimer`).
    scoped_timers: list[ScopedTimer] = field(default_factory=list)
    thread_launches: list[ThreadLaunch] = field(default_factory=list)
    env_writes: list[EnvWrite] = field(default_factory=list)
    debug_switches: list[DebugSwitch] = field(default_factory=list)
    imported: list[ImportSeen] = field(default_factory=list)
    #: Array operations of statically known shape (what the speedup rules ask the model about).
    array_operations: list[tuple[ArrayOperation, Context]] = field(default_factory=list)
    values: dict[int, Value | None] = field(default_factory=dict)  # by id(node)
    #: Top-level statement holding each node a rule may report (to position findings cheaply).
    statement_of: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    #: Ids of nodes on statements that `profile` saw run many times (see `Context.repeated`).
    ran_repeatedly: frozenset[int] = frozenset()
    #: A test suite's file: its GPU arrays are tiny and its loops compare results on purpose.
    test_file: bool = False
    #: Clock reads that end an interval in place (`time.time() - t0`), with the name of the
    #: start they are measured from ("t0"; None when that is not a plain name): they open none.
    elapsed_reads: dict[cst.Call, str | None] = field(default_factory=dict)
    #: `t1 = time.time()`: the name each stored clock read went to.
    clock_names: dict[cst.Call, str] = field(default_factory=dict)
    #: `t1 - t0`: for each name subtracted from, the names subtracted from it. A read stored
    #: in `t1` ends an interval that started at the read stored in `t0`.
    subtracted_from: dict[str, set[str]] = field(default_factory=dict)
    #: Arguments of `list.append(...)`-style calls: results collected one per iteration.
    collected: set[cst.BaseExpression] = field(default_factory=set)
    #: Receivers of `.numpy()`/`.tolist()`: values turned into host data for other code.
    to_host_data: set[cst.BaseExpression] = field(default_factory=set)
    #: Masked reads whose only use is a count or a sum (see `facts/masked_reads.py`).
    reduced_masked_reads: set[cst.CSTNode] = field(default_factory=set)
    #: Calls inside `if`/`while` tests (a clock read there is a deadline, not a measurement).
    condition_calls: set[cst.Call] = field(default_factory=set)
    #: Method calls on an object handed to the function, of no class the walk knows
    #: (`model.train_on_batch(batch)`): the project's interface of that name runs (`interfaces.py`).
    dispatched_calls: set[cst.Call] = field(default_factory=set)
    #: `if key not in cache:` tests whose body fills `cache[key]`: what runs there runs once per key.
    memo_tests: set[cst.BaseExpression] = field(default_factory=set)
    #: Names the file registers as buffers on `self` (`self.register_buffer("boft_P", P)`), in any
    #: class: a buffer follows its module to the GPU, so `self.boft_P.to(x)` copies nothing from
    #: the host, wherever the mixin that registers it sits.
    buffer_names: set[str] = field(default_factory=set)
    #: `if self.validate_args:` where every store of the setting in the file makes it true (a
    #: parameter `validate_args=True`): the branch runs on every call unless a caller turns it off.
    on_by_default_tests: set[cst.BaseExpression] = field(default_factory=set)
    #: Calls of this file's functions made by other files of the project (see `project.py`).
    external_calls: list[ExternalCall] = field(default_factory=list)
    #: Names of this file's functions any other non-test file calls, informative or not (see
    #: `ProjectContext.project_callers`); None when the file was checked without its project.
    project_callers: frozenset[str] | None = None
    #: Functions of other files that read a host clock (`Timer.toc`), as this file names the
    #: calls that run them (see `ProjectContext.imported_clock_readers`).
    imported_clock_readers: frozenset[str] = frozenset()
    #: Classes of this file whose instances are moved to the GPU (here or in another file).
    gpu_classes: dict[str, Value] = field(default_factory=dict)
    #: Module classes whose instances a class builds into its own attributes (`self.heads =
    #: [Head() ...]`, `self.add_module(...)`): they move to the GPU with it.
    submodule_classes: dict[str, set[str]] = field(default_factory=dict)
    #: Numbers the plain classes of this file set in their bodies (a config dataclass's
    #: `target_network_frequency: int = 500`), by class and field: what an instance holds unless
    #: the command line or the code changes it. Read only as a setting's default, never as a
    #: trip count.
    class_defaults: dict[str, dict[str, Value]] = field(default_factory=dict)
    #: A class of this file was called above its definition (`Block(config)` in `GPT.__init__`):
    #: its kind was not known yet there (see `walker.gather_facts`).
    classes_used_early: bool = False
    #: What each class of this file sets on `self` (`"self.device"` -> value), inherited ones included.
    class_attributes: dict[str, dict[str, Value]] = field(default_factory=dict)
    #: Classes of this file deriving from a Lightning module (here or through a base of this file):
    #: the trainer calls their per-batch hooks once per batch.
    lightning_classes: set[str] = field(default_factory=set)
    #: Custom optimizers (`torch.optim.Optimizer` subclasses) of a project that trains on the GPU:
    #: their `step()` runs once per training step.
    optimizer_classes: set[str] = field(default_factory=set)
    #: Classes of this file whose objects are a thread or a process (`class Learner(Process)`):
    #: their `run` method is the body of that thread or process, started once.
    worker_classes: set[str] = field(default_factory=set)
    #: Custom autograd operations (`torch.autograd.Function` subclasses) of a project that names
    #: CUDA: their `forward()` and `backward()` run once per pass of the model.
    autograd_functions: set[str] = field(default_factory=set)
    #: Subclasses of a framework's base class whose step methods its trainer calls (see
    #: `knowledge.FRAMEWORK_STEPS`), in a project that names CUDA.
    framework_classes: dict[str, FrameworkStep] = field(default_factory=dict)
    #: Each class's base classes named by qualified (imported) names: resolved in other files.
    class_bases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Each class's base classes defined in this file, by name (`Optimizer1State` -> `Optimizer8bit`).
    local_bases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: What this file's top level leaves bound to GPU arrays and devices (`std = torch.tensor(
    #: ...).cuda()`, `device = torch.device("cuda")`): other files may import them by name.
    module_values: dict[str, Value] = field(default_factory=dict)
    #: "Sub.method" -> "Base.method": a method a class inherits from a base of this file
    inherited_methods: dict[str, str] = field(default_factory=dict)
    #: This file's classes: name -> derives from torch.nn.Module (for other files' calls).
    class_kinds: dict[str, bool] = field(default_factory=dict)
    #: Per GPU module class, the methods its `forward` runs on every call: filled by
    #: `frequency.forward_of_gpu_module` the first time a rule asks, then read by every rule.
    forward_reach: dict[str, set[str]] = field(default_factory=dict)
    #: What this file's functions return when every `return` agrees on a device or GPU array.
    function_results: dict[str, Value] = field(default_factory=dict)
    #: Functions whose result a call asked for before the walk had reached them (see walker).
    results_asked_early: set[str] = field(default_factory=set)
    function_passthrough: dict[str, Passthrough] = field(default_factory=dict)
    #: Functions that return one of their parameters copied to the GPU (`def from_numpy(x): return
    #: torch.from_numpy(x).float().to(device)`): (position among the call's arguments, name).
    function_uploads: dict[str, tuple[int, str]] = field(default_factory=dict)
    #: A `torch.distributions` distribution built here on GPU values checks its parameters unless the
    #: project turns the checks off (whether or not this walk was told it does).
    builds_checked_distributions: bool = False

    def in_test_code(self, ctx: Context) -> bool:
        """Performance rules stay out of tests: a kernel's test needs its tiny arrays and per-element checks."""
        return self.test_file or ctx.function.is_test

    def value(self, node: cst.CSTNode) -> Value | None:
        return self.values.get(id(node))

    def code(self, node: cst.CSTNode) -> str:
        """Source text of a node, whitespace-normalised to one line for messages."""
        return " ".join(self.module.code_for_node(node).split())

    def handed_names(self) -> Iterator[cst.Name | cst.Attribute]:
        """Names passed as arguments to calls (`PyroOptim(ClippedAdam, args)`): whoever receives a
        class or function may build or call it. `super(Adam, self)`, `isinstance(x, Adam)` only name it."""
        for call in self.calls:
            if call.qualname not in kb.CLASS_NAMING_BUILTINS:
                yield from (arg.value for arg in call.node.args if isinstance(arg.value, (cst.Name, cst.Attribute)))

    def memoized_calls(self) -> set[int]:
        """Calls (ids) of this file's functions wrapped in `functools.lru_cache` / `functools.cache`
        (`self.get_mel_filters(sr, n_fft, n_mels)`): for the same arguments they hand back the
        same object, a table made once, whatever the call site."""
        memoized = {
            key
            for key, function in self.functions.items()
            if isinstance(function.node, cst.FunctionDef)
            and any(
                self.imports.qualified_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) in kb.MEMOIZING_DECORATORS
                for d in function.node.decorators
            )
        }
        return {
            id(event.node)
            for scope in self.scopes
            for event in scope.events
            if memoized and event.kind is EventKind.LOCAL_CALL and event.key in memoized
        }

    def call_sites(self, function: FunctionFacts) -> list[Event]:
        """The calls of a function of this file, from any scope."""
        return [
            event
            for scope in self.scopes
            for event in scope.events
            if event.kind is EventKind.LOCAL_CALL and function in self.functions_called(event)
        ]

    def function_called(self, event: Event) -> FunctionFacts | None:
        """The function a local call names; for `self.method(...)` in a class that inherits the
        method from a base class of this file, the base's definition."""
        if event.kind is not EventKind.LOCAL_CALL:
            return None
        named = self.functions.get(event.key)
        if named is None and _through_self(event.node):
            owner, _, method = event.key.rpartition(".")
            return self.inherited_method(owner, method)
        return named

    def inherited_method(self, owner: str, method: str) -> FunctionFacts | None:
        """`owner.method` as the class resolves it within this file: its own definition, else the
        first one found through its local base classes, left to right, depth first."""
        pending, seen = [owner], set()
        while pending:
            name = pending.pop(0)
            if name in seen:
                continue
            seen.add(name)
            found = self.functions.get(f"{name}.{method}")
            if found is not None:
                return found
            pending[:0] = self.local_bases.get(name, ())
        return None

    def functions_called(self, event: Event) -> list[FunctionFacts]:
        """The functions a local call may run: the one it names, and, for `self.update_step(...)`
        in a base class of this file, each override of `update_step` in its subclasses here (a
        template method: bitsandbytes' `Optimizer8bit.step` runs `Optimizer1State.update_step`
        once per parameter)."""
        if event.kind is EventKind.LOCAL_CALL and event.key.startswith(DISPATCHED_PREFIX):
            return self.implementations(event.key.removeprefix(DISPATCHED_PREFIX))
        named = self.function_called(event)
        called = [named] if named is not None else []
        if event.kind is not EventKind.LOCAL_CALL or not _through_self(event.node):
            return called
        owner, _, method = event.key.rpartition(".")
        for subclass in self._subclasses(owner):
            override = self.functions.get(f"{subclass}.{method}")
            if override is not None and override not in called:
                called.append(override)
        return called

    def implementations(self, method: str) -> list[FunctionFacts]:
        """The definitions of `method` a call on an object of unknown class runs, where this
        file's classes declare it as one interface (see `interfaces.py`)."""
        definers = [name for name in self.local_bases if f"{name}.{method}" in self.functions]
        return [self.functions[f"{name}.{method}"] for name in interface_implementations(method, definers, lambda name: self.local_bases.get(name, ()))]

    def _subclasses(self, owner: str) -> list[str]:
        """The classes of this file deriving from `owner`, directly or through others."""
        found: list[str] = []
        pending = [owner]
        while pending:
            base = pending.pop()
            for name, bases in self.local_bases.items():
                if base in bases and name not in found and name != owner:
                    found.append(name)
                    pending.append(name)
        return found


def while_bound(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """The bound of a counted `while` (`while counter < self.n_restarts:`), or None."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name)):
        return None
    comparison = test.comparisons[0]
    return comparison.comparator if isinstance(comparison.operator, (cst.LessThan, cst.LessThanEqual)) else None


def _through_self(node: cst.CSTNode) -> bool:
    """`self.method(...)`: a call the instance's own class resolves."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == "self"
    )
