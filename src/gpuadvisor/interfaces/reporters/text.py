"""Human output: `path:line:col: CODE [severity] message`, the source line, a fix, a summary."""

from __future__ import annotations

from collections import Counter

from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.interfaces.api import Report
from gpuadvisor.interfaces.reporters.source_lines import SourceLines


def _excerpt(finding: Finding, lines: list[str]) -> list[str]:
    if not 0 < finding.line <= len(lines):
        return []
    source = lines[finding.line - 1].rstrip()
    width = len(str(finding.line))
    end = finding.end_column if finding.end_line == finding.line else len(source)
    carets = "^" * max(1, end - finding.column)
    gutter = " " * width
    return [f"{gutter} |", f"{finding.line} | {source}", f"{gutter} | {' ' * finding.column}{carets}"]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


_SEVERITY_COLOR = {"error": "31", "warning": "33", "info": "36"}


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def _headline(finding: Finding, color: bool) -> str:
    """`path:line:col: CODE [severity] message`; 1-based columns, like every editor shows them."""
    where = f"{finding.path}:cell {finding.cell}" if finding.cell is not None else finding.path
    severity = finding.severity.label
    return (
        f"{_paint(where, '1', color)}:{finding.line}:{finding.column + 1}: {_paint(finding.rule, '1;31', color)} "
        f"{_paint(f'[{severity}]', _SEVERITY_COLOR.get(severity, '0'), color)} {finding.message}"
    )


def _errors(report: Report) -> list[str]:
    out = []
    for error in report.errors:
        where = f":{error.line}" if error.line else ""
        out.append(f"{error.path}{where}: error ({error.kind}): {error.message}")
    return out


def _summary(report: Report) -> str:
    severities = Counter(f.severity.label for f in report.findings)
    detail = ", ".join(_plural(n, s) for s, n in sorted(severities.items()))
    found = _plural(len(report.findings), "finding") + (f" ({detail})" if detail else "")
    summary = f"Found {found} in {_plural(report.files, 'file')} checked"
    if report.errors:
        summary += f"; {_plural(len(report.errors), 'file')} could not be analysed"
    if report.gitignored:
        summary += f"; {_plural(report.gitignored, 'file')} skipped by .gitignore"
    if report.unreferenced:
        summary += f"; {_plural(report.unreferenced, 'finding')} left out in code nothing in the project refers to"
    return summary + "."


def render_text(report: Report, *, summary: bool = True, color: bool = False) -> str:
    """Each finding with its source line and fix, the files that failed, a summary line."""
    out: list[str] = []
    sources = SourceLines(report)
    for finding in report.findings:
        out.append(_headline(finding, color))
        out.extend(_excerpt(finding, sources.lines(finding)))
        out.append(f"  = {_paint('fix', '32', color)}: {finding.suggestion}")
        out.append("")
    out.extend(_errors(report))
    if report.errors:
        out.append("")
    if summary:
        out.append(_summary(report))
    return "\n".join(out) + "\n" if out else ""


def render_concise(report: Report, *, summary: bool = True, color: bool = False) -> str:
    """One line per finding (like ruff's concise format): for grep, editors and quick looks."""
    out = [_headline(finding, color) for finding in report.findings] + _errors(report)
    if summary:
        out.append(_summary(report))
    return "\n".join(out) + "\n" if out else ""
