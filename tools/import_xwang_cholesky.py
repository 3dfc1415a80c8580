"""Convert xwang233/code-snippet's `torch.linalg.cholesky` timings on an A100 (PyTorch 1.9) into training rows.

The repository (github.com/xwang233/code-snippet) holds the benchmark scripts and raw results an NVIDIA
PyTorch developer published with PyTorch's linear algebra changes. Folder
`linalg/cholesky_benchmark_for_torch1.9` times `torch.linalg.cholesky` of float64 matrices on an A100
with PyTorch built from the release/1.9 and release/1.8 branches (`linalg-prof.py`, `run_profiling.sh`);
the results are `A100/res-<build>.json`, a map "[batch, n]" -> microseconds, added in commit c60cdcc
(2021-06-03; `plot.py` of the same commit names `res-gitbf16699` "1.9" and `res-56b43f4` "1.8").
Only the 1.9 build's single matrices are kept (see HEADER for what is left out and why).

    python3 tools/import_xwang_cholesky.py path/to/code-snippet   # a git checkout holding COMMIT
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from published_rows import gpu_row, write_source

COMMIT = "c60cdcc2d8e2ac34c1eb89c9cd6965f91a7d4269"
WHEN = "2021-06-03"
NAME = "xwang_cholesky_a100"
RESULTS = "linalg/cholesky_benchmark_for_torch1.9/A100/res-gitbf16699.json"  # plot.py: "1.9"
GPU = "NVIDIA A100-SXM4-40GB"  # as nvidia-smi names it; the folder says "A100": form factor inferred, see HEADER
LIBRARY = "torch 1.9 (release/1.9 build +gitbf16699)"
#: `linalg-prof.py`: 1000 timed calls per size (after 1000 warm-up calls), the mean reported.
CALLS = 1000

HEADER = """\
# source: https://github.com/xwang233/code-snippet linalg/cholesky_benchmark_for_torch1.9/A100/res-gitbf16699.json at
#   commit c60cdcc2d8e2ac34c1eb89c9cd6965f91a7d4269 ("cholesky benchmark for torch 1.9", Xiao Wang, 2021-06-03); the code
#   timed is linalg-prof.py and run_profiling.sh of the same folder and commit; plot.py there labels res-gitbf16699 as
#   PyTorch "1.9" and res-56b43f4 as "1.8". Converted by tools/import_xwang_cholesky.py
# GPU: NVIDIA A100 (the results folder is named "A100"; taken as the SXM4 40GB card: the same author's A100 logs in the
#   same repository three weeks later, batchnorm3d-channels-last/A100/1624664593-A100-SXM4-40GB.txt, name that card; for a
#   latency-bound float64 factorisation the 40/80GB and SXM/PCIe variants differ little)
# libs: PyTorch built from source on the release/1.9 branch (run_profiling.sh: `git checkout gh/release/1.9`, version
#   suffix +gitbf16699) in a container with /opt/pytorch; CUDA and cuSOLVER versions not stated. A single matrix goes to
#   cuSOLVER potrf in 1.9 (cholesky_kernel: batchCount == 1 -> cholesky_helper_cusolver)
# what: torch.linalg.cholesky(x), x = A @ A.T + 1e-3 * I with A = torch.randn(1, n, n, float64, cuda): one n x n matrix in a
#   batch of one (written here as the 2-D n x n the predictor takes: batchCount 1 runs the same single potrf), n =
#   int(2**(k/10)) for k = 20..100 (4 to 1024; 72 distinct sizes: a size met again, in this sweep or as the batch of one
#   of the script's batch loop for n = 4, 32, 128, keeps its last measurement, as the script's dict did)
# timing: 1000 warm-up calls, torch.cuda.synchronize(), then t1 = time.time(); 1000 calls; synchronize(); t2: the MEAN of
#   1000 back-to-back calls (not a median), wall clock. Each call waits for the device anyway: torch.linalg.cholesky
#   in 1.9 checks cuSOLVER's info flag on the host (a 3-D input -> batchCheckErrors -> infos.to(kCPU)), so a call is
#   launch, factorisation and one synchronisation, as our own rows (no timing param)
# left out: the 1.8 build's results (res-56b43f4: PyTorch 1.8 ran single matrices through MAGMA's hybrid potrf, 12-13 ms
#   from n = 675 on, a library path no PyTorch release since takes); the batched rows of both builds (batches of 2 to
#   1024 matrices of 4, 32 and 128: the predictor's linear algebra ops take one 2-D matrix); the repository's other
#   benchmarks (svd, cholesky_inverse/solve, fft, pooling: other scripts, builds and dates)
# reliability: MEDIUM-HIGH (one run by a library developer on a dedicated machine, mean of 1000 calls per size; a
#   development build of 2021: cuSOLVER of CUDA 11.x, older than the libraries of our other sources)
"""


def rows(checkout: Path) -> list[dict[str, str]]:
    text = subprocess.run(
        ["git", "-C", str(checkout), "show", f"{COMMIT}:{RESULTS}"], check=True, capture_output=True, text=True,
    ).stdout
    results: dict[str, float] = json.loads(text)
    out = []
    for key, microseconds in results.items():
        batch, n = json.loads(key)
        if batch != 1:
            continue  # batched: no 2-D op expresses it
        row = gpu_row("cholesky", f"{n}x{n}", "float64", "", microseconds * 1e-6, GPU, NAME, WHEN, library_version=LIBRARY)
        row["repeats"] = str(CALLS)
        out.append(row)
    return sorted(out, key=lambda row: int(row["shape"].split("x")[0]))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    write_source(NAME, HEADER, rows(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
