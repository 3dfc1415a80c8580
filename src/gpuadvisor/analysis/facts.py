"""Facts about one module, gathered by one walk and read by every rule.

Rules never re-walk the tree to learn what a name holds or which loop they are in; they
read the records below. Each record carries the `Context` it was seen in: the function,
the innermost loop of that function, and the `if` tests between that loop and the node.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Union

import libcst as cst

from gpuadvisor.analysis.array_ops import ArrayOperation
from gpuadvisor.analysis.imports import ImportTable
from gpuadvisor.analysis.values import Value

LoopNode = Union[cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp]


@dataclass(eq=False)
class FunctionFacts:
    """A function body (or the module body, `node is None`) and what it does."""

    name: str
    node: cst.FunctionDef | cst.Lambda | None
    parent: FunctionFacts | None
    compiled: bool = False  # numba / Cython / torch.compile: Python-loop rules do not apply
    cuda_kernel: bool = False  # numba.cuda.jit: calling it launches a kernel
    events: list[Event] = field(default_factory=list)
    callees: list[str | None] = field(default_factory=list)  # qualified names; "local.f" for own defs
    has_loop: bool = False
    has_arithmetic: bool = False
    is_recursive: bool = False
    launches_gpu: bool = False  # resolved after the walk, through calls to other local functions
    synchronizes: bool = False


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
    element_reads: list[cst.Subscript] = field(default_factory=list)  # gpu_array[target]
    gpu_ops: int = 0
    has_inner_loop: bool = False  # an outer (epoch-level) loop: per-iteration costs are amortised
    has_opaque_call: bool = False  # calls something we cannot see into (a model, a user function)

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
    LOCAL_CALL = "local-call"  # a call of a function of this file; resolved after the walk


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


@dataclass(frozen=True)
class Transfer:
    """A host<->device copy call and the expression whose data it copies."""

    node: cst.Call
    direction: str  # h2d | d2h
    copied: cst.BaseExpression
    ctx: Context
    assigned_to: str | None  # `x_gpu = x.cuda()` -> "x_gpu"
    receiver: Value | None


@dataclass(frozen=True)
class IteratingBuiltin:
    """`sum(t)`, `max(t)`, `sorted(t)` over a GPU array: one tiny kernel per element."""

    node: cst.Call
    builtin: str


@dataclass(frozen=True)
class CreateThenMove:
    node: cst.Call  # the `.cuda()` / `.to()` call
    factory: str  # "torch.zeros"
    factory_call: cst.Call


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
    iterating_builtins: list[IteratingBuiltin] = field(default_factory=list)
    create_then_move: list[CreateThenMove] = field(default_factory=list)
    timeit_calls: list[tuple[cst.Call, Context, FunctionFacts | None]] = field(default_factory=list)
    thread_launches: list[ThreadLaunch] = field(default_factory=list)
    env_writes: list[EnvWrite] = field(default_factory=list)
    imported: list[ImportSeen] = field(default_factory=list)
    #: Array operations of statically known shape (what the speedup rules ask the model about).
    array_operations: list[tuple[ArrayOperation, Context]] = field(default_factory=list)
    values: dict[int, Value | None] = field(default_factory=dict)  # by id(node)
    #: Top-level statement holding each node a rule may report (to position findings cheaply).
    statement_of: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    #: Clock reads that end an interval in place (`time.time() - t0`): they open none.
    elapsed_reads: set[cst.Call] = field(default_factory=set)

    def value(self, node: cst.CSTNode) -> Value | None:
        return self.values.get(id(node))

    def code(self, node: cst.CSTNode) -> str:
        """Source text of a node, whitespace-normalised to one line for messages."""
        return " ".join(self.module.code_for_node(node).split())

    def function_called(self, event: Event) -> FunctionFacts | None:
        if event.kind is EventKind.LOCAL_CALL:
            return self.functions.get(event.key)
        return None
