"""FLOP and byte formulas, one per family of ops, parametrised by what differs between ops.

A registry entry picks its formula here (`reduction(passes=2, kernels=3, temporaries=2)` is
`std`), so ops that share an algorithm share one formula instead of copies with small
variations. Every formula takes the operand shapes and `CostArgs` and returns the `OpCost`
naming the op and its CPU threading as `op_cost` passes them (from the entry).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from gpuadvisor.ops.cost import REAL_DTYPE, CostArgs, CostError, OpCost
from gpuadvisor.ops.expression import TRANSCENDENTAL_FLOPS, expression_cost

Shapes = list[tuple[int, ...]]
CostFormula = Callable[[Shapes, CostArgs], OpCost]
#: FLOPs of drawing one uniform random number (a counter-based generator and a conversion).
RANDOM_FLOPS = 10.0
#: Bytes of the int64 index an arg-op returns per result element.
INDEX_BYTES = 8


def count(shape: tuple[int, ...]) -> int:
    return math.prod(shape) if shape else 1


def axis_length(shape: tuple[int, ...], axis: int | None, default_last: bool) -> tuple[int, int]:
    """(length of the axis an op works along, elements between neighbours along it)."""
    if axis is None:
        return (shape[-1], 1) if default_last and shape else (count(shape), 1)
    if not -len(shape) <= axis < len(shape):
        raise CostError(f"axis {axis} is out of range for a {len(shape)}-D shape")
    position = axis % len(shape)
    return shape[position], count(shape[position + 1 :])


def _complex_item(args: CostArgs) -> int:
    """Bytes of one element of a transform's complex result (real inputs come back complex)."""
    return args.item if args.dtype in REAL_DTYPE else 2 * max(args.item, 4)


def matmul(shapes: Shapes, args: CostArgs) -> OpCost:
    first = shapes[0]
    if len(shapes) != 2 or len(first) < 2 or len(shapes[1]) < 2:
        raise CostError("matmul needs two shapes of 2 or more dimensions: --shape MxK --shape KxN")
    a, b = shapes
    if a[-1] != b[-2]:
        raise CostError(f"matmul shapes do not align: {a} @ {b}")
    item, n = args.item, count(first)
    batch = max(count(a[:-2]), count(b[:-2]))
    m, k, cols = a[-2], a[-1], b[-1]
    out = batch * m * cols
    io = (count(a) + count(b)) * item
    gemm = (1, batch * m, k, cols) if len(b) == 2 else (batch, m, k, cols)
    return OpCost(
        op=args.op, parallel_cpu=args.parallel_cpu,
        flops=2.0 * batch * m * k * cols, memory_bytes=io + out * item, kernels=1, input_bytes=io, output_bytes=out * item,
        elements=max(n, out), segment=k, stride=1, gemm=gemm,
    )


def binary(shapes: Shapes, args: CostArgs) -> OpCost:
    """One elementwise operation of two arrays (the second shape defaults to the first)."""
    first, item = shapes[0], args.item
    n = count(first)
    second = shapes[1] if len(shapes) > 1 else first
    size = max(n, count(second))
    io = (n + count(second)) * item
    return OpCost(
        op=args.op, parallel_cpu=args.parallel_cpu,
        flops=size, memory_bytes=io + size * item, kernels=1, input_bytes=io, output_bytes=size * item, elements=size,
    )


def transcendental(shapes: Shapes, args: CostArgs) -> OpCost:
    """One transcendental function of one array."""
    n, item = count(shapes[0]), args.item
    return OpCost(
        op=args.op, parallel_cpu=args.parallel_cpu,
        flops=TRANSCENDENTAL_FLOPS * n, memory_bytes=2 * n * item, kernels=1, input_bytes=n * item, output_bytes=n * item,
        elements=n,
    )


def fill(shapes: Shapes, args: CostArgs) -> OpCost:
    """An array made from nothing: no input to copy, a result to write."""
    n, item = count(shapes[0]), args.item
    return OpCost(
        op=args.op, parallel_cpu=args.parallel_cpu,
        flops=RANDOM_FLOPS * n, memory_bytes=n * item, kernels=1, input_bytes=0, output_bytes=n * item, elements=n,
    )


def reduction(*, passes: int = 1, kernels: int = 1, index_result: bool = False, temporaries: int = 0) -> CostFormula:
    """A reduction over all elements or one axis: `passes` over the data, `kernels` launches
    (a mean divides afterwards), int64 results for arg-reductions, full-size temporaries."""

    def cost(shapes: Shapes, args: CostArgs) -> OpCost:
        first, item = shapes[0], args.item
        n = count(first)
        segment, stride = axis_length(first, args.axis, default_last=False)
        out = n // segment
        out_item = INDEX_BYTES if index_result else item
        return OpCost(
            op=args.op, parallel_cpu=args.parallel_cpu,
            flops=passes * 2.0 * n, memory_bytes=passes * n * item, kernels=kernels, input_bytes=n * item,
            output_bytes=out * out_item, elements=n, segment=segment, stride=stride,
            allocations=(*(n * item,) * temporaries, out * out_item),
        )

    return cost


def softmax(shapes: Shapes, args: CostArgs) -> OpCost:
    """exp, sum and divide along an axis, fused into one kernel by the GPU libraries."""
    first, item = shapes[0], args.item
    n = count(first)
    segment, stride = axis_length(first, args.axis, default_last=True)
    return OpCost(
        op=args.op, parallel_cpu=args.parallel_cpu,
        flops=(TRANSCENDENTAL_FLOPS + 3) * n, memory_bytes=3 * n * item, kernels=1, input_bytes=n * item,
        output_bytes=n * item, elements=n, segment=segment, stride=stride,
    )


