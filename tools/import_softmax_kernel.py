"""Convert the eager torch.softmax timings of Prathmesh234/SoftmaxKernel (H100 SXM, fp16) into training rows.

The repository (github.com/Prathmesh234/SoftmaxKernel, folder `SoftmaxKernel/`) compares a
Triton and a Helion softmax with PyTorch's `torch.softmax(x, dim=-1)` ("eager") on seven fp16
shapes and commits the results as `benchmark_results.json` (mean and min ms per shape and
provider). Only the eager rows are kept: the library softmax a user would call.

    python3 tools/import_softmax_kernel.py path/to/SoftmaxKernel   # a checkout at the commit named in HEADER
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from published_rows import gpu_row, write_source

GPU = "NVIDIA H100 80GB HBM3"  # the README's "NVIDIA H100 80GB HBM3 SXM"; benchmark.py prints get_device_name
WHEN = "2026-01-13"
TORCH = "torch 2.9.1"  # SoftmaxKernel/uv.lock

HEADER = """\
# source: https://github.com/Prathmesh234/SoftmaxKernel SoftmaxKernel/benchmark_results.json, read at commit
#   8fa2aeb182501ed70076b04e1e6cfaa331198ae9 (the folder last changed by 61345a3b, 2026-01-13); the code timed is
#   SoftmaxKernel/benchmark.py and softmax_eager.py at that commit. Converted by tools/import_softmax_kernel.py
# GPU: "NVIDIA H100 80GB HBM3 SXM" (README; benchmark.py prints torch.cuda.get_device_name), CUDA 12.8
# libs: PyTorch eager, torch 2.9.1 (uv.lock)
# what: torch.softmax(x, dim=-1) on x = torch.randn(M, N, float16) for (M, N) = (32, 128), (256, 1024), (1024, 1024),
#   (2048, 2048), (4096, 4096), (1024, 50257), (4096, 32000): one kernel each
# timing: the JSON's eager "mean_ms": 50 warm-up calls, then 200 calls each between two CUDA events, synchronised
#   after each, the 5 fastest and 5 slowest dropped, the mean of the rest. The start event is recorded on an idle
#   stream just before the call, so the host's dispatch of the one kernel lies between the events: kernel time plus
#   one launch that nothing hides (the smallest shapes measure 10-13 us); no L2 clearing, x stays the same tensor.
#   params timing=events (first scored as timing=kernel, before that timing existed)
# left out: the Triton and Helion providers; the min_ms column (the mean is what the other sources report)
# reliability: MEDIUM (one run per shape by one author, 4 significant digits, one GPU)
"""


def _shape(key: str) -> str:
    """`"[4096, 32000]"` -> `"4096x32000"`."""
    return "x".join(part.strip() for part in key.strip("[]").split(","))


def rows(checkout: Path) -> list[dict[str, str]]:
    table = json.loads((checkout / "SoftmaxKernel" / "benchmark_results.json").read_text(encoding="utf-8"))
    return [
        gpu_row("softmax", _shape(key), "float16", "timing=events", entry["eager"]["mean_ms"] * 1e-3, GPU,
                "softmax_kernel_h100", WHEN, library_version=TORCH)
        for key, entry in table.items()
    ]


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    write_source("softmax_kernel_h100", HEADER, rows(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
