"""The op registry: every operation `gpuadvisor predict` knows, one `Op` entry each.

An entry says everything the rest of the package needs to know about its op: its name and
one-line description (`predict --list-ops`), its cost formula (formulas.py, linalg.py), how
the CPU libraries thread it and how the GPU libraries run it, which calls `check` reads as
the op in code, the sizes `predict --sweep` covers and the series `gpuadvisor bench` measures
it on. The order of OPS is the order of the learned model's per-op feature blocks: new ops go
at the end, since an op inserted elsewhere moves every later op's features in the shipped fit.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuadvisor.ops import formulas
from gpuadvisor.ops.formulas import CostFormula
from gpuadvisor.ops.linalg import Factorisation, svd_flops, svd_results


class Family(enum.Enum):
    """The kind of algorithm: how the GPU libraries run it (libraries.gpu_time), and for the
    sorts, fills and sparse products, what the CPU libraries and the harness do differently."""

    ELEMENTWISE = "elementwise"
    EXPRESSION = "expression"  # a chain of elementwise kernels (the harness evaluates --expr)
    FILL = "fill"
    COPY = "copy"
    REDUCTION = "reduction"  # reads everything once or twice at a reduction's bandwidth
    SORT = "sort"
    FFT = "fft"
    MATMUL = "matmul"  # cuBLAS tiles, tensor cores (TF32 for float32 when allowed)
    LINALG = "linalg"  # LAPACK / cuSOLVER factorisations (the entry's `linalg`)
    SPARSE = "sparse"  # cuSPARSE / scipy.sparse: the harness builds the matrix per library


class CpuThreads(enum.Enum):
    """How many cores the CPU library puts on the op (libraries._cpu_threads)."""

    ALL = "all"  # BLAS and LAPACK, in both NumPy and PyTorch
    #: NumPy runs it on one core; PyTorch splits it over its threads past its grain size.
    ONE = "one"
    #: NumPy on one core; PyTorch parallel over independent rows only (sorts, FFTs, softmax).
    ROWS = "rows"
    #: One core in both libraries: each value waits for the last state of a sequential bit
    #: generator (NumPy's PCG64 `Generator.random`, torch's mt19937 behind `uniform_`).
    SERIAL = "serial"


class Reading(enum.Enum):
    """Which arguments of a call `check` reads as the op's operands (facts/array_ops.py)."""

    FIRST = "first operand"
    FIRST_TWO = "first two operands"
    ALONG_AXIS = "first operand, and the axis= / dim= argument"
    #: inv(A), read as solve(A, I): A's shape twice.
    SQUARE_TWICE = "first operand, a square matrix, as both operands"


@dataclass(frozen=True)
class InCode:
    """How `gpuadvisor check` predicts a call of the op that it finds in code."""

    reading: Reading
    #: Another op's cost stands in for this one's (empty: the op's own).
    predicted_as: str = ""


@dataclass(frozen=True)
class Run:
    """One series of configurations the harness measures: a shape series of bench/plan.py
    (by name) and the params each row records ("axis=1", "density=0.01", "expr=...")."""

    series: str
    params: str = ""


@dataclass(frozen=True, kw_only=True)
class Bench:
    """How `gpuadvisor bench` measures the op."""

    #: Where its rows come in each dtype's sweep (lower first): the cheapest and most used
    #: series first, so that a sweep cut short by --budget has the most useful rows.
    priority: int
    runs: tuple[Run, ...]
    #: array namespace -> the function timed on the inputs (and axis keywords): the same for
    #: NumPy, CuPy, torch and (for `scipy` ops) SciPy. None: the backend builds the work
    #: itself (sparse matrices, expressions).
    function: Callable[[Any], Callable[..., Any]] | None
    #: The first operand is made well conditioned (random + n I) so a solve is stable.
    conditioned: bool = False
    #: The first operand is symmetric positive definite ((R + R^T) / 2 + n I): Cholesky and eigh.
    symmetric: bool = False
    #: Measured in float16 / bfloat16 too (GPU backends only).
    half: bool = False
    #: SciPy has its own version (scipy.linalg, scipy.fft, scipy.sparse), measured as a backend.
    scipy: bool = False
    #: Only matrices up to this side (0: the whole series): past it one call takes minutes.
    largest_side: int = 0
    #: Measured on complex64 / complex128 inputs too (every library takes them for this op).
    complex_inputs: bool = False


