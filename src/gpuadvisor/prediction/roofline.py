"""Analytic times from hardware specs: the physics the learned model corrects.

time = max(compute, memory) + page faults of fresh results + the kernels' own latency on the GPU + the per-call
overhead on each side that the work does not hide (libraries.py says what each library makes of an op); copies = bytes / (host link x achievable fraction) + latency per
copy. The learned correction, trained on measured rows, absorbs what these miss.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.prediction.costs import OpCost
from gpuadvisor.prediction.hardware import CpuProfile, GpuProfile

COPY_LATENCY_S = 1.5e-5  # one host<->device copy call
PAGEABLE_LINK_FRACTION = 0.45  # pageable memory goes through a staging buffer


@dataclass(frozen=True)
class SideTime:
    compute_s: float
    memory_s: float
    overhead_s: float
    #: The op's inner length (transform length, factorised columns, inner product dimension)
    #: is a power of two: FFTs run their fastest radix-2 path, while LAPACK factorisations hit
    #: cache-set conflicts (a 1024x1024 SVD takes 2.5x the time of a 1000x1000 one here).
    power_of_two: bool = False
    #: Faulting in freshly mapped memory for large results (CPU only; see libraries.py): it
    #: happens on first touch, before the op can stream through the page, so it adds.
    fresh_pages_s: float = 0.0
    #: GPU only: what each kernel takes on the device however little it does (it starts, reaches memory and
    #: drains its last wave). Part of a kernel's time as CUDA events measure it, unlike the host's launches.
    latency_s: float = 0.0

    @property
    def total_s(self) -> float:
        return max(self.compute_s, self.memory_s) + self.fresh_pages_s + self.latency_s + self.overhead_s


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
