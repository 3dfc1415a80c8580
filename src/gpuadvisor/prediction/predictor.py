"""`predict()`: CPU time, GPU time, copy time and speedup for one operation, with an interval."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from gpuadvisor.prediction.costs import OpCost, op_cost
from gpuadvisor.prediction.hardware import CpuProfile, GpuProfile, resolve_cpu, resolve_gpu
from gpuadvisor.prediction.model import CorrectionModel, load_model
from gpuadvisor.prediction.libraries import LIBRARIES, cpu_time, gpu_floor_s, gpu_time
from gpuadvisor.prediction.result import Prediction
from gpuadvisor.prediction.roofline import SideTime, copy_time

DEFAULT_GPU = "h100-sxm"
#: Speedup (copies included) from which moving the work to the GPU is recommended.
WORTH_IT = 3.0

_model: CorrectionModel | None = None


def model() -> CorrectionModel:
    global _model
    if _model is None:
        _model = load_model()
    return _model


def with_measured_cpu(prediction: Prediction, cpu_seconds: float) -> Prediction:
    """The prediction with its CPU side replaced by a measured time (`profile` measured the
    line): speedups, their range and the advice follow; the CPU side is no longer a model's."""
    speedup = cpu_seconds / max(prediction.gpu_seconds + prediction.transfer_seconds, 1e-12)
    ratio = speedup / max(prediction.speedup, 1e-12)
    compute_only = cpu_seconds / max(prediction.gpu_seconds, 1e-12)
    return replace(
        prediction, cpu_seconds=cpu_seconds, speedup=speedup, speedup_compute_only=compute_only,
        interval=[bound * ratio for bound in prediction.interval],
        recommendation=_recommend(speedup, compute_only, prediction.data_on),
        basis={**prediction.basis, "cpu": "measured"},
    )


def _recommend(speedup: float, compute_only: float, data_on: str) -> str:
    if speedup >= WORTH_IT:
        return f"Worth moving to the GPU: about {speedup:.0f}x faster" + (", copies included." if data_on == "host" else ".")
    if compute_only >= WORTH_IT and data_on == "host":
        return (
            f"The GPU computes this {compute_only:.0f}x faster, but copying the data there and back costs "
            "more than it saves: worth it only if the data already lives on the GPU (keep it there)."
        )
    if speedup >= 1.2:
        return f"Modest gain (about {speedup:.1f}x): worth it only as part of larger GPU-resident work."
    return "Stay on the CPU: at this size launch and copy overheads outweigh the GPU's speed."


@dataclass(frozen=True)
class Request:
    """One operation to predict, with its hardware already resolved."""

    op: str
    cost: OpCost
    shapes: list[tuple[int, ...]]
    dtype: str
    gpu: GpuProfile
    cpu: CpuProfile
    data_on: str = "host"
    #: With data on the host: bytes that must go to the GPU and come back, when the caller
    #: knows better than "all inputs, the whole result" (inputs made from nothing need no copy).
    copy_in_bytes: float | None = None
    copy_out_bytes: float | None = None
    library: str = "numpy"


def _copies(request: Request) -> list[tuple[str, SideTime]]:
    if request.data_on == "device":
        return []
    to_gpu = request.cost.input_bytes if request.copy_in_bytes is None else request.copy_in_bytes
    back = request.cost.output_bytes if request.copy_out_bytes is None else request.copy_out_bytes
    moves = (("h2d", to_gpu), ("d2h", back))
    return [(direction, copy_time(nbytes, request.gpu)) for direction, nbytes in moves if nbytes > 0]


def _corrections(fitted: CorrectionModel, side: str, items: list[tuple[str, str, SideTime]], libraries: list[str]) -> np.ndarray:
    """log10 corrections of the analytic times, one matrix product for the whole batch."""
    if not items:
        return np.zeros(0)
    model = fitted.sides[side]
    rows = np.array([model.row(op, dtype, analytic, lib) for (op, dtype, analytic), lib in zip(items, libraries)])
    return rows @ model.coef


def _basis(fitted: CorrectionModel, side: str, op: str, library: str) -> str:
    """What one side's time rests on. Never "measured": nothing is measured on this machine
    when predicting (the rows come from the machines in the training data)."""
    if fitted.sides[side].measured(op, library):
        return "model fitted to measured runs of this op (training data, not this machine)"
    return f"analytic model only (no measured {side.upper()} runs of this op yet)"


