"""Timed regions: consecutive clock reads in one function, and the events between them.

Shared by the unsynchronized-timing and timing-without-warmup rules so both see the
same regions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.module_facts import Context, Event, EventKind, FunctionFacts, LoopFacts, ModuleFacts, ScopedTimer
from gpuadvisor.analysis.facts.call_sites import calls_of
from gpuadvisor.analysis.facts.imports import dotted_name, referenced_names
from gpuadvisor.analysis.facts.training import steps_an_optimizer
from gpuadvisor.analysis.facts.traverse import child_nodes
from gpuadvisor.analysis.prescan import CLOCK_WORDS, GPU_WORDS
from gpuadvisor.analysis.facts.frequency import counts_epochs, is_sampled, is_sampling_guard
from gpuadvisor.analysis.rules.common import contains, launches_gpu, small_statements, statement_slots

#: A timing rule needs both a GPU library and a clock (or pytest-benchmark's fixture) in the file.
TIMING_PREFILTER = (GPU_WORDS, CLOCK_WORDS)


@dataclass(frozen=True)
class TimedRegion:
    scope: FunctionFacts
    start: int  # index of the opening clock read in scope.events
    end: int  # index of the closing clock read
    #: The events run between the two reads: source order, or for a loop-carried interval
    #: (`end = time.time()` at the bottom of the loop) the rest of the loop body after the
    #: opening read and then the body up to the closing read.
    inside: list[Event]
    #: A loop-carried interval in a loop that waits for the GPU on every iteration (`loss.item()`):
    #: what one iteration leaves running is waited for inside the next one's interval, so the
    #: per-iteration times add up to the real run time (the ImageNet-example batch-time meter).
    steady: bool = False
    #: A running total: the closing read runs on every iteration of a loop while the opening read
    #: runs only when a test in that loop holds (`if step == 10: t0 = ...`, a reset after each
    #: validation). Each reading spans every step since the last reset, so what the last step left
    #: queued is a small part of it: a progress display, not the measurement of an operation.
    cumulative: bool = False
    #: The timer object whose `with` block this is (`with wp.ScopedTimer("step", dict=t):`);
    #: None for a pair of clock reads.
    timer: ScopedTimer | None = None
    #: The statement holding the closing read (`dt = time.time() - t0`), looked up once for all
    #: regions of the file; None for a timer block.
    statement: cst.BaseSmallStatement | None = None
    #: For CUDA-event timing, the mark that ends the timed work (`end.record()`), before the
    #: read (`start.elapsed_time(end)`) that closes the region; None where the read ends it.
    stop: Event | None = None

    @property
    def opening(self) -> Event:
        return self.scope.events[self.start]

    @property
    def closing(self) -> Event:
        return self.scope.events[self.end]


def synchronizes(event: Event, facts: ModuleFacts, seen: frozenset[int] = frozenset()) -> bool:
    """The event waits for the GPU: a sync, or a call of a function that ends waiting (a helper
    whose last GPU work is followed by a sync; one that syncs mid-loop and then launches the
    backward pass does not leave the GPU idle)."""
    if event.kind is EventKind.SYNC:
        return True
    callee = facts.function_called(event)
    if callee is None or not callee.synchronizes or id(callee) in seen:
        return False
    return not unsynchronized_work(callee.events, facts, seen | {id(callee)})


def runs_a_job(loop: LoopFacts, facts: ModuleFacts) -> bool:
    """A loop over data or epochs (`for batch in loader`, `for epoch in range(args.epochs)`), not
    the `for _ in range(10)` repetitions of a benchmark: timing it times a job, whose first
    step and last queued kernels are a small part of what the user waits for."""
    iterable = loop.iterable
    if isinstance(loop.node, cst.While):
        return _draws_batches(loop.node, facts)
    if iterable is None or loop.few_iterations or loop.parameters_of is not None:
        return False  # (a loop over a model's parameters is one pass over its tensors, not a job)
    if any(word in target.lower() for target in loop.targets for word in kb.EPOCH_WORDS):
        return True
    if isinstance(loop.node, cst.For) and steps_an_optimizer(loop.node.body):
        return True  # `for _ in range(updates): ... optim.step()`: a stretch of training
    is_range = isinstance(iterable, cst.Call) and facts.imports.qualified_name(iterable.func) == "builtins.range"
    if is_range:
        assert isinstance(iterable, cst.Call)
        return _counts_epochs(iterable) or _walks_chunks(iterable)
    # `for i, batch in enumerate(loader)`: the index counts the items of a walk over data.
    enumerates = isinstance(iterable, cst.Call) and facts.imports.qualified_name(iterable.func) == "builtins.enumerate"
    return not loop.counts_indices or enumerates


def loops_over_data(loop: LoopFacts, facts: ModuleFacts) -> bool:
    """`for x, y in val_loader`, `for epoch in range(n)`: a loop over a dataset or over epochs
    (a loop over a model's layers or a list of settings is not one)."""
    if not isinstance(loop.node, cst.For) or not runs_a_job(loop, facts):
        return False
    words = facts.code(loop.node.iter).lower() + " " + " ".join(loop.targets).lower()
    return any(word in words for word in kb.DATA_LOOP_WORDS + kb.EPOCH_WORDS)


def walks_data(function: FunctionFacts, facts: ModuleFacts) -> bool:
    """The function runs a loop over data on each call (`for imgs, _ in self.dataloader`, an
    evaluation pass): what it does once outside that loop is a sliver of the pass."""
    return any(loop.function is function and loops_over_data(loop, facts) for loop in facts.loops)


def calls_a_pass(loop: LoopFacts, facts: ModuleFacts) -> bool:
    """An iteration calls a function of this file that runs its own loop over data or epochs
    (`for epoch in ...: train(loader, ...); acc = validate(...)`): an outer loop, like one with
    an inner loop written in it, so a wait or a fill per iteration is amortised over that loop."""
    for callee, ctx in iteration_callees(loop, facts):
        if any(is_sampling_guard(test, loop) for test in ctx.guards):
            continue  # `if step % 500 == 0: validate(...)` runs now and then, not in every iteration
        if any(inner.function is callee and loops_over_data(inner, facts) for inner in facts.loops):
            return True
        if callee.runs_iterations:
            return True  # `for target in classes: self.attack_single_run(x, target)`: a whole attack each
    return False


def once_per_pass(loop: LoopFacts, facts: ModuleFacts) -> bool:
    """The loop's own body runs once per pass over the data: an epoch loop beside the loop over
    the data written in it, or one calling a function that runs a pass. What it does there (the
    accumulators an evaluation starts from, the samples of an end-of-epoch image grid) is a
    sliver of the pass."""
    return passes_over_data(loop, facts) or calls_a_pass(loop, facts)


def passes_over_data(loop: LoopFacts, facts: ModuleFacts) -> bool:
    """An epoch loop with a loop of more than a handful of iterations written in it: each
    iteration is a pass over the data (one whose step is `for i in range(1)`, TorchBench's
    DCGAN, is a step loop)."""
    return counts_epochs(loop) and any(inner.parent is loop and not inner.few_iterations for inner in facts.loops)


def iteration_callees(loop: LoopFacts, facts: ModuleFacts) -> Iterator[tuple[FunctionFacts, Context]]:
    """The functions of this file an iteration of `loop` calls itself (not the loop's own
    function), each with the context of its call."""
    for event in loop.function.events:
        callee = facts.function_called(event) if event.ctx.loop is loop else None
        if callee is not None and callee is not loop.function:
            yield callee, event.ctx


def _counts_epochs(call: cst.Call) -> bool:
    """`range(cfg.train.num_epochs)`, `range(args.nsamples)`: the bound names epochs or the
    samples of a data set, a pass over data (a benchmark's repetitions are `iters`, `runs`...)."""
    bound = dotted_name(call.args[-1].value) if call.args else None
    return bound is not None and any(word in bound.lower() for word in kb.EPOCH_WORDS + kb.SAMPLE_COUNT_WORDS)


def _walks_chunks(call: cst.Call) -> bool:
    """`range(0, ngrids, nbatch)`: a pass over data in blocks of a size set at run time (a
    literal step, `range(0, 10, 2)`, is a handful of repetitions)."""
    return len(call.args) == 3 and not isinstance(call.args[2].value, (cst.Integer, cst.UnaryOperation))


def _draws_batches(loop: cst.While, facts: ModuleFacts) -> bool:
    """`while True: batch = next(data_iterator) ...`: a training loop over a data stream."""
    stack: list[cst.CSTNode] = [loop.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and facts.imports.qualified_name(node.func) == "builtins.next":
            return True
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While)):
            stack.extend(child_nodes(node))
    return False


