"""GitHub Actions workflow commands: findings appear as annotations on the pull request."""

from __future__ import annotations

from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.interfaces.api import Report
from gpuadvisor.interfaces.ruledocs import rule_url

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report) -> str:
    out = []
    for f in report.findings:
        if f.cell is None:
            where = f"line={f.line},endLine={f.end_line},col={f.column + 1},endColumn={f.end_column + 1},"
            title = f"{f.rule} ({f.category})"
        else:  # lines within a notebook cell are not lines of the .ipynb file: named, not pointed at
            where, title = "", f"{f.rule} ({f.category}) in cell {f.cell}, line {f.line}"
        props = f"file={_property(f.path)},{where}title={_property(title)}"
        message = f"{f.message}. Fix: {f.suggestion} See {rule_url(f.rule)}"
        out.append(f"::{_LEVEL[f.severity]} {props}::{_data(message)}")
    for e in report.errors:
        line = f",line={e.line}" if e.line else ""
        out.append(f"::error file={_property(e.path)}{line},title=gpuadvisor ({e.kind})::{_data(e.message)}")
    return "\n".join(out) + ("\n" if out else "")
