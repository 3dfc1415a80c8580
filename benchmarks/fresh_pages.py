"""What a fresh result costs on this machine's CPU: the constants behind `fresh_pages_time`.

glibc maps blocks of 32 MiB and more afresh on every allocation, so an op making such a result
faults in all its pages on every call; smaller results reuse the heap. For sizes just under,
at and over 32 MiB the script times a ReLU making a new result and the same ReLU writing into a
preallocated one (PyTorch on 1 and 2 threads; NumPy's np.maximum), and prints the difference
per 4 KiB page (PyTorch) or per byte (NumPy, which asks for huge pages), next to what
`gpuadvisor.prediction.libraries` assumes. Medians of 15 calls after a warm-up.

Usage: python benchmarks/fresh_pages.py   (PyTorch optional: without it, NumPy only)
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from gpuadvisor.prediction.libraries import (
    FAULT_SCALING,
    MMAP_CEILING_BYTES,
    SINGLE_CORE_BANDWIDTH_GBS,
    SMALL_PAGE_BYTES,
    TORCH_PAGE_FAULT_S,
)

SIZES_BYTES = (MMAP_CEILING_BYTES - 16 * SMALL_PAGE_BYTES, MMAP_CEILING_BYTES, 2 * MMAP_CEILING_BYTES)


def median_seconds(call: Callable[[], object], repeats: int = 15) -> float:
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def numpy_rows() -> None:
    print(f"NumPy np.maximum(x, 0): extra ns per byte of a fresh result (model: {1 / SINGLE_CORE_BANDWIDTH_GBS:.3f} at >= 32 MiB)")
    for size in SIZES_BYTES:
        x = np.random.default_rng(0).random(size // 4, dtype=np.float32)
        out = np.empty_like(x)
        fresh = median_seconds(lambda: np.maximum(x, 0))
        reused = median_seconds(lambda: np.maximum(x, 0, out=out))
        print(f"  {size / 2**20:6.2f} MiB  fresh {fresh * 1e3:7.2f} ms  into out= {reused * 1e3:7.2f} ms  "
              f"-> {(fresh - reused) / size * 1e9:6.3f} ns/byte")


def torch_rows() -> None:
    try:
        import torch
    except ImportError:
        print("PyTorch not installed: no PyTorch rows")
        return
    for threads in (1, 2):
        torch.set_num_threads(threads)
        model = TORCH_PAGE_FAULT_S / threads**FAULT_SCALING
        print(f"PyTorch relu on {threads} thread(s): extra us per 4 KiB page of a fresh result (model: {model * 1e6:.2f} at >= 32 MiB)")
        for size in SIZES_BYTES:
            x = torch.randn(size // 4)
            out = torch.empty_like(x)
            fresh = median_seconds(lambda: torch.relu(x))
            reused = median_seconds(lambda: torch.clamp(x, min=0, out=out))
            print(f"  {size / 2**20:6.2f} MiB  fresh {fresh * 1e3:7.2f} ms  into out= {reused * 1e3:7.2f} ms  "
                  f"-> {(fresh - reused) / (size / SMALL_PAGE_BYTES) * 1e6:6.2f} us/page")


if __name__ == "__main__":
    numpy_rows()
    torch_rows()