def times_a_job(region: TimedRegion, facts: ModuleFacts) -> bool:
    """The region runs a job loop with GPU work, here or in a function called from it (`t0 =
    perf_counter(); train(...); print(perf_counter() - t0)`): a whole-run or per-epoch log, not
    the measurement of an operation; the few kernels queued after the loop are a rounding error
    of it."""
    # A loop around either clock read repeats the interval; it is not a job inside it.
    around = region.opening.ctx.loops() + region.closing.ctx.loops()
    return any(launches_gpu(event, facts) and _in_a_job(event, facts, around, frozenset()) for event in region.inside)


def _in_a_job(event: Event, facts: ModuleFacts, outside: list[LoopFacts], seen: frozenset[int]) -> bool:
    if any(runs_a_job(loop, facts) for loop in event.ctx.loops() if loop not in outside):
        return True
    callee = facts.function_called(event)
    if callee is None or id(callee) in seen:
        return False
    inner = [e for e in callee.events if launches_gpu(e, facts)]
    return bool(inner) and any(_in_a_job(e, facts, [], seen | {id(callee)}) for e in inner)


def timed_regions(facts: ModuleFacts) -> Iterator[TimedRegion]:
    """Intervals the code measures: from the read stored in `t0` to a read that ends `... - t0`.

    A read ends an interval when it is subtracted from on the spot (`time.time() - t0`) or
    stored in a name that is (`t1 = time.time()` ... `t1 - t0`); the interval opens at the
    last read stored in `t0` before it, or, inside a loop, at the read stored there later in
    the loop body (`end = time.time()` at the bottom: the interval spans two iterations).
    Reads that are not measurements stay out: a deadline test (`if time.time() - t0 > limit:`),
    a progress line printed every N iterations (`if step % 100 == 0:`), a time read on a path
    the caller opts into and none does (`if verbose_time:` of `verbose_time=False`) and a read
    that paces a loop (`dt = time.perf_counter() - t0; sleep(1 / fps - dt)`: host time is what
    it wants). When the start is not a plain name we cannot follow, the read is left alone.
    """
    regions = [region for region in _intervals(facts) if not region.closing.ctx.opt_in]
    if regions:
        # One pass over the module finds the statement of every closing read (not one pass per read).
        statements = small_statements(facts.module, {id(region.closing.node) for region in regions})
        for region in regions:
            region = replace(region, statement=statements.get(id(region.closing.node)))
            if _discarded(region.statement, region.scope, facts) or _whole_seconds(region.statement, region.closing.node, facts):
                continue
            if any(_sleeps(report) for report in _reports(region, facts, every=True)):
                continue
            yield region
    yield from _timer_blocks(facts)


