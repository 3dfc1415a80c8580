"""Library-aware predictions: what CuPy, PyTorch and NumPy really do, and the published rows."""

from __future__ import annotations

import json
import math

import pytest

from gpuadvisor import predict
from gpuadvisor.prediction.costs import CostError, op_cost
from gpuadvisor.prediction.hardware import CpuProfile, catalog, resolve_cpu, resolve_gpu
from gpuadvisor.prediction.libraries import (
    FLOOR_HOST_SHARE, GPU_LAUNCH_S, GPU_SYNC_S, KERNEL_LATENCY_S, L2_SPEEDUP, ONE_BLOCK_ELEMENT_S, RANK_KEY_S, SEGMENT_SORT_S,
    SM_STREAM_GBS, SOFTMAX_BLOCK_BANDWIDTH, SOFTMAX_BLOCK_ROW_S, SORT_SETUP_S, STREAM_EFFICIENCY, cpu_time, gpu_floor_s, gpu_time,
)
from gpuadvisor.prediction.roofline import SideTime
from gpuadvisor.prediction.tensor_cores import TILE_OVERHEAD_S, matmul_peak, matmul_rate, tile_waves
from gpuadvisor.prediction.training import load_samples


def test_svd_is_not_advised_onto_the_gpu_against_a_server_cpu() -> None:
    """cuSOLVER's SVD is latency-bound: a 1024x1024 SVD is no big GPU win over a 32-core server."""
    result = predict("svd", [(1024, 1024)], "float32", gpu="h100-sxm", cpu="server", data_on="device")
    assert result.speedup < 2.0
    assert "Worth moving" not in result.recommendation


def test_a_large_matmul_still_is() -> None:
    result = predict("matmul", [(8192, 8192), (8192, 8192)], gpu="h100-sxm", cpu="server", data_on="device")
    assert result.speedup > 10


def test_torch_on_a_many_core_cpu_is_a_harder_baseline_than_numpy() -> None:
    """NumPy adds on one core; PyTorch splits the loop over every core."""
    numpy_side = predict("add", [(10**8,), (10**8,)], cpu="server", library="numpy")
    torch_side = predict("add", [(10**8,), (10**8,)], cpu="server", library="torch")
    assert torch_side.cpu_seconds < numpy_side.cpu_seconds / 2
    assert torch_side.speedup < numpy_side.speedup
    assert torch_side.library == "torch"


def test_the_gpu_never_beats_its_datasheet_peak() -> None:
    shapes = [(32768, 32768), (32768, 32768)]
    result = predict("matmul", shapes, gpu="a100-80gb", data_on="device")
    assert result.gpu_seconds >= op_cost("matmul", shapes).flops / resolve_gpu("a100-80gb").peak_flops("float32")


def test_sorting_along_a_strided_axis_costs_more_on_the_cpu() -> None:
    last = predict("sort", [(64, 128, 1024)], axis=-1, cpu="server")
    first = predict("sort", [(64, 128, 1024)], axis=0, cpu="server")
    assert first.cpu_seconds > last.cpu_seconds


def test_the_cost_of_a_strided_axis_depends_on_the_op_the_library_and_the_stride() -> None:
    """NumPy sums an outer axis as fast as the last one (it adds whole rows); an argmax walks one
    lane at a time, slower when neighbours are pages apart than when they share a page."""
    shape = [(64, 1024, 128)]

    def cpu(op: str, axis: int, library: str = "numpy") -> float:
        return predict(op, shape, axis=axis, cpu="server", library=library).cpu_seconds

    assert cpu("sum", 0) == pytest.approx(cpu("sum", 2), rel=0.05)
    assert cpu("argmax", 0) > cpu("argmax", 1) > cpu("argmax", 2)
    assert cpu("argmax", 0, "torch") > 2 * cpu("argmax", 1, "torch")


def test_cublas_tiles_pad_short_sides_to_their_own_power_of_two_not_to_128() -> None:
    """A 64x1000000 @ 1000000x32 product runs in 64x32 tiles (mlx-benchmark: 0.4 ms on an A100,
    not the 2.1 ms of 128x128 tiles); a 100x100 one still costs a whole 128x128 tile."""
    a100 = resolve_gpu("a100-80gb")

    def padding(shapes: list[tuple[int, ...]]) -> float:
        cost = op_cost("matmul", shapes)
        achieved = matmul_rate(a100, "float32", cost.gemm)
        tiles_work_s = gpu_time(cost, a100, "float32", "torch").compute_s - tile_waves(a100, cost.gemm) * TILE_OVERHEAD_S
        return tiles_work_s * achieved / cost.flops

    assert padding([(64, 1_000_000), (1_000_000, 32)]) == pytest.approx(1.0)
    assert padding([(100, 100), (100, 100)]) == pytest.approx((128 / 100) ** 2)