def concat(shapes: Shapes, args: CostArgs) -> OpCost:
    first, item = shapes[0], args.item
    if len(shapes) != 2 or len(shapes[1]) != len(first):
        raise CostError("concat needs two shapes of the same number of dimensions")
    total = count(first) + count(shapes[1])
    return OpCost(
        op=args.op, parallel_cpu=args.parallel_cpu,
        flops=0.0, memory_bytes=2 * total * item, kernels=1, input_bytes=total * item, output_bytes=total * item,
        elements=total,
    )


def sort(*, index_result: bool) -> CostFormula:
    """A comparison sort of each segment along an axis; argsort returns int64 indices."""

    def cost(shapes: Shapes, args: CostArgs) -> OpCost:
        first, item = shapes[0], args.item
        n = count(first)
        segment, stride = axis_length(first, args.axis, default_last=True)
        log_row = math.log2(max(segment, 2))
        out = n * (INDEX_BYTES if index_result else item)
        return OpCost(
            op=args.op, parallel_cpu=args.parallel_cpu,
            flops=n * log_row, memory_bytes=2 * n * item * max(1.0, log_row / 4), kernels=1, input_bytes=n * item,
            output_bytes=out, elements=n, segment=segment, stride=stride,
        )

    return cost


def fft(shapes: Shapes, args: CostArgs) -> OpCost:
    """A 1-D complex FFT along one axis."""
    first, item, complex_item = shapes[0], args.item, _complex_item(args)
    n = count(first)
    segment, stride = axis_length(first, args.axis, default_last=True)
    flops = 5.0 * n * math.log2(max(segment, 2))
    return OpCost(
        op=args.op, parallel_cpu=args.parallel_cpu,
        flops=flops, memory_bytes=2 * n * complex_item, kernels=1, input_bytes=n * item, output_bytes=n * complex_item,
        elements=n, segment=segment, stride=stride,
    )


def rfft(shapes: Shapes, args: CostArgs) -> OpCost:
    """A 1-D FFT of real data along one axis: half the arithmetic of the complex transform of the
    same length, and n/2 + 1 complex values out per transformed row."""
    first, item, complex_item = shapes[0], args.item, _complex_item(args)
    n = count(first)
    segment, stride = axis_length(first, args.axis, default_last=True)
    out = n // max(segment, 1) * (segment // 2 + 1) * complex_item
    return OpCost(
        op=args.op, parallel_cpu=args.parallel_cpu,
        flops=2.5 * n * math.log2(max(segment, 2)), memory_bytes=n * item + out, kernels=1, input_bytes=n * item,
        output_bytes=out, elements=n, segment=segment, stride=stride,
    )


def fft2(shapes: Shapes, args: CostArgs) -> OpCost:
    """A 2-D FFT of the last two axes: two passes of 1-D transforms, a temporary between them."""
    first, item, complex_item = shapes[0], args.item, _complex_item(args)
    if len(first) < 2:
        raise CostError("fft2 needs a shape with at least 2 dimensions")
    n = count(first)
    plane = first[-1] * first[-2]
    flops = 5.0 * n * math.log2(max(plane, 2))
    return OpCost(
        op=args.op, parallel_cpu=args.parallel_cpu,
        flops=flops, memory_bytes=4 * n * complex_item, kernels=2, input_bytes=n * item, output_bytes=n * complex_item,
        elements=n, segment=plane, allocations=(n * complex_item,) * 2,
    )


def sparse_matmul(shapes: Shapes, args: CostArgs) -> OpCost:
    """CSR (n x n, `density` non-zeros) times dense (n x k)."""
    first, item, density = shapes[0], args.item, args.density
    if len(shapes) != 2 or len(first) != 2:
        raise CostError("sparse_matmul needs --shape NxN (sparse) and --shape NxK (dense)")
    if not 0 < density <= 1:
        raise CostError("--density must be in (0, 1]")
    nnz = density * count(first)  # expected non-zeros: a float
    dense = count(shapes[1])
    out = first[0] * shapes[1][-1]
    sparse_bytes = nnz * (item + 4) + (first[0] + 1) * 4
    io = int(sparse_bytes + dense * item)
    return OpCost(
        op=args.op, parallel_cpu=args.parallel_cpu,
        flops=2.0 * nnz * shapes[1][-1], memory_bytes=io + out * item, kernels=1, input_bytes=io, output_bytes=out * item,
        elements=out,
    )


def expression(shapes: Shapes, args: CostArgs) -> OpCost:
    """An elementwise expression, one eager kernel per operation (expression.py counts them)."""
    if args.expression is None:
        raise CostError("op expr needs --expr")
    n, item = count(shapes[0]), args.item
    cost = expression_cost(args.expression)
    arrays = len(cost.inputs)
    return OpCost(
        op=args.op, parallel_cpu=args.parallel_cpu,
        flops=cost.flops_per_element * n, memory_bytes=cost.memory_passes * n * item, kernels=cost.kernels,
        input_bytes=arrays * n * item, output_bytes=n * item, elements=n,
        allocations=(n * item,) * cost.kernels,  # each eager step makes a full-size result (NumPy reuses some)
    )
