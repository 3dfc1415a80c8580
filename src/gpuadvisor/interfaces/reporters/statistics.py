"""`check --statistics`: how many findings each rule produced (like ruff's --statistics)."""

from __future__ import annotations

import json
from collections import Counter

from gpuadvisor.analysis.rules import RULES_BY_CODE
from gpuadvisor.interfaces.api import Report


def statistics_rows(report: Report) -> list[dict[str, object]]:
    """One row per rule that fired, most frequent first."""
    counts = Counter(f.rule for f in report.findings)
    rows: list[dict[str, object]] = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = RULES_BY_CODE[code]
        rows.append({"code": code, "count": count, "category": rule.category, "severity": rule.severity.label, "summary": rule.summary})
    return rows


def render_statistics(report: Report, as_json: bool = False) -> str:
    rows = statistics_rows(report)
    if as_json:
        return json.dumps(rows, indent=2) + "\n"
    lines = [f"{row['count']:>5}  {row['code']}  [{row['severity']}]  {row['summary']}" for row in rows]
    if report.errors:
        lines.append(f"{len(report.errors):>5}  files that could not be analysed")
    return "\n".join(lines) + "\n" if lines else ""
