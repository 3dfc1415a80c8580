"""GPU901 (opt-in): suppression comments that hide nothing, or name rules that do not exist.

Unlike the other rules it reads comments, not code: the checker hands it the file's
suppression directives after every other rule has run (see `checker.py`).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuadvisor.analysis.facts.module_facts import ModuleFacts
from gpuadvisor.analysis.findings.records import Finding, Severity
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.reading.suppression import EVERYTHING, Directive, Suppressions


class UnusedSuppression(Rule):
    code = "GPU901"
    category = "unused-suppression"
    severity = Severity.WARNING
    summary = "Suppression comment that hides no finding or names an unknown rule (opt-in)"
    enabled_by_default = False

    VALID = [
        Valid(
            """
            import torch
            x = [torch.zeros(8).cuda() for _ in range(9)]  # noqa: GPU102
            y = [torch.ones(8).cuda() for _ in range(9)]  # gpuadvisor: ignore[create-then-transfer]
            long_line = 1  # noqa: E501
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch
            x = torch.zeros(8, device="cuda")  # noqa: GPU102
            """,
            line=2,
            message="hides no finding",
        ),
        Invalid(
            """
            import torch
            x = torch.zeros(8).cuda()  # gpuadvisor: ignore[GPU102, GPU999]
            """,
            line=2,
            message="unknown rule `GPU999`",
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        return iter(())  # findings come from `suppression_findings`, after the other rules


def _known(name: str) -> bool:
    from gpuadvisor.analysis.rules import CATEGORIES, RULES_BY_CODE

    return name in CATEGORIES or any(code.startswith(name) for code in RULES_BY_CODE)


def _problems(directive: Directive) -> list[str]:
    if directive.names == EVERYTHING:
        # A bare `# noqa` may serve another linter; a bare `# gpuadvisor: ignore` is ours alone.
        return [] if directive.noqa or directive.used else ["hides no finding"]
    unknown = sorted(name for name in directive.names if not _known(name))
    unused = sorted(name for name in directive.names - directive.used if _known(name))
    return [f"unknown rule `{name}`" for name in unknown] + ([f"hides no finding for {', '.join(f'`{n}`' for n in unused)}"] if unused else [])


def suppression_findings(suppressions: Suppressions, path: str) -> list[Finding]:
    """One finding per suppression comment that names an unknown rule or hides nothing."""
    findings = []
    for directive in suppressions.directives:
        problems = _problems(directive)
        if problems:
            findings.append(
                Finding(
                    path=path, line=directive.line, column=directive.column, end_line=directive.line,
                    end_column=directive.end_column, rule=UnusedSuppression.code, category=UnusedSuppression.category,
                    severity=UnusedSuppression.severity, message=f"Suppression comment: {'; '.join(problems)}",
                    suggestion="Remove the comment, or the names in it that hide nothing or do not exist.",
                )
            )
    return findings
