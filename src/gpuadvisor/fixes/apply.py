"""Apply fixes to one file's text: check, rewrite every fixable finding, check again, repeat.

Rounds repeat because one rewrite can make another possible (or two fixes touch the same
statement: the second waits for the next round). Output that does not compile is never kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import libcst as cst

from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.fixes.context import Edit, FixContext, Replacement, Rewrite
from gpuadvisor.fixes.fixers import FIXERS

#: One round fixes every independent finding; fixes marked `one_per_round` take a round each.
MAX_ROUNDS = 32


@dataclass
class FixOutcome:
    text: str
    fixed: list[Finding] = field(default_factory=list)
    #: Findings with a fix that only `unsafe=True` applies.
    unsafe_available: list[Finding] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.fixed)


class _Rewriter(cst.CSTTransformer):
    def __init__(self, rewrites: dict[cst.CSTNode, Rewrite]) -> None:
        super().__init__()
        self.rewrites = rewrites

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Replacement:  # type: ignore[override]
        rewrite = self.rewrites.get(original_node)
        return rewrite(updated_node) if rewrite is not None else updated_node


def _edit_for(finding: Finding, context: FixContext) -> Edit | None:
    """The finding's fix, or None. A fixer that fails on code it did not foresee declines, like
    one that cannot show its rewrite is right: the finding stays and the other files go on."""
    try:
        return FIXERS[finding.rule](finding, context)
    except Exception:  # noqa: BLE001 - any failure means no fix, never a traceback for the user
        return None


def _compiles(text: str) -> bool:
    try:
        compile(text, "<fixed>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def fix_text(
    text: str,
    path: str = "<string>",
    *,
    unsafe: bool = False,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    keep: Callable[[Finding], bool] | None = None,
) -> FixOutcome:
    """The text with every fixable finding fixed. Raises ValueError for code that does not parse.

    `keep` filters findings the way the project's configuration does (per-file ignores).
    """
    from gpuadvisor.analysis.rules import select_rules
    from gpuadvisor.interfaces.api import check_source

    codes = [rule.code for rule in select_rules(list(select) if select else None, list(ignore or ())) if rule.code in FIXERS]
    outcome = FixOutcome(text)
    if not codes:
        return outcome
    for _ in range(MAX_ROUNDS):
        findings = [f for f in check_source(outcome.text, path, select=codes) if keep is None or keep(f)]
        try:
            context = FixContext.of(outcome.text, path)
        except (cst.ParserSyntaxError, RecursionError):
            return outcome  # text LibCST cannot round-trip unchanged: leave it alone
        rewrites: dict[cst.CSTNode, Rewrite] = {}
        applied: list[Finding] = []
        outcome.unsafe_available = []
        for finding in findings:
            edit = _edit_for(finding, context)
            if edit is None:
                continue
            if not edit.safe and not unsafe:
                outcome.unsafe_available.append(finding)
            elif edit.one_per_round and any(f.rule == finding.rule for f in applied):
                continue
            elif not rewrites.keys() & edit.rewrites.keys():
                rewrites.update(edit.rewrites)
                applied.append(finding)
        if not applied:
            break
        fixed = context.module.visit(_Rewriter(rewrites)).code
        if not _compiles(fixed):
            break
        outcome.text = fixed
        outcome.fixed.extend(applied)
    return outcome