def test_a_result_of_32_mib_or_more_is_fresh_memory_every_call_on_the_cpu() -> None:
    """glibc maps such blocks afresh on each call: PyTorch faults in every 4 KiB page of its result
    (the mlx-benchmark hosts run a 32 MiB ReLU at a third to a fifth of their bandwidth), NumPy
    zeroes huge pages; smaller results reuse the heap, and the GPU's caching allocators reuse."""
    server, gpu = resolve_cpu("server"), resolve_gpu("h100-sxm")
    below, at = op_cost("expr", [(8_000_000,)], expression="relu(x)"), op_cost("expr", [(2**23,)], expression="relu(x)")
    assert cpu_time(below, server, "float32", "torch").fresh_pages_s == 0.0
    torch_faults = cpu_time(at, server, "float32", "torch").fresh_pages_s
    assert torch_faults > 0.0
    numpy_side = cpu_time(at, server, "float32", "numpy")  # zeroing: one more single-core pass over the result
    assert numpy_side.fresh_pages_s == pytest.approx(numpy_side.memory_s * at.output_bytes / at.memory_bytes)
    assert gpu_time(at, gpu, "float32", "torch").fresh_pages_s == 0.0
    chain = op_cost("expr", [(2**23,)], expression="exp(-x * x)")  # three eager steps, three fresh results
    assert cpu_time(chain, server, "float32", "torch").fresh_pages_s == pytest.approx(3 * torch_faults)
    sort = op_cost("sort", [(64, 2**17)])  # torch.sort returns int64 indices too: 3x the pages of the values
    assert cpu_time(sort, server, "float32", "torch").fresh_pages_s == pytest.approx(3 * torch_faults)

    def per_element(n: int) -> float:
        return predict("expr", [(n,)], expression="relu(x)", cpu="server", library="torch").cpu_seconds / n

    assert per_element(2**23) > 2 * per_element(8_000_000)


@pytest.mark.parametrize(
    ("op", "shapes", "axis"),
    [("argmax", [(1000, 128)], 1), ("softmax", [(1000, 128)], None), ("concat", [(1000, 64), (1000, 32)], 1), ("random", [(10**6,)], None)],
)
def test_added_ops_predict(op: str, shapes: list[tuple[int, ...]], axis: int | None) -> None:
    result = predict(op, shapes, axis=axis)
    assert result.cpu_seconds > 0 and result.gpu_seconds > 0
    assert result.interval[0] < result.speedup < result.interval[1]


def test_cli_predict_takes_the_library(cli) -> None:
    result = cli("predict", "add", "--shape", "100000000", "--shape", "100000000", "--library", "torch", "--cpu", "server", "--format", "json")
    assert result.exit_code == 0, result.stdout
    assert json.loads(result.stdout)["library"] == "torch"
    bad = cli("predict", "add", "--shape", "100", "--library", "jax")
    assert bad.exit_code == 2


def test_published_sources_load_as_paired_rows() -> None:
    samples = [s for s in load_samples() if s.pair]
    sources = {s.source for s in samples}
    assert {"mlxbench_rtx4090", "mlxbench_a100_pcie", "mlxbench_v100_nvlink", "mlxbench_v100_pcie", "seed004_rtx5090"} <= sources
    sides: dict[str, set[str]] = {}
    for sample in samples:
        sides.setdefault(sample.pair, set()).add(sample.side)
    assert all(found == {"cpu", "gpu"} for found in sides.values())
    created = [s for s in samples if s.source == "seed004_rtx5090"]
    assert all(s.extra_s > 0 for s in created), "seed 004 timed the creation of its inputs"


def _matmul_gpu_seconds(gpu: str, dtype: str, n: int, tf32: bool = False) -> float:
    return predict("matmul", [(n, n), (n, n)], dtype, gpu=gpu, cpu="server", data_on="device", library="torch", tf32=tf32).gpu_seconds


def test_tf32_runs_float32_products_on_tensor_cores_from_ampere_on() -> None:
    """H100: TF32 494 vs FP32 67 TFLOP/s dense; a V100 has no TF32, so the flag changes nothing."""
    assert _matmul_gpu_seconds("h100-sxm", "float32", 8192) > 4 * _matmul_gpu_seconds("h100-sxm", "float32", 8192, tf32=True)
    assert _matmul_gpu_seconds("v100", "float32", 8192, tf32=True) == pytest.approx(_matmul_gpu_seconds("v100", "float32", 8192))


