"""Convert chsasank/device-benchmarks' A100 and A10 float32 matmul logs into training rows.

The repository (github.com/chsasank/device-benchmarks) times `torch.matmul(a, a)` on square
float32 matrices with `benchmark.py` and keeps only a summary table (best TFLOPS per device) in
its README; the per-size logs of a contributor's A100, A10 and V100 runs are in the message of
commit 0922806 ("Update README.md with more hardware", 2024-02-19). Only the Ampere GPUs' matrix
products are kept (see HEADER for what is left out and why).

    python3 tools/import_device_benchmarks.py path/to/device-benchmarks   # a git checkout holding COMMIT
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from published_rows import gpu_row, write_source

COMMIT = "09228066359603f6324b47b0142caddfdf59f414"
WHEN = "2024-02-19"
NAME = "device_benchmarks_ampere"
#: The log's section heading -> the GPU as the README's table names it, as a reported device name.
GPUS = {
    "A100": "NVIDIA A100 80GB PCIe",  # README: "Nvidia A100 80GB"; PCIe inferred, see HEADER
    "A10": "NVIDIA A10",  # README: "Nvidia A10 24GB"
}
#: The first size of the sweep is the process's first matrix product (cuBLAS's handle and
#: workspace are made inside its first timed trial: 2.3-2.8 ms for a 256^3 product).
FIRST_CALL_SIZE = 256

HEADER = """\
# source: https://github.com/chsasank/device-benchmarks, the message of commit 09228066359603f6324b47b0142caddfdf59f414
#   ("Update README.md with more hardware", Akash, 2024-02-19; merged as pull request #4), sections "## A100" and
#   "## A10" ("Device logs"); the code timed is benchmark.py at that commit. The README's summary table of the same
#   commit names the GPUs "Nvidia A100 80GB" and "Nvidia A10 24GB". Converted by tools/import_device_benchmarks.py
# GPU: NVIDIA A100 80GB (form factor not stated; taken as the PCIe card: the same contributor's later A100 numbers,
#   commit a3a6c1a, are from a runpod.io "A100 PCIe", and the log's own copy bandwidth, 1.49 TB/s at 380 MB, is 77%
#   of the PCIe card's 1,935 GB/s; the SXM4 card has the same FP32 peak, 19.5 TFLOP/s); NVIDIA A10 24GB
# libs: PyTorch eager, torch.matmul -> cuBLAS SGEMM; versions not stated (PyTorch of early 2024: TF32 off for matrix
#   products by default since 1.12, and the A100 peaks at 18.9 TFLOP/s, under the 19.5 FP32 peak: plain FP32)
# what: b = torch.matmul(a, a) with a = torch.rand(n, n, device="cuda") (float32), n = int(2**k) for k = 8, 8.25, ...,
#   12.75 (256 to 6888)
# timing: per trial torch.cuda.synchronize(); t0 = time.time(); matmul; synchronize(); t1: launch, kernel and one
#   synchronisation, as our own rows (no timing param); the log's elapsed_time is the MEAN of 10 trials (not a median),
#   no warm-up call: each size's first trial also allocates the new output through the caching allocator
# left out: n = 256 (the process's first product: cuBLAS initialised inside its timed trials, 2.3-2.8 ms); the copy
#   benchmark (a.copy_(b) of 2**20 to 2**26.5 float32 elements: no predict op for a device-to-device copy); the V100
#   log (pre-Ampere) and the CPU and Apple logs of the same message; the README's summary table (no sizes)
# reliability: MEDIUM-LOW (one run per GPU by one contributor, 10 trials per size, wall clock around each call, cloud
#   machines; the A100's 1217^3 product, 0.51 ms at 7 TFLOP/s between 0.15 and 0.38 ms neighbours, looks like noise
#   but is kept as published)
"""


def _sections(message: str) -> dict[str, list[tuple[int, float]]]:
    """`## NAME` sections of the commit message -> the (size, seconds) lines of their matmul table."""
    tables: dict[str, list[tuple[int, float]]] = {}
    name, rows = "", None
    for line in message.splitlines():
        text = line.strip()
        if text.startswith("## "):
            name, rows = text[3:].strip(), None
        elif text.startswith("size, elapsed_time, tflops"):
            rows = tables.setdefault(name, [])
        elif text.startswith("size (GB)"):
            rows = None  # the copy table
        elif rows is not None and text:
            size, seconds, _ = (part.strip() for part in text.split(","))
            rows.append((int(size), float(seconds)))
    return tables


def rows(checkout: Path) -> list[dict[str, str]]:
    message = subprocess.run(
        ["git", "-C", str(checkout), "show", "-s", "--format=%B", COMMIT], check=True, capture_output=True, text=True,
    ).stdout
    tables = _sections(message)
    out = []
    for heading, gpu in GPUS.items():
        for n, seconds in tables[heading]:
            if n == FIRST_CALL_SIZE:
                continue
            row = gpu_row("matmul", f"{n}x{n};{n}x{n}", "float32", "", seconds, gpu, NAME, WHEN)
            row["repeats"] = "10"
            out.append(row)
    return out


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    write_source(NAME, HEADER, rows(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
