"""Predictions over a range of sizes, and where the GPU starts to win (the crossover)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.prediction.costs import OPS, op_cost
from gpuadvisor.prediction.hardware import CpuProfile, GpuProfile
from gpuadvisor.prediction.linalg import LINALG_OPS
from gpuadvisor.prediction.predictor import Prediction, Request, predict_requests

MATRIX_OPS = frozenset({"matmul", "fft2", "sparse_matmul", *LINALG_OPS})
#: Factorisations whose largest sweep sizes would take minutes on a CPU.
SLOW_FACTORISATIONS = frozenset({"svd", "eig", "eigh"})


def _template(op: str, n: int) -> list[tuple[int, ...]]:
    if op == "matmul":
        return [(n, n), (n, n)]
    if op in ("solve", "lstsq"):
        return [(n, n), (n, 1)]
    if op == "sparse_matmul":
        return [(n, n), (n, 64)]
    if op == "fft2" or op in LINALG_OPS:
        return [(n, n)]
    if op in ("add", "mul", "expr"):
        return [(n,), (n,)]
    return [(n,)]


def sizes(op: str) -> list[int]:
    if op in MATRIX_OPS:
        top = 8192 if op in SLOW_FACTORISATIONS else 32768
        return [2**k for k in range(4, 16) if 2**k <= top]
    return [4**k for k in range(2, 15)]  # 16 .. 268 million elements


@dataclass(frozen=True)
class Sweep:
    op: str
    sizes: list[int]
    predictions: list[Prediction]
    crossover: int | None  # smallest size at which the GPU wins, copies included
    crossover_compute_only: int | None

    @property
    def size_label(self) -> str:
        return "n (matrices n x n)" if self.op in MATRIX_OPS else "elements"


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
    if op not in OPS:
        raise ValueError(f"unknown op {op!r}")
    chosen = sizes(op)
    requests = []
    for n in chosen:
        shapes = _template(op, n)
        if op == "expr":
            shapes = shapes[:1]
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
