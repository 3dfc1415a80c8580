from __future__ import annotations

from gpuadvisor._safe_io import dumps_json

from gpuadvisor.interfaces.api import Report


def render_json(report: Report) -> str:
    return dumps_json(report.to_dict(), indent=2) + "\n"