def predict_requests(requests: list[Request]) -> list[Prediction]:
    """Many predictions with one matrix product per side (the fast path for `check`)."""
    for request in requests:
        if request.data_on not in ("host", "device"):
            raise ValueError("data_on must be 'host' or 'device'")
        if request.library not in LIBRARIES:
            raise ValueError(f"library must be one of {', '.join(LIBRARIES)}")
    fitted = model()
    libraries = [r.library for r in requests]
    cpu_items = [(r.op, r.dtype, cpu_time(r.cost, r.cpu, r.dtype, r.library)) for r in requests]
    gpu_items = [(r.op, r.dtype, gpu_time(r.cost, r.gpu, r.dtype, r.library)) for r in requests]
    copy_lists = [_copies(r) for r in requests]
    copy_items = [(direction, r.dtype, t) for r, moves in zip(requests, copy_lists) for direction, t in moves]
    copy_libraries = [r.library for r, moves in zip(requests, copy_lists) for _ in moves]
    cpu_fix = _corrections(fitted, "cpu", cpu_items, libraries)
    gpu_fix = _corrections(fitted, "gpu", gpu_items, libraries)
    copy_fix = _corrections(fitted, "copy", copy_items, copy_libraries)
    results, next_copy = [], 0
    for index, request in enumerate(requests):
        cpu_s = cpu_items[index][2].total_s * 10 ** float(cpu_fix[index])
        gpu_analytic = gpu_items[index][2]
        gpu_s = max(gpu_analytic.total_s * 10 ** float(gpu_fix[index]), gpu_floor_s(request.cost, request.gpu, request.dtype, gpu_analytic))
        copies, copy_lo, copy_hi = 0.0, 0.0, 0.0
        for direction, analytic in copy_lists[index]:
            copies += analytic.total_s * 10 ** float(copy_fix[next_copy])
            low, high = fitted.sides["copy"].interval(direction, request.library)
            copy_lo, copy_hi = min(copy_lo, low), max(copy_hi, high)
            next_copy += 1
        results.append(_prediction(request, fitted, cpu_s, gpu_s, copies, copy_lo, copy_hi))
    return results


def _prediction(
    request: Request, fitted: CorrectionModel, cpu_s: float, gpu_s: float, copies: float, copy_lo: float, copy_hi: float
) -> Prediction:
    op = request.op
    cpu_lo, cpu_hi = fitted.sides["cpu"].interval(op, request.library)
    gpu_lo, gpu_hi = fitted.sides["gpu"].interval(op, request.library)
    speedup = cpu_s / (gpu_s + copies)
    # Spreads in log10 combine like independent errors.
    below = math.sqrt(cpu_lo**2 + max(gpu_hi, copy_hi) ** 2)
    above = math.sqrt(cpu_hi**2 + min(gpu_lo, copy_lo) ** 2)
    basis = {side: _basis(fitted, side, op, request.library) for side in ("cpu", "gpu")}
    return Prediction(
        op=op,
        shapes=[list(s) for s in request.shapes],
        dtype=request.dtype,
        gpu=request.gpu.key,
        cpu=request.cpu.key,
        data_on=request.data_on,
        cpu_seconds=cpu_s,
        gpu_seconds=gpu_s,
        transfer_seconds=copies,
        speedup=speedup,
        speedup_compute_only=cpu_s / gpu_s,
        interval=[speedup / 10**below, speedup * 10**above],
        recommendation=_recommend(speedup, cpu_s / gpu_s, request.data_on),
        gpu_name=request.gpu.name,
        cpu_name=request.cpu.name,
        library=request.library,
        basis=basis,
    )


def predict(
    op: str,
    shapes: list[tuple[int, ...]] | list[list[int]],
    dtype: str = "float32",
    gpu: str | GpuProfile = DEFAULT_GPU,
    cpu: str | CpuProfile | None = None,
    data_on: str = "host",
    *,
    expression: str | None = None,
    axis: int | None = None,
    density: float = 0.01,
    library: str = "numpy",
    tf32: bool = False,
    full_matrices: bool = True,
    compute_uv: bool = True,
) -> Prediction:
    """Predict CPU vs GPU time for `op` on arrays of `shapes` (see `gpuadvisor predict --list-ops`).

    `library` picks the baseline: "numpy" compares NumPy/SciPy on the CPU with CuPy, "torch"
    compares PyTorch on the CPU with PyTorch on CUDA. `tf32`: float32 matrix products run on
    TF32 tensor cores (PyTorch's `allow_tf32 = True` or float32 matmul precision "high").
    `full_matrices` and `compute_uv` as numpy.linalg.svd (True by default, as there).
    """
    shape_tuples = [tuple(int(d) for d in s) for s in shapes]
    gpu_profile = gpu if isinstance(gpu, GpuProfile) else resolve_gpu(gpu)
    cpu_profile = cpu if isinstance(cpu, CpuProfile) else resolve_cpu(cpu)
    cost = op_cost(op, shape_tuples, dtype, expression=expression, axis=axis, density=density, tf32=tf32,
                   full_matrices=full_matrices, compute_uv=compute_uv)
    request = Request(op, cost, shape_tuples, dtype, gpu_profile, cpu_profile, data_on, library=library)
    return predict_requests([request])[0]
