"""Which calls make the host wait for the GPU: measured, not assumed.

The analyzer's knowledge base says which calls synchronise (`.item()`, mask indexing, a
`torch.tensor([...], device=...)` upload, `GradScaler.step`, ...) and which return at once
(`torch.where(m, x, y)`, `x[idx]` with a device index, `multinomial(p, k, replacement=True)`).
This script checks each claim on a real GPU: it queues a busy kernel that keeps the device
occupied for BUSY_S seconds, then times the call on the host. A call that returns in a small
fraction of BUSY_S left the device running; one that takes most of it waited for the busy
kernel, which only a synchronisation does. Each case is warmed up first (handles, plans and
allocator pools are created outside the probe) and probed three times; the median decides.

Runs where the bench harness runs (torch, CuPy, NumPy; no gpuadvisor import, no libcst).
Writes one JSON document: the machine, then per case its library, code, host time and verdict.
`tests/test_sync_truth.py` compares the recorded verdicts with the knowledge base.

Usage: python benchmarks/gpu_sync_truth.py OUT.json   (--dry-run: torch on the CPU, no timing verdicts)
"""

from __future__ import annotations

import io
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

BUSY_S = 0.05
#: A call whose host time exceeds this share of the busy time waited for the device.
WAITED_SHARE = 0.5
PROBES = 3


@dataclass
class Case:
    name: str
    library: str
    code: str  # what the user writes, for the record
    call: Callable[[], object]
    #: Run before each probe, outside the timed part (state the call needs, such as a recorded step).
    before: Callable[[], object] | None = None


def _verdict(host_s: float) -> str:
    return "waits" if host_s > WAITED_SHARE * BUSY_S else "returns"


def _probe(case: Case, busy: Callable[[float], None], sync: Callable[[], None]) -> dict[str, Any]:
    try:
        for _ in range(2):
            if case.before is not None:
                case.before()
            case.call()
        sync()
        samples = []
        for _ in range(PROBES):
            if case.before is not None:
                case.before()
            sync()
            busy(BUSY_S)
            start = time.perf_counter()
            case.call()
            samples.append(time.perf_counter() - start)
            sync()
    except Exception as exc:  # a case the installed version does not support
        return {"name": case.name, "library": case.library, "code": case.code, "error": f"{type(exc).__name__}: {exc}"[:200]}
    host_s = statistics.median(samples)
    return {"name": case.name, "library": case.library, "code": case.code, "host_s": round(host_s, 6), "verdict": _verdict(host_s)}


