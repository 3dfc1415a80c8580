"""Rendering a `gpuadvisor profile` report: terminal table, JSON, HTML with bars."""

from __future__ import annotations

from dataclasses import asdict
from html import escape
from pathlib import Path

from gpuadvisor._safe_io import dumps_json
from gpuadvisor.prediction.formatting import duration, factor
from gpuadvisor.profiling.session import LineResult, ProfileReport

#: Lines shown in the terminal table; JSON and HTML hold them all.
TABLE_ROWS = 20


def _where(line: LineResult, report: ProfileReport) -> str:
    return f"{_short(line.path, report)}:{line.line}"


def _short(path: str, report: ProfileReport) -> str:
    """A path relative to the folder the command ran in (at most two levels up), else as is."""
    import os

    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return relative if relative.count(".." + os.sep) <= 2 else path


def summary_sentence(report: ProfileReport) -> str:
    if not report.lines:
        return (
            f"No array operation of known shape ran in {report.target} "
            f"({duration(report.wall_seconds)} in all): nothing to predict."
        )
    count = len(report.lines)
    lines_cpu, lines_gpu = report.lines_cpu_seconds, report.lines_gpu_seconds
    whole = report.wall_seconds / max(report.script_gpu_seconds, 1e-12)
    rest = max(report.wall_seconds - lines_cpu, 0.0)
    return (
        f"The {count} predicted line{'s' if count != 1 else ''} {'take' if count != 1 else 'takes'} {duration(lines_cpu)} on this CPU "
        f"({report.coverage:.0%} of the run, imports aside); on {report.gpu_name} ~{duration(lines_gpu)} with copies "
        f"(data kept on the GPU: {duration(report.copy_in_seconds)} to copy in what no moved line makes): "
        f"~{factor(lines_cpu / max(lines_gpu, 1e-12))} for those lines. The other {duration(rest)} (imports "
        f"{duration(report.import_seconds)}, Python, lines not predicted) is counted as it ran here: ~{factor(whole)} for the "
        f"whole run ({duration(report.wall_seconds)} -> ~{duration(report.script_gpu_seconds)})."
    )


def render_profile_text(report: ProfileReport) -> str:
    out = [f"gpuadvisor profile: {report.target} on this CPU ({report.cpu}), predicted for {report.gpu_name}", ""]
    if report.lines:
        where_w = max(len(_where(line, report)) for line in report.lines[:TABLE_ROWS])
        out.append(f"{'line':<{where_w}}  {'runs':>7}  {'CPU (measured)':>14}  {'GPU':>9}  {'+ copies':>9}  {'speedup':>7}  code")
        for line in report.lines[:TABLE_ROWS]:
            out.append(
                f"{_where(line, report):<{where_w}}  {line.hits:>7}  {duration(line.cpu_seconds):>14}  "
                f"{duration(line.gpu_seconds):>9}  {duration(line.copy_seconds):>9}  {factor(line.speedup):>7}  {line.code[:60]}"
                + ("  *" if line.basis != "model" else "")
            )
            for operation in line.operations:
                shapes = "" if line.shapes_seen == 1 else f"  (the shapes that took most time; {line.shapes_seen} seen)"
                out.append(f"{'':<{where_w}}  {'':>7}  {'':>14}  {operation.description}{shapes}")
        if len(report.lines) > TABLE_ROWS:
            out.append(f"... {len(report.lines) - TABLE_ROWS} more lines (--format json or html lists them all)")
        out.append("")
        out.append("'+ copies': moving the line's inputs in and its result back on every run, if it alone moved to the GPU.")
        if any(line.basis != "model" for line in report.lines):
            out.append("*: estimated from the measured time (work the op model does not cover; 3x either way).")
    out.append(summary_sentence(report))
    if report.unpredicted_seconds > 0:
        out.append(f"{duration(report.unpredicted_seconds)} ran in lines with no array work found (not predicted, counted at CPU time); the costliest:")
        for unpredicted in report.unpredicted_lines[:5]:
            out.append(f"  {_short(unpredicted.path, report)}:{unpredicted.line}  {unpredicted.hits} runs  {duration(unpredicted.cpu_seconds)}  {unpredicted.code[:60]}")
    if report.workers:
        out.append(f"The script started {report.workers} worker process{'es' if report.workers != 1 else ''} (multiprocessing): their work is not measured.")
    if report.other_threads:
        out.append("Code of your files also ran in other threads: only the main thread is measured.")
    if report.interrupted:
        out.append("Interrupted: the report holds what ran until Ctrl-C.")
    return "\n".join(out) + "\n"


