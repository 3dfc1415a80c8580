"""The documents in rules/: one per rule, consistent with the code, every example a test."""

from __future__ import annotations

import pytest

from gpuadvisor import check_source
from gpuadvisor.analysis.rules import ALL_RULES
from pathlib import Path

from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.rules.base import Rule
from gpuadvisor.interfaces.docsync import SECTIONS, TABLE_START, sync
from gpuadvisor.interfaces.ruledocs import all_docs

ROOT = Path(__file__).resolve().parents[1]
RULES = [pytest.param(rule, id=rule.code) for rule in ALL_RULES]


def test_one_document_per_rule() -> None:
    assert sorted(all_docs()) == sorted(rule.code for rule in ALL_RULES)


@pytest.mark.parametrize("rule", RULES)
def test_document_matches_rule(rule) -> None:
    doc = all_docs()[rule.code]
    assert doc.header["code"] == rule.code
    assert doc.header["category"] == rule.category
    assert doc.header["severity"] == rule.severity.label
    assert doc.header["summary"] == rule.summary
    for title in SECTIONS:
        assert doc.section(title), f"{rule.code} lacks section {title!r}"


@pytest.mark.parametrize("rule", RULES)
def test_bad_example_is_flagged_and_good_example_is_silent(rule) -> None:
    doc = all_docs()[rule.code]
    bad, good = doc.examples("Example"), doc.examples("Use instead")
    assert bad and good
    for code in bad:
        assert rule.code in [f.rule for f in check_source(code, "bad.py", select=rule.code)]
    for code in good:
        assert [f.rule for f in check_source(code, "good.py") if f.severity >= rule.severity] == []


def test_explain_prints_the_document(cli) -> None:
    result = cli("explain", "GPU201")
    assert result.exit_code == 0
    assert "Why is this bad?" in result.stdout and "loss.item()" in result.stdout


def test_explain_accepts_a_category(cli) -> None:
    result = cli("explain", "small-kernel-loop")
    assert result.exit_code == 0
    assert "GPU301" in result.stdout and "GPU302" in result.stdout


def test_explain_unknown_code_is_a_usage_error(cli) -> None:
    result = cli("explain", "GPU999")
    assert result.exit_code == 2


def test_rules_lists_every_rule(cli) -> None:
    result = cli("rules")
    assert result.exit_code == 0
    for rule in ALL_RULES:
        assert rule.code in result.stdout and rule.category in result.stdout


def test_headers_and_readme_table_are_generated_from_the_rule_classes() -> None:
    stale = sync(ROOT, ALL_RULES, write=False)
    assert stale == [], "run `python tools/sync_rule_docs.py` to regenerate " + ", ".join(map(str, stale))


def test_a_new_rule_gets_a_document_skeleton_and_a_table_row(tmp_path: Path) -> None:
    class NewRule(Rule):
        code = "GPU999"
        category = "new-category"
        severity = Severity.INFO
        summary = "Something new"

    (tmp_path / "rules").mkdir()
    (tmp_path / "README.md").write_text(f"intro\n{TABLE_START}\n<!-- rule-table:end -->\nrest\n")
    stale = sync(tmp_path, [NewRule], write=True)
    assert sorted(p.name for p in stale) == ["GPU999.md", "README.md"]
    document = (tmp_path / "rules" / "GPU999.md").read_text()
    assert document.startswith("code: GPU999\ncategory: new-category\nseverity: info\nsummary: Something new\nautofix: none\n\n")
    assert all(f"## {title}" in document for title in SECTIONS)
    assert "| GPU999 | new-category | info | Something new |" in (tmp_path / "README.md").read_text()
    assert sync(tmp_path, [NewRule], write=False) == []


@pytest.mark.parametrize("rule", RULES)
def test_document_says_whether_the_rule_has_an_automatic_fix(rule) -> None:
    from gpuadvisor.fixes import FIX_KINDS

    doc = all_docs()[rule.code]
    assert doc.header["autofix"] == FIX_KINDS.get(rule.code, "none")
    if rule.code in FIX_KINDS:
        assert "Automatic fix" in doc.section("Fix")
        assert ("--unsafe-fixes" in doc.section("Fix")) == ("unsafe" in FIX_KINDS[rule.code])