@dataclass(frozen=True, kw_only=True)
class SweepSeries:
    """The sizes `predict --sweep` covers, and the operand shapes at each size n."""

    shapes: Callable[[int], list[tuple[int, ...]]]
    sizes: tuple[int, ...]
    matrix: bool  # n is the side of an n x n matrix, not a count of elements

    @property
    def label(self) -> str:
        return "n (matrices n x n)" if self.matrix else "elements"


VECTOR_SIZES = tuple(4**k for k in range(2, 15))  # 16 .. 268 million elements
MATRIX_SIDES = tuple(2**k for k in range(4, 16))  # 16 .. 32768
#: Factorisations whose largest sweep sizes would take minutes on a CPU.
SLOW_MATRIX_SIDES = tuple(n for n in MATRIX_SIDES if n <= 8192)
VECTOR = SweepSeries(shapes=lambda n: [(n,)], sizes=VECTOR_SIZES, matrix=False)
PAIR = SweepSeries(shapes=lambda n: [(n,), (n,)], sizes=VECTOR_SIZES, matrix=False)
SQUARE = SweepSeries(shapes=lambda n: [(n, n)], sizes=MATRIX_SIDES, matrix=True)
SLOW_SQUARE = SweepSeries(shapes=lambda n: [(n, n)], sizes=SLOW_MATRIX_SIDES, matrix=True)
SQUARE_AND_COLUMN = SweepSeries(shapes=lambda n: [(n, n), (n, 1)], sizes=MATRIX_SIDES, matrix=True)

#: How much slower a single-lane CPU op runs along a strided axis than along the last one
#: (`Op.stride_slowdown`): (neighbours within one 4 KiB page, neighbours pages apart). Measured
#: on 64x1024x128 float32 along axes 1 and 0 against axis 2 (NumPy 2.4 and torch 2.13 on the
#: development machine; torch argmax, sort and sum also on the four mlx-benchmark hosts:
#: argmax 1.2-1.9x and 3.3-9.7x, sort 1.0-1.5x, sum 1.3-1.6x). NumPy reduces an outer axis by
#: adding whole rows, which stays contiguous; torch sorts whole rows after a transposed copy.
SUM_STRIDE = {"numpy": (1.0, 1.0), "torch": (1.5, 2.0)}
SORT_STRIDE = {"numpy": (4.0, 15.0), "torch": (1.3, 1.5)}

#: Expressions the harness measures `expr` on: 2 to 6 eager kernels each.
BENCH_EXPRESSIONS = ("x*2.0+y", "sqrt(x*x+y*y)", "sin(x)**2+cos(x)**2", "exp(-x*x)*y+x", "where(x>0,x,0.1*x)*y+sin(y)")
SPARSE_DENSITIES = ("0.001", "0.01", "0.1")
#: The params of a float32 matrix product on TF32 tensor cores (torch's `allow_tf32`), as the
#: published sources write it too; only torch on CUDA measures it.
TF32 = "tf32=1"
ALONG_AXIS_RUNS = (Run("vector"), Run("matrix", "axis=1"))
#: One uniform value from the CPU libraries' generators, on one core: 1.8-2.2 ns (float32) and
#: 2.2-3.0 ns (float64) for NumPy, 2.8-7.4 ns for torch on the development machine's EPYC, and
#: 2.3-4.7 ns for NumPy on the 2026-11-28 H200 lease's Xeon host (training_data/: the rows of
#: 1M-64M values). Costed as memory writes it came out 11-19x too fast.
CPU_RANDOM_VALUE_S = 2.5e-9