def torch_cases(dev: str = "cuda") -> tuple[list[Case], Callable[[float], None], Callable[[], None], dict[str, str]]:
    """`dev="cpu"` builds and runs every case without a GPU (a dry run of this script)."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    x = torch.randn(1 << 20, device=dev)
    s = x.sum()
    m = x > 0
    idx = torch.randint(0, 1 << 20, (1000,), device=dev)
    labels = torch.randint(0, 10, (512,), device=dev)
    probs = torch.softmax(torch.randn(64, 10, device=dev), dim=-1)
    logits = torch.randn(512, 10, device=dev, requires_grad=True)
    host = torch.randn(1000)
    pinned = torch.randn(1000).pin_memory() if dev == "cuda" else torch.randn(1000)
    host_np = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    repeats = torch.full((10,), 2, device=dev)
    model = torch.nn.Linear(256, 256).to(dev)
    batch = torch.randn(64, 256, device=dev)
    model(batch).square().mean().backward()
    adam = torch.optim.Adam(model.parameters())
    adam_fused = torch.optim.AdamW(model.parameters(), fused=dev == "cuda")
    sgd = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler(dev)
    scaled_opt = torch.optim.SGD(model.parameters(), lr=0.0)

    stepped = [False]  # GradScaler allows one step() per update()

    def scaler_step() -> None:
        scaler.scale(model(batch).square().mean()).backward()
        scaler.step(scaled_opt)
        stepped[0] = True

    def scaler_update() -> None:
        scaler.update()
        stepped[0] = False

    def scaler_ready_to_step() -> None:
        if stepped[0]:
            scaler_update()

    def scaler_stepped() -> None:
        scaler_ready_to_step()
        scaler_step()

    def scaler_scale_backward() -> None:
        scaler.scale(model(batch).square().mean()).backward()

    def backward() -> None:
        model(batch).square().mean().backward()

    def setitem_mask_scalar() -> None:
        y[m] = 0.0

    def setitem_mask_tensor() -> None:
        y[m] = x[m]

    y = x.clone()
    x_copy = x.clone()  # torch.equal(x, x) answers from the identity alone
    big_host = torch.randn(1 << 24)
    square = torch.randn(256, 256, device=dev) + 256 * torch.eye(256, device=dev)
    spd = square @ square.T
    rhs = torch.randn(256, 1, device=dev)
    mu = torch.randn(256, 8, device=dev)
    sd = torch.rand(256, 8, device=dev) + 0.1
    dist_logits = torch.randn(256, 10, device=dev)
    dist = torch.distributions.Normal(mu, sd)  # argument checks on: PyTorch's default outside python -O
    unchecked = torch.distributions.Normal(mu, sd, validate_args=False)
    actions = dist.sample()

    def cache_a_block() -> None:
        torch.empty(1 << 24, device=dev)  # 64 MiB, back in PyTorch's cache at once, for empty_cache to free

    cases = [
        Case("control_kernel", "torch", "x.sum()", lambda: x.sum()),
        Case("control_synchronize", "torch", "torch.cuda.synchronize()", torch.cuda.synchronize if dev == "cuda" else lambda: None),
        Case("item", "torch", "s.item()", lambda: s.item()),
        Case("float_builtin", "torch", "float(s)", lambda: float(s)),
        Case("bool_comparison", "torch", "bool(s > 0)", lambda: bool(s > 0)),
        Case("tolist", "torch", "x[:4].tolist()", lambda: x[:4].tolist()),
        Case("cpu", "torch", "x[:4].cpu()", lambda: x[:4].cpu()),
        Case("to_cpu_non_blocking", "torch", "x[:4].to('cpu', non_blocking=True)", lambda: x[:4].to("cpu", non_blocking=True)),
        Case("str", "torch", "str(x[:4])", lambda: str(x[:4])),
        Case("format_fstring", "torch", "f'{s}'", lambda: f"{s}"),
        Case("math_isnan", "torch", "math.isnan(s)", lambda: math.isnan(s)),
        Case("builtin_max", "torch", "max(s, 1.0)", lambda: max(s, 1.0)),
        Case("nonzero", "torch", "x.nonzero()", lambda: x.nonzero()),
        Case("unique", "torch", "torch.unique(x[:1000])", lambda: torch.unique(x[:1000])),
        Case("mask_index", "torch", "x[m]", lambda: x[m]),
        Case("masked_select", "torch", "x.masked_select(m)", lambda: x.masked_select(m)),
        Case("where_one_argument", "torch", "torch.where(m)", lambda: torch.where(m)),
        Case("where_three_arguments", "torch", "torch.where(m, x, 0.0)", lambda: torch.where(m, x, 0.0)),
        Case("masked_fill", "torch", "x.masked_fill(m, 0.0)", lambda: x.masked_fill(m, 0.0)),
        Case("setitem_mask_scalar", "torch", "y[m] = 0.0", setitem_mask_scalar),
        Case("setitem_mask_tensor", "torch", "y[m] = x[m]", setitem_mask_tensor),
        Case("index_device_tensor", "torch", "x[idx]", lambda: x[idx]),
        Case("index_python_list", "torch", "x[[1, 2, 3]]", lambda: x[[1, 2, 3]]),
        Case("index_int", "torch", "x[5]", lambda: x[5]),
        Case("tensor_from_list", "torch", "torch.tensor([1.0, 2.0, 3.0], device='cuda')", lambda: torch.tensor([1.0, 2.0, 3.0], device=dev)),
        Case("tensor_from_device_scalars", "torch", "torch.tensor([s, s])", lambda: torch.tensor([s, s])),
        Case("to_cuda_pageable", "torch", "host.to('cuda')", lambda: host.to(dev)),
        Case("to_cuda_pageable_non_blocking", "torch", "host.to('cuda', non_blocking=True)", lambda: host.to(dev, non_blocking=True)),
        Case("to_cuda_pinned_non_blocking", "torch", "pinned.to('cuda', non_blocking=True)", lambda: pinned.to(dev, non_blocking=True)),
        Case("from_numpy_cuda", "torch", "torch.from_numpy(a).cuda()", lambda: torch.from_numpy(host_np).cuda()),
        Case("as_tensor_numpy_device", "torch", "torch.as_tensor(a, device='cuda')", lambda: torch.as_tensor(host_np, device=dev)),
        Case("randn_device", "torch", "torch.randn(1000, device='cuda')", lambda: torch.randn(1000, device=dev)),
        Case("zeros_device", "torch", "torch.zeros(1000, device='cuda')", lambda: torch.zeros(1000, device=dev)),
        Case("arange_device", "torch", "torch.arange(1000, device='cuda')", lambda: torch.arange(1000, device=dev)),
        Case("full_device_fill", "torch", "torch.full((10,), s, device='cuda')", lambda: torch.full((10,), s, device=dev)),
        Case("multinomial_one", "torch", "torch.multinomial(p, 1)", lambda: torch.multinomial(probs, 1)),
        Case("multinomial_two", "torch", "torch.multinomial(p, 2)", lambda: torch.multinomial(probs, 2)),
        Case("to_cuda_pageable_non_blocking_64mb", "torch", "big_host.to('cuda', non_blocking=True)", lambda: big_host.to(dev, non_blocking=True)),
        Case("linalg_solve", "torch", "torch.linalg.solve(A, b)", lambda: torch.linalg.solve(square, rhs)),
        Case("linalg_inv", "torch", "torch.linalg.inv(A)", lambda: torch.linalg.inv(square)),
        Case("linalg_cholesky", "torch", "torch.linalg.cholesky(A)", lambda: torch.linalg.cholesky(spd)),
        Case("linalg_cholesky_ex", "torch", "torch.linalg.cholesky_ex(A)", lambda: torch.linalg.cholesky_ex(spd)),
        Case("linalg_eigh", "torch", "torch.linalg.eigh(A)", lambda: torch.linalg.eigh(spd)),
        Case("linalg_svd", "torch", "torch.linalg.svd(A)", lambda: torch.linalg.svd(square)),
        Case("linalg_qr", "torch", "torch.linalg.qr(A)", lambda: torch.linalg.qr(square)),
        Case("linalg_det", "torch", "torch.linalg.det(A)", lambda: torch.linalg.det(square)),
        Case("multinomial_replacement", "torch", "torch.multinomial(p, 5, replacement=True)", lambda: torch.multinomial(probs, 5, replacement=True)),
        Case("one_hot_no_classes", "torch", "F.one_hot(labels)", lambda: F.one_hot(labels)),
        Case("one_hot_classes", "torch", "F.one_hot(labels, 10)", lambda: F.one_hot(labels, 10)),
        Case("isfinite_all", "torch", "torch.isfinite(x).all()", lambda: torch.isfinite(x).all()),
        Case("allclose", "torch", "torch.allclose(x, x)", lambda: torch.allclose(x, x)),
        Case("equal", "torch", "torch.equal(x, y)", lambda: torch.equal(x, x_copy)),
        Case("repeat_interleave_tensor", "torch", "x[:10].repeat_interleave(r)", lambda: x[:10].repeat_interleave(repeats)),
        Case("repeat_interleave_output_size", "torch", "x[:10].repeat_interleave(r, output_size=20)",
             lambda: x[:10].repeat_interleave(repeats, output_size=20)),
        Case("bincount", "torch", "torch.bincount(labels)", lambda: torch.bincount(labels)),
        Case("bincount_minlength", "torch", "torch.bincount(labels, minlength=10)", lambda: torch.bincount(labels, minlength=10)),
        Case("histc", "torch", "torch.histc(x)", lambda: torch.histc(x)),
        Case("topk", "torch", "x.topk(10)", lambda: x.topk(10)),
        Case("sort", "torch", "x.sort()", lambda: x.sort()),
        Case("argmax", "torch", "x.argmax()", lambda: x.argmax()),
        Case("cross_entropy", "torch", "F.cross_entropy(logits, labels)", lambda: F.cross_entropy(logits, labels)),
        Case("backward", "torch", "loss.backward()", backward),
        Case("clip_grad_norm", "torch", "clip_grad_norm_(model.parameters(), 1.0)", lambda: torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)),
        Case("clip_grad_norm_error_if_nonfinite", "torch", "clip_grad_norm_(params, 1.0, error_if_nonfinite=True)",
             lambda: torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)),
        Case("adam_step", "torch", "Adam(...).step()", adam.step),
        Case("adamw_fused_step", "torch", "AdamW(..., fused=True).step()", adam_fused.step),
        Case("sgd_step", "torch", "SGD(...).step()", sgd.step),
        Case("zero_grad", "torch", "optimizer.zero_grad()", sgd.zero_grad),
        Case("grad_scaler_scale_backward", "torch", "scaler.scale(loss).backward()", scaler_scale_backward),
        Case("grad_scaler_step", "torch", "scaler.step(optimizer)", scaler_step, before=scaler_ready_to_step),
        Case("grad_scaler_update", "torch", "scaler.update()", scaler_update, before=scaler_stepped),
        Case("grad_scaler_get_scale", "torch", "scaler.get_scale()", scaler.get_scale),
        Case("save", "torch", "torch.save(x, buffer)", lambda: torch.save(x[:1000], io.BytesIO())),
        Case("memory_allocated", "torch", "torch.cuda.memory_allocated()", torch.cuda.memory_allocated),
        Case("empty_cache", "torch", "torch.cuda.empty_cache()", torch.cuda.empty_cache),
        Case("empty_cache_cached_block", "torch", "torch.cuda.empty_cache()", torch.cuda.empty_cache, before=cache_a_block),
        Case("distribution_normal", "torch", "torch.distributions.Normal(mu, sd)", lambda: torch.distributions.Normal(mu, sd)),
        Case("distribution_normal_unchecked", "torch", "torch.distributions.Normal(mu, sd, validate_args=False)",
             lambda: torch.distributions.Normal(mu, sd, validate_args=False)),
        Case("distribution_categorical", "torch", "torch.distributions.Categorical(logits=dist_logits)",
             lambda: torch.distributions.Categorical(logits=dist_logits)),
        Case("distribution_sample", "torch", "dist.sample()", dist.sample),
        Case("distribution_log_prob", "torch", "dist.log_prob(actions)", lambda: dist.log_prob(actions)),
        Case("distribution_log_prob_unchecked", "torch", "unchecked.log_prob(actions)", lambda: unchecked.log_prob(actions)),
        Case("stack_scalars", "torch", "torch.stack([s, s])", lambda: torch.stack([s, s])),
        Case("to_half", "torch", "x.to(torch.float16)", lambda: x.to(torch.float16)),
        Case("shape", "torch", "x.shape[0]", lambda: x.shape[0]),
    ]
    if dev != "cuda":
        return cases, lambda seconds: None, lambda: None, {"torch": torch.__version__, "dry_run": dev}
    cycles_per_s = _calibrate(lambda cycles: torch.cuda._sleep(cycles), torch.cuda.synchronize)
    info = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "cuda": str(torch.version.cuda)}
    return cases, lambda seconds: torch.cuda._sleep(int(seconds * cycles_per_s)), torch.cuda.synchronize, info


def cupy_cases() -> tuple[list[Case], Callable[[float], None], Callable[[], None], dict[str, str]]:
    import cupy as cp
    import numpy as np

    a = cp.random.standard_normal(1 << 20, dtype=cp.float32)
    s = a.sum()
    m = a > 0
    idx = cp.random.randint(0, 1 << 20, 1000)
    labels = cp.random.randint(0, 10, 512)
    host = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    big_host = np.random.default_rng(0).standard_normal(1 << 24).astype(np.float32)
    square = cp.random.standard_normal((256, 256), dtype=cp.float32) + 256 * cp.eye(256, dtype=cp.float32)
    spd = square @ square.T
    rhs = cp.random.standard_normal((256, 1), dtype=cp.float32)
    cases = [
        Case("control_kernel", "cupy", "a.sum()", lambda: a.sum()),
        Case("control_synchronize", "cupy", "cp.cuda.Device().synchronize()", lambda: cp.cuda.Device().synchronize()),
        Case("stream_synchronize", "cupy", "cp.cuda.get_current_stream().synchronize()", lambda: cp.cuda.get_current_stream().synchronize()),
        Case("get", "cupy", "a[:4].get()", lambda: a[:4].get()),
        Case("asnumpy", "cupy", "cp.asnumpy(a[:4])", lambda: cp.asnumpy(a[:4])),
        Case("item", "cupy", "s.item()", lambda: s.item()),
        Case("float_builtin", "cupy", "float(s)", lambda: float(s)),
        Case("bool_comparison", "cupy", "bool(s > 0)", lambda: bool(s > 0)),
        Case("tolist", "cupy", "a[:4].tolist()", lambda: a[:4].tolist()),
        Case("str", "cupy", "str(a[:4])", lambda: str(a[:4])),
        Case("nonzero", "cupy", "cp.nonzero(a)", lambda: cp.nonzero(a)),
        Case("argwhere", "cupy", "cp.argwhere(m)", lambda: cp.argwhere(m)),
        Case("mask_index", "cupy", "a[m]", lambda: a[m]),
        Case("where_one_argument", "cupy", "cp.where(m)", lambda: cp.where(m)),
        Case("where_three_arguments", "cupy", "cp.where(m, a, 0.0)", lambda: cp.where(m, a, 0.0)),
        Case("unique", "cupy", "cp.unique(a[:1000])", lambda: cp.unique(a[:1000])),
        Case("index_device_array", "cupy", "a[idx]", lambda: a[idx]),
        Case("index_python_list", "cupy", "a[[1, 2, 3]]", lambda: a[[1, 2, 3]]),
        Case("index_int", "cupy", "a[5]", lambda: a[5]),
        Case("asarray_numpy", "cupy", "cp.asarray(host)", lambda: cp.asarray(host)),
        Case("asarray_numpy_64mb", "cupy", "cp.asarray(big_host)", lambda: cp.asarray(big_host)),
        Case("array_from_list", "cupy", "cp.array([1.0, 2.0, 3.0])", lambda: cp.array([1.0, 2.0, 3.0])),
        Case("random", "cupy", "cp.random.rand(1000)", lambda: cp.random.rand(1000)),
        Case("zeros", "cupy", "cp.zeros(1000)", lambda: cp.zeros(1000)),
        Case("count_nonzero", "cupy", "cp.count_nonzero(m)", lambda: cp.count_nonzero(m)),
        Case("any", "cupy", "cp.any(m)", lambda: cp.any(m)),
        Case("allclose", "cupy", "cp.allclose(a, a)", lambda: cp.allclose(a, a)),
        Case("array_equal", "cupy", "cp.array_equal(a, a)", lambda: cp.array_equal(a, a)),
        Case("bincount", "cupy", "cp.bincount(labels)", lambda: cp.bincount(labels)),
        Case("bincount_minlength", "cupy", "cp.bincount(labels, minlength=10)", lambda: cp.bincount(labels, minlength=10)),
        Case("histogram", "cupy", "cp.histogram(a)", lambda: cp.histogram(a)),
        Case("sort", "cupy", "cp.sort(a)", lambda: cp.sort(a)),
        Case("fft", "cupy", "cp.fft.fft(a)", lambda: cp.fft.fft(a)),
        Case("solve", "cupy", "cp.linalg.solve(A, b)", lambda: cp.linalg.solve(square, rhs)),
        Case("inv", "cupy", "cp.linalg.inv(A)", lambda: cp.linalg.inv(square)),
        Case("cholesky", "cupy", "cp.linalg.cholesky(A)", lambda: cp.linalg.cholesky(spd)),
        Case("eigh", "cupy", "cp.linalg.eigh(A)", lambda: cp.linalg.eigh(spd)),
        Case("svd", "cupy", "cp.linalg.svd(A)", lambda: cp.linalg.svd(square)),
        Case("qr", "cupy", "cp.linalg.qr(A)", lambda: cp.linalg.qr(square)),
        Case("det", "cupy", "cp.linalg.det(A)", lambda: cp.linalg.det(square)),
        Case("norm", "cupy", "cp.linalg.norm(a)", lambda: cp.linalg.norm(a)),
        Case("free_all_blocks", "cupy", "cp.get_default_memory_pool().free_all_blocks()", lambda: cp.get_default_memory_pool().free_all_blocks()),
        Case("shape", "cupy", "a.shape[0]", lambda: a.shape[0]),
    ]
    spin = cp.RawKernel(
        r"""extern "C" __global__ void spin(long long cycles) {
            long long start = clock64();
            while (clock64() - start < cycles) {}
        }""",
        "spin",
    )

    def busy_cycles(cycles: int) -> None:
        spin((1,), (1,), (cp.int64(cycles),))

    def sync() -> None:
        cp.cuda.Device().synchronize()

    cycles_per_s = _calibrate(busy_cycles, sync)
    info = {"cupy": cp.__version__, "cuda_runtime": str(cp.cuda.runtime.runtimeGetVersion())}
    return cases, lambda seconds: busy_cycles(int(seconds * cycles_per_s)), sync, info


def numba_cases() -> tuple[list[Case], Callable[[float], None], Callable[[], None], dict[str, str]]:
    import numba
    import numpy as np
    from numba import cuda

    @cuda.jit
    def scale(values: Any, factor: float) -> None:
        i = cuda.grid(1)
        if i < values.size:
            values[i] *= factor

    @cuda.jit
    def spin(cycles: int) -> None:
        start = cuda.clock64()
        while cuda.clock64() - start < cycles:
            pass

    host = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    device_values = cuda.to_device(host)
    cases = [
        Case("control_synchronize", "numba", "cuda.synchronize()", cuda.synchronize),
        Case("kernel_launch", "numba", "scale[4, 256](d, 2.0)", lambda: scale[4, 256](device_values, 2.0)),
        Case("to_device", "numba", "cuda.to_device(host)", lambda: cuda.to_device(host)),
        Case("copy_to_host", "numba", "d.copy_to_host()", lambda: device_values.copy_to_host()),
        Case("kernel_launch_host_array", "numba", "scale[4, 256](host, 2.0)", lambda: scale[4, 256](host, 2.0)),
    ]

    def busy_cycles(cycles: int) -> None:
        spin[1, 1](cycles)

    cycles_per_s = _calibrate(busy_cycles, cuda.synchronize)
    return cases, lambda seconds: busy_cycles(int(seconds * cycles_per_s)), cuda.synchronize, {"numba": numba.__version__}


def _calibrate(busy_cycles: Callable[[int], None], sync: Callable[[], None]) -> float:
    """Clock cycles per second of the busy kernel (the SM clock under load)."""
    busy_cycles(10_000_000)
    sync()
    cycles = 100_000_000
    start = time.perf_counter()
    busy_cycles(cycles)
    sync()
    return cycles / (time.perf_counter() - start)


def main(argv: list[str]) -> int:
    dry_run = "--dry-run" in argv
    paths = [arg for arg in argv[1:] if not arg.startswith("--")]
    out = paths[0] if paths else "sync_truth.json"
    document: dict[str, Any] = {"busy_s": BUSY_S, "waited_share": WAITED_SHARE, "probes": PROBES, "machine": {}, "cases": []}
    builders: tuple[Callable[[], Any], ...] = ((lambda: torch_cases("cpu")),) if dry_run else (torch_cases, cupy_cases, numba_cases)
    for build in builders:
        try:
            cases, busy, sync, info = build()
        except Exception as exc:  # library missing or no GPU: record and go on
            document["machine"][getattr(build, "__name__", "torch")] = f"skipped: {type(exc).__name__}: {exc}"[:200]
            continue
        document["machine"].update(info)
        for case in cases:
            record = _probe(case, busy, sync)
            document["cases"].append(record)
            print(f"{record['library']:6} {record['name']:38} {record.get('verdict', 'error'):8} {record.get('host_s', record.get('error', ''))}")
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
