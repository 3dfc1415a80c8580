"""Set-up of a measurement: what an iteration makes before it hands work to a benchmark harness.

A benchmark script loops over configurations (`for M, N, K in shapes:`), builds the operands of
each, and hands the work to a harness (`do_bench(lambda: f(a, b))`, `Timer(...).blocked_autorange()`,
its own `bench_f(...)`), which runs it many times under its clock. The operands are made once per
configuration, outside what is timed: a host fill or copy there costs nothing the benchmark
reports, unlike the same fill inside the callable the harness repeats.
"""

from __future__ import annotations

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.imports import dotted_name
from gpuadvisor.analysis.facts.module_facts import CallFact, Context, ModuleFacts


def names_a_harness(call: CallFact) -> bool:
    """`do_bench(...)`, `timeit.timeit(...)`, `benchmark_model(...)`, `self.bench(...)`."""
    if call.qualname in kb.BENCHMARK_HARNESSES:
        return True
    name = call.method or (call.qualname or dotted_name(call.node.func) or "").rsplit(".", 1)[-1]
    return any(word in name.lower() for word in kb.BENCHMARK_WORDS)


def hands_over_work(call: CallFact, facts: ModuleFacts) -> bool:
    """A known harness (`do_bench`, `Timer`, `torch.profiler.profile`), or a project's own one
    handed the work it repeats: a lambda, a function (`benchmark(torch.mm, a, b)`,
    `functools.partial(...)`). A timer that wraps a block (`with timeit("sample"):` in a training
    loop) times it once: no harness."""
    if call.qualname in kb.BENCHMARK_HARNESSES:
        return True
    if not names_a_harness(call):
        return False
    for arg in call.node.args:
        work = arg.value
        if isinstance(work, cst.Lambda) or (isinstance(work, cst.Name) and work.value in facts.functions):
            return True
        named = facts.imports.qualified_name(work.func if isinstance(work, cst.Call) else work)
        if isinstance(work, cst.Call) and named == "functools.partial":
            return True
        if isinstance(work, (cst.Name, cst.Attribute)) and named is not None and kb.library_of(named) and facts.value(work) is None:
            return True  # `torch._grouped_mm` handed over, not an array
    return False


def sets_up_a_measurement(ctx: Context, facts: ModuleFacts, work_handed: bool = False) -> bool:
    """The iteration that runs at `ctx` (the whole function, outside loops) also hands work to a
    benchmark harness: what it makes is the set-up of one measured configuration (`work_handed`:
    only a harness handed the work itself counts, see `hands_over_work`)."""
    function, loop = ctx.function, ctx.loop
    for call in facts.calls:
        if call.ctx.function is not function or (loop is not None and loop not in call.ctx.loops()):
            continue
        if hands_over_work(call, facts) if work_handed else names_a_harness(call):
            return True
    return False