@dataclass(frozen=True, kw_only=True)
class Op:
    name: str
    description: str  # one line of `gpuadvisor predict --list-ops`
    family: Family
    cost: CostFormula
    sweep: SweepSeries
    #: Library -> names of its calls computing the op (dotted below the library module). `check`
    #: reads the last part of each as the op where `in_code` says how.
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    in_code: InCode | None = None  # None: `check` does not predict this op from calls
    infix: str = ""  # the operator written between its operands in findings ("@")
    cpu_threads: CpuThreads = CpuThreads.ONE
    #: FLOPs decide its time (products, factorisations): a complex multiply-add counts 4 real
    #: FLOPs, and the model weighs compute against memory time on the GPU side too.
    compute_bound: bool = False
    #: Library -> (within a page, pages apart) slowdown along a strided axis (see SUM_STRIDE);
    #: a library not named streams a cache line per element (libraries.DEFAULT_STRIDE_SLOWDOWN).
    stride_slowdown: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    #: CuPy composes it from simpler kernels: this many more launches, and this many times the
    #: traffic (std: mean, subtract, square, sum: four kernels, three passes).
    cupy_composed: int = 0
    #: Returns int64 indices (argsort): a GPU sort must carry them along with the keys.
    returns_indices: bool = False
    linalg: Factorisation | None = None
    bench: Bench | None = None  # None: not measured by `gpuadvisor bench` (published rows only)
    #: A real-to-complex transform (cuFFT R2C, pocketfft's real FFT): it reads the real input as it
    #: is, where a complex transform of real data converts it to complex first.
    real_transform: bool = False
    #: The learned correction is this op's (same library code on less work: rfft is fft's R2C path),
    #: so the op's own analytic cost carries the difference and an op with few rows keeps a curve.
    fitted_as: str = ""
    #: CPU seconds per element on one core that no vector unit shortens (a sequential generator's
    #: step): the CPU side's compute is at least elements x this.
    cpu_element_s: float = 0.0

    @property
    def tf32_capable(self) -> bool:
        """float32 runs on TF32 tensor cores where the code allows it (matrix products)."""
        return self.family is Family.MATMUL

    @property
    def call_names(self) -> frozenset[str]:
        """The short names (`svd` of `linalg.svd`) of its calls in every library."""
        return frozenset(alias.rsplit(".", 1)[-1] for names in self.aliases.values() for alias in names)


def _factorisation(name: str, description: str, sweep: SweepSeries, linalg: Factorisation, **extra: Any) -> Op:
    """A LAPACK / cuSOLVER op: its factorisation's cost, on every core (BLAS) of the CPU."""
    return Op(
        name=name, description=description, family=Family.LINALG, cost=linalg.formula(), sweep=sweep, linalg=linalg,
        cpu_threads=CpuThreads.ALL, compute_bound=True, **extra,
    )


def _softmax(xp: Any) -> Callable[..., Any]:
    """The softmax a user of the library calls: torch's own kernel; NumPy and CuPy have none, so
    the steps their users write (and SciPy's and CuPy's `special.softmax` take): subtract each
    row's maximum, exponentiate, divide by the row's sum."""
    if hasattr(xp, "softmax"):
        return lambda x, dim=-1: xp.softmax(x, dim)

    def softmax(x: Any, axis: int | None = -1) -> Any:
        shifted = xp.exp(x - x.max(axis=axis, keepdims=True))
        return shifted / shifted.sum(axis=axis, keepdims=True)

    return softmax


