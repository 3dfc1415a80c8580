"""What an operation costs, independent of hardware: `op_cost` checks the request and runs the
op's formula from the registry (gpuadvisor/ops), adjusting for complex types and TF32.

These are the analytic features every prediction starts from.
"""

from __future__ import annotations

import math
from dataclasses import replace

from gpuadvisor.ops.cost import COMPLEX_FLOPS, ITEM_BYTES, REAL_DTYPE, CostArgs, CostError, OpCost
from gpuadvisor.ops.expression import expression_cost
from gpuadvisor.ops.registry import OPS, CpuThreads

__all__ = ["CostError", "OpCost", "op_cost", "expression_cost"]

#: 10**15 elements (petabytes): past that, a size is a typo, and float arithmetic overflows.
LARGEST_ELEMENT_COUNT = 10**15


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
    entry = OPS.get(op)
    if entry is None:
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
    args = CostArgs(
        op=op, parallel_cpu=entry.cpu_threads is CpuThreads.ALL, dtype=dtype, item=item, expression=expression, axis=axis, density=density, full_matrices=full_matrices,
        compute_uv=compute_uv,
    )
    cost = entry.cost(shapes, args)
    if dtype in REAL_DTYPE:
        kind = "matrix" if entry.compute_bound else "elementwise"
        cost = replace(cost, flops=cost.flops * COMPLEX_FLOPS[kind])
    return replace(cost, tf32=True) if tf32 and entry.tf32_capable and dtype == "float32" else cost
