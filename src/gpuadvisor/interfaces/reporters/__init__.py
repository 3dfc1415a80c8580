"""Output formats of `check`: text, concise, json, sarif, github, html (each loaded only when chosen)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `gpuadvisor profile` renders through this package without the checker's import
    from gpuadvisor.interfaces.api import Report

_RENDERERS = {
    "text": ("text", "render_text"),
    "concise": ("text", "render_concise"),
    "json": ("json_report", "render_json"),
    "sarif": ("sarif", "render_sarif"),
    "github": ("github", "render_github"),
    "html": ("html", "render_html"),
}


def renderer(name: str) -> Callable[[Report], str]:
    module, function = _RENDERERS[name]
    return getattr(import_module(f"gpuadvisor.interfaces.reporters.{module}"), function)


#: Formats that take the terminal options (colour, the summary line).
_TERMINAL_FORMATS = frozenset({"text", "concise"})


def render_report(report: Report, name: str, *, statistics: bool = False, summary: bool = True, color: bool = False) -> str:
    """The report in format `name`; with `statistics`, counts per rule (JSON for `json`, else a table)."""
    if statistics:
        from gpuadvisor.interfaces.reporters.statistics import render_statistics

        return render_statistics(report, as_json=name == "json")
    if name in _TERMINAL_FORMATS:
        module, function = _RENDERERS[name]
        render = getattr(import_module(f"gpuadvisor.interfaces.reporters.{module}"), function)
        return str(render(report, summary=summary, color=color))
    return renderer(name)(report)
