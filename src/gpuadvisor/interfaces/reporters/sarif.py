"""SARIF 2.1.0, for GitHub code scanning and other CI dashboards."""

from __future__ import annotations

import os
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from gpuadvisor._safe_io import dumps_json
from gpuadvisor._version import __version__
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.rules import ALL_RULES
from gpuadvisor.interfaces.api import Report
from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.interfaces.ruledocs import rule_doc, rule_url

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _uri(path: str) -> str:
    """An RFC 3986 URI reference: relative paths percent-encoded (`%`, `#`, `?`, spaces, line
    breaks in names), absolute paths as `file://` URIs."""
    posix = PurePath(path).as_posix()
    if os.path.isabs(path):
        return PurePath(path).as_uri()  # percent-encodes as well
    return quote(posix, safe="/")


def _location(finding: Finding) -> dict[str, Any]:
    """Where a finding is. A notebook finding counts lines within its code cell, which are not
    lines of the .ipynb file: it names the file and the cell (as a logical location) and gives no
    region, rather than pointing at unrelated JSON lines."""
    artifact = {"artifactLocation": {"uri": _uri(finding.path)}}
    if finding.cell is not None:
        return {
            "physicalLocation": artifact,
            "logicalLocations": [{"name": f"cell {finding.cell}", "kind": "module"}],
            "message": {"text": f"cell {finding.cell}, line {finding.line}, column {finding.column + 1}"},
        }
    region = {
        "startLine": finding.line,
        "startColumn": finding.column + 1,
        "endLine": finding.end_line,
        "endColumn": finding.end_column + 1,
    }
    return {"physicalLocation": {**artifact, "region": region}}


def _rules() -> list[dict[str, Any]]:
    rules = []
    for rule in ALL_RULES:
        doc = rule_doc(rule.code)
        why = doc.section("Why is this bad?") if doc else ""
        fix = doc.section("Fix") if doc else ""
        help_text = "\n\n".join(part for part in (why, fix) if part) or rule.summary
        rules.append(
            {
                "id": rule.code,
                "name": rule.category,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": why or rule.summary},
                "help": {"text": help_text, "markdown": doc.body if doc else rule.summary},
                "helpUri": rule_url(rule.code),
                "defaultConfiguration": {"level": _LEVEL[rule.severity]},
                "properties": {"category": rule.category, "tags": ["performance", "gpu"]},
            }
        )
    return rules


def render_sarif(report: Report) -> str:
    index = {rule.code: i for i, rule in enumerate(ALL_RULES)}
    results = [
        {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": _LEVEL[f.severity],
            "message": {"text": f"{f.message}. Fix: {f.suggestion} ({rule_url(f.rule)})"},
            "locations": [_location(f)],
            **({"properties": {"cell": f.cell, "cellLine": f.line}} if f.cell is not None else {}),
        }
        for f in report.findings
    ]
    notifications = [
        {
            "level": "error",
            "message": {"text": f"{e.path}: {e.message}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(e.path)}}}],
            "descriptor": {"id": e.kind},
        }
        for e in report.errors
    ]
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gpuadvisor",
                        "version": __version__,
                        "informationUri": "https://pypi.org/project/gpuadvisor/",
                        "rules": _rules(),
                    }
                },
                "results": results,
                "invocations": [
                    {"executionSuccessful": not report.errors, "toolExecutionNotifications": notifications}
                ],
            }
        ],
    }
    return dumps_json(document, indent=2) + "\n"
