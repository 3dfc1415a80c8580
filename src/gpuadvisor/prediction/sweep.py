"""Predictions over a range of sizes, and where the GPU starts to win (the crossover)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.ops.registry import OPS
from gpuadvisor.prediction.costs import op_cost
from gpuadvisor.prediction.hardware import CpuProfile, GpuProfile
from gpuadvisor.prediction.predictor import Prediction, Request, predict_requests


@dataclass(frozen=True)
class Sweep:
    op: str
    sizes: list[int]
    predictions: list[Prediction]
    crossover: int | None  # smallest size at which the GPU wins, copies included
    crossover_compute_only: int | None

    @property
    def size_label(self) -> str:
        return OPS[self.op].sweep.label


def _first_win(sizes_: list[int], speedups: list[float]) -> int | None:
    for index, speedup in enumerate(speedups):
        if speedup >= 1 and all(later >= 1 for later in speedups[index:]):
            return sizes_[index]
    return None


def sweep(
    op: str,
    dtype: str,
    gpu: GpuProfile,
    cpu: CpuProfile,
    data_on: str = "host",
    expression: str | None = None,
    density: float = 0.01,
) -> Sweep:
    entry = OPS.get(op)
    if entry is None:
        raise ValueError(f"unknown op {op!r}")
    chosen = list(entry.sweep.sizes)
    requests = []
    for n in chosen:
        shapes = entry.sweep.shapes(n)
        cost = op_cost(op, shapes, dtype, expression=expression, density=density)
        requests.append(Request(op, cost, shapes, dtype, gpu, cpu, data_on))
    predictions = predict_requests(requests)
    return Sweep(
        op,
        chosen,
        predictions,
        _first_win(chosen, [p.speedup for p in predictions]),
        _first_win(chosen, [p.speedup_compute_only for p in predictions]),
    )