def event_regions(facts: ModuleFacts) -> Iterator[TimedRegion]:
    """Intervals timed with CUDA events: from `start.record()` to `end.record()`, read by
    `start.elapsed_time(end)` later in the same function. The GPU stamps both marks, so no host
    synchronisation is missing here (the read itself fails without one); what can still be
    wrong is what runs between them (a first call). The region ends at the read, whose
    statement says what was timed; `inside` holds the events between the two marks. A read on a
    path a caller must turn on and none does (`if enable_timing:` of `enable_timing=False`) is
    left out, as for clocks."""
    regions = []
    for scope in facts.scopes:
        events = scope.events
        for index, read in enumerate(events):
            if read.kind is not EventKind.TIMING_MARK or ">" not in read.key:
                continue
            first, second = read.key.split(">", 1)
            closing = _last_mark(events, second, index)
            opening = _last_mark(events, first, closing) if closing is not None else None
            if opening is not None and closing is not None and not _sampled(read) and not read.ctx.opt_in:
                regions.append(TimedRegion(scope, opening, index, events[opening + 1 : closing], stop=events[closing]))
    if regions:
        # One pass over the module finds the statement of every read (not one pass per read).
        statements = small_statements(facts.module, {id(region.closing.node) for region in regions})
        yield from (replace(region, statement=statements.get(id(region.closing.node))) for region in regions)