def test_bf16_before_ampere_is_a_slow_path_and_fp16_is_not() -> None:
    """V100 tensor cores take fp16 only: bf16 runs at the CUDA-core rate; on an A100 they match."""
    assert _matmul_gpu_seconds("v100", "bfloat16", 8192) > 5 * _matmul_gpu_seconds("v100", "float16", 8192)
    assert _matmul_gpu_seconds("a100-80gb", "bfloat16", 8192) == pytest.approx(_matmul_gpu_seconds("a100-80gb", "float16", 8192), rel=0.05)


def test_a100_dgemm_uses_fp64_tensor_cores() -> None:
    a100 = resolve_gpu("a100-80gb")
    cost = op_cost("matmul", [(8192, 8192), (8192, 8192)], "float64")
    assert cost.flops / gpu_time(cost, a100, "float64", "torch").compute_s > a100.fp64_tflops * 1e12


def test_a_product_with_fewer_tiles_than_sms_leaves_most_of_the_gpu_idle() -> None:
    """256x256 with K=256 is 4 output tiles on 132 SMs, too short to split K."""
    h100 = resolve_gpu("h100-sxm")
    small, large = op_cost("matmul", [(256, 256), (256, 256)], "bfloat16"), op_cost("matmul", [(8192, 8192), (8192, 8192)], "bfloat16")
    assert matmul_rate(h100, "bfloat16", small.gemm) < 0.1 * matmul_rate(h100, "bfloat16", large.gemm)


def test_numpy_svd_defaults_form_the_full_u_of_a_tall_matrix() -> None:
    """numpy.linalg.svd(full_matrices=True) builds a 10000x10000 U for a 10000x1000 matrix:
    over 5x the FLOPs of the reduced SVD; values only need less still; square matrices agree."""
    full, thin = op_cost("svd", [(10000, 1000)]), op_cost("svd", [(10000, 1000)], full_matrices=False)
    values = op_cost("svd", [(10000, 1000)], compute_uv=False)
    assert full.flops > 5 * thin.flops > 5 * values.flops
    assert op_cost("svd", [(1000, 1000)]).flops == pytest.approx(op_cost("svd", [(1000, 1000)], full_matrices=False).flops, rel=0.1)
    slow = predict("svd", [(10000, 1000)], "float64", cpu="server", data_on="device")
    fast = predict("svd", [(10000, 1000)], "float64", cpu="server", data_on="device", full_matrices=False)
    assert slow.cpu_seconds > 3 * fast.cpu_seconds


@pytest.mark.parametrize("op", ["inv", "det", "cholesky", "eigh", "eig"])
def test_square_factorisations_are_predicted_and_refuse_rectangles(op: str) -> None:
    result = predict(op, [(2048, 2048)], "float64", cpu="server", data_on="device")
    assert result.cpu_seconds > 0 and result.gpu_seconds > 0
    with pytest.raises(CostError, match="square"):
        op_cost(op, [(2048, 1024)])


def test_eig_costs_more_than_eigh_and_values_only_less() -> None:
    assert op_cost("eig", [(1024, 1024)]).flops > op_cost("eigh", [(1024, 1024)]).flops > op_cost("eigh", [(1024, 1024)], compute_uv=False).flops


def test_numpy_lstsq_goes_through_an_svd_and_torch_through_a_qr() -> None:
    server = resolve_cpu("server")
    cost = op_cost("lstsq", [(20000, 500), (20000, 1)], "float64")
    assert cpu_time(cost, server, "float64", "numpy").compute_s > 2 * cpu_time(cost, server, "float64", "torch").compute_s


def test_lapack_gains_little_from_cores_where_a_product_gains_nearly_all() -> None:
    """OpenBLAS on one host at 1 and 16 cores (lease-xeon-cores-2026-11-28.csv): a 2048 product ran 12x
    faster on 16, a Cholesky of the same side 1.4x, an LU 2.1x, as the panels run on one core. The
    analytic CPU time shows it with the rates of each core count (16x the one-core rate here)."""
    one, sixteen = CpuProfile("", "one", 1, 80.0, 40.0, 20.0), CpuProfile("", "sixteen", 16, 1280.0, 640.0, 20.0)

    def gain(op: str, shapes: list[tuple[int, ...]]) -> float:
        cost = op_cost(op, shapes, "float64")
        return cpu_time(cost, one, "float64").compute_s / cpu_time(cost, sixteen, "float64").compute_s

    assert gain("matmul", [(2048, 2048), (2048, 2048)]) == pytest.approx(16)
    assert gain("cholesky", [(2048, 2048)]) < 2.0
    assert 1.5 < gain("det", [(2048, 2048)]) < 4.0
    assert gain("det", [(8192, 8192)]) > gain("det", [(2048, 2048)])  # the panels' share falls with the side
    assert gain("inv", [(2048, 2048)]) > gain("qr", [(2048, 2048)])


