"""Errors of the prediction package, importable without loading any of it."""

from __future__ import annotations

from gpuadvisor.ops.cost import CostError

__all__ = ["CostError", "HardwareError", "TrainingStackMissing"]


class HardwareError(ValueError):
    """An unknown profile name or an unusable profile file."""


class TrainingStackMissing(ImportError):
    """Fitting the model needs scikit-learn, which only the `train` extra installs."""
