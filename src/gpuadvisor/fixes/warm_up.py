"""GPU402: run the timed call once, untimed, before the clock starts.

    torch.cuda.synchronize()                 torch.fft.fft2(x)  # warm-up
    t0 = time.perf_counter()         ->      torch.cuda.synchronize()
    y = torch.fft.fft2(x)                    t0 = time.perf_counter()
    ...                                      y = torch.fft.fft2(x)

Unsafe: the call runs once more (a model call may update state, a random op draws numbers).
Offered only where the timed region is one statement whose value is one call (or one operator
such as `a @ b`), beside synchronisations, in the same block as both clock reads. The warm-up
goes before the synchronisation that precedes the clock start; where there is none, one is
added, since queued warm-up work would otherwise still run inside the measurement.
"""

from __future__ import annotations

from itertools import chain

import libcst as cst

from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.analysis.rules.common import calls_in
from gpuadvisor.analysis.rules.timing import event_regions, timed_regions
from gpuadvisor.fixes.context import Edit, FixContext
from gpuadvisor.fixes.helpers import insert_before, names_in, synchronize_call, walk


def _is_synchronization(statement: cst.CSTNode) -> bool:
    """`torch.cuda.synchronize()`, `cp.cuda.Device().synchronize()`, or the guarded
    `if torch.cuda.is_available(): torch.cuda.synchronize()` the sync fix writes."""
    calls = [call.func.attr.value if isinstance(call.func, cst.Attribute) else None for call in calls_in(statement)]
    allowed = {"synchronize", "is_available", "Device", "current_stream", "current_device"}
    return "synchronize" in calls and all(name in allowed for name in calls)


def _timed_value(statement: cst.CSTNode) -> cst.BaseExpression | None:
    """The value of `y = f(x)` / `f(x)` / `c = a @ b`, a statement of one call or operator."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Expr):
        value = small.value
    elif isinstance(small, cst.Assign) and len(small.targets) == 1:
        value = small.value
    else:
        return None
    if isinstance(value, cst.Await) or any(isinstance(node, (cst.Yield, cst.NamedExpr, cst.Lambda)) for node in walk(value)):
        return None
    return value if isinstance(value, (cst.Call, cst.BinaryOperation)) else None


def _binds(statement: cst.CSTNode) -> set[str]:
    return {name for node in walk(statement) if isinstance(node, cst.AssignTarget) for name in names_in(node.target)}


def warm_up(finding: Finding, context: FixContext) -> Edit | None:
    if not finding.message.startswith("This timed region runs"):
        return None  # a sampling loop whose warm-up sample is skipped only sometimes
    closing = context.node_at(finding, cst.Call)
    regions = chain(timed_regions(context.facts), event_regions(context.facts))
    region = next((r for r in regions if r.closing.node is closing), None)
    if region is None:
        return None
    opening = context.statement_of(region.opening.node)
    closing_statement = context.statement_of((region.stop or region.closing).node)
    block = context.block_of(opening) if opening is not None else None
    if opening is None or closing_statement is None or block is None or context.parents.get(closing_statement) is not block[0]:
        return None
    body = block[1]
    start, end = body.index(opening), body.index(closing_statement)
    if start >= end:
        return None
    timed = [statement for statement in body[start + 1 : end] if not _is_synchronization(statement)]
    value = _timed_value(timed[0]) if len(timed) == 1 else None
    if value is None:
        return None
    before = body[start - 1] if start > 0 and _is_synchronization(body[start - 1]) else None
    if _binds(opening) & names_in(value):
        return None  # the timed call reads what the clock start binds
    warm = cst.SimpleStatementLine(
        [cst.Expr(value)],
        trailing_whitespace=cst.TrailingWhitespace(cst.SimpleWhitespace("  "), cst.Comment("# warm-up"), cst.Newline()),
    )
    added: list[cst.BaseStatement] = [warm]
    if before is not None:
        anchor = before
    else:
        call = synchronize_call(context.module)
        if call is None:
            return None  # no single library to wait for: the warm-up would run into the measurement
        anchor = opening
        added.append(cst.parse_statement(f"{call}\n"))

    def rewrite(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.CSTNode]:
        return insert_before(added, updated)

    return Edit({anchor: rewrite}, safe=False, description="run the timed call once before starting the clock")