def _last_mark(events: list[Event], name: str, before: int) -> int | None:
    """The index of the last `name.record()` before position `before`."""
    return next((i for i in range(before - 1, -1, -1) if events[i].kind is EventKind.TIMING_MARK and events[i].key == name), None)


def _timer_blocks(facts: ModuleFacts) -> Iterator[TimedRegion]:
    """The `with` blocks of timer objects whose times are read (a timer object made beforehand,
    `as timer` read afterwards, or a `dict=` of times read elsewhere, as an average frame time):
    measurements. A timer that only prints its line on every frame is a progress log, like a
    sampled print, and times collected into a dict nobody reads report nothing."""
    for timer in facts.scoped_timers:
        if not (timer.named or _read_after(timer, facts) or _times_read(timer, facts)):
            continue
        events = timer.scope.events
        opening = next(i for i, event in enumerate(events) if event.kind is EventKind.CLOCK and event.node is timer.item)
        closing = next(i for i, event in enumerate(events) if i > opening and event.kind is EventKind.CLOCK and event.node is timer.node)
        if not _sampled(events[closing]):
            yield TimedRegion(timer.scope, opening, closing, events[opening + 1 : closing], timer=timer)


def _times_read(timer: ScopedTimer, facts: ModuleFacts) -> bool:
    """`dict=self.profiler` and `profiler` read somewhere in the file other than by this timer
    and the statements that bind it (`example.profiler["step"]`, `np.mean(times["step"])`)."""
    kept_in = timer.kept_in
    name = kept_in.attr.value if isinstance(kept_in, cst.Attribute) else kept_in.value if isinstance(kept_in, cst.Name) else None
    if name is None:
        return False
    stack: list[cst.CSTNode] = [facts.module]
    while stack:
        node = stack.pop()
        if node is kept_in:
            continue
        if isinstance(node, (cst.Assign, cst.AnnAssign)):
            if node.value is not None:
                stack.append(node.value)
            continue  # `self.profiler = {}`: a binding, not a read
        if (isinstance(node, cst.Name) and node.value == name) or (isinstance(node, cst.Attribute) and node.attr.value == name):
            return True
        stack.extend(child_nodes(node))
    return False


def _read_after(timer: ScopedTimer, facts: ModuleFacts) -> bool:
    """`with wp.ScopedTimer(...) as t:` and `t` read in the function (`return t.elapsed`)."""
    if timer.asname is None:
        return False
    stack: list[cst.CSTNode] = [timer.scope.node if timer.scope.node is not None else facts.module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.AsName):
            continue  # the binding itself
        if isinstance(node, cst.Name) and node.value == timer.asname:
            return True
        stack.extend(child_nodes(node))
    return False


def _whole_seconds(statement: cst.BaseSmallStatement | None, read: cst.CSTNode, facts: ModuleFacts) -> bool:
    """`int(time.time() - start)`, `round(time.time() - start)`: a duration kept to whole
    seconds is a progress log ("done in 412s"), not the measurement of GPU work."""
    if statement is None:
        return False
    stack: list[cst.CSTNode] = [statement]
    while stack:
        node = stack.pop()
        if (
            isinstance(node, cst.Call)
            and len(node.args) == 1
            and facts.imports.qualified_name(node.func) in ("builtins.int", "builtins.round")
            and contains(node.args[0].value, read)
        ):
            return True
        stack.extend(child_nodes(node))
    return False


