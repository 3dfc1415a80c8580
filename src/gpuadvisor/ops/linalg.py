"""Dense linear algebra: how LAPACK (NumPy, SciPy, PyTorch on the CPU) and cuSOLVER (CuPy,
PyTorch on CUDA) run a factorisation, and the one cost formula all of them share.

Each linear algebra entry of the registry carries a `Factorisation`: its FLOPs, its results
and its library behaviour. FLOP counts are the standard ones (Golub & Van Loan, "Matrix
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

import math
from collections.abc import Callable
from dataclasses import dataclass

from gpuadvisor.ops.cost import CostArgs, CostError, OpCost
from gpuadvisor.ops.formulas import CostFormula, Shapes

#: (m, n, k, full_matrices, compute_uv) -> FLOPs of the real-valued op.
Work = Callable[[int, int, int, bool, bool], float]
#: (rows, cols, k, full_matrices, compute_uv) -> elements returned (complex ones count twice).
Results = Callable[[int, int, int, bool, bool], float]


def svd_flops(m: int, n: int, k: int, full: bool, vectors: bool) -> float:
    if not vectors:
        return 4.0 * m * n * n - 4.0 / 3.0 * n**3
    if full:
        return 4.0 * m * m * n + 22.0 * n**3
    return 6.0 * m * n * n + 20.0 * n**3


def svd_results(rows: int, cols: int, k: int, full: bool, vectors: bool) -> float:
    small, large = min(rows, cols), max(rows, cols)
    if not vectors:
        return float(small)
    return float((rows * rows + cols * cols if full else large * small + small * small) + small)


#: The matrix side at which `Factorisation.cpu_serial_share` is stated. The share falls as 1 / sqrt(n):
#: the panel steps grow as n^2 against the trailing updates' n^3, but LAPACK widens its blocks with n, and
#: on the lease host (training_data/lease-xeon-cores-2026-11-28.csv) NumPy's det on 16 cores gave serial
#: shares 0.83, 0.60 and 0.43 at n = 512, 1024 and 2048.
SERIAL_SHARE_SIDE = 1024


@dataclass(frozen=True, kw_only=True)
class Factorisation:
    square: bool  # needs an n x n matrix
    work: Work
    results: Results
    #: A right-hand side b (second shape, default one column) is read with A.
    takes_rhs: bool = False
    #: Fraction of the BLAS rate LAPACK's blocked algorithm reaches, and the per-column cost of
    #: its sequential panel work (pivot search, Householder vectors), which dominates small n.
    cpu_efficiency: float
    cpu_column_s: float
    #: Share of the CPU time at n = SERIAL_SHARE_SIDE that runs on one core however many there are (the
    #: panel factorisations between the threaded trailing updates: Amdahl's law). Read off OpenBLAS on one
    #: host at 1, 4 and 16 cores (lease-xeon-cores-2026-11-28.csv: at n = 1000-2048 Cholesky ran 1.4x faster
    #: on 16 cores than on one, LU 2.1x, QR 2.0x, the SVD 1.7x, eigh 2.6x, inv 5.9x, where a product ran 13x).
    #: 0 where nothing was measured: every core, as the BLAS rate.
    cpu_serial_share: float = 0.0
    #: The same for cuSOLVER, whose panel steps are kernel launches and host round trips.
    gpu_efficiency: float
    gpu_column_s: float
    kernels: int = 3
    #: The op whose factorisation NumPy and CuPy run instead of this one's (a thin SVD with vectors for
    #: lstsq: NumPy's gelsd and CuPy's lstsq both go through one); empty: the same as PyTorch.
    numpy_runs: str = ""
    #: PyTorch on CUDA runs a faster algorithm (Jacobi SVD) or a host one (eig): time divisor.
    torch_gpu_speedup: float = 1.0

    def sides(self, op: str, shapes: Shapes) -> tuple[int, int, int]:
        """(m, n, k): rows and columns of the matrix (m >= n), right-hand sides."""
        first = shapes[0]
        if len(first) != 2:
            raise CostError(f"{op} needs a 2-D matrix shape: --shape MxN")
        rows, cols = first
        if self.square and rows != cols:
            raise CostError(f"{op} needs a square matrix shape: --shape NxN")
        k = 1
        if len(shapes) > 1:
            total = 1
            for d in shapes[1]:
                total *= d
            k = max(1, total // rows)
        return max(rows, cols), min(rows, cols), k

    def cpu_parallel_speedup(self, n: int, cores: int) -> float:
        """How many times faster than on one core LAPACK runs this factorisation of side n on `cores`."""
        serial = min(1.0, self.cpu_serial_share * math.sqrt(SERIAL_SHARE_SIDE / max(n, 1)))
        return 1.0 / (serial + (1.0 - serial) / max(cores, 1))

    def work_ratio(self, other: Factorisation, cost: OpCost) -> float:
        """How many times this factorisation's FLOPs the other one does on the cost's matrix (thin,
        with vectors: what a solver running `other` in its place computes)."""
        n = max(cost.segment, 1)
        m = max(int(cost.elements) // n, n)
        return other.work(m, n, 1, False, True) / max(self.work(m, n, 1, False, True), 1.0)

    def formula(self) -> CostFormula:
        """The cost: the factorisation's FLOPs, the matrix (and b) in, the results out."""

        def cost(shapes: Shapes, args: CostArgs) -> OpCost:
            m, n, k = self.sides(args.op, shapes)
            rows, cols = shapes[0]
            item, full, vectors = args.item, args.full_matrices, args.compute_uv
            rhs = m * k if self.takes_rhs else 0
            io = (rows * cols + rhs) * item
            out = self.results(rows, cols, k, full, vectors) * item
            working = (rows * cols * item, out)  # LAPACK factorises a copy of A; then the results
            return OpCost(
                op=args.op, parallel_cpu=args.parallel_cpu, flops=self.work(m, n, k, full, vectors), memory_bytes=io + out, kernels=self.kernels, input_bytes=io,
                output_bytes=out, elements=rows * cols, segment=n, allocations=working,
            )

        return cost
