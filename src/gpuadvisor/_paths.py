"""Where gpuadvisor keeps per-user files (XDG folders), in one place for every package."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir() -> Path:
    """Check results, the fitted model, the CPU calibration: safe to delete at any time."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpuadvisor"


def user_data_dir() -> Path:
    """Data the user made and wants to keep: their own `gpuadvisor bench` rows."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "gpuadvisor"