def _entries() -> tuple[Op, ...]:
    same = lambda *names: {"numpy": names, "cupy": names, "torch": names}  # noqa: E731
    linalg = lambda name: {"numpy": (f"linalg.{name}",), "cupy": (f"linalg.{name}",), "torch": (f"linalg.{name}",)}  # noqa: E731
    square = Run("matrix")
    return (
        Op(name="matmul", description="matrix product A @ B (2 shapes; 3-D shapes are batched)", family=Family.MATMUL,
           cost=formulas.matmul, sweep=SweepSeries(shapes=lambda n: [(n, n), (n, n)], sizes=MATRIX_SIDES, matrix=True),
           aliases={"numpy": ("matmul", "dot"), "cupy": ("matmul", "dot"), "torch": ("matmul", "mm", "bmm")},
           in_code=InCode(Reading.FIRST_TWO), infix="@", cpu_threads=CpuThreads.ALL, compute_bound=True,
           bench=Bench(priority=1, runs=(Run("matmul"), Run("matmul", TF32), Run("matmul_tall"), Run("matmul_batched"), Run("matmul_layer"),
                                           Run("matmul_layer", TF32)),
                       function=lambda xp: xp.matmul, half=True, complex_inputs=True)),
        Op(name="add", description="elementwise x + y", family=Family.ELEMENTWISE, cost=formulas.binary, sweep=PAIR,
           bench=Bench(priority=2, runs=(Run("pair"),), function=lambda xp: operator.add, complex_inputs=True)),
        Op(name="mul", description="elementwise x * y", family=Family.ELEMENTWISE, cost=formulas.binary, sweep=PAIR,
           bench=Bench(priority=2, runs=(Run("pair"),), function=lambda xp: operator.mul, complex_inputs=True)),
        Op(name="sin", description="elementwise sin(x)", family=Family.ELEMENTWISE, cost=formulas.transcendental, sweep=VECTOR,
           bench=Bench(priority=3, runs=(Run("vector"),), function=lambda xp: xp.sin)),
        Op(name="exp", description="elementwise exp(x)", family=Family.ELEMENTWISE, cost=formulas.transcendental, sweep=VECTOR,
           bench=Bench(priority=3, runs=(Run("vector"),), function=lambda xp: xp.exp, complex_inputs=True)),
        Op(name="sum", description="sum of all elements (--axis for one axis)", family=Family.REDUCTION,
           cost=formulas.reduction(), sweep=VECTOR, aliases=same("sum"), in_code=InCode(Reading.ALONG_AXIS),
           stride_slowdown=SUM_STRIDE,
           bench=Bench(priority=5, runs=ALONG_AXIS_RUNS, function=lambda xp: xp.sum, complex_inputs=True)),
        Op(name="mean", description="mean of all elements (--axis for one axis)", family=Family.REDUCTION,
           cost=formulas.reduction(kernels=2), sweep=VECTOR, aliases=same("mean"), in_code=InCode(Reading.ALONG_AXIS),
           stride_slowdown=SUM_STRIDE,
           bench=Bench(priority=5, runs=ALONG_AXIS_RUNS, function=lambda xp: xp.mean)),
        Op(name="std", description="standard deviation (--axis for one axis)", family=Family.REDUCTION,
           cost=formulas.reduction(passes=2, kernels=3, temporaries=2),  # x - mean, then its square
           sweep=VECTOR, aliases=same("std"), in_code=InCode(Reading.ALONG_AXIS), stride_slowdown=SUM_STRIDE,
           cupy_composed=3, bench=Bench(priority=5, runs=ALONG_AXIS_RUNS, function=lambda xp: xp.std)),
        Op(name="sort", description="sort along the last axis (--axis for another)", family=Family.SORT,
           cost=formulas.sort(index_result=False), sweep=VECTOR, aliases=same("sort"), in_code=InCode(Reading.FIRST),
           cpu_threads=CpuThreads.ROWS, stride_slowdown=SORT_STRIDE,
           bench=Bench(priority=3, runs=(Run("vector"),), function=lambda xp: xp.sort)),
        Op(name="argsort", description="argsort along the last axis (--axis for another)", family=Family.SORT,
           cost=formulas.sort(index_result=True), sweep=VECTOR, aliases=same("argsort"), in_code=InCode(Reading.FIRST),
           cpu_threads=CpuThreads.ROWS, stride_slowdown=SORT_STRIDE, returns_indices=True,
           bench=Bench(priority=3, runs=(Run("vector"),), function=lambda xp: xp.argsort)),
        Op(name="argmax", description="index of the largest element (--axis for one axis)", family=Family.REDUCTION,
           cost=formulas.reduction(index_result=True), sweep=VECTOR,
           stride_slowdown={"numpy": (4.0, 6.5), "torch": (1.3, 4.0)},
           bench=Bench(priority=5, runs=ALONG_AXIS_RUNS, function=lambda xp: xp.argmax)),
        Op(name="softmax", description="softmax along the last axis (--axis for another)", family=Family.REDUCTION,
           cost=formulas.softmax, sweep=VECTOR, cpu_threads=CpuThreads.ROWS, stride_slowdown={"torch": (1.0, 1.25)},
           # CuPy has no softmax kernel: max, subtract, exp, sum, divide (cupyx.scipy.special.softmax, and what users
           # write); 60-120 us per call on the H200 lease below 4M elements, where torch's one kernel takes 20
           cupy_composed=4,
           bench=Bench(priority=5, runs=(Run("vector"), Run("matrix", "axis=1")), function=_softmax, half=True)),
        Op(name="concat", description="concatenate two arrays (--axis, default 0)", family=Family.COPY, cost=formulas.concat,
           sweep=PAIR, bench=Bench(priority=2, runs=(Run("pair"),), function=lambda xp: lambda x, y: xp.concatenate((x, y)))),
        # The harness draws with each library's generator object (NumPy's and CuPy's default_rng, a torch Generator).
        Op(name="random", description="fill an array with uniform random numbers", family=Family.FILL, cost=formulas.fill,
           sweep=VECTOR, cpu_threads=CpuThreads.SERIAL, cpu_element_s=CPU_RANDOM_VALUE_S, bench=Bench(priority=2, runs=(Run("vector"),), function=None)),
        Op(name="fft", description="1-D complex FFT along the last axis (--axis for another)", family=Family.FFT,
           cost=formulas.fft, sweep=VECTOR, aliases={**same("fft.fft", "fft.ifft"), "scipy": ("fft.fft",)},
           in_code=InCode(Reading.FIRST), cpu_threads=CpuThreads.ROWS,
           bench=Bench(priority=3, runs=(Run("vector"),), function=lambda xp: xp.fft.fft, scipy=True, complex_inputs=True)),
        Op(name="rfft", description="1-D FFT of a real array along the last axis (the half spectrum)", family=Family.FFT,
           cost=formulas.rfft, sweep=VECTOR, aliases={**same("fft.rfft", "fft.irfft"), "scipy": ("fft.rfft",)},
           in_code=InCode(Reading.FIRST), cpu_threads=CpuThreads.ROWS, real_transform=True, fitted_as="fft",
           bench=Bench(priority=3, runs=(Run("vector"),), function=lambda xp: xp.fft.rfft, scipy=True)),
        Op(name="fft2", description="2-D complex FFT of the last two axes", family=Family.FFT, cost=formulas.fft2, sweep=SQUARE,
           aliases={**same("fft.fft2", "fft.ifft2", "fft.rfft2"), "scipy": ("fft.fft2",)}, in_code=InCode(Reading.FIRST),
           cpu_threads=CpuThreads.ROWS,
           bench=Bench(priority=6, runs=(square,), function=lambda xp: xp.fft.fft2, scipy=True, complex_inputs=True)),
        # LU with partial pivoting and two triangular solves; a 1024 solve takes ~2 ms in cuSOLVER
        # on an RTX 5090 whatever its FLOPs (seed 004): ~2 us per column.
        _factorisation(
            "solve", "solve A x = b (A square; b shape optional, default one column)", SQUARE_AND_COLUMN,
            Factorisation(square=True, work=lambda m, n, k, f, v: 2.0 / 3.0 * n**3 + 2.0 * n * n * k,
                          results=lambda rows, cols, k, f, v: float(min(rows, cols) * k), takes_rhs=True,
                          cpu_efficiency=0.45, cpu_column_s=0.3e-6, cpu_serial_share=0.3, gpu_efficiency=0.5, gpu_column_s=2e-6),
            aliases={**linalg("solve"), "scipy": ("linalg.solve",)}, in_code=InCode(Reading.FIRST_TWO),
            bench=Bench(priority=7, runs=(Run("solve"),), function=lambda xp: xp.linalg.solve, conditioned=True,
                        scipy=True, complex_inputs=True)),
        _factorisation(
            "inv", "matrix inverse (LU, then the inverse from the factors)", SQUARE,
            Factorisation(square=True, work=lambda m, n, k, f, v: 2.0 * n**3, results=lambda rows, cols, k, f, v: float(rows * cols),
                          cpu_efficiency=0.4, cpu_column_s=0.6e-6, cpu_serial_share=0.12, gpu_efficiency=0.5, gpu_column_s=4e-6),
            aliases=linalg("inv"), in_code=InCode(Reading.SQUARE_TWICE, predicted_as="solve"),
            bench=Bench(priority=7, runs=(square,), function=lambda xp: xp.linalg.inv, conditioned=True, complex_inputs=True)),
        _factorisation(
            "det", "determinant (LU factorisation)", SQUARE,
            Factorisation(square=True, work=lambda m, n, k, f, v: 2.0 / 3.0 * n**3, results=lambda rows, cols, k, f, v: 1.0,
                          cpu_efficiency=0.45, cpu_column_s=0.3e-6, cpu_serial_share=0.6, gpu_efficiency=0.5, gpu_column_s=2e-6),
            bench=Bench(priority=7, runs=(square,), function=lambda xp: xp.linalg.det, conditioned=True)),
        _factorisation(
            "cholesky", "Cholesky factor of a symmetric positive definite matrix", SQUARE,
            Factorisation(square=True, work=lambda m, n, k, f, v: n**3 / 3.0, results=lambda rows, cols, k, f, v: float(rows * cols),
                          cpu_efficiency=0.5, cpu_column_s=0.15e-6, cpu_serial_share=0.8, gpu_efficiency=0.5, gpu_column_s=1e-6),
            bench=Bench(priority=7, runs=(square,), function=lambda xp: xp.linalg.cholesky, symmetric=True)),
        _factorisation(
            "qr", "QR factorisation, reduced Q (NumPy's and PyTorch's default)", SQUARE,
            Factorisation(square=False, work=lambda m, n, k, f, v: 4.0 * m * n * n - 4.0 / 3.0 * n**3,
                          results=lambda rows, cols, k, f, v: float(rows * min(rows, cols) + min(rows, cols) * cols),
                          cpu_efficiency=0.3, cpu_column_s=1e-6, cpu_serial_share=0.55, gpu_efficiency=0.3, gpu_column_s=5e-6),
            bench=Bench(priority=7, runs=(square,), function=lambda xp: xp.linalg.qr, complex_inputs=True)),
        _factorisation(
            "lstsq", "least squares min |A x - b| (b shape optional, default one column)", SQUARE_AND_COLUMN,
            Factorisation(square=False, work=lambda m, n, k, f, v: 2.0 * m * n * n - 2.0 / 3.0 * n**3 + 4.0 * m * n * k,
                          results=lambda rows, cols, k, f, v: float(min(rows, cols) * k), takes_rhs=True,
                          cpu_efficiency=0.3, cpu_column_s=1e-6, cpu_serial_share=0.55, gpu_efficiency=0.3, gpu_column_s=5e-6,
                          numpy_runs="svd"),
            bench=Bench(priority=7, runs=(Run("solve"),), function=lambda xp: xp.linalg.lstsq, conditioned=True)),
        # Symmetric eigensolver: tridiagonal reduction 4/3 n^3, vectors by divide and conquer.
        _factorisation(
            "eigh", "eigenvalues and vectors of a symmetric matrix (--no-compute-uv: values only)", SLOW_SQUARE,
            Factorisation(square=True, work=lambda m, n, k, f, v: 9.0 * n**3 if v else 4.0 / 3.0 * n**3,
                          results=lambda rows, cols, k, f, v: float(min(rows, cols) + (min(rows, cols) ** 2 if v else 0)),
                          cpu_efficiency=0.15, cpu_column_s=3e-6, cpu_serial_share=0.4, gpu_efficiency=0.05, gpu_column_s=30e-6, kernels=10),
            bench=Bench(priority=8, runs=(square,), function=lambda xp: xp.linalg.eigh, symmetric=True, largest_side=4096,
                        complex_inputs=True)),
        # Nonsymmetric: Hessenberg reduction and shifted QR iterations, then eigenvectors.
        _factorisation(
            "eig", "eigenvalues and vectors of a general matrix (complex results)", SLOW_SQUARE,
            Factorisation(square=True, work=lambda m, n, k, f, v: 25.0 * n**3 if v else 10.0 * n**3,
                          results=lambda rows, cols, k, f, v: 2.0 * (min(rows, cols) + (min(rows, cols) ** 2 if v else 0)),
                          cpu_efficiency=0.1, cpu_column_s=10e-6, gpu_efficiency=0.03, gpu_column_s=100e-6, kernels=10),
            bench=Bench(priority=8, runs=(square,), function=lambda xp: xp.linalg.eig, largest_side=2048)),
        # gesdd on the CPU; cuSOLVER gesvd bidiagonalises one column at a time: 5-240 ms for
        # 100-2048 square matrices on an RTX 5090 (seed 004), ~50 us per column; torch on CUDA
        # uses Jacobi (gesvdj) first, faster than gesvd at small and mid sizes.
        _factorisation(
            "svd", "singular value decomposition (full U and V by default, as NumPy and torch;"
                   " --thin: reduced; --no-compute-uv: values only)", SLOW_SQUARE,
            Factorisation(square=False, work=svd_flops, results=svd_results, cpu_efficiency=0.12, cpu_column_s=3e-6, cpu_serial_share=0.57,
                          gpu_efficiency=0.03, gpu_column_s=50e-6, kernels=10, torch_gpu_speedup=3.0),
            aliases={**linalg("svd"), "scipy": ("linalg.svd",)}, in_code=InCode(Reading.FIRST),
            bench=Bench(priority=8, runs=(square,), function=lambda xp: xp.linalg.svd, scipy=True, largest_side=4096,
                        complex_inputs=True)),
        Op(name="sparse_matmul", description="sparse (CSR, --density) times dense: shapes n x n and n x k", family=Family.SPARSE,
           cost=formulas.sparse_matmul, sweep=SweepSeries(shapes=lambda n: [(n, n), (n, 64)], sizes=MATRIX_SIDES, matrix=True),
           bench=Bench(priority=9, runs=tuple(Run("sparse", f"density={d}") for d in SPARSE_DENSITIES), function=None, scipy=True)),
        Op(name="expr", description="elementwise expression (--expr)", family=Family.EXPRESSION, cost=formulas.expression,
           sweep=VECTOR,
           bench=Bench(priority=4, runs=tuple(Run("pair", f"expr={e}") for e in BENCH_EXPRESSIONS), function=None)),
    )


#: name -> entry, in the model's feature order.
OPS: dict[str, Op] = {op.name: op for op in _entries()}


def benchable() -> list[Op]:
    """The ops `gpuadvisor bench` measures, in the order each dtype's sweep runs them."""
    return sorted((op for op in OPS.values() if op.bench is not None), key=lambda op: op.bench.priority)  # type: ignore[union-attr]
