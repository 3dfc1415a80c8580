"""What an operation costs, independent of hardware: FLOPs, bytes, kernel launches, copies.

These are the analytic features every prediction starts from. Counts follow the usual
conventions (2MNK for a matrix product, 5 N log2 N for a complex FFT, 2/3 n^3 for an LU
solve); eager GPU libraries launch one kernel per elementwise operation, each reading its
inputs from and writing its output to device memory.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, replace

from gpuadvisor.prediction.errors import CostError
from gpuadvisor.prediction.hardware import REAL_DTYPE
from gpuadvisor.prediction.linalg import LINALG_OPS, matrix_sides, result_elements

__all__ = ["CostError", "OpCost", "op_cost", "expression_cost", "OPS"]

ITEM_BYTES = {
    "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "complex64": 8, "complex128": 16, "int64": 8, "int32": 4,
}
#: Real FLOPs per complex operation: a complex multiply-add is 4 multiplies and 4 adds (matrix
#: products and factorisations), an elementwise op about 2 real ones on average.
COMPLEX_FLOPS = {"matrix": 4.0, "elementwise": 2.0}
#: FLOP-equivalents of one transcendental evaluation (polynomial + range reduction).
TRANSCENDENTAL_FLOPS = 20
TRANSCENDENTAL = frozenset(
    {
        "sin", "cos", "tan", "exp", "log", "log2", "log10", "sqrt", "tanh", "sinh", "cosh", "arctan", "arcsin",
        "arccos", "power", "expm1", "log1p", "erf", "sigmoid", "exp2", "rsqrt", "softplus", "selu", "elu", "gelu",
        "silu",
    }
)
CHEAP_FUNCTIONS = frozenset(
    {
        "abs", "absolute", "maximum", "minimum", "where", "clip", "clamp", "sign", "square", "negative", "floor",
        "ceil", "round", "add", "subtract", "multiply", "divide", "true_divide", "relu", "reciprocal", "leaky_relu",
        "prelu",
    }
)

OPS = {
    "matmul": "matrix product A @ B (2 shapes; 3-D shapes are batched)",
    "add": "elementwise x + y",
    "mul": "elementwise x * y",
    "sin": "elementwise sin(x)",
    "exp": "elementwise exp(x)",
    "sum": "sum of all elements (--axis for one axis)",
    "mean": "mean of all elements (--axis for one axis)",
    "std": "standard deviation (--axis for one axis)",
    "sort": "sort along the last axis (--axis for another)",
    "argsort": "argsort along the last axis (--axis for another)",
    "argmax": "index of the largest element (--axis for one axis)",
    "softmax": "softmax along the last axis (--axis for another)",
    "concat": "concatenate two arrays (--axis, default 0)",
    "random": "fill an array with uniform random numbers",
    "fft": "1-D complex FFT along the last axis (--axis for another)",
    "fft2": "2-D complex FFT of the last two axes",
    **{name: entry.description for name, entry in LINALG_OPS.items()},
    "sparse_matmul": "sparse (CSR, --density) times dense: shapes n x n and n x k",
    "expr": "elementwise expression (--expr)",
}


@dataclass(frozen=True, kw_only=True)
class OpCost:
    """Keyword-only: eleven numbers of the same type in a row are too easy to pass in the wrong order."""

    flops: float
    memory_bytes: float  # traffic to and from (device or host) memory
    kernels: int  # separate kernel launches an eager GPU library makes
    input_bytes: float  # what must be copied host -> device when data starts on the host
    output_bytes: float  # what must come back
    elements: float  # size of the largest operand: the parallelism available
    parallel_cpu: bool  # does the CPU library use all cores (BLAS, LAPACK) or one (ufuncs)?
    op: str = ""
    #: Length of the axis the op works along: sorted/transformed/reduced rows; the order n of a
    #: solve or SVD (its smaller side); K for a matrix product. 0 when the op has no such axis.
    segment: int = 0
    #: Elements between neighbours along that axis: 1 for the last (contiguous) axis.
    stride: int = 1
    #: Matrix products: (batch, M, K, N) as the library runs them (a batch times a 2-D matrix
    #: is folded into one tall product, as PyTorch and CuPy do).
    gemm: tuple[int, int, int, int] = (0, 0, 0, 0)
    #: Bytes of each array one call allocates, result and temporaries; empty: just the result.
    #: Fresh memory costs page faults on the CPU once an allocation is large (libraries.py).
    allocations: tuple[float, ...] = ()
    #: float32 matrix products may run on TF32 tensor cores (tensor_cores.py).
    tf32: bool = False

    @property
    def allocated(self) -> tuple[float, ...]:
        return self.allocations or (self.output_bytes,)


@dataclass(frozen=True)
class ExpressionCost:
    kernels: int
    flops_per_element: float
    inputs: tuple[str, ...]
    memory_passes: int  # element-sized reads + writes over all kernels


#: 10**15 elements (petabytes): past that, a size is a typo, and float arithmetic overflows.
LARGEST_ELEMENT_COUNT = 10**15
#: Elementwise expressions people write fit on a line or two.
_LONGEST_EXPRESSION = 2_000


def expression_cost(expression: str) -> ExpressionCost:
    """Count kernels and FLOPs per element of a NumPy-style elementwise expression."""
    if len(expression) > _LONGEST_EXPRESSION:
        raise CostError(f"expression too long to cost ({len(expression):,} characters; the limit is {_LONGEST_EXPRESSION:,})")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise CostError(f"cannot parse expression {expression!r}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise CostError("expression nested too deeply to cost") from None
    kernels, flops, passes = 0, 0.0, 0
    names: set[str] = set()

    def visit(node: ast.AST) -> bool:
        """Return whether the node is an array (vs. a scalar constant)."""
        nonlocal kernels, flops, passes
        if isinstance(node, ast.Expression):
            return visit(node.body)
        if isinstance(node, ast.Name):
            names.add(node.id)
            return True
        if isinstance(node, ast.Constant):
            return False
        if isinstance(node, ast.BinOp):
            left, right = visit(node.left), visit(node.right)
            if not (left or right):
                return False
            kernels += 1
            is_pow = isinstance(node.op, ast.Pow)
            flops += 2 if is_pow else 1
            passes += int(left) + int(right) + 1
            return True
        if isinstance(node, ast.UnaryOp):
            inner = visit(node.operand)
            if inner:
                kernels, flops, passes = kernels + 1, flops + 1, passes + 2
            return inner
        if isinstance(node, ast.Compare):
            operands = [visit(node.left)] + [visit(c) for c in node.comparators]
            kernels, flops, passes = kernels + 1, flops + 1, passes + sum(operands) + 1
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name not in TRANSCENDENTAL and name not in CHEAP_FUNCTIONS:
                raise CostError(f"unsupported function {name!r} in expression (elementwise NumPy functions only)")
            operands = [visit(arg) for arg in node.args]
            kernels += 1
            flops += TRANSCENDENTAL_FLOPS if name in TRANSCENDENTAL else 1
            passes += sum(operands) + 1
            return True
        raise CostError(f"unsupported syntax in expression: {ast.dump(node)[:60]}")

    try:
        is_array = visit(tree)
    except RecursionError:
        raise CostError("expression nested too deeply to cost") from None
    if not is_array:
        raise CostError("the expression uses no arrays")
    return ExpressionCost(kernels, flops, tuple(sorted(names)), passes)


def _count(shape: tuple[int, ...]) -> int:
    return math.prod(shape) if shape else 1


def _axis_length(shape: tuple[int, ...], axis: int | None, default_last: bool) -> tuple[int, int]:
    """(length of the axis an op works along, elements between neighbours along it)."""
    if axis is None:
        return (shape[-1], 1) if default_last and shape else (_count(shape), 1)
    if not -len(shape) <= axis < len(shape):
        raise CostError(f"axis {axis} is out of range for a {len(shape)}-D shape")
    position = axis % len(shape)
    return shape[position], _count(shape[position + 1 :])


def op_cost(
    op: str,
    shapes: list[tuple[int, ...]],
    dtype: str = "float32",
    expression: str | None = None,
    axis: int | None = None,
    density: float = 0.01,
    tf32: bool = False,
    full_matrices: bool = True,
    compute_uv: bool = True,
) -> OpCost:
    """The op's work. `tf32`: float32 matrix products may use TF32 tensor cores (PyTorch's
    `allow_tf32` / `set_float32_matmul_precision("high")`); other ops and dtypes ignore it.
    `full_matrices`, `compute_uv`: as numpy.linalg.svd (both default True there and in
    torch.linalg.svd); `compute_uv=False` also asks eig/eigh for values only."""
    if op not in OPS:
        raise CostError(f"unknown op {op!r}; `gpuadvisor predict --list-ops` lists them")
    if not shapes:
        raise CostError(f"{op} needs at least one --shape")
    if not all(isinstance(d, int) and not isinstance(d, bool) for shape in shapes for d in shape):
        raise CostError(f"shape dimensions must be whole numbers, not {shapes!r}")
    if any(d <= 0 for shape in shapes for d in shape):
        raise CostError("shape dimensions must be positive")
    if any(math.prod(shape) > LARGEST_ELEMENT_COUNT for shape in shapes):
        raise CostError(f"a shape of more than {LARGEST_ELEMENT_COUNT:.0e} elements is no array any machine holds")
    item = ITEM_BYTES.get(dtype)
    if item is None:
        raise CostError(f"unsupported dtype {dtype!r} (float16, bfloat16, float32, float64, complex64, complex128)")
    if op in LINALG_OPS:
        cost = _linalg_cost(op, shapes, item, full_matrices, compute_uv)
    else:
        cost = _shaped_cost(op, shapes, dtype, item, expression, axis, density)
    if dtype in REAL_DTYPE:
        kind = "matrix" if op == "matmul" or op in LINALG_OPS else "elementwise"
        cost = replace(cost, flops=cost.flops * COMPLEX_FLOPS[kind])
    return replace(cost, tf32=True) if tf32 and op == "matmul" and dtype == "float32" else cost


def _linalg_cost(op: str, shapes: list[tuple[int, ...]], item: int, full: bool, vectors: bool) -> OpCost:
    """A LAPACK/cuSOLVER op from linalg.py's table: its FLOPs, the matrix in, results out."""
    try:
        m, n, k = matrix_sides(op, shapes)
    except ValueError as exc:
        raise CostError(str(exc)) from None
    rows, cols = shapes[0]
    entry = LINALG_OPS[op]
    rhs = m * k if op == "lstsq" else n * k if op == "solve" else 0
    io = (rows * cols + rhs) * item
    out = result_elements(op, rows, cols, k, full, vectors) * item
    flops = entry.work(m, n, k, full, vectors)
    working = (rows * cols * item, out)  # LAPACK factorises a copy of A; then the results
    return OpCost(
        flops=flops, memory_bytes=io + out, kernels=entry.kernels, input_bytes=io, output_bytes=out, elements=rows * cols,
        parallel_cpu=True, op=op, segment=n, allocations=working,
    )