def test_complex_dtypes_cost_four_real_flops_per_multiply_add_at_their_real_rate() -> None:
    real, complex64 = op_cost("matmul", [(512, 512), (512, 512)], "float32"), op_cost("matmul", [(512, 512), (512, 512)], "complex64")
    assert complex64.flops == 4 * real.flops and complex64.input_bytes == 2 * real.input_bytes
    h100 = resolve_gpu("h100-sxm")
    assert h100.peak_flops("complex128") == h100.peak_flops("float64")
    assert predict("fft", [(1 << 20,)], "complex128", cpu="server").gpu_seconds > 0


def test_a_chain_of_kernels_hides_its_launches_behind_long_kernels_but_not_short_ones() -> None:
    """Eager PyTorch launches the next kernel while the device runs the last: four kernels over
    2^28 floats wait for one launch beyond their device time, four over 1,000 floats take at
    least their four launches (Liger-Kernel's eager chains on an H100; mlx-benchmark's small
    activations)."""
    h100 = resolve_gpu("h100-sxm")
    launch = GPU_LAUNCH_S["torch"]

    def chain(elements: int) -> SideTime:
        cost = op_cost("expr", [(elements,)], "float32", expression="2*tanh(x*0.5)+1")
        return gpu_time(cost, h100, "float32", "torch")

    large, small = chain(2**28), chain(1_000)
    device = max(large.compute_s, large.memory_s) + large.latency_s
    assert large.total_s - device - GPU_SYNC_S == pytest.approx(launch)
    assert small.total_s - GPU_SYNC_S >= 4 * launch


def test_a_kernel_timed_row_keeps_each_kernels_device_latency() -> None:
    """CUDA events around torch.square(relu(x)) on 0.5M bfloat16 elements read 8.7 us on an H100
    (liger_kernel.csv): two kernels of about 4 us each on the device, not the 0.4 us their traffic takes."""
    relu_squared = next(s for s in load_samples() if s.source == "liger_kernel" and s.cost.elements == 4096 * 128)
    assert relu_squared.timing == "kernel"
    assert 6e-6 < relu_squared.timed_s < 12e-6


def test_torch_softmax_over_rows_past_the_warp_kernel_is_bound_by_its_rows_not_its_bytes() -> None:
    """PyTorch gives each row of more than 2048 elements a thread block, and the rows pass through the SMs
    at about 2 us each: 4096 x 4096 float16 on an H100 measured 61 us (1.1 TB/s), not the 24 us its bytes take
    at the memory's speed; rows of 1024 elements stream at the memory's speed."""
    h100 = resolve_gpu("h100-sxm")

    def device_s(shape: tuple[int, int]) -> float:
        cost = op_cost("softmax", [shape], "float16")
        return gpu_time(cost, h100, "float16", "torch").memory_s

    bandwidth = h100.mem_bandwidth_gbs * 1e9
    long_rows = device_s((4096, 4096))
    assert long_rows == pytest.approx(math.ceil(4096 / h100.sm_count) * SOFTMAX_BLOCK_ROW_S)
    assert long_rows > 2 * (2 * 4096 * 4096 * 2) / bandwidth  # twice the time of one read and one write
    short_rows = 2 * (1 << 17) * 1024 * 2  # bytes read and written: far past the L2 cache
    assert device_s(((1 << 17), 1024)) == pytest.approx(short_rows / (bandwidth * STREAM_EFFICIENCY))


def test_an_events_timed_row_keeps_the_launch_its_events_enclose() -> None:
    """CUDA events recorded around one torch.softmax call on an idle stream read 13 us for 32 x 128
    halves on an H100 (softmax_kernel_h100.csv): the launch lies between the events, the wait does not."""
    tiny = next(s for s in load_samples() if s.source == "softmax_kernel_h100" and s.cost.elements == 32 * 128)
    assert tiny.timing == "events"
    assert tiny.timed_s == pytest.approx(tiny.analytic.total_s - GPU_SYNC_S)
    assert tiny.timed_s > GPU_LAUNCH_S["torch"] + tiny.analytic.latency_s


