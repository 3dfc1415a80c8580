"""Rendering a `gpuadvisor profile` report: terminal table, JSON, HTML with bars."""

from __future__ import annotations

from dataclasses import asdict
from html import escape

from gpuadvisor._safe_io import dumps_json
from gpuadvisor.interfaces.charts import bar_chart_svg
from gpuadvisor.prediction.formatting import duration, factor
from gpuadvisor.profiling.session import LineResult, ProfileReport

#: Lines shown in the terminal table; JSON and HTML hold them all.
TABLE_ROWS = 20


def _where(line: LineResult, report: ProfileReport) -> str:
    return f"{_short(line.path, report)}:{line.line}"


def _short(path: str, report: ProfileReport) -> str:
    from pathlib import Path

    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


def summary_sentence(report: ProfileReport) -> str:
    if not report.lines:
        return (
            f"No array operation of known shape ran in {report.target} "
            f"({duration(report.wall_seconds)} in all): nothing to predict."
        )
    count = len(report.lines)
    lines_cpu, lines_gpu = report.lines_cpu_seconds, report.lines_gpu_seconds
    whole = report.wall_seconds / max(report.script_gpu_seconds, 1e-12)
    return (
        f"The {count} array line{'s' if count != 1 else ''} that ran {'take' if count != 1 else 'takes'} {duration(lines_cpu)} on this CPU; "
        f"on {report.gpu_name} ~{duration(lines_gpu)} with copies (data kept on the GPU): "
        f"~{factor(lines_cpu / max(lines_gpu, 1e-12))} for those lines, ~{factor(whole)} for the whole run "
        f"({duration(report.wall_seconds)} -> ~{duration(report.script_gpu_seconds)})."
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
            )
            for operation in line.operations:
                shapes = "" if line.shapes_seen == 1 else f"  (the shapes that took most time; {line.shapes_seen} seen)"
                out.append(f"{'':<{where_w}}  {'':>7}  {'':>14}  {operation.description}{shapes}")
        if len(report.lines) > TABLE_ROWS:
            out.append(f"... {len(report.lines) - TABLE_ROWS} more lines (--format json or html lists them all)")
        out.append("")
        out.append("'+ copies': moving the line's inputs in and its result back on every run, if it alone moved to the GPU.")
    out.append(summary_sentence(report))
    if report.unpredicted_seconds > 0:
        out.append(f"{duration(report.unpredicted_seconds)} ran in watched lines with no array operation of known shape (not predicted).")
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
        "wall_seconds": report.wall_seconds,
        "gpu": report.gpu,
        "gpu_name": report.gpu_name,
        "cpu": report.cpu,
        "lines_cpu_seconds": report.lines_cpu_seconds,
        "lines_gpu_seconds": report.lines_gpu_seconds,
        "script_gpu_seconds": report.script_gpu_seconds,
        "unpredicted_seconds": report.unpredicted_seconds,
        "summary": summary_sentence(report),
        "lines": [{**asdict(line), "speedup": line.speedup} for line in report.lines],
    }


def render_profile_json(report: ProfileReport) -> str:
    return dumps_json(profile_json(report), indent=2) + "\n"


_STYLE = """
body { font-family: sans-serif; margin: 2rem; max-width: 70rem; }
table { border-collapse: collapse; } td, th { padding: .3rem .6rem; border-bottom: 1px solid #ddd; vertical-align: top; }
code { background: #f4f4f4; padding: 0 .2rem; } .ops { color: #555; font-size: .9em; }
"""


def render_profile_html(report: ProfileReport) -> str:
    rows = []
    for line in report.lines:
        ops = "<br>".join(escape(o.description) for o in line.operations)
        bars = bar_chart_svg([("CPU", line.cpu_seconds), ("GPU", line.gpu_seconds), ("copies", line.copy_seconds)], width=360)
        rows.append(
            f"<tr><td>{escape(_where(line, report))}</td><td><code>{escape(line.code)}</code><div class='ops'>{ops}</div></td>"
            f"<td>{line.hits}</td><td>{bars}</td><td>{factor(line.speedup)}</td></tr>"
        )
    whole = bar_chart_svg(
        [("CPU", report.wall_seconds), ("GPU + copies", report.script_gpu_seconds)], width=560
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>gpuadvisor profile</title>"
        f"<style>{_STYLE}</style></head><body>"
        f"<h1>gpuadvisor profile: {escape(report.target)}</h1>"
        f"<p>{escape(summary_sentence(report))}</p><h2>Whole run</h2>{whole}"
        "<h2>Lines, by measured time</h2><table><tr><th>line</th><th>code</th><th>runs</th><th>time</th><th>speedup</th></tr>"
        + "".join(rows)
        + "</table></body></html>\n"
    )


RENDERERS = {"text": render_profile_text, "json": render_profile_json, "html": render_profile_html}
