"""GPU402: the first call of some GPU work is inside the timed region."""

from __future__ import annotations

from collections.abc import Iterator

from gpuadvisor.analysis.facts import Event, ModuleFacts
from gpuadvisor.analysis.findings import Severity
from gpuadvisor.analysis.rule import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import short
from gpuadvisor.analysis.rules.timing import TIMING_PREFILTER, TimedRegion, launches_gpu, timed_regions


def _cold_work(region: TimedRegion, facts: ModuleFacts) -> Event | None:
    """The timed GPU work when none of it ran before the region, else None."""
    work = [event for event in region.inside if launches_gpu(event, facts)]
    if not work:
        return None
    if region.closing.ctx.loop is not None and region.closing.ctx.loop is region.opening.ctx.loop:
        return None  # repeated samples: the cold first one is diluted or discarded
    earlier = {event.key for event in region.scope.events[: region.start] if launches_gpu(event, facts)}
    if earlier.intersection(event.key for event in work):
        return None
    kernels = [event for event in work if _compiles_on_first_launch(event, facts)]
    return kernels[0] if kernels else work[-1]


def _compiles_on_first_launch(event: Event, facts: ModuleFacts) -> bool:
    """A launch of a numba `@cuda.jit` kernel of this file: its first call compiles it."""
    kernel = facts.functions.get(event.key)
    return kernel is not None and kernel.cuda_kernel


class TimingWithoutWarmup(Rule):
    code = "GPU402"
    category = "timing-without-warmup"
    severity = Severity.WARNING
    summary = "First call of GPU work timed: context, kernel-load and plan costs land in the number"
    prefilter = TIMING_PREFILTER

    VALID = [
        Valid(
            """
            import time
            import torch
            x = torch.randn(8192, 8192, device="cuda")
            for _ in range(3):
                y = x @ x
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            y = x @ x
            torch.cuda.synchronize()
            print(time.perf_counter() - t0)
            """
        ),
        Valid(
            """
            import time
            import cupy as cp
            x = cp.random.rand(4096, 4096)
            samples = []
            for _ in range(20):
                t0 = time.perf_counter()
                y = cp.fft.fft2(x)
                cp.cuda.Device().synchronize()
                samples.append(time.perf_counter() - t0)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import time
            import torch
            x = torch.randn(8192, 8192, device="cuda")
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            y = torch.fft.fft2(x)
            torch.cuda.synchronize()
            print("fft2 took", time.perf_counter() - t0)
            """,
            line=8,
        ),
        Invalid(
            """
            import time
            import numpy as np
            from numba import cuda

            @cuda.jit
            def relax(grid, out):
                i, j = cuda.grid(2)
                out[i, j] = 0.25 * (grid[i - 1, j] + grid[i + 1, j] + grid[i, j - 1] + grid[i, j + 1])

            d_grid = cuda.to_device(np.zeros((512, 512)))
            d_out = cuda.device_array_like(d_grid)
            start = time.time()
            for step in range(1000):
                relax[(32, 32), (16, 16)](d_grid, d_out)
                d_grid, d_out = d_out, d_grid
            cuda.synchronize()
            print("total", time.time() - start)
            """,
            line=17,
            message="numba compiles the kernel `relax` on its first launch",
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for region in timed_regions(facts):
            if region.closing.ctx.repeated:
                continue  # a per-iteration meter: only its first sample holds the warm-up
            cold = _cold_work(region, facts)
            if cold is None:
                continue
            what = short(facts.code(cold.node), 40)
            if _compiles_on_first_launch(cold, facts):
                cost = f"numba compiles the kernel `{cold.key}` on its first launch (often a second or more), inside the measurement"
            else:
                cost = "CUDA context set-up, kernel loading and cuBLAS/cuFFT plan creation land in the measurement"
            yield Report(
                region.closing.node,
                f"This timed region runs `{what}` for the first time: {cost}",
                "Run the operation once or a few times before starting the clock (then synchronise), "
                "and report the median of several timed repetitions.",
            )
