"""The one place an array operation found in code becomes a prediction request.

`check` (static or with `--shapes`) and `profile` both predict the operations the shared walk
finds; building their requests here keeps the two commands costing a line the same way: the
same op cost, library, copies and data placement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gpuadvisor.prediction.costs import OpCost
    from gpuadvisor.prediction.hardware import CpuProfile, GpuProfile
    from gpuadvisor.prediction.predictor import Request


class PredictableOperation(Protocol):
    """What both an ArrayOperation and a PredictionCandidate carry."""

    @property
    def op(self) -> str: ...
    @property
    def shapes(self) -> tuple[tuple[int, ...], ...]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def library(self) -> str: ...
    @property
    def on_gpu(self) -> bool: ...
    @property
    def expression(self) -> str | None: ...
    @property
    def axis(self) -> int | None: ...
    @property
    def input_copy_bytes(self) -> float: ...
    @property
    def output_bytes(self) -> float: ...


def operation_cost(operation: PredictableOperation, tf32: bool = False) -> OpCost | None:
    """The op's hardware-independent cost, or None when the model cannot cost it (`tf32`: the
    checked code lets float32 products run on TF32 tensor cores)."""
    from gpuadvisor.prediction.costs import CostError, op_cost

    try:
        return op_cost(
            operation.op, [tuple(s) for s in operation.shapes], operation.dtype,
            expression=operation.expression, axis=operation.axis, tf32=tf32,
        )
    except CostError:
        return None


def prediction_request(operation: PredictableOperation, cost: OpCost, gpu: GpuProfile, cpu: CpuProfile) -> Request:
    """The request for one operation: data on the device when it already is, else the copies
    the walk found (inputs made from nothing need none)."""
    from gpuadvisor.prediction.predictor import Request

    return Request(
        operation.op, cost, [tuple(s) for s in operation.shapes], operation.dtype, gpu, cpu,
        data_on="device" if operation.on_gpu else "host",
        copy_in_bytes=operation.input_copy_bytes, copy_out_bytes=operation.output_bytes,
        library="torch" if operation.library == "torch" else "numpy",
    )