def _shaped_cost(
    op: str, shapes: list[tuple[int, ...]], dtype: str, item: int, expression: str | None, axis: int | None, density: float
) -> OpCost:
    complex_item = item if dtype in REAL_DTYPE else 2 * max(item, 4)
    first = shapes[0]
    n = _count(first)

    if op == "matmul":
        if len(shapes) != 2 or len(first) < 2 or len(shapes[1]) < 2:
            raise CostError("matmul needs two shapes of 2 or more dimensions: --shape MxK --shape KxN")
        a, b = shapes
        if a[-1] != b[-2]:
            raise CostError(f"matmul shapes do not align: {a} @ {b}")
        batch = max(_count(a[:-2]), _count(b[:-2]))
        m, k, cols = a[-2], a[-1], b[-1]
        out = batch * m * cols
        io = (_count(a) + _count(b)) * item
        gemm = (1, batch * m, k, cols) if len(b) == 2 else (batch, m, k, cols)
        return OpCost(
            flops=2.0 * batch * m * k * cols, memory_bytes=io + out * item, kernels=1, input_bytes=io, output_bytes=out * item,
            elements=max(n, out), parallel_cpu=True, op=op, segment=k, stride=1, gemm=gemm,
        )
    if op in ("add", "mul"):
        second = shapes[1] if len(shapes) > 1 else first
        size = max(n, _count(second))
        io = (n + _count(second)) * item
        return OpCost(
            flops=size, memory_bytes=io + size * item, kernels=1, input_bytes=io, output_bytes=size * item, elements=size,
            parallel_cpu=False, op=op,
        )
    if op in ("sin", "exp"):
        return OpCost(
            flops=TRANSCENDENTAL_FLOPS * n, memory_bytes=2 * n * item, kernels=1, input_bytes=n * item, output_bytes=n * item,
            elements=n, parallel_cpu=False, op=op,
        )
    if op == "random":
        return OpCost(
            flops=10.0 * n, memory_bytes=n * item, kernels=1, input_bytes=0, output_bytes=n * item, elements=n, parallel_cpu=False, op=op,
        )
    if op in ("sum", "mean", "std", "argmax"):
        passes = 2 if op == "std" else 1
        segment, stride = _axis_length(first, axis, default_last=False)
        out = n // segment
        out_item = 8 if op == "argmax" else item
        kernels = passes + (op in ("mean", "std"))
        temporaries = (n * item, n * item) if op == "std" else ()  # x - mean, then its square
        return OpCost(
            flops=passes * 2.0 * n, memory_bytes=passes * n * item, kernels=kernels, input_bytes=n * item,
            output_bytes=out * out_item, elements=n, parallel_cpu=False, op=op, segment=segment, stride=stride,
            allocations=(*temporaries, out * out_item),
        )
    if op == "softmax":
        segment, stride = _axis_length(first, axis, default_last=True)
        return OpCost(
            flops=(TRANSCENDENTAL_FLOPS + 3) * n, memory_bytes=3 * n * item, kernels=1, input_bytes=n * item, output_bytes=n * item,
            elements=n, parallel_cpu=False, op=op, segment=segment, stride=stride,
        )
    if op == "concat":
        if len(shapes) != 2 or len(shapes[1]) != len(first):
            raise CostError("concat needs two shapes of the same number of dimensions")
        total = n + _count(shapes[1])
        return OpCost(
            flops=0.0, memory_bytes=2 * total * item, kernels=1, input_bytes=total * item, output_bytes=total * item,
            elements=total, parallel_cpu=False, op=op,
        )
    if op in ("sort", "argsort"):
        segment, stride = _axis_length(first, axis, default_last=True)
        log_row = math.log2(max(segment, 2))
        out = n * (8 if op == "argsort" else item)
        return OpCost(
            flops=n * log_row, memory_bytes=2 * n * item * max(1.0, log_row / 4), kernels=1, input_bytes=n * item,
            output_bytes=out, elements=n, parallel_cpu=False, op=op, segment=segment, stride=stride,
        )
    if op == "fft":
        segment, stride = _axis_length(first, axis, default_last=True)
        flops = 5.0 * n * math.log2(max(segment, 2))
        return OpCost(
            flops=flops, memory_bytes=2 * n * complex_item, kernels=1, input_bytes=n * item, output_bytes=n * complex_item,
            elements=n, parallel_cpu=False, op=op, segment=segment, stride=stride,
        )
    if op == "fft2":
        if len(first) < 2:
            raise CostError("fft2 needs a shape with at least 2 dimensions")
        plane = first[-1] * first[-2]
        flops = 5.0 * n * math.log2(max(plane, 2))
        return OpCost(
            flops=flops, memory_bytes=4 * n * complex_item, kernels=2, input_bytes=n * item, output_bytes=n * complex_item,
            elements=n, parallel_cpu=False, op=op, segment=plane, allocations=(n * complex_item,) * 2,
        )
    if op == "sparse_matmul":
        if len(shapes) != 2 or len(first) != 2:
            raise CostError("sparse_matmul needs --shape NxN (sparse) and --shape NxK (dense)")
        if not 0 < density <= 1:
            raise CostError("--density must be in (0, 1]")
        nnz = density * n  # expected non-zeros: a float
        dense = _count(shapes[1])
        out = first[0] * shapes[1][-1]
        sparse_bytes = nnz * (item + 4) + (first[0] + 1) * 4
        io = int(sparse_bytes + dense * item)
        return OpCost(
            flops=2.0 * nnz * shapes[1][-1], memory_bytes=io + out * item, kernels=1, input_bytes=io, output_bytes=out * item,
            elements=out, parallel_cpu=False, op=op,
        )
    # expr
    if expression is None:
        raise CostError("op expr needs --expr")
    cost = expression_cost(expression)
    arrays = len(cost.inputs)
    return OpCost(
        flops=cost.flops_per_element * n, memory_bytes=cost.memory_passes * n * item, kernels=cost.kernels,
        input_bytes=arrays * n * item, output_bytes=n * item, elements=n, parallel_cpu=False, op=op,
        allocations=(n * item,) * cost.kernels,  # each eager step makes a full-size result (NumPy reuses some)
    )
