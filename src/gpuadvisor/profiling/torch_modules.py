"""torch.nn modules seen at run time: which leaf modules each statement ran, with their shapes.

`model(x)` hides its work behind a user class: the statement names `model` and `x`, while the
work is the matrix products of the `nn.Linear` layers inside. A global forward hook (installed
once the script has imported torch, removed when the run ends) records every leaf module's
call (a module with no children: `Linear`, `ReLU`, `Conv2d`...) under the statement that was
running, with its input and output shapes and its weight's shape; the report predicts them as
the kernels they launch, and `loss.backward()` / `optimizer.step()` from the same records
(profiling/session.py). The hook reads shapes only, never changes a value, and swallows its own
errors: the script runs as it would.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

from gpuadvisor.ops.cost import ITEM_BYTES
from gpuadvisor.prediction.hardware import CpuProfile, GpuProfile


class ModuleCall(NamedTuple):
    """One kind of leaf-module call: the module's class, what went in and came out."""

    kind: str
    input_shape: tuple[int, ...]
    output_shape: tuple[int, ...]
    weight_shape: tuple[int, ...]  # () when the module has no `weight`
    dtype: str


def _shape(value: Any) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in value.shape)
    except (AttributeError, TypeError, ValueError):
        return ()


class ModuleWatch:
    """The forward hook and what it saw: calls per statement (through `counts_for`), and the
    bytes of the parameters of every leaf module that ran (what an optimizer step updates)."""

    def __init__(self, counts_for: Callable[[], dict[ModuleCall, int] | None]) -> None:
        #: The call counts of the statement running now (None: no statement of the user's)
        self._counts_for = counts_for
        self._handle: Any = None
        #: id(module) -> bytes of its parameters, for leaf modules that ran
        self.parameter_bytes: dict[int, float] = {}

    def install_if_imported(self) -> None:
        """Install the hook once the script has imported torch (never import it ourselves)."""
        if self._handle is not None or "torch.nn" not in sys.modules:
            return
        try:
            from torch.nn.modules.module import register_module_forward_hook

            self._handle = register_module_forward_hook(self._on_forward)
        except (ImportError, AttributeError, RuntimeError):
            self._handle = False  # an old or partial torch: modules are timed, not modelled

    def remove(self) -> None:
        if self._handle:
            self._handle.remove()
        self._handle = None

    def _on_forward(self, module: Any, inputs: Any, output: Any) -> None:
        try:
            if next(iter(module._modules.values()), None) is not None:
                return  # a container: its leaves are recorded
            counts = self._counts_for()
            if counts is None:
                return
            first = inputs[0] if isinstance(inputs, tuple) and inputs else inputs
            weight = module._parameters.get("weight")
            call = ModuleCall(
                type(module).__name__, _shape(first), _shape(output), _shape(weight) if weight is not None else (),
                str(getattr(output, "dtype", "float32")).replace("torch.", ""),
            )
            counts[call] = counts.get(call, 0) + 1
            if id(module) not in self.parameter_bytes:
                self.parameter_bytes[id(module)] = float(sum(
                    math.prod(_shape(p)) * ITEM_BYTES.get(str(p.dtype).replace("torch.", ""), 4)
                    for p in module._parameters.values() if p is not None
                ))
        except Exception:  # noqa: BLE001 - whatever a module holds, the script must not see our error
            return


#: A training step's backward runs two matrix products per forward one (the gradients of the
#: input and of the weight), each the size of the forward product.
BACKWARD_PRODUCTS = 2
#: Kernels an optimizer step launches with torch's multi-tensor (foreach) implementations, the
#: default on CUDA: a dozen `_foreach_*` calls for Adam/AdamW, whatever the number of tensors.
OPTIMIZER_STEP_KERNELS = 12
#: Adam reads parameter, gradient and both moments and writes parameter and moments.
OPTIMIZER_PASSES = 7


