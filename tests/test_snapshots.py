"""What users read, pinned in full: every INVALID case's finding and the examples in every format.

The snapshots live in `tests/__snapshots__/` and are reviewed in diffs like code. A change to a
message, a range or a fix shows up there; accept it on purpose with
`python -m pytest tests/test_snapshots.py --snapshot-update` and read the diff before committing.
Predictions are made for a fixed CPU and GPU, so the numbers are the same on every machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuadvisor import check_paths, check_source
from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.analysis.rules import ALL_RULES

REPO = Path(__file__).resolve().parent.parent
HARDWARE = ("--gpu", "h100-sxm", "--cpu", "laptop")
CASES = [pytest.param(rule, case, id=f"{rule.code}-invalid-{i}") for rule in ALL_RULES for i, case in enumerate(rule.INVALID)]


def rendered(finding: Finding) -> str:
    """One finding as a reader meets it: 1-based range, rule, severity, message and fix."""
    cell = f"#cell{finding.cell}" if finding.cell is not None else ""
    where = f"{finding.path}{cell}:{finding.line}:{finding.column + 1}-{finding.end_line}:{finding.end_column + 1}"
    return f"{where} {finding.rule} [{finding.severity.label}] {finding.message}\n    fix: {finding.suggestion}"


@pytest.mark.parametrize(("rule", "case"), CASES)
def test_every_invalid_case_renders_as_pinned(rule, case, snapshot) -> None:
    findings = check_source(case.source, "case.py", select=rule.code, gpu="h100-sxm", cpu="laptop")
    assert [rendered(f) for f in findings] == snapshot


def test_the_examples_folder_gives_exactly_these_findings(monkeypatch: pytest.MonkeyPatch, snapshot) -> None:
    monkeypatch.chdir(REPO)
    report = check_paths(["examples"], gpu="h100-sxm", cpu="laptop")
    assert report.errors == []
    assert [rendered(f) for f in report.findings] == snapshot


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github", "html"])
def test_the_examples_folder_in_each_output_format(cli, monkeypatch: pytest.MonkeyPatch, output_format: str, snapshot) -> None:
    monkeypatch.chdir(REPO)
    result = cli("check", "examples", "--no-config", "--no-cache", "--format", output_format, *HARDWARE)
    assert result.exit_code == 1
    output = json.loads(result.stdout) if output_format in ("json", "sarif") else result.stdout
    assert output == snapshot
