"""False-alarm shapes seen on third-party GPU code (benchmarks/realworld), each pinned silent,
next to the true problems of the same neighbourhood that must stay found."""

from __future__ import annotations

import textwrap

import pytest

from gpuadvisor import check_source


def rules_of(code: str, path: str = "train.py") -> list[tuple[str, int]]:
    return [(f.rule, f.line) for f in check_source(textwrap.dedent(code).lstrip("\n"), path)]


SILENT = {
    "type and shape queries from the cupy namespace are not arrays": """
        import cupy
        def take(a, indices, axis):
            for i, n in enumerate(range(a.size)):
                if cupy.issubdtype(a.dtype, cupy.bool_) or not cupy.can_cast(a, cupy.int64):
                    pass
                if cupy.ndim(indices) == 0:
                    pass
        """,
    "private cupy helpers are not known to return device arrays": """
        import cupy
        from cupy._core import internal
        def f(a, axis, n):
            axis = internal._normalize_axis_index(axis, a.ndim)
            for i in range(n):
                if i == axis:
                    pass
        """,
    "a loop over dimensions launches whole-array kernels": """
        import cupy
        def gradient(f, spacing):
            out = []
            for axis in range(f.ndim):
                d = cupy.diff(f, axis=axis)
                if (d == d[0]).all():
                    d = d[0]
                out.append(d)
            return out
        """,
    "input validation raises: the sync is the check's price": """
        import cupy
        def check_knots(knots, n):
            for d in range(n):
                td = knots[d]
                if (cupy.diff(td) < 0).any():
                    raise ValueError("knots must be non-decreasing")
        """,
    "test suites compare tiny GPU arrays element by element": """
        import torch
        def test_kvcache():
            seqlens = torch.randint(1, 100, (64,), device="cuda")
            for i in range(64):
                assert seqlens[i].item() > 0
        """,
    "host data copied to the device has no GPU fill to replace it": """
        import torch
        def act(self, obs, device):
            state = torch.FloatTensor(obs).to(device)
            return torch.tensor(obs).to(device)
        """,
    "a clock read that opens an interval closes none": """
        import time
        import torch
        def train(model, loader, device):
            end = time.time()
            for x in loader:
                x = x.to(device)
                loss = model(x).sum()
                loss.backward()
                tr0 = time.time()
        """,
    "a deadline test is not a benchmark": """
        import time
        import torch
        def nms(boxes, limit):
            t = time.time()
            for b in boxes:
                keep = torch.ops.torchvision.nms(b, b, 0.5)
                if (time.time() - t) > limit:
                    break
        """,
    "with stream.auto_synchronize() waits at the end of its block": """
        from time import time
        from numba import cuda
        cuda.to_device(A)  # warm-up: context and module loading happen here
        s = time()
        stream = cuda.stream()
        with stream.auto_synchronize():
            d = cuda.to_device(A, stream)
            d.copy_to_host(stream=stream)
        e = time()
        print(e - s)
        """,
    "a one-off tiny GPU operation costs microseconds": """
        import cupy
        taps = cupy.array([1.0, 4.0, 1.0]) / 6.0
        """,
    "an array filled by host code is data, not a GPU fill": """
        import numpy as np
        import time
        x = np.empty((100, 1000))
        x[:] = np.loadtxt("wave.txt")
        data = np.sin(x / 20.0)
        """,
    "a value reassigned in the loop is not loop-invariant": """
        import torch
        for dtype in (torch.float16, torch.float32, torch.float64, torch.bfloat16, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
            a = torch.tensor([10], dtype=dtype, device="cuda")
        """,
    "isinstance(key, tuple) proves key is no array in that branch": """
        import cupy as np
        def index(array, key, n):
            key = np.asarray(key)
            for i in range(n):
                if isinstance(key, tuple):
                    key = list(key)
        """,
    "an error message formatted right before raise runs once": """
        import cupy
        def check(xi, orders):
            xi = cupy.asarray(xi)
            for i in range(len(orders)):
                if orders[i] > 3:
                    message = "point %g has too many derivatives" % xi[i]
                    raise ValueError(message)
        """,
    "sparse-matrix predicates answer with a bool": """
        import cupy
        from cupyx.scipy import sparse
        def scale(X, n):
            for feature in range(n):
                if sparse.issparse(X):
                    pass
        """,
    "a data-time meter around the loader fetch measures the loader": """
        import time
        import torch
        end = time.time()
        for images, target in loader:
            images = images.to("cuda", non_blocking=True)
            data_time.update(time.time() - end)
            torch.cuda.synchronize()
            end = time.time()
        """,
    "image post-processing waits for the GPU before the clock read": """
        import time
        import torch
        for _ in range(10):
            ts = time.perf_counter()
            latents = pipe(prompt_embeds=embeds.to("cuda"), output_type="latent").images
            image = image_processor.postprocess(latents)[0]
            print(f"inference time: {time.perf_counter() - ts}")
        """,
}

FLAGGED = {
    "per-step loss.item() in a training loop": (
        """
        import torch
        def train(model, loader, optimizer, device):
            total = 0.0
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
                total += loss.item()
        """,
        ("GPU201", 9),
    ),
    "a per-pole scalar algorithm syncing in every iteration": (
        """
        import cupy
        def order(poles):
            kept = []
            for p in cupy.sort(poles):
                if cupy.conj(p) in poles:
                    kept.append(p)
            return kept
        """,
        ("GPU201", 5),
    ),
    "a host fill moved to the GPU in a training step": (
        """
        import torch
        def penalty(critic, real, fake, device):
            out = critic(real * 0.5 + fake * 0.5)
            grad_out = torch.ones(out.size()).to(device)
            return grad_out
        """,
        ("GPU102", 4),
    ),
    "a numba kernel launched for the first time inside the timed region": (
        """
        import time
        from numba import cuda

        @cuda.jit
        def kernel(x):
            i = cuda.grid(1)
            x[i] += 1

        d = cuda.to_device(host)
        t0 = time.time()
        kernel[64, 256](d)
        cuda.synchronize()
        t1 = time.time()
        print(t1 - t0)
        """,
        ("GPU402", 13),
    ),
    "a loop-invariant constant copied to the GPU every step": (
        """
        import torch
        def train(loader, model, guidance_scale, device):
            for step, batch in enumerate(loader):
                guidance = torch.tensor([guidance_scale], device=device)
                model(batch.to(device), guidance)
        """,
        ("GPU101", 4),
    ),
}


@pytest.mark.parametrize("code", SILENT.values(), ids=list(SILENT))
def test_shape_stays_silent(code: str) -> None:
    assert rules_of(code) == []


@pytest.mark.parametrize(("code", "expected"), FLAGGED.values(), ids=list(FLAGGED))
def test_true_problem_is_flagged(code: str, expected: tuple[str, int]) -> None:
    assert expected in rules_of(code)


def test_test_files_are_exempt_from_performance_rules_only() -> None:
    code = """
        import os
        import torch
        os.environ["OMP_NUM_THREADS"] = "4"
        x = torch.randn(100, device="cuda")
        for i in range(1000):
            print(x[i].item())
        """
    assert rules_of(code, "tests/test_kernel.py") == [("GPU502", 3)]
    assert ("GPU201", 6) in rules_of(code, "kernel.py")


def test_printf_formatting_of_gpu_elements_is_a_sync_not_a_kernel() -> None:
    code = """
        import cupy
        def names(n):
            indices = cupy.arange(n)
            return ["x%d" % i for i in indices]
        """
    assert rules_of(code) == [("GPU201", 4)]
