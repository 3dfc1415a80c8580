"""GPU401: wait for the GPU before the clock read that closes a timed region (safe: only the
time it reports changes)."""

from __future__ import annotations

import libcst as cst

from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.fixes.context import Edit, FixContext
from gpuadvisor.fixes.helpers import insert_before, synchronize_call


def synchronize_before_clock(finding: Finding, context: FixContext) -> Edit | None:
    if not finding.message.startswith("The clock"):
        return None  # `timeit(...)` of GPU work: the statement to time is a string or lambda
    clock = context.node_at(finding, cst.Call)
    statement = context.statement_of(clock) if clock is not None else None
    call = synchronize_call(context.module)
    if statement is None or call is None:
        return None  # no place for a statement, or no single library to synchronise
    sync = cst.parse_statement(f"{call}\n")

    def rewrite(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.CSTNode]:
        return insert_before([sync], updated)

    return Edit({statement: rewrite}, safe=True, description=f"call `{call}` before reading the clock", one_per_round=True)
