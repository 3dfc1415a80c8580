"""What an operation costs, independent of hardware: the record every formula fills in.

Counts follow the usual conventions (2MNK for a matrix product, 5 N log2 N for a complex FFT,
2/3 n^3 for an LU solve); eager GPU libraries launch one kernel per elementwise operation,
each reading its inputs from and writing its output to device memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

ITEM_BYTES = {
    "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "complex64": 8, "complex128": 16, "int64": 8, "int32": 4,
}
#: Complex numbers are pairs of their real type: their arithmetic runs at that type's rate.
REAL_DTYPE = {"complex64": "float32", "complex128": "float64"}
#: Real FLOPs per complex operation: a complex multiply-add is 4 multiplies and 4 adds (matrix
#: products and factorisations), an elementwise op about 2 real ones on average.
COMPLEX_FLOPS = {"matrix": 4.0, "elementwise": 2.0}


class CostError(ValueError):
    """The op, shapes or expression do not describe a computation we can cost."""


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


class CostArgs(NamedTuple):
    """Everything besides the shapes that a cost formula may read (`op_cost`'s arguments).
    A tuple: made once per cost, where a frozen dataclass would take longer than the formula."""

    op: str
    parallel_cpu: bool  # from the op's entry: BLAS and LAPACK use every core
    dtype: str
    item: int  # bytes per element of dtype
    expression: str | None = None
    axis: int | None = None
    density: float = 0.01
    full_matrices: bool = True
    compute_uv: bool = True
