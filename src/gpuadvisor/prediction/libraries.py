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

from gpuadvisor.ops.cost import COMPLEX_FLOPS, ITEM_BYTES, REAL_DTYPE, OpCost
from gpuadvisor.ops.linalg import Factorisation
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
    """The op's inner length is a power of two (see SideTime.power_of_two). A sort's is not special: radix
    passes and comparison sorts do the same work per key at 4096 keys as at 4000 (fitted, the flag had put the
    GPU sorts of power-of-two lengths 1.3x slower than the others on the H100, where they measure the same)."""
    entry = OPS.get(cost.op)
    if entry is not None and entry.family is Family.SORT:
        return False
    return cost.segment >= 64 and cost.segment & (cost.segment - 1) == 0


def _cpu_threads(cost: OpCost, cpu: CpuProfile, library: str) -> int:
    """How many cores the CPU library puts on this op."""
    if cost.parallel_cpu:  # BLAS and LAPACK use every core in both libraries
        return cpu.cores
    entry = OPS.get(cost.op)
    if library != "torch" or cost.elements < TORCH_GRAIN or (entry is not None and entry.cpu_threads is CpuThreads.SERIAL):
        return 1  # NumPy ufuncs, reductions, sorts and pocketfft run on one core, as both libraries' generators
    if entry is not None and entry.cpu_threads is CpuThreads.ROWS:
        return max(1, min(cpu.cores, int(cost.elements // max(cost.segment, 1))))
    return cpu.cores


def library_factorisation(cost: OpCost, numpy_family: bool) -> tuple[Factorisation | None, float]:
    """(the factorisation the library runs for this op, its FLOPs over the op's own): NumPy and CuPy
    run another op's where the entry says so (`Factorisation.numpy_runs`), PyTorch the op's own."""
    entry = OPS.get(cost.op)
    linalg = entry.linalg if entry is not None else None
    if linalg is None or not (numpy_family and linalg.numpy_runs):
        return linalg, 1.0
    instead = OPS[linalg.numpy_runs].linalg
    assert instead is not None
    return instead, linalg.work_ratio(instead, cost)


def cpu_time(cost: OpCost, cpu: CpuProfile, dtype: str, library: str = "numpy") -> SideTime:
    """CPU seconds for the library family: "numpy" (NumPy/SciPy) or "torch" (PyTorch on the CPU)."""
    threads = _cpu_threads(cost, cpu, library)
    share = threads / cpu.cores
    peak = cpu.peak_flops(dtype) * share
    bandwidth = min(cpu.mem_bandwidth_gbs, SINGLE_CORE_BANDWIDTH_GBS * threads) * 1e9
    call = TORCH_CPU_CALL_S if library == "torch" else NUMPY_CALL_S
    overhead = cost.kernels * call
    entry = OPS.get(cost.op)
    serial = cost.elements * entry.cpu_element_s if entry is not None else 0.0  # a sequential generator's steps
    compute = max(cost.flops / peak, serial)
    linalg, factor = library_factorisation(cost, numpy_family=library == "numpy")
    if linalg is not None:  # LAPACK: blocked panels at a fraction of the BLAS rate, plus per-column steps;
        # the BLAS rate counts every thread, the panels run on one (Factorisation.cpu_serial_share)
        idle = threads / linalg.cpu_parallel_speedup(cost.segment, threads)
        compute = compute * factor * idle / linalg.cpu_efficiency + cost.segment * linalg.cpu_column_s
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
#: cuSPARSE SpMM: descriptor creation, buffer sizing and allocation per call (~50-100 us in CuPy); PyTorch's
#: torch.sparse.mm of a CSR tensor takes 37-45 us in all on the H100 lease for the smallest products, launch and
#: wait included (h100-lease-2026-11-26.csv), so its setup is nearer 25.
SPARSE_SETUP_S = {"cupy": 60e-6, "torch": 25e-6}
SPARSE_EFFICIENCY = 0.4
#: GPU sorts, as the libraries run them (PyTorch's aten/src/ATen/native/cuda/Sort.cpp and Sort.cu, CuPy's
#: thrust sort, CUB's DeviceRadixSort). PyTorch sorts segments of up to this many elements in shared memory,
#: one thread block each (`should_use_small_sort`, sortKeyValueInplace: a bitonic or warp merge sort up to 128
#: elements, cub::BlockRadixSort of 4-bit digits up to 4096), after filling the indices and copying the values:
#: three kernels. Longer segments take CUB's device-wide radix sort of (key, int64 index) pairs.
SHARED_MEMORY_SORT = 4096
#: cub::BlockRadixSort's digit (RADIX_BITS = 4) and the onesweep device sort's (8 bits: 4 passes for float32
#: keys, 8 for float64).
BLOCK_SORT_DIGIT_BITS = 4
DEVICE_SORT_DIGIT_BITS = 8
#: Seconds an SM spends ranking one key by one digit, however fast the memory (about one cycle at 2 GHz): a
#: radix pass is not a stream. CUB's onesweep loads a tile, ranks its keys in shared memory, then scatters them,
#: so a pass costs its traffic plus the ranking. On an H100 (132 SMs) this puts CuPy's sort of 67M float32 keys
#: at 2.1 ms with its copy of the keys (measured 1.83), of 67M float64 keys at 5.7 ms (4.84), torch.sort of 67M
#: float32 and float64 with their indices at 3.6 ms and 8.5 ms (3.49, 8.50) (h100-lease-2026-11-26.csv); CUB's
#: own benchmark of 2^28 float32 and float64 keys on a B200 (148 SMs) measured 6.07 ms and 15.1 ms (NVIDIA/cccl
#: pull request 3611, `cub.bench.radix_sort.keys`), 6.7 ms and 18.7 ms here. Counted on bandwidth alone (the
#: costing before), the H100's large sorts came out 1.3-2x too fast.
RANK_KEY_S = 0.5e-9
#: PyTorch's shared-memory sorts: a segment holds its SM this long however short it is (its strided or
#: contiguous load, the block's barriers, its store), besides ranking its keys by 4-bit digits. mlx-benchmark's
#: torch.sort of 64 x 128 x 1024 floats along each axis (131072 segments of 64, 65536 of 128, 8192 of 1024)
#: takes 1.3-2.3 us per segment per SM on an A100, an RTX 4090 and a V100 for the short segments, 7 us for
#: the 1024-long ones (19 on a V100): time per segment, not traffic, which is the same for all three.
SEGMENT_SORT_S = 1.5e-6
#: CUB sorts an input of up to one tile in a single kernel (DeviceRadixSort's single-tile policy: 256 threads
#: of 19 four-byte items, fewer items for wider keys or values): CuPy sorts 4096 float32 keys in 37 us and
#: 10000 in 71 us on an H100, 1024 float64 keys in 39 us and 3000 in 100 us (h100-lease-2026-11-26.csv).
SINGLE_TILE_BYTES = 256 * 19 * 4
#: Host time of a kernel launch from inside a library's C++ (CUB's, ATen's sort kernels): cudaLaunchKernel
#: alone, without the Python binding's dispatch that GPU_LAUNCH_S counts once per call.
NATIVE_LAUNCH_S = 3e-6
#: Host time of a sort call besides its launches: the library sizes CUB's temporary storage (a first call of the
#: sort with no buffer), allocates it and the results through its caching allocator, and checks and wraps the
#: arguments. On the H100 the sorts of 16-16384 keys take 10-20 us more than their launches, latency and
#: wait (h100-lease-2026-11-26.csv, torch and CuPy alike), as cuSPARSE's setup does for SpMM (SPARSE_SETUP_S).
SORT_SETUP_S = 15e-6
#: Stand-in for a GPU profile that does not give its SM count.
DEFAULT_SM_COUNT = 80


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
#: One thread block streams its row at no more than this, however wide the memory: its 1024 threads keep about
#: one 16-byte load each in flight over a DRAM round trip of about 0.4 us. So a softmax over few long rows runs on
#: few SMs: on the H200 lease one row of 67M floats took 24.5 ms (three reads and a write: 44 GB/s), of 67M
#: halves 16.8 ms (32 GB/s), of 67M doubles 59 ms (36 GB/s), where the whole chip streams 4.3 TB/s
#: (h200-lease-2026-11-28.csv, after its first look, which had them 64x too fast).
SOFTMAX_BLOCK_BANDWIDTH = 40e9


def torch_softmax_memory_s(cost: OpCost, gpu: GpuProfile, dtype: str, bandwidth: float) -> float | None:
    """Device seconds of PyTorch's softmax over a contiguous last axis (None for another axis):
    the traffic of the kernel it picks, and on the block-per-row kernels no less than the rows take."""
    if cost.stride != 1:
        return None
    row_bytes = cost.segment * ITEM_BYTES.get(dtype, 4)
    seconds = (cost.input_bytes + cost.output_bytes) / (bandwidth * STREAM_EFFICIENCY)
    if cost.segment <= WARP_SOFTMAX_ELEMENTS and row_bytes <= WARP_SOFTMAX_BYTES:
        return seconds
    passes = 2  # one read, one write
    if row_bytes >= SOFTMAX_SHARED_MEMORY_BYTES:
        seconds += 2 * cost.input_bytes / (_reread_bandwidth(gpu, row_bytes, bandwidth) * STREAM_EFFICIENCY)
        passes = 4
    rows = cost.elements // max(cost.segment, 1)
    sm_count = gpu.sm_count if gpu.sm_count > 0 else DEFAULT_SM_COUNT
    waves = math.ceil(rows / sm_count)
    block_waves = math.ceil(rows / (SOFTMAX_BLOCKS_PER_SM * sm_count))
    return max(seconds, waves * SOFTMAX_BLOCK_ROW_S, block_waves * passes * row_bytes / SOFTMAX_BLOCK_BANDWIDTH)


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


#: CuPy (14.2) reduces std over all elements in one thread block: each of its steps waits for one memory round
#: trip, so it takes time per element, whatever the dtype and however wide the memory. On the H100 lease CuPy's
#: std of 67M floats takes 49 ms and of 67M doubles 51 ms (0.73-0.76 ns an element; the GPU streams them in
#: 0.1-0.2 ms), of 1-3M elements, whose data stays in L2, 0.35-0.40 ns an element; along an axis (one block per
#: row) 8192^2 doubles take 0.6 ms (h100-lease-2026-11-26.csv).
CUPY_ONE_BLOCK_REDUCTIONS = frozenset({"std"})
ONE_BLOCK_ELEMENT_S = 0.75e-9


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


def _gemm_flops(cost: OpCost, dtype: str) -> float:
    """FLOPs of the tiles cuBLAS computes; a complex product (CGEMM, ZGEMM) does four real ones per
    multiply-add (the H200's 8192^3 CGEMM took 3.7x its SGEMM)."""
    batch, m, k, n = cost.gemm
    return 2.0 * batch * _padded(m) * k * _padded(n) * (COMPLEX_FLOPS["matrix"] if dtype in REAL_DTYPE else 1.0)


def _sort_time(cost: OpCost, gpu: GpuProfile, dtype: str, library: str, bandwidth: float) -> tuple[float, int]:
    """(device seconds, kernels) of a GPU sort, as the library runs it (see SHARED_MEMORY_SORT).

    PyTorch's sort and argsort both return values and int64 indices; CuPy's sort copies the keys and sorts them
    alone, its argsort sorts the keys with an int64 index array. A device-wide sort (CUB onesweep) reads the keys
    once for all digits' histograms, then per digit reads and scatters keys and indices: its kernels are the
    histogram, its scan and per digit a cleared look-back buffer and the sweep."""
    item = ITEM_BYTES.get(dtype, 4)
    keys_only = library == "cupy" and not OPS[cost.op].returns_indices
    value = 0 if keys_only else 8
    sms = gpu.sm_count if gpu.sm_count > 0 else DEFAULT_SM_COUNT
    stream = bandwidth * STREAM_EFFICIENCY
    n = cost.elements
    if library == "torch" and cost.segment <= SHARED_MEMORY_SORT:
        # fill the indices, copy the values, sort each segment in place in shared memory
        traffic = n * (8 + 2 * item + 2 * (item + 8))
        segments = n / max(cost.segment, 1)
        digits = math.ceil(8 * item / BLOCK_SORT_DIGIT_BITS)
        per_segment = SEGMENT_SORT_S + cost.segment * digits * RANK_KEY_S
        return max(traffic / stream, math.ceil(segments / sms) * per_segment), 3
    prepare = n * 2 * item if library == "cupy" else 0.0  # CuPy copies the keys it sorts in place
    prepare += n * value  # the index array the values start from (arange / iota)
    prepared = int(library == "cupy") + int(value > 0)
    if library == "cupy" and n * max(item, value) <= SINGLE_TILE_BYTES:
        return (prepare + 2 * n * (item + value)) / stream, prepared + 1
    passes = math.ceil(8 * item / DEVICE_SORT_DIGIT_BITS)
    if library == "cupy" and cost.segment < n:
        passes *= 2  # sorting many rows: CuPy sorts (row, value) keys
    traffic = prepare + n * item + 2 * passes * n * (item + value)
    return traffic / stream + passes * n * RANK_KEY_S / sms, prepared + 2 + 2 * passes


#: The share of the costed host time (launches, the wait, setup calls) that stays in the GPU floor. The host's
#: launches and its wait take what the host takes, and GPU_LAUNCH_S and GPU_SYNC_S are typical hosts' times,
#: not the least: the H100 lease's 16-vCPU host launched one kernel and waited for it in 10 us (its `launch`
#: rows: 13.9-14.3 us with the kernel's latency), 0.53-0.71 of the 14 (PyTorch) and 19 us (CuPy) costed. With
#: all of the host time in the floor, 704 of its 2,217 GPU rows measured under their floor (a CuPy `sin` of 1000
#: floats in 13.4 us against 23): small elementwise ops were pinned 1.3-1.7x too slow, outside intervals fitted
#: on residuals the floor never clamped. With none of it, a curve fitted on one library's few rows elsewhere
#: (CuPy's expressions and means: seed004_rtx5090.csv's single calls) put the H100's small CuPy calls 2x too
#: fast when its own rows were held out. Half is the most that stays under every measured call (CuPy's: 13.9
#: of 19 + 4 us); 0.7 would fit the held-out H100 slightly better but pin CuPy's small calls again.
FLOOR_HOST_SHARE = 0.5


def _gathered_rows_s(cost: OpCost, gpu: GpuProfile, dtype: str, l2_warm: bool) -> float:
    """Device seconds of cuSPARSE's CSR SpMM reading one row of the dense operand per non-zero (nnz x N
    elements: half the product's FLOPs), from L2 where the dense operand and the result fit there. Costed on
    the sparse operand's traffic alone, torch.sparse.mm of a 65536^2 CSR matrix of density 0.1 by 65536 x 64
    floats came out 9x too fast on the H100 (2.6 ms against 23.7); with the gathered rows 21.9 ms, and the
    131072^2 products of density 0.01 and 0.001 12.8 and 1.36 ms (11.3, 1.21) (h100-lease-2026-11-26.csv)."""
    gathered = cost.flops / 2 * ITEM_BYTES.get(REAL_DTYPE.get(dtype, dtype), 4)
    dense = 2 * cost.output_bytes if l2_warm else 0.0  # the dense operand (as large as the result: N x N CSR) and the result
    return gathered / (_bandwidth(gpu, dense) * STREAM_EFFICIENCY)


def gpu_floor_s(cost: OpCost, gpu: GpuProfile, dtype: str, analytic: SideTime) -> float:
    """The GPU time no learned correction may undercut: the FLOPs at the datasheet peak, the kernels'
    latency on the device and what the fastest host takes to launch and wait (FLOOR_HOST_SHARE);
    extrapolating past an op's measured sizes, a learned curve can undershoot."""
    product = cost.op in OPS and OPS[cost.op].family is Family.MATMUL
    peak = matmul_peak(gpu, dtype, cost.tf32)[0] if product else gpu.peak_flops(dtype)
    return cost.flops / peak + analytic.latency_s + FLOOR_HOST_SHARE * analytic.overhead_s


def unhidden_launches(launch: float, kernels: int, device_s: float, later_launch: float | None = None) -> float:
    """Host launch time the call waits for beyond its device time.

    Eager libraries launch asynchronously: while the device runs one kernel the host launches
    the next, so a chain of kernels costs its first launch plus the longer of the remaining
    launches and the device's work (launch-bound when the kernels are short, device-bound
    when they are long), not both added up. `later_launch`: the host time of each launch after the first
    where the library launches them itself (default: `launch`).
    """
    later = (kernels - 1) * (launch if later_launch is None else later_launch)
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
    later_launch = launch  # each kernel one call of the library (an eager op, a CuPy kernel)
    host = GPU_SYNC_S  # host work the device cannot hide: the wait for the result, setup calls
    compute = cost.flops / peak
    memory = cost.memory_bytes / (bandwidth * STREAM_EFFICIENCY)
    if family is Family.MATMUL:
        compute = matmul_seconds(gpu, dtype, _gemm_flops(cost, dtype), cost.gemm, cost.tf32)
    elif family is Family.REDUCTION:
        memory = cost.memory_bytes / (bandwidth * REDUCTION_EFFICIENCY)
        if library == "torch" and cost.op == "softmax":
            memory = torch_softmax_memory_s(cost, gpu, dtype, bandwidth) or memory
        if library == "cupy" and entry is not None and entry.cupy_composed:
            memory *= entry.cupy_composed
            kernels += entry.cupy_composed
        if library == "cupy" and cost.op in CUPY_ONE_BLOCK_REDUCTIONS and cost.segment >= cost.elements:
            memory += cost.elements * ONE_BLOCK_ELEMENT_S * _dram_bandwidth(gpu) / bandwidth
    elif family is Family.SORT:
        # a radix pass scatters its keys over the whole output: it gains nothing from L2 (the H100's sorts of
        # 1-3M keys, 12-36 MB, take as long per key as those of 67M, 1.1-1.3x longer)
        memory, kernels = _sort_time(cost, gpu, dtype, library, _dram_bandwidth(gpu))
        later_launch = NATIVE_LAUNCH_S  # one call into the library, which launches the rest itself
        host += SORT_SETUP_S
    elif family is Family.FFT:
        passes = math.ceil(math.log(max(cost.segment, 2), FFT_POINTS_PER_PASS))
        memory = memory * passes
        if dtype not in REAL_DTYPE and not (entry is not None and entry.real_transform):
            # a complex transform of real data converts it to complex first: one more kernel and pass
            memory += cost.input_bytes * 3 / (bandwidth * STREAM_EFFICIENCY)
            kernels += 1
    elif entry is not None and entry.linalg is not None:  # cuSOLVER: panel steps are launches and host round trips
        linalg, factor = library_factorisation(cost, numpy_family=library == "cupy")
        assert linalg is not None
        column = linalg.gpu_column_s / (linalg.torch_gpu_speedup if library == "torch" else 1.0)
        compute = cost.flops * factor / (peak * linalg.gpu_efficiency) + cost.segment * column
        host += GPU_SYNC_S  # CuPy and torch check the factorisation's info flag on the host
    elif family is Family.SPARSE:
        memory = cost.memory_bytes / (bandwidth * SPARSE_EFFICIENCY) + _gathered_rows_s(cost, gpu, dtype, l2_warm)
        host += SPARSE_SETUP_S[library]
    latency = kernels * KERNEL_LATENCY_S
    device = max(compute, memory) + latency
    overhead = host + unhidden_launches(launch, kernels, device, later_launch)
    return SideTime(compute, memory, overhead, power_of_two_inner(cost), latency_s=latency)