def test_the_block_softmax_rereads_rows_from_l2_when_the_rows_in_flight_fit_there() -> None:
    """Rows too long for shared memory are read three times: on an H100 the 264 rows of 64 KiB its SMs hold
    (4096 x 32000 float16) fit in its 50 MB L2, so the second and third reads come from there; rows of 393216
    floats (1.5 MB each) do not fit, and all three reads go to DRAM."""
    h100 = resolve_gpu("h100-sxm")
    dram = h100.mem_bandwidth_gbs * 1e9 * STREAM_EFFICIENCY

    def device_s(shape: tuple[int, int], dtype: str) -> float:
        return gpu_time(op_cost("softmax", [shape], dtype), h100, dtype, "torch").memory_s

    vocabulary = 4096 * 32000 * 2
    assert device_s((4096, 32000), "float16") == pytest.approx(2 * vocabulary / dram + 2 * vocabulary / (dram * L2_SPEEDUP))
    long_rows = 128 * 393216 * 4
    assert device_s((128, 393216), "float32") == pytest.approx(4 * long_rows / dram)


def test_eager_streaming_on_a_b200_is_held_to_what_its_sms_keep_in_flight() -> None:
    """A B200's 148 SMs keep about 3.2 TB/s of eager loads in flight, under half its 7.7 TB/s (Liger-Kernel's
    eager DyT rows: 3.0 TB/s); an H100 SXM's DRAM is its limit; cuBLAS's pipelined products get the B200's DRAM."""
    b200, h100 = resolve_gpu("b200"), resolve_gpu("h100-sxm")
    big = op_cost("add", [(2**30,), (2**30,)], "float32")
    achieved = big.memory_bytes / gpu_time(big, b200, "float32", "torch").memory_s
    assert achieved == pytest.approx(b200.sm_count * SM_STREAM_GBS * 1e9)
    assert achieved < 0.5 * b200.mem_bandwidth_gbs * 1e9
    on_h100 = big.memory_bytes / gpu_time(big, h100, "float32", "torch").memory_s
    assert on_h100 == pytest.approx(h100.mem_bandwidth_gbs * 1e9 * STREAM_EFFICIENCY, rel=0.01)
    product = op_cost("matmul", [(8192, 8192), (8192, 8192)], "bfloat16")
    assert product.memory_bytes / gpu_time(product, b200, "bfloat16", "torch").memory_s > 0.8 * b200.mem_bandwidth_gbs * 1e9


def test_rows_timed_with_l2_flushed_start_from_dram() -> None:
    """triton.testing.do_bench clears L2 before each call: Liger-Kernel's 8192 x 4096 DyT rows on a B200 (126 MB
    of L2) are costed at DRAM speed, while a loop over the same arrays, what `predict` assumes, finds part of them
    in L2."""
    dyt = next(s for s in load_samples() if s.source == "liger_kernel" and s.machine == "b200" and s.op == "expr")
    b200 = resolve_gpu("b200")
    warm = gpu_time(dyt.cost, b200, dyt.dtype, "torch")
    assert dyt.analytic.memory_s > warm.memory_s
    assert dyt.analytic.memory_s == pytest.approx(gpu_time(dyt.cost, b200, dyt.dtype, "torch", l2_warm=False).memory_s)


def test_a_large_16_bit_product_runs_at_85_percent_of_the_tensor_peak_and_tf32_at_75() -> None:
    """cuBLAS's fp16/bf16 products of 8192^3 reach 0.85-0.87 of an A100's dense peak (FlagPerf), TF32 ones 0.72-0.83."""
    a100 = resolve_gpu("a100-40gb")
    gemm = (1, 8192, 8192, 8192)
    assert matmul_rate(a100, "bfloat16", gemm) == pytest.approx(0.85 * a100.bf16_tflops * 1e12, rel=0.02)
    assert matmul_rate(a100, "float32", gemm, tf32=True) == pytest.approx(0.75 * a100.tf32_tflops * 1e12, rel=0.02)


