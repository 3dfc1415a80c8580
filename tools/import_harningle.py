"""Convert harningle/useful-scripts' NumPy MKL-vs-OpenBLAS timings (24-core Xeon Gold 6248R) into CPU rows.

The repository (github.com/harningle/useful-scripts, folder `numpy/`) times nine NumPy calls on a
5000 x 5000 float64 positive semi-definite matrix (`np-benchmark.py`, run with n = 5000 as the post says)
once with NumPy on OpenBLAS and once on MKL, and commits the totals of 10 calls as `data/openblas.json`
and `data/mkl.json`. The post (harningle.github.io, 2024-11-05, "NumPy: MKL vs OpenBLAS") names the CPU.

    python3 tools/import_harningle.py path/to/useful-scripts   # a checkout at the commit named in HEADER
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from published_rows import cpu_row, write_source

CPU, CORES = "Intel Xeon Gold 6248R", 24
WHEN = "2024-11-05"
N = 5000
LIBRARIES = {
    "openblas": "numpy 2.1.3 (conda-forge), OpenBLAS 0.3.28 (libopenblasp-r0.3.28)",
    "mkl": "numpy (conda-forge, version not stated), MKL 2023.1 (mkl-sdl)",
}
SQUARE = f"{N}x{N}"
#: JSON key -> (op, shape, params); the vector norm has no predict op.
CALLS = {
    "Mat.-vec. mul.": ("matmul", f"{SQUARE};{N}x1", ""),
    "Mat. mul.": ("matmul", f"{SQUARE};{SQUARE}", ""),
    "Mat. det.": ("det", SQUARE, ""),
    "Inverse": ("inv", SQUARE, ""),
    "Eigenvalue": ("eig", SQUARE, "compute_uv=0"),
    "SVD": ("svd", SQUARE, ""),
    "QR": ("qr", SQUARE, ""),
    "Cholesky": ("cholesky", SQUARE, ""),
}
#: The OpenBLAS product and matrix-vector product give the machine's rates (training_data/machines.toml).
CALIBRATION = {("openblas", "Mat. mul."), ("openblas", "Mat.-vec. mul.")}

HEADER = """\
# source: https://github.com/harningle/useful-scripts numpy/data/openblas.json and numpy/data/mkl.json, read at commit
#   67622f7a324753f147d5287216172e10bbdab38a (2024-11-05, "new MKL vs OpenBLAS benchmark using larger matrix"); the
#   code timed is numpy/np-benchmark.py at that commit; hardware, sizes and libraries from the post
#   https://harningle.github.io/2024/11/05/numpy-mkl-vs-openblas.html (_posts/2024-11-05-numpy-mkl-vs-openblas.md of
#   harningle/harningle.github.io, commit 85ba019f61ea3534cdfaa65be44e581d069e3688). Converted by tools/import_harningle.py
# CPU: "a 24-core Intel Xeon Gold 6248R" (the post; 24 cores, 3.0 GHz base, two AVX-512 FMA units per core, 6 x DDR4-2933),
#   Linux; NumPy with its default threads ("we do see all cores are being utilised"); no GPU
# libs: env 1 numpy 2.1.3 from conda-forge on OpenBLAS 0.3.28 (libopenblasp-r0.3.28.so, Python 3.12); env 2 conda-forge
#   numpy with libblas=*=*mkl, MKL 2023.1 ("mkl-sdl"); both as shown in the post
# what: X = rand(5000, 5000) float64, X = X @ X.T (symmetric positive semi-definite), Y = rand(5000, 5000), x = rand(5000);
#   np.dot(X, x) (costed as a 5000x5000 by 5000x1 product), np.dot(X, Y), np.linalg.det(X), inv(X), eigvals(X)
#   (LAPACK geev without vectors: op eig, params compute_uv=0), svd(X) (full_matrices=True, square), qr(X) (reduced),
#   cholesky(X)
# timing: timeit.timeit(stmt, number=10) per call, one process: the JSON holds the total of 10 back-to-back calls; the
#   rows hold that total / 10 (a mean of 10, first call included; at 5000 a first call's thread start-up is negligible)
# calibration: the machine's rates in machines.toml come from the two OpenBLAS products (as `gpuadvisor calibrate` would
#   measure them): fp64 = 2 * 5000^3 / 0.28972 s = 863 GFLOP/s, fp32 = 2 x fp64, bandwidth = 200 MB / 0.0024071 s =
#   83 GB/s (X read once by the matrix-vector product); those two rows carry role = calibration and are not scored.
#   The MKL rows are costed on the same rates (the model does not know the BLAS vendor).
# left out: np.linalg.norm(x) of 5000 elements (no predict op)
# reliability: MEDIUM (one run of 10 calls per op and library by one author, on one machine; full float precision)
"""


def rows(checkout: Path) -> list[dict[str, str]]:
    out = []
    for library, version in LIBRARIES.items():
        table = json.loads((checkout / "numpy" / "data" / f"{library}.json").read_text(encoding="utf-8"))
        for key, (op, shape, params) in CALLS.items():
            role = "calibration" if (library, key) in CALIBRATION else ""
            out.append(cpu_row(op, shape, "float64", params, table[key] / 10, CPU, CORES, "harningle_xeon6248r", WHEN,
                               library_version=version, role=role))
    return out


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    write_source("harningle_xeon6248r", HEADER, rows(Path(sys.argv[1])),
                 kind="CPU-only rows (no GPU side: scored per side, not as speedups)")


if __name__ == "__main__":
    main()
