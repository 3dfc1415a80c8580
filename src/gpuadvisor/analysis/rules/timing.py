"""Timed regions: consecutive clock reads in one function, and the events between them.

Shared by the unsynchronized-timing and timing-without-warmup rules so both see the
same regions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gpuadvisor.analysis.facts import Event, EventKind, FunctionFacts, ModuleFacts
from gpuadvisor.analysis.rule import GPU_LIBRARY_PATTERN
from gpuadvisor.analysis.rules.common import is_sampling_guard

#: A timing rule needs both a GPU library and a clock in the file.
TIMING_PREFILTER = (GPU_LIBRARY_PATTERN, r"time")


@dataclass(frozen=True)
class TimedRegion:
    scope: FunctionFacts
    start: int  # index of the opening clock read in scope.events
    end: int  # index of the closing clock read

    @property
    def opening(self) -> Event:
        return self.scope.events[self.start]

    @property
    def closing(self) -> Event:
        return self.scope.events[self.end]

    @property
    def inside(self) -> list[Event]:
        return self.scope.events[self.start + 1 : self.end]


def launches_gpu(event: Event, facts: ModuleFacts) -> bool:
    if event.kind is EventKind.GPU_WORK:
        return True
    callee = facts.function_called(event)
    return callee is not None and callee.launches_gpu


def synchronizes(event: Event, facts: ModuleFacts) -> bool:
    if event.kind is EventKind.SYNC:
        return True
    callee = facts.function_called(event)
    return callee is not None and callee.synchronizes


def timed_regions(facts: ModuleFacts) -> Iterator[TimedRegion]:
    """Intervals the code measures: a clock read that ends one, back to the previous read.

    A read ends an interval when it is subtracted from on the spot (`time.time() - t0`) or
    stored in a name that is (`t1 = time.time()` ... `t1 - t0`); a read that only opens
    intervals (`end = time.time()` at the bottom of a loop) closes nothing. Reads that are
    not measurements stay out too: a deadline test (`if time.time() - t0 > limit:`) and a
    progress line printed every N iterations (`if step % 100 == 0:`).
    """
    for scope in facts.scopes:
        clocks = [i for i, event in enumerate(scope.events) if event.kind is EventKind.CLOCK]
        for start, end in zip(clocks, clocks[1:]):
            opening, closing = scope.events[start], scope.events[end]
            if opening.node in facts.elapsed_reads or not _ends_interval(closing, facts):
                continue
            if closing.node in facts.condition_calls or _sampled(closing):
                continue
            yield TimedRegion(scope, start, end)


def _ends_interval(read: Event, facts: ModuleFacts) -> bool:
    if read.node in facts.elapsed_reads:
        return True
    name = facts.clock_names.get(read.node)  # type: ignore[call-overload]
    return name is not None and name in facts.subtracted_from


def _sampled(read: Event) -> bool:
    loop = read.ctx.loop
    return loop is not None and any(is_sampling_guard(test, loop) for test in read.ctx.guards)


def unsynchronized_work(events: list[Event], facts: ModuleFacts) -> bool:
    """GPU work with no synchronisation after the last of it."""
    last_work = max((i for i, e in enumerate(events) if launches_gpu(e, facts)), default=None)
    if last_work is None:
        return False
    return not any(synchronizes(e, facts) for e in events[last_work:])