def profile_json(report: ProfileReport) -> dict[str, object]:
    return {
        "target": report.target,
        "exit_code": report.exit_code,
        "interrupted": report.interrupted,
        "other_threads": report.other_threads,
        "workers": report.workers,
        "wall_seconds": report.wall_seconds,
        "gpu": report.gpu,
        "gpu_name": report.gpu_name,
        "cpu": report.cpu,
        "lines_cpu_seconds": report.lines_cpu_seconds,
        "lines_gpu_seconds": report.lines_gpu_seconds,
        "script_gpu_seconds": report.script_gpu_seconds,
        "import_seconds": report.import_seconds,
        "copy_in_seconds": report.copy_in_seconds,
        "unpredicted_seconds": report.unpredicted_seconds,
        "coverage": report.coverage,
        "unpredicted_lines": [asdict(unpredicted) for unpredicted in report.unpredicted_lines],
        "summary": summary_sentence(report),
        "lines": [{**asdict(line), "speedup": line.speedup} for line in report.lines],
    }


def render_profile_json(report: ProfileReport) -> str:
    return dumps_json(profile_json(report), indent=2) + "\n"


_STYLE = """
body { font-family: sans-serif; margin: 2rem; max-width: 80rem; }
table { border-collapse: collapse; } td, th { padding: .3rem .6rem; border-bottom: 1px solid #ddd; vertical-align: top; }
th[data-sort] { cursor: pointer; text-decoration: underline dotted; } td.num { text-align: right; white-space: nowrap; }
code { background: #f4f4f4; padding: 0 .2rem; } .ops { color: #555; font-size: .9em; }
pre.context { background: #f8f8f8; margin: .3rem 0; padding: .3rem; font-size: .85em; } .estimated { color: #a05a00; }
dl.totals { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; } dt { font-weight: bold; }
"""
#: Click a header to sort by it (numbers by their data-value); no library, no network.
_SORT_SCRIPT = """
document.querySelectorAll("th[data-sort]").forEach((th, column) => th.addEventListener("click", () => {
  const body = th.closest("table").tBodies[0], rows = Array.from(body.rows);
  const key = r => { const c = r.cells[th.cellIndex]; return c.dataset.value !== undefined ? parseFloat(c.dataset.value) : c.textContent; };
  const down = th.dataset.dir !== "desc"; th.dataset.dir = down ? "desc" : "asc";
  rows.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (down ? -1 : 1); });
  rows.forEach(r => body.appendChild(r));
}));
"""
#: Source lines shown around each line of the table.
CONTEXT_LINES = 2


def _context(line: LineResult, texts: dict[str, list[str]]) -> str:
    source = texts.get(line.path, [])
    first, last = max(line.line - CONTEXT_LINES, 1), min(line.line + CONTEXT_LINES, len(source))
    shown = [f"{'>' if n == line.line else ' '} {n:>4}  {source[n - 1]}" for n in range(first, last + 1)]
    return f"<details><summary>source</summary><pre class='context'>{escape(chr(10).join(shown))}</pre></details>" if shown else ""


def _whole_run_svg(report: ProfileReport, width: int = 640) -> str:
    """Two stacked bars on one linear axis in seconds: the run here, and with the predicted
    lines on the GPU (the not-predicted part kept at its CPU time)."""
    rest = max(report.wall_seconds - report.lines_cpu_seconds - report.unpredicted_seconds, 0.0)
    rows = [
        ("this CPU", [("predicted lines", report.lines_cpu_seconds, "#7f7f7f"), ("not predicted", report.unpredicted_seconds, "#d62728"), ("other", rest, "#c7c7c7")]),
        (f"{report.gpu_name}", [("predicted lines", report.lines_gpu_seconds, "#1f77b4"), ("not predicted", report.unpredicted_seconds, "#d62728"), ("other", rest, "#c7c7c7")]),
    ]
    label_w, span, top = 170, width - 200, 30
    scale = span / max(report.wall_seconds, report.script_gpu_seconds, 1e-12)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="150" font-family="sans-serif" font-size="12">']
    for index, (name, pieces) in enumerate(rows):
        y, x = top + index * 32, float(label_w)
        parts.append(f'<text x="0" y="{y + 15}">{escape(name[:24])}</text>')
        for piece, seconds, colour in pieces:
            parts.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{seconds * scale:.1f}" height="18" fill="{colour}"><title>{piece}: {duration(seconds)}</title></rect>')
            x += seconds * scale
        parts.append(f'<text x="{x + 6:.1f}" y="{y + 15}">{duration(sum(p[1] for p in pieces))}</text>')
    axis_y = top + 2 * 32 + 6
    parts.append(f'<line x1="{label_w}" y1="{axis_y}" x2="{label_w + span}" y2="{axis_y}" stroke="#333"/>')
    top_value = span / scale
    for k in range(5):
        value = top_value * k / 4
        x = label_w + value * scale
        parts.append(f'<line x1="{x:.1f}" y1="{axis_y}" x2="{x:.1f}" y2="{axis_y + 4}" stroke="#333"/>')
        parts.append(f'<text x="{x:.1f}" y="{axis_y + 17}" text-anchor="middle">{duration(value) if value else "0"}</text>')
    parts.append(f'<text x="{label_w + span / 2}" y="{axis_y + 36}" text-anchor="middle">run time (seconds, linear scale)</text>')
    legend_x = label_w
    for piece, colour in (("predicted lines", "#7f7f7f"), ("on the GPU", "#1f77b4"), ("not predicted", "#d62728"), ("imports, Python, other", "#c7c7c7")):
        parts.append(f'<rect x="{legend_x}" y="6" width="10" height="10" fill="{colour}"/><text x="{legend_x + 14}" y="15">{piece}</text>')
        legend_x += 16 + 7 * len(piece)
    parts.append("</svg>")
    return "\n".join(parts)