def test_an_rtx_4090_product_runs_at_the_clock_the_board_holds_not_its_rated_boost() -> None:
    """The RTX 4090's whitepaper peaks are quoted at its rated 2520 MHz boost; the board holds about 2.8 GHz under
    load (a bf16 product of 178.5 TFLOP/s, past the 165.2 of the rated clock, was published), so its products
    are costed at the sustained clock, while a profile that names no clocks keeps its datasheet peaks."""
    rtx4090, l4 = resolve_gpu("rtx4090"), resolve_gpu("l4")
    gemm = (1, 8192, 8192, 8192)
    assert rtx4090.clock_ratio == pytest.approx(2800 / 2520)
    assert matmul_rate(rtx4090, "bfloat16", gemm) == pytest.approx(0.85 * rtx4090.bf16_tflops * 1e12 * 2800 / 2520, rel=0.02)
    assert matmul_rate(l4, "bfloat16", gemm) == pytest.approx(0.85 * l4.bf16_tflops * 1e12, rel=0.02)


def _h100_sort(op: str, shape: tuple[int, ...], dtype: str, library: str) -> SideTime:
    return gpu_time(op_cost(op, [shape], dtype), resolve_gpu("h100-sxm"), dtype, library)


def test_a_device_wide_gpu_sort_costs_its_radix_passes_and_the_ranking_of_every_key() -> None:
    """CUB's onesweep radix sort reads the keys once for the histograms, then per 8-bit digit reads and scatters
    keys (and int64 indices where the library returns them), and an SM ranks each key by each digit: CuPy's
    sort of 67M float32 keys measured 1.83 ms on the H100 lease, torch.sort of 67M float64 with indices 8.50 ms."""
    h100 = resolve_gpu("h100-sxm")
    n = 1 << 26
    stream = h100.mem_bandwidth_gbs * 1e9 * STREAM_EFFICIENCY
    keys = _h100_sort("sort", (n,), "float32", "numpy")
    copy = 2 * 4 * n  # CuPy copies the keys it sorts in place
    assert keys.memory_s == pytest.approx((copy + 4 * n + 2 * 4 * n * 4) / stream + 4 * n * RANK_KEY_S / h100.sm_count)
    assert 1.5e-3 < keys.total_s < 2.3e-3
    pairs = _h100_sort("sort", (n,), "float64", "torch")
    assert 7e-3 < pairs.total_s < 10e-3
    assert _h100_sort("argsort", (n,), "float32", "numpy").memory_s > 1.5 * keys.memory_s  # argsort carries int64 indices


def test_small_gpu_sorts_take_their_libraries_short_paths() -> None:
    """CuPy sorts one tile (256 threads of 19 four-byte items) in a single kernel: 4096 float32 keys in 37 us on
    the H100 lease, 10000 in 71 us after the device-wide passes; PyTorch sorts rows of up to 4096 elements in
    shared memory after filling the indices and copying the values: three kernels. CUB and ATen launch their
    kernels themselves, so one call costs one launch from Python, however many kernels it runs."""
    single = _h100_sort("sort", (4096,), "float32", "numpy")
    passes = _h100_sort("sort", (10_000,), "float32", "numpy")
    assert single.latency_s == pytest.approx(2 * KERNEL_LATENCY_S)  # the copy and the one-tile sort
    assert passes.latency_s == pytest.approx((1 + 2 + 2 * 4) * KERNEL_LATENCY_S)
    assert passes.overhead_s == pytest.approx(GPU_SYNC_S + SORT_SETUP_S + GPU_LAUNCH_S["cupy"])
    small = _h100_sort("argsort", (4096,), "float64", "torch")
    assert small.latency_s == pytest.approx(3 * KERNEL_LATENCY_S)
    assert _h100_sort("sort", (4096,), "float64", "numpy").latency_s > single.latency_s  # 8-byte keys: past one tile


def test_pytorchs_shared_memory_sort_costs_its_segments_not_its_bytes() -> None:
    """mlx-benchmark's torch.sort of 64 x 128 x 1024 floats along its first axis (131072 segments of 64) took
    1.9 ms on an A100 PCIe and along its last (8192 segments of 1024) 0.53 ms: the same bytes either way."""
    a100 = resolve_gpu("a100-80gb-pcie")

    def device_s(axis: int) -> float:
        return gpu_time(op_cost("sort", [(64, 128, 1024)], "float32", axis=axis), a100, "float32", "torch").memory_s

    assert device_s(0) > 3 * device_s(-1)
    assert device_s(0) == pytest.approx(math.ceil(131072 / a100.sm_count) * (SEGMENT_SORT_S + 64 * 8 * RANK_KEY_S))