class ModuleCost(NamedTuple):
    """One kind of module call predicted on the GPU (data on the device, as training keeps it)."""

    description: str
    calls: int
    gpu_seconds: float  # per call, forward
    cpu_seconds: float  # per call, the model's CPU time (0 where no op model covers the module)
    product_seconds: float  # per call, the matrix product's share (what backward repeats)
    backward_kernels: int


def forward_costs(calls: dict[ModuleCall, int], gpu: GpuProfile, cpu: CpuProfile) -> list[ModuleCost]:
    """`nn.Linear` as its matrix product (the op model's prediction, bias fused as in addmm);
    any other leaf module as one kernel streaming its input and output at the GPU's bandwidth."""
    from gpuadvisor.analysis.findings.prediction_requests import operation_cost, prediction_request
    from gpuadvisor.analysis.findings.records import PredictionCandidate
    from gpuadvisor.prediction.libraries import GPU_LAUNCH_S, STREAM_EFFICIENCY
    from gpuadvisor.prediction.predictor import predict_requests

    launch = GPU_LAUNCH_S["torch"]
    costs: list[ModuleCost] = []
    products: list[tuple[ModuleCall, int, Any]] = []
    for call, count in calls.items():
        if call.kind == "Linear" and len(call.weight_shape) == 2 and call.input_shape:
            rows = math.prod(call.input_shape[:-1])
            shapes = ((rows, call.weight_shape[1]), (call.weight_shape[1], call.weight_shape[0]))
            candidate = PredictionCandidate("matmul", shapes, call.dtype, True, "", library="torch")
            cost = operation_cost(candidate)
            if cost is not None:
                products.append((call, count, prediction_request(candidate, cost, gpu, cpu)))
                continue
        item = ITEM_BYTES.get(call.dtype, 4)
        moved = (math.prod(call.input_shape) + math.prod(call.output_shape)) * item
        seconds = moved / (gpu.mem_bandwidth_gbs * 1e9 * STREAM_EFFICIENCY) + launch
        shape = "x".join(map(str, call.output_shape))
        costs.append(ModuleCost(f"{call.kind} -> {shape} {call.dtype} (torch module: one kernel)", count, seconds, 0.0, 0.0, 1))
    predictions = predict_requests([request for _, _, request in products]) if products else []
    for (call, count, request), prediction in zip(products, predictions):
        rows, inner = request.shapes[0]
        costs.append(ModuleCost(
            f"Linear {inner} -> {call.weight_shape[0]} on {rows} rows {call.dtype} (torch module): "
            f"{rows}x{inner} @ {inner}x{call.weight_shape[0]} matmul",
            count, prediction.gpu_seconds, prediction.cpu_seconds, prediction.gpu_seconds, 3,
        ))
    return costs


def backward_seconds(forward: list[ModuleCost], gpu: GpuProfile) -> tuple[float, int]:
    """All runs of `loss.backward()`: the modules' products twice over, plus one launch per
    kernel autograd runs (taking each forward call to be followed by one backward)."""
    from gpuadvisor.prediction.libraries import GPU_LAUNCH_S

    kernels = sum(cost.backward_kernels * cost.calls for cost in forward)
    products = sum(BACKWARD_PRODUCTS * cost.product_seconds * cost.calls for cost in forward)
    return products + kernels * GPU_LAUNCH_S["torch"], kernels


def optimizer_step_seconds(parameter_bytes: float, gpu: GpuProfile) -> float:
    """One `optimizer.step()` over the parameters of the modules that ran."""
    from gpuadvisor.prediction.libraries import GPU_LAUNCH_S, STREAM_EFFICIENCY

    streamed = OPTIMIZER_PASSES * parameter_bytes / (gpu.mem_bandwidth_gbs * 1e9 * STREAM_EFFICIENCY)
    return streamed + OPTIMIZER_STEP_KERNELS * GPU_LAUNCH_S["torch"]
