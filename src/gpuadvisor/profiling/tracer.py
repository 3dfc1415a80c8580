"""The line tracer of `gpuadvisor profile`: time per watched statement and what its names held.

Only frames of the user's files are traced, and only their watched statements (those that
may hold array operations) are timed; frames of every other file get no local trace
function, so library code runs at full speed. Time is exclusive: a watched statement's time
leaves out the time of user functions it calls (their own statements are timed where they
are), so a line's seconds are its own array work.

Operand values are read from the frame (locals, globals, and attributes found without
running any code: no properties, no `__getattr__`), never by evaluating an expression. On a
statement that runs millions of times the names are read on the first hits and then on one
hit in SAMPLE_EVERY; hits in between count under the last signature seen.

Only the main thread is traced (sys.settrace).
"""

from __future__ import annotations

import builtins
import inspect
import math
import sys
import time
from collections.abc import Callable, Mapping
from types import CodeType, FrameType
from typing import Any

from gpuadvisor.analysis.observations import LineRecord, Observation, Signature

#: line -> (first line of its statement, operand names); None for a file that is not the user's.
Plan = Mapping[int, tuple[int, tuple[str, ...]]]
SAMPLE_FIRST = 20
SAMPLE_EVERY = 50
_MISSING = object()


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
            return Observation(number=float(value)) if library == "numpy" else None
        except (TypeError, ValueError):
            return None
    on_gpu = library == "cupy" or (library == "torch" and getattr(getattr(value, "device", None), "type", "cpu") != "cpu")
    return Observation(shape, dtype, library, on_gpu)


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


class LineTracer:
    """Times watched statements of the user's files; `records[(file, line)]` holds the results."""

    def __init__(self, plan_for: Callable[[str], Plan | None]) -> None:
        self._plan_for = plan_for
        self._plans: dict[str, Plan | None] = {}
        self._watched_code: dict[CodeType, bool] = {}
        self.records: dict[tuple[str, int], LineRecord] = {}
        self._last_signature: dict[tuple[str, int], Signature] = {}
        #: Per active traced frame: [plan, file, key, start, attributed at start, entry time, attributed at entry]
        self._stack: list[list[Any]] = []
        self._attributed = 0.0
        self._clock = time.perf_counter

    # -- installation ------------------------------------------------------------------------
    def start(self) -> None:
        sys.settrace(self._on_call)

    def stop(self) -> None:
        sys.settrace(None)
        now = self._clock()
        while self._stack:  # an exception or Ctrl-C left frames open: close what they were timing
            self._close(self._stack.pop(), now)

    # -- events --------------------------------------------------------------------------------
    def _plan(self, filename: str) -> Plan | None:
        plan = self._plans.get(filename, _MISSING)
        if plan is _MISSING:
            plan = self._plan_for(filename)
            self._plans[filename] = plan
        return plan  # type: ignore[return-value]

    def _on_call(self, frame: FrameType, event: str, arg: object) -> Callable[..., Any] | None:
        code = frame.f_code
        plan = self._plan(code.co_filename)
        if plan is None:
            return None
        watched = self._watched_code.get(code)
        if watched is None:
            watched = any(line in plan for _, _, line in code.co_lines() if line is not None)
            self._watched_code[code] = watched
        if not watched:
            frame.f_trace_lines = False  # only call/return: its time is taken off the caller's line
        now = self._clock()
        self._stack.append([plan, code.co_filename, None, 0.0, 0.0, now, self._attributed])
        return self._on_event

    def _on_event(self, frame: FrameType, event: str, arg: object) -> Callable[..., Any] | None:
        if not self._stack:
            return None
        entry = self._stack[-1]
        if event == "line":
            plan = entry[0]
            target = plan.get(frame.f_lineno)
            key = target[0] if target is not None else None
            if key is not None and key == entry[2]:
                return self._on_event  # the next line of the same statement
            now = self._clock()
            if entry[2] is not None:
                self._close(entry, now)
            if target is not None:
                self._open(entry, frame, target)
        elif event == "return":
            now = self._clock()
            self._stack.pop()
            if entry[2] is not None:
                self._close(entry, now)
            inside = self._attributed - entry[6]
            self._attributed += max(now - entry[5] - inside, 0.0)  # the function's own time
        return self._on_event

    def _open(self, entry: list[Any], frame: FrameType, target: tuple[int, tuple[str, ...]]) -> None:
        key, names = target
        where = (entry[1], key)
        record = self.records.get(where)
        hits = record.hits if record is not None else 0
        if hits < SAMPLE_FIRST or hits % SAMPLE_EVERY == 0:
            seen = []
            for name in names:
                observation = observe(read_name(frame, name))
                if observation is not None:
                    seen.append((name, observation))
            self._last_signature[where] = tuple(seen)
        entry[2] = key
        entry[3] = self._clock()  # reading the names is ours, not the line's
        entry[4] = self._attributed

    def _close(self, entry: list[Any], now: float) -> None:
        where = (entry[1], entry[2])
        spent = max(now - entry[3] - (self._attributed - entry[4]), 0.0)
        self._attributed += spent
        entry[2] = None
        record = self.records.setdefault(where, LineRecord())
        record.hits += 1
        record.seconds += spent
        counts = record.signatures.setdefault(self._last_signature.get(where, ()), [0.0, 0.0])
        counts[0] += 1
        counts[1] += spent
