"""Output formats of `check`: text, json, sarif, github, html."""

from __future__ import annotations

from collections.abc import Callable

from gpuadvisor.interfaces.api import Report
from gpuadvisor.interfaces.reporters.github import render_github
from gpuadvisor.interfaces.reporters.html import render_html
from gpuadvisor.interfaces.reporters.json_report import render_json
from gpuadvisor.interfaces.reporters.sarif import render_sarif
from gpuadvisor.interfaces.reporters.text import render_text

RENDERERS: dict[str, Callable[[Report], str]] = {
    "text": render_text,
    "json": render_json,
    "sarif": render_sarif,
    "github": render_github,
    "html": render_html,
}
