"""Human output: `path:line:col: CODE [severity] message`, the source line, a fix, a summary."""

from __future__ import annotations

from collections import Counter

from gpuadvisor.analysis.findings import Finding
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


def render_text(report: Report) -> str:
    out: list[str] = []
    sources = SourceLines(report)
    for finding in report.findings:
        where = f"{finding.path}:cell {finding.cell}" if finding.cell is not None else finding.path
        out.append(
            f"{where}:{finding.line}:{finding.column + 1}: {finding.rule} "
            f"[{finding.severity.label}] {finding.message}"
        )
        out.extend(_excerpt(finding, sources.lines(finding)))
        out.append(f"  = fix: {finding.suggestion}")
        out.append("")
    for error in report.errors:
        where = f":{error.line}" if error.line else ""
        out.append(f"{error.path}{where}: error ({error.kind}): {error.message}")
    if report.errors:
        out.append("")
    severities = Counter(f.severity.label for f in report.findings)
    detail = ", ".join(_plural(n, s) for s, n in sorted(severities.items()))
    found = _plural(len(report.findings), "finding") + (f" ({detail})" if detail else "")
    summary = f"Found {found} in {_plural(report.files, 'file')} checked"
    if report.errors:
        summary += f"; {_plural(len(report.errors), 'file')} could not be analysed"
    if report.gitignored:
        summary += f"; {_plural(report.gitignored, 'file')} skipped by .gitignore"
    out.append(summary + ".")
    return "\n".join(out) + "\n"
