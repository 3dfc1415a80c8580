"""What the libraries really do with an operation: the analytic time on each side, per library.

A plain roofline (FLOPs / peak, bytes / bandwidth) is wrong in shape for much of what users
run: cuSOLVER's SVD is latency-bound, a NumPy ufunc uses one core while PyTorch's uses all of
them, cuBLAS pads small products to whole tiles. This module writes down those behaviours, so
the learned correction (model.py) only corrects a curve that is already right in shape. Every
constant names where it comes from; `../shared/published/gpu_cost_constants.csv` (copied into
the README of training_data/published) holds the third-party measurements quoted here.

Libraries: on the CPU `numpy` (NumPy and SciPy) or `torch` (PyTorch on the CPU); on the GPU
`cupy` or `torch` (PyTorch on CUDA). A NumPy user compares NumPy with CuPy; a PyTorch user
compares torch on the CPU with torch on CUDA.
"""

from __future__ import annotations

import math

from gpuadvisor.ops.cost import ITEM_BYTES, OpCost
from gpuadvisor.ops.registry import OPS, CpuThreads, Family
from gpuadvisor.prediction.hardware import CpuProfile, GpuProfile
from gpuadvisor.prediction.roofline import SideTime
from gpuadvisor.prediction.tensor_cores import matmul_peak, matmul_seconds

LIBRARIES = ("numpy", "torch")

# -- CPU ---------------------------------------------------------------------------------------
#: One NumPy call: argument parsing, dispatch, allocation of the result.
NUMPY_CALL_S = 2e-6
#: One eager PyTorch op on CPU tensors: ~2-7 us (pytorch/pytorch#41383, maintainers' numbers).
TORCH_CPU_CALL_S = 4e-6
#: PyTorch splits elementwise and reduction loops over its intra-op threads only past this many
#: elements (at::internal::GRAIN_SIZE = 32768).
TORCH_GRAIN = 32_768
#: What one core streams from DRAM on a typical machine.
SINGLE_CORE_BANDWIDTH_GBS = 20.0


def power_of_two_inner(cost: OpCost) -> bool:
    return cost.segment >= 64 and cost.segment & (cost.segment - 1) == 0


