"""A self-contained HTML report (no network, no scripts): findings by file, and for every
predicted operation a CPU-vs-GPU bar chart."""

from __future__ import annotations

from collections import Counter, defaultdict
from html import escape

from gpuadvisor._version import __version__
from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.analysis.rules import RULES_BY_CODE
from gpuadvisor.interfaces.api import Report
from gpuadvisor.interfaces.charts import bar_chart_svg
from gpuadvisor.interfaces.reporters.source_lines import SourceLines

_STYLE = """
body { font-family: -apple-system, 'Segoe UI', Roboto, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.1rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
.summary span { display: inline-block; margin-right: 1.2rem; }
.finding { border-left: 4px solid #999; padding: .5rem .8rem; margin: .8rem 0; background: #fafafa; }
.finding.error { border-color: #d62728; } .finding.warning { border-color: #ff9f1a; } .finding.info { border-color: #1f77b4; }
.where { font-family: monospace; color: #555; } .rule { font-weight: bold; }
pre { background: #f0f0f0; padding: .4rem .6rem; overflow-x: auto; margin: .4rem 0; }
.fix { color: #2a6f2a; } .chart { margin-top: .4rem; } .errors li { font-family: monospace; }
"""


def _finding_html(finding: Finding, sources: SourceLines) -> str:
    rule = RULES_BY_CODE.get(finding.rule)
    where = f"cell {finding.cell}, line {finding.line}" if finding.cell else f"line {finding.line}"
    parts = [
        f'<div class="finding {finding.severity.label}">',
        f'<div><span class="where">{where}:{finding.column + 1}</span> '
        f'<span class="rule">{finding.rule}</span> {escape(finding.category)} [{finding.severity.label}]</div>',
        f"<div>{escape(finding.message)}</div>",
    ]
    code = sources.line(finding)
    if code.strip():
        parts.append(f"<pre>{escape(code.rstrip())}</pre>")
    parts.append(f'<div class="fix">Fix: {escape(finding.suggestion)}</div>')
    prediction = finding.prediction
    if prediction is not None:
        bars = [("CPU", prediction.cpu_seconds), ("GPU", prediction.gpu_seconds)]
        if prediction.transfer_seconds > 0:
            bars.append(("GPU + copies", prediction.gpu_seconds + prediction.transfer_seconds))
        parts.append(f'<div class="chart">{bar_chart_svg(bars)}</div>')
        low, high = prediction.interval
        parts.append(
            f"<div><small>{escape(prediction.cpu_name)} vs {escape(prediction.gpu_name)}; "
            f"speedup {prediction.speedup:.3g}x (range {low:.3g}x to {high:.3g}x)</small></div>"
        )
    if rule is not None:
        parts.append(f"<div><small>{escape(rule.summary)} (gpuadvisor explain {rule.code})</small></div>")
    parts.append("</div>")
    return "\n".join(parts)


def render_html(report: Report) -> str:
    sources = SourceLines(report)
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in report.findings:
        by_file[finding.path].append(finding)
    severities = Counter(f.severity.label for f in report.findings)
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>gpuadvisor report</title>',
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>gpuadvisor report <small>(version {__version__})</small></h1>",
        '<div class="summary">',
        f"<span>{report.files} files checked</span><span>{len(report.findings)} findings</span>",
        "".join(f"<span>{n} {escape(s)}</span>" for s, n in sorted(severities.items())),
        f"<span>{len(report.errors)} files not analysed</span></div>",
    ]
    for path, findings in sorted(by_file.items()):
        body.append(f"<h2>{escape(path)}</h2>")
        body.extend(_finding_html(f, sources) for f in findings)
    if report.errors:
        body.append('<h2>Files that could not be analysed</h2><ul class="errors">')
        body.extend(f"<li>{escape(e.path)}: {escape(e.kind)}: {escape(e.message)}</li>" for e in report.errors)
        body.append("</ul>")
    if not report.findings and not report.errors:
        body.append("<p>No findings.</p>")
    body.append("</body></html>")
    return "\n".join(body) + "\n"