def _intervals(facts: ModuleFacts) -> Iterator[TimedRegion]:
    slots: dict[int, tuple[int, int, int]] = {}  # filled by one walk, the first time a carried read needs it
    for scope in facts.scopes:
        events = scope.events
        clocks = [i for i, event in enumerate(events) if event.kind is EventKind.CLOCK]
        for end in clocks:
            closing = events[end]
            if closing.node in facts.condition_calls or _sampled(closing):
                continue
            starts = _start_names(closing, facts)
            openings = [i for i in clocks if i != end and facts.clock_names.get(events[i].node) in starts]  # type: ignore[call-overload]
            carried = [region for i in openings if i > end and (region := _loop_carried(scope, i, end, slots, facts)) is not None]
            if carried:
                yield carried[-1]
            elif any(i < end for i in openings):
                opening = max(i for i in openings if i < end)
                yield TimedRegion(scope, opening, end, events[opening + 1 : end], cumulative=_running_total(events[opening], closing))


def _running_total(opening: Event, closing: Event) -> bool:
    """The closing read runs on every iteration of the loop holding both reads, the opening read
    only under a test in that loop (see `TimedRegion.cumulative`)."""
    loop = closing.ctx.loop
    return loop is not None and opening.ctx.loop is loop and not closing.ctx.guards and bool(opening.ctx.guards)


def _start_names(read: Event, facts: ModuleFacts) -> set[str]:
    if read.node in facts.elapsed_reads:
        start = facts.elapsed_reads[read.node]  # type: ignore[index]
        return {start} if start is not None else set()
    name = facts.clock_names.get(read.node)  # type: ignore[call-overload]
    return facts.subtracted_from.get(name, set()) if name is not None else set()


def _loop_carried(
    scope: FunctionFacts, opening: int, closing: int, slots: dict[int, tuple[int, int, int]], facts: ModuleFacts
) -> TimedRegion | None:
    """The interval from a read late in a loop body to one earlier in the next iteration
    (`slots`: where each clock read of the file sits, from one `statement_slots` walk shared by
    every read of the file)."""
    events = scope.events
    opening_loops = events[opening].ctx.loops()
    shared = next((loop for loop in events[closing].ctx.loops() if loop in opening_loops), None)
    if shared is None:
        return None
    if not slots:
        clock_reads = {id(event.node) for each in facts.scopes for event in each.events if event.kind is EventKind.CLOCK}
        slots.update(statement_slots(facts.module, clock_reads))
    opening_block, closing_block = slots[id(events[opening].node)][0], slots[id(events[closing].node)][0]
    if opening_block not in (closing_block, id(getattr(shared.node, "body", None))):
        return None  # `if cuda: t0 = ...; t1 = ...` / `else: t0 = ...`: a sibling branch, not a later read
    in_loop = [i for i, event in enumerate(events) if shared in event.ctx.loops()]
    inside = [events[i] for i in in_loop if i > opening] + [events[i] for i in in_loop if i < closing]
    steady = any(event.ctx.loop is shared and not event.ctx.guards and synchronizes(event, facts) for event in inside)
    return TimedRegion(scope, opening, closing, inside, steady)


def _discarded(statement: cst.BaseSmallStatement | None, scope: FunctionFacts, facts: ModuleFacts) -> bool:
    """`dt = time.time() - t0` where `dt` is never read (its print commented out), or
    `model_time = time.time() - model_time` where the name is only stored to again: no
    measurement is reported, so there is nothing to be wrong. The statement's own reads (the
    opening time it subtracts) and plain stores to the name do not read the result."""
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return False
    target = statement.targets[0].target
    if not isinstance(target, cst.Name):
        return False
    stack: list[cst.CSTNode] = [scope.node if scope.node is not None else facts.module]
    while stack:
        node = stack.pop()
        if node is statement:
            continue
        if type(node) is cst.AssignTarget and type(node.target) is cst.Name:
            continue  # `name = ...`: a store
        if type(node) is cst.Name and node.value == target.value:
            return False
        stack.extend(child_nodes(node))
    return True


