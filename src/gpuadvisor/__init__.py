"""gpuadvisor: will this array code be faster on a GPU, and what makes GPU Python slow?

The public API (`check_source`, `check_paths`, `predict`) is loaded lazily so that `import gpuadvisor`
stays cheap and pulls in neither scikit-learn nor any GPU framework.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuadvisor._version import __version__

if TYPE_CHECKING:
    from gpuadvisor.interfaces.api import Finding, Report, check_paths, check_source
    from gpuadvisor.fixes import fix_text
    from gpuadvisor.prediction.predictor import Prediction, predict

__all__ = ["__version__", "check_source", "check_paths", "fix_text", "predict", "Finding", "Report", "Prediction"]


def __getattr__(name: str) -> Any:
    if name in ("check_source", "check_paths", "Finding", "Report"):
        from gpuadvisor.interfaces import api

        return getattr(api, name)
    if name == "fix_text":
        from gpuadvisor.fixes import fix_text

        return fix_text
    if name in ("predict", "Prediction"):
        from gpuadvisor.prediction import predictor

        return getattr(predictor, name)
    raise AttributeError(f"module 'gpuadvisor' has no attribute {name!r}")