def _cpu_threads(cost: OpCost, cpu: CpuProfile, library: str) -> int:
    """How many cores the CPU library puts on this op."""
    if cost.parallel_cpu:  # BLAS and LAPACK use every core in both libraries
        return cpu.cores
    if library != "torch" or cost.elements < TORCH_GRAIN:
        return 1  # NumPy ufuncs, reductions, sorts and pocketfft run on one core
    entry = OPS.get(cost.op)
    if entry is not None and entry.cpu_threads is CpuThreads.ROWS:
        return max(1, min(cpu.cores, int(cost.elements // max(cost.segment, 1))))
    return cpu.cores


def cpu_time(cost: OpCost, cpu: CpuProfile, dtype: str, library: str = "numpy") -> SideTime:
    """CPU seconds for the library family: "numpy" (NumPy/SciPy) or "torch" (PyTorch on the CPU)."""
    threads = _cpu_threads(cost, cpu, library)
    share = threads / cpu.cores
    peak = cpu.peak_flops(dtype) * share
    bandwidth = min(cpu.mem_bandwidth_gbs, SINGLE_CORE_BANDWIDTH_GBS * threads) * 1e9
    call = TORCH_CPU_CALL_S if library == "torch" else NUMPY_CALL_S
    overhead = cost.kernels * call
    compute = cost.flops / peak
    entry = OPS.get(cost.op)
    linalg = entry.linalg if entry is not None else None
    if linalg is not None:  # LAPACK: blocked panels at a fraction of the BLAS rate, plus per-column steps
        factor = linalg.numpy_factor if library == "numpy" else 1.0
        compute = compute * factor / linalg.cpu_efficiency + cost.segment * linalg.cpu_column_s
    memory = cost.memory_bytes / bandwidth
    if cost.stride > 1 and not cost.parallel_cpu:
        slowdown = stride_slowdown(cost, dtype, library)
        compute, memory = compute * slowdown, memory * slowdown
    return SideTime(compute, memory, overhead, power_of_two_inner(cost), fresh_pages_time(cost, library, threads))


#: glibc's malloc maps requests of 32 MiB and more afresh on every call (mmap; its adaptive
#: threshold stops at DEFAULT_MMAP_THRESHOLD_MAX = 32 MiB on 64-bit) and unmaps them on free;
#: smaller blocks are reused from the heap once the threshold has adapted. A loop making a
#: result of 32 MiB or more therefore faults in every page of it on every call, on Linux.
MMAP_CEILING_BYTES = 32 * 2**20
#: PyTorch's CPU allocator takes plain 4 KiB pages: one fault, zeroing and later unmapping per
#: page, 1.6 us on one thread on the development machine (torch 2.13: a relu making a fresh
#: 64 MiB tensor takes 29 ms on one thread, the same relu into a preallocated out= 3.4 ms;
#: benchmarks/fresh_pages.py measures it).
#: Threads faulting at once contend for the process's page tables: 2 threads cut the wall time
#: per page 1.5-1.8x here, threads**0.7 (the middle); at 14-18 threads the mlx-benchmark hosts
#: show 0.2-0.6 us per page against 0.2-0.25 from this rule (one cloud VM: 2.6 us).
TORCH_PAGE_FAULT_S = 1.6e-6
FAULT_SCALING = 0.7
SMALL_PAGE_BYTES = 4096


def fresh_pages_time(cost: OpCost, library: str, threads: int) -> float:
    """Seconds spent faulting in the call's freshly mapped results.

    NumPy asks for transparent huge pages for arrays of 4 MiB and more (madvise), so the cost
    is the kernel zeroing the memory on the faulting core: one more single-core write pass
    (0.04-0.07 ns per byte here, about 1 / SINGLE_CORE_BANDWIDTH_GBS).
    """
    allocations = cost.allocated
    entry = OPS.get(cost.op)
    if library == "torch" and entry is not None and entry.family is Family.SORT:
        allocations = (cost.input_bytes, cost.elements * 8)  # torch.sort returns values and int64 indices
    fresh = sum(size for size in allocations if size >= MMAP_CEILING_BYTES)
    if library == "torch":
        return fresh / SMALL_PAGE_BYTES * TORCH_PAGE_FAULT_S / threads**FAULT_SCALING
    return fresh / (SINGLE_CORE_BANDWIDTH_GBS * 1e9)


#: Ops whose registry entry has no measured slowdown for the library (FFTs): a cache line read per element.
DEFAULT_STRIDE_SLOWDOWN = (2.0, 4.0)
PAGE_BYTES = 4096


def stride_slowdown(cost: OpCost, dtype: str, library: str) -> float:
    entry = OPS.get(cost.op)
    measured = entry.stride_slowdown if entry is not None else {}
    within_page, across_pages = measured.get(library, DEFAULT_STRIDE_SLOWDOWN)
    return within_page if cost.stride * ITEM_BYTES.get(dtype, 4) < PAGE_BYTES else across_pages


# -- GPU ---------------------------------------------------------------------------------------
#: Host time of one eager kernel launch: PyTorch ~5-10 us per op on CUDA (pytorch#41383 plus a
#: CUDA launch), CuPy ~11-12 us per ElementwiseKernel call (cupy PR #3298).
GPU_LAUNCH_S = {"torch": 6e-6, "cupy": 11e-6}
#: Waiting for the result once per call (stream synchronise + wake-up).
GPU_SYNC_S = 8e-6
#: Device time of a kernel however little it does: it starts on the SMs, reaches memory once and drains
#: its last wave. Kernel timings (CUDA events) show about 4 us per kernel: Liger-Kernel's eager
#: torch.square(relu(x)) on 0.5M bfloat16 elements takes 8.7 us on an H100 for two kernels of
#: 0.4 us of traffic each, softmax over 2048 x 128 floats 6.1 us on an RTX 3090 for 2.2 us of
#: traffic (training_data/published/liger_kernel.csv, after its first look); XLA's H100 table
#: times its smallest products (256^3, 34 MFLOP) at about 5 us (xla_h100.csv, after its first look).
KERNEL_LATENCY_S = 4e-6
#: Achieved fraction of peak DRAM bandwidth by streaming kernels: torch copy_ reaches 85-95%
#: on V100/A100/H100 (chsasank/device-benchmarks); reductions slightly less.
STREAM_EFFICIENCY = 0.85
REDUCTION_EFFICIENCY = 0.75
#: cuBLAS computes whole output tiles, up to 128 wide; a short side gets a narrower tile, so
#: a 100x100 product costs a 128x128 one, a 64x1000000 @ 1000000x32 one just its own size.
GEMM_TILE = 128
SMALLEST_GEMM_TILE = 16
#: cuFFT keeps up to 4096 points of a transform in shared memory: one read and one write of the
#: data per 4096-fold of the length (cuFFT documentation, "multi-pass" large transforms).
FFT_POINTS_PER_PASS = 4096
#: cuSPARSE SpMM: descriptor creation, buffer sizing and allocation per call (~50-100 us in CuPy).
SPARSE_SETUP_S = 60e-6
SPARSE_EFFICIENCY = 0.4
#: Segments up to this long are sorted in shared memory in one pass (PyTorch's bitonic
#: sortKeyValueInplace); longer ones take a radix sort: one pass per 8 bits of key.
SHARED_MEMORY_SORT = 4096


#: PyTorch's softmax along a contiguous last axis (aten/src/ATen/native/cuda/SoftMax.cu, host_softmax, v2.9-2.10)
#: picks one of three kernels by the row. Rows of at most 2048 elements and 8192 bytes: one warp per row
#: (`dim_size <= 2048 && dim_size * sizeof(scalar_t) <= 8192`; 1024 and 4096 in older releases), one read and
#: one write. Longer rows take a thread block each: the row is held in shared memory when it fits in the 48 KiB
#: a block gets by default (cunn_SoftMaxForwardSmem: one read, one write), else it is read three times (max,
#: sum of exponentials, then the output) and written once (cunn_SoftMaxForward); the second and third reads
#: find the row in L2 when the rows in flight fit there (`_reread_bandwidth`).
WARP_SOFTMAX_ELEMENTS = 2048
WARP_SOFTMAX_BYTES = 8192
SOFTMAX_SHARED_MEMORY_BYTES = 48 * 1024
#: A block of the block-per-row kernels waits on memory and on its barriers in turn (load, block-wide max,
#: block-wide sum, store): the rows go through the SMs at about one per SM per this long, however short
#: they are. Kernel timings of eager softmax over rows of 2048-4096 16- and 32-bit elements: 2.2-2.5 us per
#: row per SM on an RTX 3090, 1.8 on an H100 SXM (4096^2 fp16 in 61 us, 1.1 TB/s), 1.8 on a B200 (8192 x 4096
#: bf16 in 104 us, 0.64 TB/s) (liger_kernel.csv, softmax_kernel_h100.csv, after their first looks).
SOFTMAX_BLOCK_ROW_S = 2e-6


def torch_softmax_memory_s(cost: OpCost, gpu: GpuProfile, dtype: str, bandwidth: float) -> float | None:
    """Device seconds of PyTorch's softmax over a contiguous last axis (None for another axis):
    the traffic of the kernel it picks, and on the block-per-row kernels no less than the rows take."""
    if cost.stride != 1:
        return None
    row_bytes = cost.segment * ITEM_BYTES.get(dtype, 4)
    seconds = (cost.input_bytes + cost.output_bytes) / (bandwidth * STREAM_EFFICIENCY)
    if cost.segment <= WARP_SOFTMAX_ELEMENTS and row_bytes <= WARP_SOFTMAX_BYTES:
        return seconds
    if row_bytes >= SOFTMAX_SHARED_MEMORY_BYTES:
        seconds += 2 * cost.input_bytes / (_reread_bandwidth(gpu, row_bytes, bandwidth) * STREAM_EFFICIENCY)
    rows = cost.elements // max(cost.segment, 1)
    waves = math.ceil(rows / gpu.sm_count) if gpu.sm_count > 0 else 0
    return max(seconds, waves * SOFTMAX_BLOCK_ROW_S)


#: cunn_SoftMaxForward runs blocks of up to 1024 threads, two to an SM (2048 resident threads).
SOFTMAX_BLOCKS_PER_SM = 2


def _reread_bandwidth(gpu: GpuProfile, row_bytes: float, bandwidth: float) -> float:
    """Bandwidth of the block softmax's second and third reads of its rows: from L2 when the rows the SMs
    hold at once fit in it (64 KiB rows of 4096 x 32000 fp16 on an H100: 264 in flight, 17 MB of its 50 MB
    L2), from DRAM otherwise (KernelBench's 1.5 MB rows of 393216 floats: 415 MB in flight)."""
    in_flight = SOFTMAX_BLOCKS_PER_SM * gpu.sm_count * row_bytes
    if 0 < in_flight <= gpu.l2_cache_mb * 1e6:
        return max(bandwidth, _dram_bandwidth(gpu) * L2_SPEEDUP)
    return bandwidth


#: Data that stays in the L2 cache between calls streams at roughly this multiple of DRAM
#: bandwidth: an RTX 4090 (72 MB L2) runs a ReLU over 8.4M floats (67 MB in and out) at 1.7x
#: its DRAM bandwidth (mlx-benchmark); an A100 (40 MB) on the same data reaches DRAM speed.
L2_SPEEDUP = 2.0


#: What one SM streams from DRAM at most: PyTorch's vectorised elementwise kernels keep one 16-byte load per
#: thread in flight, 32 KiB over an SM's 2048 resident threads, and by Little's law that sustains about
#: 32 KiB / 1.5 us (a loaded HBM round trip). An H100 SXM's 132 SMs then ask for 2.85 TB/s, the 85% of its
#: 3.35 TB/s it reaches (Liger-Kernel's relu² on 268M bfloat16 elements); a B200's 148 SMs ask for 3.2 TB/s of
#: its 7.7 (Liger's DyT rows: 3.0 TB/s, eager float32 chains, `liger_kernel.csv` after its first look), and an
#: H200's 132 for 2.85 of its 4.8. On every older GPU in the catalogue the DRAM is the limit.
SM_STREAM_GBS = 21.6


def _dram_bandwidth(gpu: GpuProfile, pipelined: bool = False) -> float:
    """DRAM bytes per second a kernel can use, before STREAM_EFFICIENCY: the datasheet's, or what the SMs
    can keep in flight where that is less (STREAM_EFFICIENCY is applied later, hence the division).
    `pipelined`: cuBLAS's kernels stage many operand tiles per SM (cp.async, TMA), so only DRAM limits them."""
    peak = gpu.mem_bandwidth_gbs * 1e9
    if gpu.sm_count <= 0 or pipelined:
        return peak
    return min(peak, gpu.sm_count * SM_STREAM_GBS * 1e9 / STREAM_EFFICIENCY)


def _bandwidth(gpu: GpuProfile, working_set: float, pipelined: bool = False) -> float:
    """Bytes per second a streaming kernel sees: DRAM, or faster when the data fits in L2."""
    dram = _dram_bandwidth(gpu, pipelined)
    cache = gpu.l2_cache_mb * 1e6
    if cache <= 0 or working_set <= 0:
        return dram
    hits = min(1.0, max(0.0, 2.0 * cache / working_set - 1.0))  # all of it fits .. half of it fits
    return dram / (1.0 - hits + hits / L2_SPEEDUP)


def _padded(length: int) -> int:
    """The side length cuBLAS computes: whole tiles, the tile no larger than the power of two
    that covers a short side (its kernels for skinny products use 64, 32 or 16-wide tiles)."""
    tile = min(GEMM_TILE, max(SMALLEST_GEMM_TILE, 1 << max(length - 1, 0).bit_length()))
    return math.ceil(length / tile) * tile


def _gemm_flops(cost: OpCost) -> float:
    batch, m, k, n = cost.gemm
    return 2.0 * batch * _padded(m) * k * _padded(n)


def _sort_traffic(cost: OpCost, dtype: str, library: str) -> tuple[float, int]:
    """(bytes moved, kernels) of a GPU sort: keys, with int64 indices where the library returns them."""
    item = ITEM_BYTES.get(dtype, 4)
    # cupy.sort sorts the keys alone (thrust/CUB radix sort of keys); torch.sort and argsort
    # carry int64 indices with them.
    keys_only = library == "cupy" and not OPS[cost.op].returns_indices
    pair = cost.elements * (item if keys_only else item + 8)
    if library == "torch" and cost.segment <= SHARED_MEMORY_SORT:
        return 2 * pair, 1
    passes = item  # 8-bit digits: 4 passes for float32 keys, 8 for float64
    if library == "cupy" and cost.segment < cost.elements:
        passes *= 2  # sorting many rows: CuPy sorts (row, value) keys
    return 2 * pair * passes + pair, 3 * passes


def gpu_floor_s(cost: OpCost, gpu: GpuProfile, dtype: str, analytic: SideTime) -> float:
    """The GPU time no learned correction may undercut: the FLOPs at the datasheet peak, plus
    the kernels' latency and the launches (extrapolating past an op's measured sizes, a learned curve can undershoot)."""
    product = cost.op in OPS and OPS[cost.op].family is Family.MATMUL
    peak = matmul_peak(gpu, dtype, cost.tf32)[0] if product else gpu.peak_flops(dtype)
    return cost.flops / peak + analytic.latency_s + analytic.overhead_s


def unhidden_launches(launch: float, kernels: int, device_s: float) -> float:
    """Host launch time the call waits for beyond its device time.

    Eager libraries launch asynchronously: while the device runs one kernel the host launches
    the next, so a chain of kernels costs its first launch plus the longer of the remaining
    launches and the device's work (launch-bound when the kernels are short, device-bound
    when they are long), not both added up.
    """
    later = (kernels - 1) * launch
    return launch + max(0.0, later - device_s)


def gpu_time(cost: OpCost, gpu: GpuProfile, dtype: str, library: str = "numpy", l2_warm: bool = True) -> SideTime:
    """GPU seconds for the library family: "torch" (PyTorch on CUDA) or "numpy" (CuPy).

    `l2_warm`: the call's data may be in L2 from the call before (a loop over the same arrays, what
    users run); False for timings that flush L2 before each call (`triton.testing.do_bench`), whose
    data always starts in DRAM: eager chains of 4-16M floats on a B200 (126 MB of L2) take time in
    proportion to their size (liger_kernel.csv)."""
    library = "torch" if library == "torch" else "cupy"
    launch = GPU_LAUNCH_S[library]
    entry = OPS.get(cost.op)
    family = entry.family if entry is not None else None
    working_set = cost.input_bytes + cost.output_bytes if l2_warm else 0.0
    bandwidth = _bandwidth(gpu, working_set, pipelined=family is Family.MATMUL)
    peak = gpu.peak_flops(dtype)
    kernels = cost.kernels
    host = GPU_SYNC_S  # host work the device cannot hide: the wait for the result, setup calls
    compute = cost.flops / peak
    memory = cost.memory_bytes / (bandwidth * STREAM_EFFICIENCY)
    if family is Family.MATMUL:
        compute = matmul_seconds(gpu, dtype, _gemm_flops(cost), cost.gemm, cost.tf32)
    elif family is Family.REDUCTION:
        memory = cost.memory_bytes / (bandwidth * REDUCTION_EFFICIENCY)
        if library == "torch" and cost.op == "softmax":
            memory = torch_softmax_memory_s(cost, gpu, dtype, bandwidth) or memory
        if library == "cupy" and entry is not None and entry.cupy_composed:
            memory *= entry.cupy_composed
            kernels += entry.cupy_composed
    elif family is Family.SORT:
        traffic, kernels = _sort_traffic(cost, dtype, library)
        memory = traffic / (bandwidth * STREAM_EFFICIENCY)
    elif family is Family.FFT:
        passes = math.ceil(math.log(max(cost.segment, 2), FFT_POINTS_PER_PASS))
        memory = memory * passes + cost.input_bytes * 3 / (bandwidth * STREAM_EFFICIENCY)  # real -> complex first
        kernels += 1
    elif entry is not None and entry.linalg is not None:  # cuSOLVER: panel steps are launches and host round trips
        linalg = entry.linalg
        factor = linalg.numpy_factor if library == "cupy" else 1.0
        column = linalg.gpu_column_s / (linalg.torch_gpu_speedup if library == "torch" else 1.0)
        compute = cost.flops * factor / (peak * linalg.gpu_efficiency) + cost.segment * column
        host += GPU_SYNC_S  # CuPy and torch check the factorisation's info flag on the host
    elif family is Family.SPARSE:
        memory = cost.memory_bytes / (bandwidth * SPARSE_EFFICIENCY)
        host += SPARSE_SETUP_S
    latency = kernels * KERNEL_LATENCY_S
    device = max(compute, memory) + latency
    overhead = host + unhidden_launches(launch, kernels, device)
    return SideTime(compute, memory, overhead, power_of_two_inner(cost), latency_s=latency)