def _sampled(read: Event) -> bool:
    """A read on a few iterations only, of its own loop or of an outer one (`if (i + 1) % log_step
    == 0:` inside `for dataset in ["CelebA", "RaFD"]`): a progress line, not a measurement."""
    return is_sampled(read.ctx) or _samples_a_loop(read.ctx.guards, read)


def unsynchronized_work(
    events: list[Event], facts: ModuleFacts, seen: frozenset[int] = frozenset(), guards: tuple[cst.BaseExpression, ...] = ()
) -> bool:
    """GPU work with no synchronisation after the last of it. A sync counts only where it runs
    whenever the end does: not under a sampling `if` beyond `guards` (those of the closing clock
    read; none at the end of a function). `if step % eval_every == 0: validate()` waits now and
    then; `if scaler is not None: scaler.step(opt)` waits on every step of a run that uses it."""
    last_work = max((i for i, e in enumerate(events) if launches_gpu(e, facts)), default=None)
    if last_work is None:
        return False
    return not any(_waits(e, facts, seen, guards) for e in events[last_work:])


def _waits(event: Event, facts: ModuleFacts, seen: frozenset[int], guards: tuple[cst.BaseExpression, ...]) -> bool:
    """The event waits for the GPU whenever the end does. A host read of a value of unknown type
    (`out.cpu()`, `tokens.tolist()`) may wait: it counts only where nothing but the end's own
    guards decide whether it runs (`if not args.nooutput: out.cpu()` leaves the other path untimed)."""
    if event.kind is EventKind.HOST_READ:
        return all(test in guards for test in event.ctx.guards)
    return not _sampled_beyond(event, guards) and synchronizes(event, facts, seen)


def _sampled_beyond(event: Event, guards: tuple[cst.BaseExpression, ...]) -> bool:
    return _samples_a_loop([test for test in event.ctx.guards if test not in guards], event)


def _samples_a_loop(tests: Sequence[cst.BaseExpression], event: Event) -> bool:
    """One of `tests` lets the event run on a few iterations of one of its loops only."""
    return any(is_sampling_guard(test, loop) for test in tests for loop in event.ctx.loops())


#: Words in the text that reports a time which say it is not a steady-state measurement.
_STAGE_WORDS = r"load|init|set ?up|start ?up|compil|warm|train|checkpoint|state ?dict|\bsav(e|ing)\b"
NOT_A_BENCHMARK = re.compile(_STAGE_WORDS + r"|complete|finish|\bdone\b", re.IGNORECASE)
#: Words that name a stage of a run rather than GPU work ("Export complete (12.3s)", "Epoch 3
#: loss_train ...", "Getting full model state dict took 4.1 secs"): its time is what the user
#: waited for, queued tail or not (a checkpoint's gather ends in copies to the host anyway).
#: "Complete" and "finished" alone end benchmarks as often ("Inference finished in 3.2 s").
SETUP_STAGE = re.compile(_STAGE_WORDS + r"|export", re.IGNORECASE)
#: Calls after the closing clock read searched for the one that reports the time it read.
_REPORT_WITHIN = 3


def reported_as_setup(region: TimedRegion, facts: ModuleFacts, words: re.Pattern[str] = NOT_A_BENCHMARK) -> bool:
    """The line that reads the clock, or the next call that reports what it read, says what it
    times: "Time to load model", "compile time", "Done in 4.2s" (a request's whole latency, the
    first one included, as the user waited for it)."""
    return any(words.search(text) for report in _reports(region, facts) for text in _strings_in(report))


