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


#: Modules with children that their forward never calls: the work is their own. `MultiheadAttention` holds its
#: output projection as a child `Linear` but runs the whole attention in one functional call using that child's
#: weights, so its leaves never run (a text classifier's attention blocks went unseen: gpu_truth/profile_h200_look2.json).
CALLS_NO_CHILD = frozenset({"MultiheadAttention"})


class ModuleWatch:
    """The forward hook and what it saw: calls per statement (through `counts_for`), and the
    bytes of the parameters of every leaf module that ran (what an optimizer step updates)."""

    def __init__(self, counts_for: Callable[[], dict[ModuleCall, int] | None]) -> None:
        #: The call counts of the statement running now (None: no statement of the user's)
        self._counts_for = counts_for
        self._handle: Any = None
        #: id(module) -> bytes and number of its parameter tensors, for leaf modules that ran
        self.parameter_bytes: dict[int, float] = {}
        self.parameter_tensors: dict[int, int] = {}

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
            if next(iter(module._modules.values()), None) is not None and type(module).__name__ not in CALLS_NO_CHILD:
                return  # a container: its leaves are recorded
            counts = self._counts_for()
            if counts is None:
                return
            first = inputs[0] if isinstance(inputs, tuple) and inputs else inputs
            result = output[0] if isinstance(output, tuple) and output else output  # attention: (output, weights)
            weight = module._parameters.get("weight")
            call = ModuleCall(
                type(module).__name__, _shape(first), _shape(result), _shape(weight) if weight is not None else (),
                str(getattr(result, "dtype", "float32")).replace("torch.", ""),
            )
            counts[call] = counts.get(call, 0) + 1
            if id(module) not in self.parameter_bytes:
                parameters = [p for p in module._parameters.values() if p is not None]
                self.parameter_bytes[id(module)] = float(sum(
                    math.prod(_shape(p)) * ITEM_BYTES.get(str(p.dtype).replace("torch.", ""), 4) for p in parameters
                ))
                self.parameter_tensors[id(module)] = len(parameters)
        except Exception:  # noqa: BLE001 - whatever a module holds, the script must not see our error
            return


#: A training step's backward runs two matrix products per forward one (the gradients of the
#: input and of the weight), each the size of the forward product.
BACKWARD_PRODUCTS = 2

# Host time of a training step's parts on a data-centre GPU host: a small model's step is bound by the host
# (Python, torch's dispatcher, autograd's engine, the launches), not by the GPU. Each figure is the time per call
# with calls issued back to back and one synchronisation at the end, on the H200 lease host (16-vCPU Xeon VM,
# torch 2.11, 2026-11-29: benchmarks/gpu_torch_costs.py, benchmarks/gpu_truth/torch_costs_h200.json). Before them
# the profile charged 6 us per kernel (a typical eager launch), and a whole step of torch_mlp.py came out 2.1x too
# fast and one of conv_train.py 7x (benchmarks/profile_gpu_accuracy.py).
#: One forward call of a leaf module (train mode), by class; other classes take DEFAULT_FORWARD_HOST_S (ReLU 11.9,
#: GELU 10.7, Dropout 17.7, MaxPool2d 19.6, Embedding 18.4 us measured).
FORWARD_HOST_S = {
    "Linear": 25e-6, "Conv1d": 50e-6, "Conv2d": 50e-6, "Conv3d": 50e-6, "BatchNorm1d": 45e-6, "BatchNorm2d": 45e-6,
    "BatchNorm3d": 45e-6, "LayerNorm": 19e-6, "MultiheadAttention": 240e-6,
}
DEFAULT_FORWARD_HOST_S = 15e-6
#: The autograd nodes of one call of a leaf module in `loss.backward()`: gradients of input and parameters,
#: accumulating them, the engine's bookkeeping (forward-and-backward less forward, measured with the input
#: needing a gradient). Other classes take DEFAULT_BACKWARD_HOST_S (ReLU and GELU 49 us measured).
BACKWARD_HOST_S = {
    "Linear": 225e-6, "Conv1d": 530e-6, "Conv2d": 530e-6, "Conv3d": 530e-6, "BatchNorm1d": 180e-6, "BatchNorm2d": 280e-6,
    "BatchNorm3d": 280e-6, "LayerNorm": 130e-6, "MultiheadAttention": 1700e-6, "Embedding": 70e-6, "MaxPool2d": 107e-6,
    "Dropout": 15e-6,
}
DEFAULT_BACKWARD_HOST_S = 50e-6
#: Modules that return a view of their input: no kernel, no autograd work of their own (Flatten: 8.4 us a call).
VIEW_MODULES = frozenset({"Flatten", "Unflatten", "Identity"})
VIEW_HOST_S = 8e-6
#: `optimizer.step()` with torch's default (foreach) implementation on CUDA: a fixed part (the step's Python,
#: grouping the tensors, a dozen `_foreach_*` launches for Adam) and a part per parameter tensor (its
#: state's Python: Adam 2 tensors 254 us, 128 tensors 2.37 ms), by optimizer; other classes take Adam's.
OPTIMIZER_HOST_S = {
    "Adam": (220e-6, 16.5e-6), "AdamW": (265e-6, 16.5e-6), "SGD momentum": (90e-6, 4.7e-6), "SGD": (53e-6, 2.7e-6),
}
#: Arrays each update reads and writes per parameter element: Adam's parameter, gradient and two moments
#: read, parameter and moments written; SGD with momentum three read and two written; plain SGD two and one.
OPTIMIZER_PASSES = {"Adam": 7, "AdamW": 7, "SGD momentum": 5, "SGD": 3}
#: cuDNN's share of the tensor cores' peak on a convolution large enough to fill the GPU (its implicit-GEMM
#: kernels): an assumption, not a measurement here; small convolutions are host-bound above, so it only decides
#: the time of large ones (a ResNet's layers at batch 64 and more).
CONV_EFFICIENCY = 0.5


