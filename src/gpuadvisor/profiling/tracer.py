"""The line tracer of `gpuadvisor profile`: time per watched statement and what its names held.

Only frames of the user's files are traced, and only their watched statements (those that
may hold array operations) are timed; code of every other file gets no line events, so
library code runs at full speed. Time is exclusive: a watched statement's time leaves out
the time of user functions it calls (their own statements are timed where they are), so a
line's seconds are its own array work.

Operand values are read from the frame (locals, globals, and attributes found without
running any code: no properties, no `__getattr__`), never by evaluating an expression. On a
statement that runs millions of times the names are read on the first hits and then on one
hit in SAMPLE_EVERY; hits in between count under the last signature seen.

Two ways to get the events, with the same bookkeeping: `sys.monitoring` (3.12+), where code
that is not the user's is switched off after its first call and lines get their number
without a frame object being built, and `sys.settrace` elsewhere (or when another tool holds
the profiler slot). Only the main thread is traced; the report says when the user's code also
ran in other threads.
"""

from __future__ import annotations

import builtins
import inspect
import math
import sys
import threading
import time
from collections.abc import Callable, Mapping
from types import CodeType, FrameType
from typing import Any, NamedTuple

from gpuadvisor.analysis.facts.observations import LineRecord, Observation
from gpuadvisor.ops.cost import ITEM_BYTES
from gpuadvisor.profiling.torch_modules import ModuleCall, ModuleWatch, OptimizerNote, optimizer_note



class WatchedLine(NamedTuple):
    """What the tracer needs of a watched statement (analysis/facts/watch.py finds them)."""

    first: int  # the statement's first line
    names: tuple[str, ...]  # operand names, read before it runs
    targets: tuple[str, ...] = ()  # plain names it assigns, read after it ran (sampled hits)
    is_import: bool = False


#: line -> its statement; None for a file that is not the user's.
Plan = Mapping[int, WatchedLine]


class ArrayWork(NamedTuple):
    """A statement that ran with an array library's object among its names or results."""

    library: str
    sparse: str | None  # a scipy.sparse operand as `sparse_note` describes it
    sparse_names: tuple[str, ...]  # the operand names that held scipy.sparse matrices
    #: bytes of the largest array among its operands and the arrays it assigned
    largest_bytes: float
    #: host arrays it read that no array-work statement made: id -> bytes (these would be
    #: copied to the GPU once if the statement moved there; what array work made is made there)
    entering: dict[int, float]
    #: torch.nn leaf-module calls made while it ran (torch_modules.py)
    modules: dict[ModuleCall, int]
    #: operand names that held arrays (an operator or call on none of them is scalar work)
    array_names: frozenset[str] = frozenset()
    #: a torch optimizer among its operands (`optimizer.step()`): its kind and parameter tensors
    optimizer: OptimizerNote | None = None
SAMPLE_FIRST = 20
SAMPLE_EVERY = 50
_MISSING = object()
#: Code run inside a statement: not traced on its own, so its time stays on the statement's line
#: and the statement counts one run however many times a generator resumes.
_INLINE_CODE = frozenset({"<genexpr>", "<listcomp>", "<setcomp>", "<dictcomp>"})
_thread_id = threading.get_ident
#: The stack entry of an import in progress (importlib's loader, for `import x` anywhere, lazy
#: submodules such as `np.random` and imports inside library functions): its time is start-up.
_IMPORTING: dict[int, Any] = {}


def _is_import_machinery(code: CodeType) -> bool:
    return code.co_name == "_find_and_load" and code.co_filename == "<frozen importlib._bootstrap>"
