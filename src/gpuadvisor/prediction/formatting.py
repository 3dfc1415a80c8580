"""How times and speedups are written in messages, tables and reports."""

from __future__ import annotations


def duration(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.1f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def factor(value: float) -> str:
    return f"{value:.0f}x" if value >= 10 else f"{value:.1f}x"
