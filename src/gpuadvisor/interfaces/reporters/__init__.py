"""Output formats of `check`: text, json, sarif, github, html (each loaded only when chosen)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from gpuadvisor.interfaces.api import Report

_RENDERERS = {
    "text": ("text", "render_text"),
    "json": ("json_report", "render_json"),
    "sarif": ("sarif", "render_sarif"),
    "github": ("github", "render_github"),
    "html": ("html", "render_html"),
}


def renderer(name: str) -> Callable[[Report], str]:
    module, function = _RENDERERS[name]
    return getattr(import_module(f"gpuadvisor.interfaces.reporters.{module}"), function)