def render_profile_html(report: ProfileReport) -> str:
    texts = {path: text.splitlines() for path, text in ((o.path, _text_of(report, o.path)) for o in report.observed)}
    rows = []
    for line in report.lines:
        ops = "<br>".join(escape(o.description) for o in line.operations)
        mark = " <span class='estimated' title='estimated from the measured time'>(estimated)</span>" if line.basis != "model" else ""
        rows.append(
            f"<tr><td>{escape(_where(line, report))}</td>"
            f"<td><code>{escape(line.code)}</code>{mark}<div class='ops'>{ops}</div>{_context(line, texts)}</td>"
            f"<td class='num' data-value='{line.hits}'>{line.hits}</td>"
            f"<td class='num' data-value='{line.cpu_seconds}'>{duration(line.cpu_seconds)}</td>"
            f"<td class='num' data-value='{line.gpu_seconds}'>{duration(line.gpu_seconds)}</td>"
            f"<td class='num' data-value='{line.copy_seconds}'>{duration(line.copy_seconds)}</td>"
            f"<td class='num' data-value='{line.speedup}'>{factor(line.speedup)}</td></tr>"
        )
    unpredicted = "".join(
        f"<tr><td>{escape(_short(u.path, report))}:{u.line}</td><td><code>{escape(u.code)}</code></td>"
        f"<td class='num' data-value='{u.hits}'>{u.hits}</td><td class='num' data-value='{u.cpu_seconds}'>{duration(u.cpu_seconds)}</td></tr>"
        for u in report.unpredicted_lines
    )
    totals = (
        f"<dl class='totals'><dt>run time here</dt><dd>{duration(report.wall_seconds)}</dd>"
        f"<dt>predicted lines</dt><dd>{duration(report.lines_cpu_seconds)} ({report.coverage:.0%} of the run) -> "
        f"~{duration(report.lines_gpu_seconds)} on {escape(report.gpu_name)}</dd>"
        f"<dt>not predicted</dt><dd>{duration(report.unpredicted_seconds)} in lines with no array work found (kept at CPU time)</dd>"
        f"<dt>whole run on the GPU</dt><dd>~{duration(report.script_gpu_seconds)}</dd></dl>"
    )
    header = "".join(
        f"<th data-sort>{name}</th>" if sortable else f"<th>{name}</th>"
        for name, sortable in (("line", True), ("code", False), ("runs", True), ("CPU (measured)", True), ("GPU", True), ("+ copies", True), ("speedup", True))
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>gpuadvisor profile</title>"
        f"<style>{_STYLE}</style></head><body>"
        f"<h1>gpuadvisor profile: {escape(_short(report.target, report))}</h1>"
        f"<p>{escape(summary_sentence(report))}</p><h2>Whole run</h2>{totals}{_whole_run_svg(report)}"
        "<h2>Lines, by measured time</h2><p>Click a column header to sort. '+ copies': the line's inputs in and result "
        "back on every run, if it alone moved to the GPU. Estimated lines rest on their measured time (3x either way).</p>"
        f"<table><thead><tr>{header}</tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
        + (
            "<h2>Costliest lines not predicted</h2><table><thead><tr><th data-sort>line</th><th>code</th><th data-sort>runs</th>"
            f"<th data-sort>CPU (measured)</th></tr></thead><tbody>{unpredicted}</tbody></table>" if unpredicted else ""
        )
        + f"<script>{_SORT_SCRIPT}</script></body></html>\n"
    )


def _text_of(report: ProfileReport, path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


RENDERERS = {"text": render_profile_text, "json": render_profile_json, "html": render_profile_html}