def observe(value: Any) -> Observation | None:
    """What a value is, for the predictor: an array's shape/dtype/library/device, or a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Observation(number=float(value)) if math.isfinite(value) and abs(value) < 1e15 else None
    module = type(value).__module__ or ""
    library = module.split(".", 1)[0]
    if library not in ("numpy", "torch", "cupy"):
        return None
    try:
        shape = tuple(int(d) for d in value.shape)
        dtype = str(value.dtype).replace("torch.", "")
    except (AttributeError, TypeError, ValueError):
        return None
    if not shape:  # a NumPy scalar or 0-d array: a number as far as shapes go
        try:
            # float() of a complex scalar warns (ComplexWarning) into the script's warnings
            real = library == "numpy" and getattr(value.dtype, "kind", "") in "biuf"
            return Observation(number=float(value)) if real else None
        except (TypeError, ValueError):
            return None
    on_gpu = library == "cupy" or (library == "torch" and getattr(getattr(value, "device", None), "type", "cpu") != "cpu")
    return Observation(shape, dtype, library, on_gpu)


#: Libraries whose objects make a line array work even when no shape is read from them (a
#: torch module or optimizer, a scipy.sparse matrix): such lines are estimated from their time.
ARRAY_LIBRARIES = frozenset({"numpy", "torch", "cupy", "scipy", "sklearn", "numba", "jax"})


def library_of(value: Any) -> str | None:
    """The array library behind a value (its class or a base class, so `class Net(nn.Module)`
    counts as torch; a module by its name, so `torch.randn(...)` and `np.add.at(...)` count)."""
    if inspect.ismodule(value):
        library = value.__name__.split(".", 1)[0]
        return library if library in ARRAY_LIBRARIES else None
    for cls in type(value).__mro__:
        library = (cls.__module__ or "").split(".", 1)[0]
        if library in ARRAY_LIBRARIES:
            return library
    return None


def sparse_note(value: Any) -> str | None:
    """`csr 90000x90000 nnz=448800 float64` for a scipy.sparse matrix, read without user code."""
    if library_of(value) != "scipy" or not hasattr(value, "nnz") or not hasattr(value, "format"):
        return None
    try:
        rows, cols = (int(d) for d in value.shape)
        return f"{value.format} {rows}x{cols} nnz={int(value.nnz)} {value.dtype}"
    except (AttributeError, TypeError, ValueError):
        return None


def _attribute(obj: Any, name: str) -> Any:
    """obj.name without running user code: instance and class dicts, and torch's module dicts."""
    try:
        found = inspect.getattr_static(obj, name)
    except AttributeError:
        found = _MISSING
    if found is _MISSING or type(found).__name__ in ("property", "cached_property", "getset_descriptor", "member_descriptor"):
        if found is not _MISSING and type(found).__name__ in ("getset_descriptor", "member_descriptor"):
            return getattr(obj, name, _MISSING)  # C-level slots (ndarray.T, tensor.data): no user code
        for holder in ("_parameters", "_buffers", "_modules"):  # torch.nn.Module keeps tensors here
            table = vars(obj).get(holder) if hasattr(obj, "__dict__") else None
            if isinstance(table, dict) and name in table:
                return table[name]
        return _MISSING
    return found


def read_name(frame: FrameType, dotted: str) -> Any:
    head, *rest = dotted.split(".")
    local_values = frame.f_locals
    value = local_values.get(head, _MISSING)
    if value is _MISSING:
        value = frame.f_globals.get(head, _MISSING)
    if value is _MISSING:
        value = getattr(builtins, head, _MISSING)
    for attr in rest:
        if value is _MISSING:
            break
        value = _attribute(value, attr)
    return value


def _array_bytes(observation: Observation | None) -> float:
    if observation is None or observation.shape is None:
        return 0.0
    return float(math.prod(observation.shape) * ITEM_BYTES.get(observation.dtype or "", 8))