class OptimizerNote(NamedTuple):
    """What `optimizer.step()` updates: the optimizer's kind (`SGD momentum` when it has momentum) and its
    parameter tensors, read from the optimizer object the statement names."""

    kind: str
    tensors: int


def optimizer_note(value: Any) -> OptimizerNote | None:
    """A torch optimizer's kind and tensor count, read from its attributes (no torch import, no user code)."""
    groups, defaults = getattr(value, "param_groups", None), getattr(value, "defaults", None)
    if not isinstance(groups, list) or not isinstance(defaults, dict):
        return None  # (a module, a tensor: most values a training line names; no exception raised for them)
    try:
        kind = type(value).__name__
        if kind == "SGD" and defaults.get("momentum"):
            kind = "SGD momentum"
        return OptimizerNote(kind, sum(len(group["params"]) for group in groups))
    except Exception:  # noqa: BLE001 - an object that only looks like an optimizer
        return None


class ModuleCost(NamedTuple):
    """One kind of module call predicted on the GPU (data on the device, as training keeps it)."""

    description: str
    calls: int
    gpu_seconds: float  # per call, forward: the longer of its device time and its host time
    cpu_seconds: float  # per call, the model's CPU time (0 where no op model covers the module)
    device_seconds: float  # per call, the forward's device time, which backward runs twice over
    backward_host_seconds: float  # per call, the host time of its autograd nodes


def _streamed_seconds(call: ModuleCall, gpu: GpuProfile) -> float:
    """One kernel reading the module's input and writing its output at the GPU's bandwidth."""
    from gpuadvisor.prediction.libraries import KERNEL_LATENCY_S, STREAM_EFFICIENCY

    moved = (math.prod(call.input_shape) + math.prod(call.output_shape)) * ITEM_BYTES.get(call.dtype, 4)
    return moved / (gpu.mem_bandwidth_gbs * 1e9 * STREAM_EFFICIENCY) + KERNEL_LATENCY_S


def _convolution_seconds(call: ModuleCall, gpu: GpuProfile) -> float:
    """A convolution's arithmetic: two FLOPs per output element per weight element of one group (the weight is
    out x in/groups x kernel), on the tensor cores (cuDNN runs float32 convolutions as TF32 by default)."""
    from gpuadvisor.prediction.tensor_cores import matmul_peak

    if not call.kind.startswith("Conv") or len(call.weight_shape) < 3 or not call.output_shape:
        return 0.0
    flops = 2.0 * math.prod(call.output_shape) * math.prod(call.weight_shape[1:])
    return flops / (matmul_peak(gpu, call.dtype, True)[0] * CONV_EFFICIENCY)