def _reports(region: TimedRegion, facts: ModuleFacts, every: bool = False) -> list[cst.CSTNode]:
    """The statement that reads the closing clock and, when it stores the reading, the next call
    (of a few) that uses it, or all of those (`every`: `sleep(max(period - dt, 0))` hands it on
    through `max`): where the time read goes."""
    statement = region.statement
    if statement is None:
        return []
    reports: list[cst.CSTNode] = [statement]
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0].target, cst.Name):
        read = statement.targets[0].target.value  # `t1 = time.perf_counter()`, then `print(f"Done in {t1 - t0:.1f}s")`
        position = next((i for i, call in enumerate(facts.calls) if call.node is region.closing.node), len(facts.calls))
        following = [call for call in facts.calls[position + 1 :] if call.ctx.function is region.scope][:_REPORT_WITHIN]
        using = [call.node for call in following if read in referenced_names(call.node)]
        reports += using if every else using[:1]
    return reports


def _sleeps(report: cst.CSTNode) -> bool:
    """`time.sleep(period - dt)`, `precise_sleep(...)`, `busy_wait(...)` (in the report or around
    the read, `time.sleep(max(0, period - (time.time() - t0)))`): the reading sets how long the
    host waits, to hold a loop to a rate."""
    stack = [report]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            last = (dotted_name(node.func) or "").rsplit(".", 1)[-1].lower()
            if "sleep" in last or last in kb.PACING_WAITS:
                return True
        stack.extend(child_nodes(node))
    return False


def _strings_in(node: cst.CSTNode) -> Iterator[str]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.SimpleString):
            yield str(current.evaluated_value)
        elif isinstance(current, cst.FormattedStringText):
            yield current.value
        stack.extend(child_nodes(current))


def device_wide_wait(event: Event, facts: ModuleFacts) -> bool:
    """`torch.cuda.synchronize()` and the like: a wait for all queued GPU work."""
    call = facts.call_of.get(event.node) if event.kind is EventKind.SYNC and isinstance(event.node, cst.Call) else None
    return call is not None and call.qualname in kb.DEVICE_WIDE_WAITS


def drained_to_time_each_iteration(facts: ModuleFacts) -> dict[int, set[cst.CSTNode]]:
    """Loops that time every iteration with a synchronised pair of clock reads (`synchronize();
    t0 = ...; step(); synchronize(); dt = ... - t0`), with the nodes read inside each timed window.
    Such a loop drains the GPU on every iteration on purpose, so a read outside the window (a
    peak-memory figure, a loss printed with the time) waits only for what was queued since the
    drain: removing it would not stop the loop from waiting. A read inside the window is left to
    the other checks: there it may be what the measurement includes."""
    drained: dict[int, set[cst.CSTNode]] = {}
    if not any(call.qualname in kb.DEVICE_WIDE_WAITS and call.ctx.loop is not None for call in facts.calls):
        return drained  # no wait in a loop: no window drains one (and the regions need not be found)
    for region in timed_regions(facts):
        loop, closing = region.opening.ctx.loop, region.closing
        if loop is None or closing.ctx.loop is not loop or region.cumulative or region.timer is not None or closing.ctx.guards:
            continue
        if region.start > region.end or unsynchronized_work(region.inside, facts, guards=closing.ctx.guards):
            continue  # a loop-carried interval, or launch time only: nothing drains the loop
        if not any(device_wide_wait(event, facts) for event in region.inside):
            continue  # a host read closes the window: the read itself is the wait
        drained.setdefault(id(loop), set()).update(event.node for event in region.inside)
    return drained


def outside_timed_windows(ctx: Context, node: cst.CSTNode, facts: ModuleFacts, drained: dict[int, set[cst.CSTNode]]) -> bool:
    """Code at `ctx` runs, in a loop that times each iteration (`drained_to_time_each_iteration`),
    outside the timed window: directly in such a loop, or in a function that only such loops call,
    outside their windows (`batch = fake_batch(step)` before `synchronize(); t0 = ...`)."""
    if ctx.loop is not None:
        return id(ctx.loop) in drained and node not in drained[id(ctx.loop)]
    calls = [scope.events[index] for scope, index in calls_of(ctx.function, facts)]
    return bool(calls) and all(event.ctx.loop is not None and outside_timed_windows(event.ctx, event.node, facts, drained) for event in calls)
