"""Dense linear algebra ops, one table entry each: what the op computes, its FLOPs and results,
and how LAPACK (NumPy, SciPy, PyTorch on the CPU) and cuSOLVER (CuPy, PyTorch on CUDA) run it.

Adding a factorisation means adding one `LinalgOp` here (costs.py, libraries.py, model.py and
sweep.py read this table). FLOP counts are the standard ones (Golub & Van Loan, "Matrix
Computations", 4th ed., the LAPACK Users' Guide): n is the order of a square matrix, an m x n
matrix has m >= n after transposing, k is the number of right-hand sides.

Library defaults that change the work: `numpy.linalg.svd` and `torch.linalg.svd` return full
U and V (`full_matrices=True`), which for a tall m x n matrix forms an m x m U (a 10000 x 1000
SVD does 40x the FLOPs of the thin one); `compute_uv=False` computes values only.
`numpy.linalg.lstsq` solves through an SVD (LAPACK gelsd), as does CuPy's; PyTorch uses a QR
(gelsy on the CPU, gels on CUDA). `torch.linalg.eig` on CUDA tensors runs on the host (MAGMA's
geev): no GPU speed-up to speak of.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: (m, n, k, full_matrices, compute_uv) -> FLOPs of the real-valued op.
Work = Callable[[int, int, int, bool, bool], float]


def _svd_flops(m: int, n: int, k: int, full: bool, vectors: bool) -> float:
    if not vectors:
        return 4.0 * m * n * n - 4.0 / 3.0 * n**3
    if full:
        return 4.0 * m * m * n + 22.0 * n**3
    return 6.0 * m * n * n + 20.0 * n**3


@dataclass(frozen=True)
class LinalgOp:
    name: str
    description: str
    square: bool  # needs an n x n matrix
    work: Work
    #: Fraction of the BLAS rate LAPACK's blocked algorithm reaches, and the per-column cost of
    #: its sequential panel work (pivot search, Householder vectors), which dominates small n.
    cpu_efficiency: float
    cpu_column_s: float
    #: The same for cuSOLVER, whose panel steps are kernel launches and host round trips.
    gpu_efficiency: float
    gpu_column_s: float
    kernels: int = 3
    #: Work multiplier of the NumPy/CuPy algorithm where it differs from PyTorch's.
    numpy_factor: float = 1.0
    #: PyTorch on CUDA runs a faster algorithm (Jacobi SVD) or a host one (eig): time divisor.
    torch_gpu_speedup: float = 1.0


LINALG_OPS: dict[str, LinalgOp] = {
    op.name: op
    for op in (
        # LU with partial pivoting and two triangular solves; a 1024 solve takes ~2 ms in cuSOLVER
        # on an RTX 5090 whatever its FLOPs (seed 004): ~2 us per column.
        LinalgOp("solve", "solve A x = b (A square; b shape optional, default one column)", True,
                 lambda m, n, k, f, v: 2.0 / 3.0 * n**3 + 2.0 * n * n * k, 0.45, 0.3e-6, 0.5, 2e-6),
        LinalgOp("inv", "matrix inverse (LU, then the inverse from the factors)", True,
                 lambda m, n, k, f, v: 2.0 * n**3, 0.4, 0.6e-6, 0.5, 4e-6),
        LinalgOp("det", "determinant (LU factorisation)", True,
                 lambda m, n, k, f, v: 2.0 / 3.0 * n**3, 0.45, 0.3e-6, 0.5, 2e-6),
        LinalgOp("cholesky", "Cholesky factor of a symmetric positive definite matrix", True,
                 lambda m, n, k, f, v: n**3 / 3.0, 0.5, 0.15e-6, 0.5, 1e-6),
        LinalgOp("qr", "QR factorisation, reduced Q (NumPy's and PyTorch's default)", False,
                 lambda m, n, k, f, v: 4.0 * m * n * n - 4.0 / 3.0 * n**3, 0.3, 1e-6, 0.3, 5e-6),
        LinalgOp("lstsq", "least squares min |A x - b| (b shape optional, default one column)", False,
                 lambda m, n, k, f, v: 2.0 * m * n * n - 2.0 / 3.0 * n**3 + 4.0 * m * n * k, 0.3, 1e-6, 0.3, 5e-6,
                 numpy_factor=3.0),
        # Symmetric eigensolver: tridiagonal reduction 4/3 n^3, vectors by divide and conquer.
        LinalgOp("eigh", "eigenvalues and vectors of a symmetric matrix (--no-compute-uv: values only)", True,
                 lambda m, n, k, f, v: 9.0 * n**3 if v else 4.0 / 3.0 * n**3, 0.15, 3e-6, 0.05, 30e-6, kernels=10),
        # Nonsymmetric: Hessenberg reduction and shifted QR iterations, then eigenvectors.
        LinalgOp("eig", "eigenvalues and vectors of a general matrix (complex results)", True,
                 lambda m, n, k, f, v: 25.0 * n**3 if v else 10.0 * n**3, 0.1, 10e-6, 0.03, 100e-6, kernels=10),
        # gesdd on the CPU; cuSOLVER gesvd bidiagonalises one column at a time: 5-240 ms for
        # 100-2048 square matrices on an RTX 5090 (seed 004), ~50 us per column; torch on CUDA
        # uses Jacobi (gesvdj) first, faster than gesvd at small and mid sizes.
        LinalgOp("svd", "singular value decomposition (full U and V by default, as NumPy and torch;"
                 " --thin: reduced; --no-compute-uv: values only)", False,
                 _svd_flops, 0.12, 3e-6, 0.03, 50e-6, kernels=10, torch_gpu_speedup=3.0),
    )
}


def matrix_sides(op: str, shapes: list[tuple[int, ...]]) -> tuple[int, int, int]:
    """(m, n, k): rows and columns of the matrix (m >= n), right-hand sides; ValueError if unfit."""
    entry = LINALG_OPS[op]
    first = shapes[0]
    if len(first) != 2:
        raise ValueError(f"{op} needs a 2-D matrix shape: --shape MxN")
    rows, cols = first
    if entry.square and rows != cols:
        raise ValueError(f"{op} needs a square matrix shape: --shape NxN")
    k = 1
    if len(shapes) > 1:
        total = 1
        for d in shapes[1]:
            total *= d
        k = max(1, total // rows)
    return max(rows, cols), min(rows, cols), k


def result_elements(op: str, rows: int, cols: int, k: int, full: bool, vectors: bool) -> float:
    """Elements the op returns (complex results of eig count twice)."""
    small, large = min(rows, cols), max(rows, cols)
    if op in ("solve", "lstsq"):
        return float(small * k)
    if op == "det":
        return 1.0
    if op in ("inv", "cholesky"):
        return float(rows * cols)
    if op == "qr":
        return float(rows * small + small * cols)
    if op == "eigh":
        return float(small + (small * small if vectors else 0))
    if op == "eig":
        return 2.0 * (small + (small * small if vectors else 0))
    if not vectors:  # svd
        return float(small)
    return float((rows * rows + cols * cols if full else large * small + small * small) + small)