def forward_costs(calls: dict[ModuleCall, int], gpu: GpuProfile, cpu: CpuProfile) -> list[ModuleCost]:
    """Each leaf module's call: the longer of its host time (FORWARD_HOST_S) and its device time: `nn.Linear`'s
    matrix product as the op model predicts it (bias fused as in addmm), a convolution's arithmetic, any other
    module one kernel streaming its input and output."""
    from gpuadvisor.analysis.findings.prediction_requests import operation_cost, prediction_request
    from gpuadvisor.analysis.findings.records import PredictionCandidate
    from gpuadvisor.prediction.predictor import predict_requests

    costs: list[ModuleCost] = []
    products: list[tuple[ModuleCall, int, Any]] = []
    for call, count in calls.items():
        if call.kind in VIEW_MODULES:
            costs.append(ModuleCost(f"{call.kind} (torch module: a view)", count, VIEW_HOST_S, 0.0, 0.0, 0.0))
            continue
        host = FORWARD_HOST_S.get(call.kind, DEFAULT_FORWARD_HOST_S)
        backward_host = BACKWARD_HOST_S.get(call.kind, DEFAULT_BACKWARD_HOST_S)
        if call.kind == "Linear" and len(call.weight_shape) == 2 and call.input_shape:
            rows = math.prod(call.input_shape[:-1])
            shapes = ((rows, call.weight_shape[1]), (call.weight_shape[1], call.weight_shape[0]))
            candidate = PredictionCandidate("matmul", shapes, call.dtype, True, "", library="torch")
            cost = operation_cost(candidate)
            if cost is not None:
                products.append((call, count, prediction_request(candidate, cost, gpu, cpu)))
                continue
        device = _streamed_seconds(call, gpu) + _convolution_seconds(call, gpu)
        shape = "x".join(map(str, call.output_shape))
        costs.append(ModuleCost(f"{call.kind} -> {shape} {call.dtype} (torch module)", count, max(device, host), 0.0, device, backward_host))
    predictions = predict_requests([request for _, _, request in products]) if products else []
    for (call, count, request), prediction in zip(products, predictions):
        rows, inner = request.shapes[0]
        costs.append(ModuleCost(
            f"Linear {inner} -> {call.weight_shape[0]} on {rows} rows {call.dtype} (torch module): "
            f"{rows}x{inner} @ {inner}x{call.weight_shape[0]} matmul",
            count, max(prediction.gpu_seconds, FORWARD_HOST_S["Linear"]), prediction.cpu_seconds, prediction.gpu_seconds,
            BACKWARD_HOST_S["Linear"],
        ))
    return costs


def backward_seconds(forward: list[ModuleCost]) -> tuple[float, int]:
    """All runs of `loss.backward()`, taking each forward call to be followed by one backward: per call the
    longer of its autograd nodes' host time and its device work twice over (the gradients of the input and of
    the parameters). Returns the seconds and the module calls."""
    seconds = sum(max(BACKWARD_PRODUCTS * cost.device_seconds, cost.backward_host_seconds) * cost.calls for cost in forward)
    return seconds, sum(cost.calls for cost in forward)


def optimizer_step_seconds(parameter_bytes: float, note: OptimizerNote, gpu: GpuProfile) -> float:
    """One `optimizer.step()`: the longer of its host time (OPTIMIZER_HOST_S) and its passes over the parameters."""
    from gpuadvisor.prediction.libraries import STREAM_EFFICIENCY

    fixed, per_tensor = OPTIMIZER_HOST_S.get(note.kind, OPTIMIZER_HOST_S["Adam"])
    passes = OPTIMIZER_PASSES.get(note.kind, OPTIMIZER_PASSES["Adam"])
    streamed = passes * parameter_bytes / (gpu.mem_bandwidth_gbs * 1e9 * STREAM_EFFICIENCY)
    return max(fixed + per_tensor * note.tensors, streamed)