def test_the_gpu_floor_keeps_half_the_host_time_and_all_of_the_device_latency() -> None:
    """A fast host launches and waits in about half the costed time (the H100 lease's one-kernel calls: 14 us, 18-23
    costed); the floor keeps that half, so a learned correction can reach a fast host's times and no further."""
    h100 = resolve_gpu("h100-sxm")
    cost = op_cost("sin", [(1000,)], "float32")
    analytic = gpu_time(cost, h100, "float32", "numpy")
    floor = gpu_floor_s(cost, h100, "float32", analytic)
    assert floor == pytest.approx(cost.flops / h100.peak_flops("float32") + analytic.latency_s + FLOOR_HOST_SHARE * analytic.overhead_s)
    assert floor < 14e-6 < analytic.total_s


def test_a_gpu_sparse_product_reads_a_row_of_the_dense_operand_per_non_zero() -> None:
    """torch.sparse.mm of a 65536^2 CSR matrix of density 0.1 by 65536 x 64 floats took 23.7 ms on the H100 lease:
    429M non-zeros each gathering 64 floats (110 GB, from L2), not the 3.4 GB of the sparse operand."""
    cost = op_cost("sparse_matmul", [(65536, 65536), (65536, 64)], "float32", density=0.1)
    seconds = gpu_time(cost, resolve_gpu("h100-sxm"), "float32", "torch").total_s
    assert 18e-3 < seconds < 30e-3


def test_a_gpu_sparse_products_gathered_rows_come_from_dram_once_the_dense_operand_outgrows_l2() -> None:
    """131072^2 CSR of density 0.01 by 131072 x 64 floats took 11.3 ms on the H100 lease: the dense operand
    and the result (67 MB together) no longer fit its 50 MB of L2, so the gathered rows stream from DRAM."""
    cost = op_cost("sparse_matmul", [(131072, 131072), (131072, 64)], "float32", density=0.01)
    seconds = gpu_time(cost, resolve_gpu("h100-sxm"), "float32", "torch").total_s
    assert 9e-3 < seconds < 16e-3


def test_cupys_std_over_all_elements_runs_in_one_thread_block() -> None:
    """CuPy's std of 67M doubles took 51 ms on the H100 lease (0.76 ns an element), along the rows of 8192^2
    doubles 0.6 ms."""
    h100 = resolve_gpu("h100-sxm")
    whole = gpu_time(op_cost("std", [(1 << 26,)], "float64"), h100, "float64", "numpy")
    rows = gpu_time(op_cost("std", [(8192, 8192)], "float64", axis=1), h100, "float64", "numpy")
    assert whole.memory_s == pytest.approx((1 << 26) * ONE_BLOCK_ELEMENT_S, rel=0.1)
    assert rows.total_s < whole.total_s / 20
    assert gpu_time(op_cost("std", [(1 << 26,)], "float64"), h100, "float64", "torch").total_s < whole.total_s / 20


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64"])
def test_no_gpu_reaches_more_than_the_peak_of_the_path_its_product_takes(dtype: str) -> None:
    """Every cuBLAS efficiency is a fraction of a peak: a rate above it (a V100's bf16, which has
    no tensor path and runs on the FP32 units, costed at 180% of them) is a wrong constant."""
    for name, gpu in catalog()[0].items():
        for tf32 in (False, True):
            peak, _ = matmul_peak(gpu, dtype, tf32)
            rate = matmul_rate(gpu, dtype, (1, 8192, 8192, 8192), tf32)
            assert 0.5 * peak <= rate <= peak, (name, dtype, tf32, rate / peak)


def test_a_complex_product_does_four_real_ones_on_the_gpu_too() -> None:
    """CGEMM does four real multiply-adds per complex one: the H200 took 80.5 ms for an 8192^3
    complex64 product and 21.5 ms for the float32 one."""
    gpu = resolve_gpu("h200")
    shapes = [(8192, 8192), (8192, 8192)]
    real = gpu_time(op_cost("matmul", shapes, "float32"), gpu, "float32")
    complex_ = gpu_time(op_cost("matmul", shapes, "complex64"), gpu, "complex64")
    assert 3.5 < complex_.compute_s / real.compute_s < 4.5


def test_a_transform_of_complex_data_has_no_conversion_pass() -> None:
    """A C2C transform of complex data reads it as it is; the complex transform of real data first
    writes a complex copy: one more kernel, and more traffic than the complex data's own."""
    gpu = resolve_gpu("h200")
    shapes = [(1 << 24,)]
    complex_input = gpu_time(op_cost("fft", shapes, "complex64"), gpu, "complex64", "torch")
    real_input = gpu_time(op_cost("fft", shapes, "float32"), gpu, "float32", "torch")
    assert complex_input.memory_s < real_input.memory_s


