"""Errors of the prediction package, importable without loading any of it."""

from __future__ import annotations


class HardwareError(ValueError):
    """An unknown profile name or an unusable profile file."""


class CostError(ValueError):
    """The op, shapes or expression do not describe a computation we can cost."""


class TrainingStackMissing(ImportError):
    """Fitting the model needs scikit-learn, which only the `train` extra installs."""