class _Statement:
    """A watched statement's running state, shared by all its lines: no dict lookups per hit."""

    __slots__ = (
        "names", "targets", "is_import", "record", "counts", "library", "sparse", "sparse_names", "largest", "entering", "sampled",
        "modules", "array_names", "optimizer",
    )

    def __init__(self, watched: WatchedLine) -> None:
        self.names = watched.names
        self.targets = watched.targets
        self.is_import = watched.is_import
        #: bytes of the largest array among operands and assigned results; host arrays read
        #: that no array work made (id -> bytes); this hit read the names (targets read after)
        self.largest = 0.0
        self.entering: dict[int, float] = {}
        self.sampled = False
        self.sparse_names: tuple[str, ...] = ()
        self.modules: dict[ModuleCall, int] = {}
        self.array_names: set[str] = set()
        self.record = LineRecord()
        #: An array library's object was among the names (the line does array work)
        self.library: str | None = None
        #: A scipy.sparse operand as `sparse_note` describes it
        self.sparse: str | None = None
        #: A torch optimizer operand as `optimizer_note` describes it
        self.optimizer: OptimizerNote | None = None
        #: [hits, seconds] of the signature the names held when last read (hashing a signature
        #: on every hit would cost more than the rest of the bookkeeping); set on the first hit
        self.counts = [0.0, 0.0]