def test_rfft_is_about_half_a_complex_fft_and_is_read_from_code_as_its_own_op() -> None:
    shapes = [(1 << 24,)]
    for side in ("gpu", "cpu"):
        full = predict("fft", shapes, "float32", gpu="h100-sxm", cpu="server", data_on="device")
        half = predict("rfft", shapes, "float32", gpu="h100-sxm", cpu="server", data_on="device")
        ratio = getattr(half, f"{side}_seconds") / getattr(full, f"{side}_seconds")
        assert 0.3 < ratio < 0.8, (side, ratio)
    from gpuadvisor.ops.registry import OPS

    assert "rfft" in OPS["rfft"].call_names and "rfft" not in OPS["fft"].call_names


def test_numpy_and_cupy_least_squares_cost_an_svd_where_torch_costs_a_qr() -> None:
    """NumPy's gelsd and CuPy's lstsq go through an SVD (10-30x the time of PyTorch's QR-based
    lstsq of the same 1000x1000 system on the H200's GPU). PyTorch's CPU lstsq has no measured rows, so
    its analytic cost stands: a QR against an SVD with vectors, several times less work."""
    shapes = [(1000, 1000), (1000, 1)]
    numpy_side = predict("lstsq", shapes, "float32", gpu="h200", cpu="server", library="numpy", data_on="device")
    torch_side = predict("lstsq", shapes, "float32", gpu="h200", cpu="server", library="torch", data_on="device")
    assert numpy_side.cpu_seconds > 3 * torch_side.cpu_seconds
    assert numpy_side.gpu_seconds > 5 * torch_side.gpu_seconds


def test_a_row_of_exactly_48_kib_no_longer_fits_the_shared_memory_softmax() -> None:
    """The shared-memory kernel holds rows under 48 KiB; a row of 12,288 floats (48 KiB) is read three times."""
    h100 = resolve_gpu("h100-sxm")

    def per_element_s(width: int) -> float:
        return gpu_time(op_cost("softmax", [(4096, width)], "float32"), h100, "float32", "torch").memory_s / (4096 * width)

    assert per_element_s(12288) > 1.4 * per_element_s(12287)


def test_a_softmax_over_one_long_row_runs_in_one_thread_block() -> None:
    """One row is one block's work: on the H200 lease a 1-D softmax of 67M floats took 24.5 ms, three reads
    and a write at about 40 GB/s, not the 0.4 ms the chip's bandwidth gives; 8192 rows of the same total
    length keep every SM busy and stream at the memory's speed."""
    h200 = resolve_gpu("h200")
    one_row = gpu_time(op_cost("softmax", [(1 << 26,)], "float32"), h200, "float32", "torch")
    assert one_row.memory_s == pytest.approx(4 * (1 << 26) * 4 / SOFTMAX_BLOCK_BANDWIDTH)
    assert 15e-3 < one_row.total_s < 40e-3
    many_rows = gpu_time(op_cost("softmax", [(8192, 8192)], "float32"), h200, "float32", "torch")
    assert many_rows.total_s < one_row.total_s / 20


def test_cupy_softmax_is_five_kernels_and_torch_softmax_one() -> None:
    """CuPy has no softmax kernel: max, subtract, exp, sum and divide are five launches (60-120 us per call on
    the H200 lease below 4M elements, where torch.softmax took 20)."""
    h200 = resolve_gpu("h200")
    cost = op_cost("softmax", [(64, 1000)], "float32")
    cupy, torch = gpu_time(cost, h200, "float32", "numpy"), gpu_time(cost, h200, "float32", "torch")
    assert cupy.total_s > 2.5 * torch.total_s



def test_random_fills_on_the_cpu_are_one_core_stepping_a_sequential_generator() -> None:
    """NumPy's PCG64 and torch's mt19937 step one state per value on one core (1.8-7.4 ns per
    value measured on two hosts): costed as memory writes over every core, 16M values came out
    11-19x too fast. The GPU's counter-based generators stay a memory-bound fill."""
    server = resolve_cpu("server")
    values = 1 << 24
    cost = op_cost("random", [(values,)], "float32")
    for library in ("numpy", "torch"):
        per_value = cpu_time(cost, server, "float32", library).total_s / values
        assert 1.5e-9 <= per_value <= 1e-8, library
    per_value_gpu = gpu_time(cost, resolve_gpu("h100-sxm"), "float32", "torch").total_s / values
    assert per_value_gpu < 1e-10
