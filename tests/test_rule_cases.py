"""Every rule's own VALID/INVALID cases, collected from the registry (Fixit style)."""

from __future__ import annotations

import pytest

from gpuadvisor import check_source
from gpuadvisor.analysis.rules import ALL_RULES

VALID = [pytest.param(rule, case, id=f"{rule.code}-valid-{i}") for rule in ALL_RULES for i, case in enumerate(rule.VALID)]
#: Speedup cases are predicted for a fixed CPU, so they mean the same on every machine that runs them.
CASE_CPU = "laptop"
INVALID = [
    pytest.param(rule, case, id=f"{rule.code}-invalid-{i}") for rule in ALL_RULES for i, case in enumerate(rule.INVALID)
]


def test_every_rule_has_cases() -> None:
    for rule in ALL_RULES:
        assert rule.VALID and rule.INVALID, f"{rule.code} needs both valid and invalid cases"


@pytest.mark.parametrize(("rule", "case"), VALID)
def test_valid_case_is_silent(rule, case) -> None:
    findings = check_source(case.source, "case.py", select=rule.code, cpu=CASE_CPU)
    assert findings == [], [f.message for f in findings]


@pytest.mark.parametrize(("rule", "case"), INVALID)
def test_invalid_case_is_flagged(rule, case) -> None:
    findings = check_source(case.source, "case.py", select=rule.code, cpu=CASE_CPU)
    assert len(findings) == 1, [f.message for f in findings]
    finding = findings[0]
    assert (finding.rule, finding.category, finding.severity) == (rule.code, rule.category, case.severity or rule.severity)
    if case.line is not None:
        assert finding.line == case.line
    if case.message is not None:
        assert case.message in finding.message, finding.message
    assert finding.message and finding.suggestion
