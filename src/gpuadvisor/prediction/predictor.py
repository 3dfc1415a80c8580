"""`predict()`: CPU time, GPU time, copy time and speedup for one operation, with an interval."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from gpuadvisor.prediction.costs import OpCost, op_cost
from gpuadvisor.prediction.hardware import CpuProfile, GpuProfile, resolve_cpu, resolve_gpu
from gpuadvisor.prediction.model import CorrectionModel, SideModel, feature_row, load_model
from gpuadvisor.prediction.roofline import SideTime, copy_time, cpu_time, gpu_time

DEFAULT_GPU = "h100-sxm"
#: Speedup (copies included) from which moving the work to the GPU is recommended.
WORTH_IT = 3.0

_model: CorrectionModel | None = None


def model() -> CorrectionModel:
    global _model
    if _model is None:
        _model = load_model()
    return _model


@dataclass(frozen=True)
class Prediction:
    op: str
    shapes: list[list[int]]
    dtype: str
    gpu: str
    cpu: str
    data_on: str
    cpu_seconds: float
    gpu_seconds: float
    transfer_seconds: float
    speedup: float
    speedup_compute_only: float
    interval: list[float]
    recommendation: str
    gpu_name: str = ""
    cpu_name: str = ""
    #: Which sides rest on measurements of this op and which on the analytic model alone.
    basis: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _corrected(side: SideModel, side_name: str, op: str, dtype: str, analytic: SideTime) -> tuple[float, float, float]:
    """(median seconds, log10 spread below, log10 spread above)."""
    log_fix = float(side.correction(feature_row(side_name, op, dtype, analytic)))
    low, high = side.interval(op)
    return analytic.total_s * 10**log_fix, low, high


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


def predict_cost(
    op: str,
    cost: OpCost,
    shapes: list[tuple[int, ...]],
    dtype: str,
    gpu: GpuProfile,
    cpu: CpuProfile,
    data_on: str = "host",
) -> Prediction:
    if data_on not in ("host", "device"):
        raise ValueError("data_on must be 'host' or 'device'")
    fitted = model()
    cpu_s, cpu_lo, cpu_hi = _corrected(fitted.sides["cpu"], "cpu", op, dtype, cpu_time(cost, cpu, dtype))
    gpu_s, gpu_lo, gpu_hi = _corrected(fitted.sides["gpu"], "gpu", op, dtype, gpu_time(cost, gpu, dtype))
    copies = 0.0
    copy_lo = copy_hi = 0.0
    if data_on == "host":
        copy_side = fitted.sides["copy"]
        for direction, nbytes in (("h2d", cost.input_bytes), ("d2h", cost.output_bytes)):
            if nbytes > 0:
                seconds, low, high = _corrected(copy_side, "copy", direction, dtype, copy_time(nbytes, gpu))
                copies += seconds
                copy_lo, copy_hi = min(copy_lo, low), max(copy_hi, high)
    gpu_total = gpu_s + copies
    speedup = cpu_s / gpu_total
    # Spreads in log10 combine like independent errors.
    below = math.sqrt(cpu_lo**2 + max(gpu_hi, copy_hi) ** 2)
    above = math.sqrt(cpu_hi**2 + min(gpu_lo, copy_lo) ** 2)
    basis = {
        "cpu": "measured" if fitted.sides["cpu"].measured(op) else "analytic only",
        "gpu": "measured" if fitted.sides["gpu"].measured(op) else "analytic only (no GPU rows for this op yet)",
    }
    return Prediction(
        op=op,
        shapes=[list(s) for s in shapes],
        dtype=dtype,
        gpu=gpu.key,
        cpu=cpu.key,
        data_on=data_on,
        cpu_seconds=cpu_s,
        gpu_seconds=gpu_s,
        transfer_seconds=copies,
        speedup=speedup,
        speedup_compute_only=cpu_s / gpu_s,
        interval=[speedup / 10**below, speedup * 10**above],
        recommendation=_recommend(speedup, cpu_s / gpu_s, data_on),
        gpu_name=gpu.name,
        cpu_name=cpu.name,
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
) -> Prediction:
    """Predict CPU vs GPU time for `op` on arrays of `shapes` (see `gpuadvisor predict --list-ops`)."""
    shape_tuples = [tuple(int(d) for d in s) for s in shapes]
    gpu_profile = gpu if isinstance(gpu, GpuProfile) else resolve_gpu(gpu)
    cpu_profile = cpu if isinstance(cpu, CpuProfile) else resolve_cpu(cpu)
    cost = op_cost(op, shape_tuples, dtype, expression=expression, axis=axis, density=density)
    return predict_cost(op, cost, shape_tuples, dtype, gpu_profile, cpu_profile, data_on)