class LineTracer:
    """Times watched statements of the user's files; `records[(file, line)]` holds the results."""

    def __init__(self, plan_for: Callable[[str], Plan | None], backend: str | None = None) -> None:
        self._plan_for = plan_for
        #: file -> line -> its statement (None: not the user's file)
        self._statements: dict[str, dict[int, _Statement] | None] = {}
        #: (file, statement's first line) -> its statement
        self._by_first: dict[tuple[str, int], _Statement] = {}
        self._watched_code: dict[CodeType, bool] = {}
        #: Code that gets no events under sys.settrace (not the user's, or inline in a statement),
        #: by id: a code object's hash is recomputed from its bytecode on every lookup. The dict
        #: holds the code, so an id cannot be reused by other code while the run lasts.
        self._untraced: dict[int, CodeType] = {}
        #: Per active traced frame: [statements by line, code, open statement, start,
        #: attributed at start, entry time, attributed at entry]
        self._stack: list[list[Any]] = []
        self._attributed = 0.0
        #: ids of arrays that statements doing array work assigned (made on the GPU if moved)
        self._made: set[int] = set()
        #: Seconds the tracer spent preparing files (parsing them for the plan) and reading what
        #: names held: not the script's
        self.own_seconds = 0.0
        #: Seconds in importlib loading modules, wherever the import was (not in any line's time)
        self.import_seconds = 0.0
        self._main_thread = _thread_id()
        #: importlib's loader, while ours stands in for it (settrace backend)
        self._original_load: Callable[[Any], Any] | None = None
        #: torch.nn leaf modules, recorded under the statement that ran them
        self.modules = ModuleWatch(self._open_modules)
        self._clock = time.perf_counter
        self.backend = backend or ("monitoring" if hasattr(sys, "monitoring") else "settrace")
        self._monitoring: _MonitoringEvents | None = None
        #: Code of the user's files ran in a thread other than the main one (not measured).
        self.other_threads = False

    @property
    def records(self) -> dict[tuple[str, int], LineRecord]:
        """(file, statement's first line) -> what was measured, for statements that ran."""
        return {where: statement.record for where, statement in self._by_first.items() if statement.record.hits}

    @property
    def array_work(self) -> dict[tuple[str, int], ArrayWork]:
        """(file, statement's first line) -> what is known of its array work, for statements
        that ran with an array library's object among their names."""
        return {
            where: ArrayWork(
                statement.library, statement.sparse, statement.sparse_names, statement.largest, statement.entering, statement.modules,
                frozenset(statement.array_names), statement.optimizer,
            )
            for where, statement in self._by_first.items()
            if statement.record.hits and statement.library is not None
        }

    @property
    def imports(self) -> frozenset[tuple[str, int]]:
        """(file, line) of the import statements among the records."""
        return frozenset(where for where, statement in self._by_first.items() if statement.is_import)

    def _open_modules(self) -> dict[ModuleCall, int] | None:
        """The module-call counts of the innermost statement running now (main thread only)."""
        if _thread_id() != self._main_thread:
            return None
        for entry in reversed(self._stack):
            if entry[2] is not None:
                return entry[2].modules  # type: ignore[no-any-return]
        return None

    # -- installation ------------------------------------------------------------------------
    def start(self) -> None:
        self._main_thread = _thread_id()
        if self.backend == "monitoring":
            events = _MonitoringEvents(self)
            if events.install():
                self._monitoring = events
                return
            self.backend = "settrace"  # another tool (a debugger, coverage) holds the slot
        bootstrap = sys.modules.get("importlib._bootstrap")
        load = getattr(bootstrap, "_load_unlocked", None)
        if load is not None:
            self._original_load = load
            bootstrap._load_unlocked = self._loading(load)  # type: ignore[union-attr]
        sys.settrace(self._on_call)
        threading.settrace(self._on_other_thread_call)

    def _loading(self, load: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """importlib's module loader for the settrace backend: a module that is not the user's
        loads with tracing off in this thread (every call its import makes would otherwise reach
        the call hook: importing scipy.sparse took twice as long), a user's module with it on."""

        def load_traced_if_users(spec: Any) -> Any:
            if _thread_id() != self._main_thread:
                return load(spec)
            origin = getattr(spec, "origin", None)
            users = isinstance(origin, str) and self._statements_of(origin) is not None
            previous = sys.gettrace()
            wanted = self._on_call if users else None
            if previous == wanted:
                return load(spec)
            sys.settrace(wanted)
            try:
                return load(spec)
            finally:
                sys.settrace(previous)

        return load_traced_if_users

    def stop(self) -> None:
        self.modules.remove()
        if self._monitoring is not None:
            self._monitoring.uninstall()
            self._monitoring = None
        else:
            sys.settrace(None)
            threading.settrace(None)  # type: ignore[arg-type]
            bootstrap = sys.modules.get("importlib._bootstrap")
            if self._original_load is not None and bootstrap is not None:
                bootstrap._load_unlocked = self._original_load  # type: ignore[attr-defined]
                self._original_load = None
        now = self._clock()
        while self._stack:  # an exception or Ctrl-C left frames open: close what they were timing
            entry = self._stack.pop()
            if entry[2] is not None:
                self._close(entry, now)

    # -- shared bookkeeping -------------------------------------------------------------------
    def _statements_of(self, filename: str) -> dict[int, _Statement] | None:
        by_line = self._statements.get(filename, _MISSING)
        if by_line is _MISSING:
            start = self._clock()
            plan = self._plan_for(filename)
            by_line = None
            if plan is not None:
                by_line = {
                    line: self._by_first.setdefault((filename, watched.first), _Statement(watched)) for line, watched in plan.items()
                }
            self._statements[filename] = by_line
            spent = self._clock() - start
            self.own_seconds += spent
            self._attributed += spent  # not the time of the statement that led here (an import)
        return by_line  # type: ignore[return-value]

    def _is_watched(self, code: CodeType, by_line: dict[int, _Statement]) -> bool:
        watched = self._watched_code.get(code)
        if watched is None:
            watched = any(line in by_line for _, _, line in code.co_lines() if line is not None)
            self._watched_code[code] = watched
        return watched

    def _enter(self, code: CodeType, by_line: dict[int, _Statement]) -> None:
        self._stack.append([by_line, code, None, 0.0, 0.0, self._clock(), self._attributed])

    def _leave(self) -> None:
        now = self._clock()
        entry = self._stack.pop()
        if entry[2] is not None:
            self._close(entry, now)
        inside = self._attributed - entry[6]
        own = max(now - entry[5] - inside, 0.0)
        self._attributed += own  # the function's own time
        if entry[0] is _IMPORTING:
            self.import_seconds += own

    def _at_line(self, entry: list[Any], line: int, frame: FrameType | None) -> None:
        """A line starts in a traced frame; `frame` None means our caller's caller (the user's
        frame under a sys.monitoring callback), fetched only when names are read."""
        statement = entry[0].get(line)
        if statement is not None and statement is entry[2]:
            return  # the next line of the same statement
        began = self._clock()  # from here to the next statement's start is the tracer's own time
        if entry[2] is not None:
            if entry[2].sampled and entry[2].targets:
                self._read_targets(entry[2], frame or sys._getframe(2))
            self._close(entry, began)
        if statement is not None:
            self._open(entry, frame, statement)
            self.own_seconds += entry[3] - began
        else:
            self.own_seconds += self._clock() - began

    def _open(self, entry: list[Any], frame: FrameType | None, statement: _Statement) -> None:
        """Start timing a statement; `frame` None means three levels up (see `_at_line`)."""
        hits = statement.record.hits
        statement.sampled = hits < SAMPLE_FIRST or hits % SAMPLE_EVERY == 0
        if statement.sampled:
            self.modules.install_if_imported()
            if frame is None:
                frame = sys._getframe(3)
            seen = []
            for name in statement.names:
                value = read_name(frame, name)
                observation = observe(value)
                if observation is not None:
                    seen.append((name, observation))
                    size = _array_bytes(observation)
                    statement.largest = max(statement.largest, size)
                    if size:
                        statement.array_names.add(name)
                    if size and not observation.on_gpu and not self._made_by_array_work(value):
                        statement.entering[id(value)] = size
                if statement.library is None and value is not _MISSING:
                    statement.library = library_of(value)
                if statement.library == "torch" and statement.optimizer is None and observation is None:
                    statement.optimizer = optimizer_note(value)
                if statement.library == "scipy" and name not in statement.sparse_names:
                    note = sparse_note(value)
                    if note is not None:
                        statement.sparse = statement.sparse or note
                        statement.sparse_names += (name,)
            statement.counts = statement.record.signatures.setdefault(tuple(seen), [0.0, 0.0])
        entry[2] = statement
        entry[3] = self._clock()  # reading the names is ours, not the line's
        entry[4] = self._attributed

    def _made_by_array_work(self, value: Any) -> bool:
        """The array, or the array it is a view of (`x[:n]`, `a.T`), was assigned by array work."""
        for _ in range(4):
            if value is None:
                return False
            if id(value) in self._made:
                return True
            value = getattr(value, "base", None) if type(value).__module__ == "numpy" else getattr(value, "_base", None)
        return False

    def _read_targets(self, statement: _Statement, frame: FrameType) -> None:
        """After a sampled run: the size of the arrays the statement assigned, and (for array
        work) that they were made by array work, so lines reading them need no copy in."""
        for name in statement.targets:
            value = read_name(frame, name)
            size = _array_bytes(observe(value))
            if size:
                statement.largest = max(statement.largest, size)
                if statement.library is not None:
                    self._made.add(id(value))

    def _close(self, entry: list[Any], now: float) -> None:
        statement = entry[2]
        spent = now - entry[3] - (self._attributed - entry[4])
        if spent < 0.0:
            spent = 0.0
        self._attributed += spent
        entry[2] = None
        record = statement.record
        record.hits += 1
        record.seconds += spent
        counts = statement.counts
        counts[0] += 1
        counts[1] += spent

    # -- sys.settrace events ------------------------------------------------------------------
    def _on_call(self, frame: FrameType, event: str, arg: object) -> Callable[..., Any] | None:
        code = frame.f_code
        if id(code) in self._untraced:  # the common case (library code, generator resumes): one lookup
            return None
        if _is_import_machinery(code):
            frame.f_trace_lines = False
            self._enter(code, _IMPORTING)
            return self._on_event
        by_line = self._statements_of(code.co_filename)
        if by_line is None or code.co_name in _INLINE_CODE:
            self._untraced[id(code)] = code
            return None
        if not self._is_watched(code, by_line):
            frame.f_trace_lines = False  # only call/return: its time is taken off the caller's line
        self._enter(code, by_line)
        return self._on_event

    def _on_other_thread_call(self, frame: FrameType, event: str, arg: object) -> None:
        """Threads started by the script: only notice that the user's code runs there."""
        if self._statements_of(frame.f_code.co_filename) is not None:
            self.other_threads = True
            sys.settrace(None)  # this thread: noticed once is enough

    def _on_event(self, frame: FrameType, event: str, arg: object) -> Callable[..., Any] | None:
        if self._stack:
            if event == "line":
                self._at_line(self._stack[-1], frame.f_lineno, frame)
            elif event == "return":
                self._leave()
        return self._on_event


class _MonitoringEvents:
    """sys.monitoring (3.12+) wiring for a LineTracer.

    PY_START is on for all code; the first start of code that is not the user's returns
    DISABLE, so it costs one call per function. The user's code gets local events: entry and
    exit always (for exclusive time), LINE only where it has watched statements. Exits by an
    exception (PY_UNWIND) can only be watched globally and are filtered by the stack's top.
    """

    def __init__(self, tracer: LineTracer) -> None:
        self.tracer = tracer
        self.tool = 2
        self.main_thread = _thread_id()
        self.local_code: list[CodeType] = []
        self.import_code: set[CodeType] = set()

    def install(self) -> bool:
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        # Ids 3 and 4 have no assigned role: PROFILER_ID (2) stays free for the script's own
        # cProfile, DEBUGGER_ID and COVERAGE_ID for pdb and coverage.py.
        for tool in (4, 3):
            try:
                monitoring.use_tool_id(tool, "gpuadvisor profile")
            except ValueError:
                continue
            self.tool = tool
            break
        else:
            return False
        events = monitoring.events
        self.entering = events.PY_RESUME | events.PY_RETURN | events.PY_YIELD
        for event, callback in (
            (events.PY_START, self._on_start), (events.PY_RESUME, self._on_resume), (events.PY_THROW, self._on_resume),
            (events.PY_RETURN, self._on_exit), (events.PY_YIELD, self._on_exit), (events.PY_UNWIND, self._on_exit),
            (events.LINE, self._on_line),
        ):
            monitoring.register_callback(self.tool, event, callback)
        monitoring.restart_events()  # code switched off by an earlier profile in this process
        monitoring.set_events(self.tool, events.PY_START | events.PY_THROW | events.PY_UNWIND)
        return True

    def uninstall(self) -> None:
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        monitoring.set_events(self.tool, 0)
        for code in self.local_code:
            monitoring.set_local_events(self.tool, code, 0)
        for event in (monitoring.events.PY_START, monitoring.events.PY_RESUME, monitoring.events.PY_THROW,
                      monitoring.events.PY_RETURN, monitoring.events.PY_YIELD, monitoring.events.PY_UNWIND,
                      monitoring.events.LINE):
            monitoring.register_callback(self.tool, event, None)
        monitoring.free_tool_id(self.tool)

    def _on_start(self, code: CodeType, offset: int) -> Any:
        tracer = self.tracer
        if _is_import_machinery(code):
            if code not in self.import_code:
                self.import_code.add(code)
                sys.monitoring.set_local_events(self.tool, code, sys.monitoring.events.PY_RETURN)  # type: ignore[attr-defined]
                self.local_code.append(code)
            if _thread_id() == self.main_thread:
                tracer._enter(code, _IMPORTING)
            return None
        by_line = tracer._statements_of(code.co_filename)
        if by_line is None or code.co_name in _INLINE_CODE:
            return sys.monitoring.DISABLE  # type: ignore[attr-defined]
        if code not in tracer._watched_code:
            local = self.entering | (sys.monitoring.events.LINE if tracer._is_watched(code, by_line) else 0)  # type: ignore[attr-defined]
            sys.monitoring.set_local_events(self.tool, code, local)  # type: ignore[attr-defined]
            self.local_code.append(code)
        if _thread_id() == self.main_thread:
            tracer._enter(code, by_line)
        else:
            tracer.other_threads = True
        return None

    def _on_resume(self, code: CodeType, offset: int, *exception: object) -> None:
        by_line = self.tracer._statements.get(code.co_filename)
        if by_line is not None and code.co_name not in _INLINE_CODE and _thread_id() == self.main_thread:
            self.tracer._enter(code, by_line)

    def _on_exit(self, code: CodeType, offset: int, value: object) -> None:
        stack = self.tracer._stack
        if stack and stack[-1][1] is code and _thread_id() == self.main_thread:
            self.tracer._leave()

    def _on_line(self, code: CodeType, line: int) -> None:
        stack = self.tracer._stack
        if stack and stack[-1][1] is code and _thread_id() == self.main_thread:
            self.tracer._at_line(stack[-1], line, None)
