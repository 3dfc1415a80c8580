"""Analytic times from hardware specs: the physics the learned model corrects.

time = max(FLOPs / peak, bytes / bandwidth) + launches x per-call overhead, on each side;
copies = bytes / (host link x achievable fraction) + latency per copy. The constants are
deliberately simple: the learned correction, trained on measured rows, absorbs what they
miss (BLAS efficiency at small sizes, caches, transcendental cost, sort algorithms ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.prediction.costs import OpCost
from gpuadvisor.prediction.hardware import CpuProfile, GpuProfile

CPU_CALL_OVERHEAD_S = 2e-6  # one NumPy call: argument parsing, dispatch, allocation
GPU_LAUNCH_S = 8e-6  # one eager-framework kernel launch, synchronised
COPY_LATENCY_S = 1.5e-5  # one host<->device copy call
PAGEABLE_LINK_FRACTION = 0.45  # pageable memory goes through a staging buffer
SINGLE_CORE_BANDWIDTH_GBS = 20.0  # what one core streams from DRAM on a typical machine


@dataclass(frozen=True)
class SideTime:
    compute_s: float
    memory_s: float
    overhead_s: float

    @property
    def total_s(self) -> float:
        return max(self.compute_s, self.memory_s) + self.overhead_s


def cpu_time(cost: OpCost, cpu: CpuProfile, dtype: str) -> SideTime:
    if cost.parallel_cpu:
        peak, bandwidth = cpu.peak_flops(dtype), cpu.mem_bandwidth_gbs * 1e9
    else:  # NumPy ufuncs, reductions, sorts, FFTs run on one core
        peak = cpu.peak_flops(dtype) / cpu.cores
        bandwidth = min(cpu.mem_bandwidth_gbs, SINGLE_CORE_BANDWIDTH_GBS) * 1e9
    return SideTime(cost.flops / peak, cost.memory_bytes / bandwidth, cost.kernels * CPU_CALL_OVERHEAD_S)


def gpu_time(cost: OpCost, gpu: GpuProfile, dtype: str) -> SideTime:
    return SideTime(
        cost.flops / gpu.peak_flops(dtype),
        cost.memory_bytes / (gpu.mem_bandwidth_gbs * 1e9),
        cost.kernels * GPU_LAUNCH_S,
    )


def copy_time(nbytes: float, gpu: GpuProfile, pinned: bool = False) -> SideTime:
    fraction = 0.8 if pinned else PAGEABLE_LINK_FRACTION
    return SideTime(0.0, nbytes / (gpu.host_link_gbs * 1e9 * fraction), COPY_LATENCY_S)


def baseline_seconds(cost: OpCost, cpu: CpuProfile, gpu: GpuProfile, dtype: str, data_on: str) -> tuple[float, float, float]:
    """The plain formula of the folk calculators: FLOPs / peak + bytes / link + fixed overhead.

    Kept as the yardstick the learned model must beat (see benchmarks/predict_accuracy.py).
    """
    cpu_s = cost.flops / cpu.peak_flops(dtype)
    gpu_s = cost.flops / gpu.peak_flops(dtype) + 1e-5
    moved = cost.input_bytes + cost.output_bytes if data_on == "host" else 0.0
    return cpu_s, gpu_s, moved / (gpu.host_link_gbs * 1e9)
