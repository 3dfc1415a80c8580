"""GPU102: `torch.zeros(n).to(dev)` -> `torch.zeros(n, device=dev)`, also through dtype casts
(`torch.zeros(n).long().to(dev)` -> `torch.zeros(n, device=dev).long()`).

Safe for fills whose values are exact wherever they are made (zeros, ones, empty, full, eye,
an integer `arange`), when the target is surely a device. Unsafe for the rest: random draws
(the CUDA generator gives other numbers than the CPU one, so a seeded run no longer
reproduces), and fills computed in floating point (`linspace`, `logspace`, a fractional
`arange`, the windows), whose GPU kernels may round the last bit differently.
"""

from __future__ import annotations

import libcst as cst

from gpuadvisor.analysis.facts.module_facts import CallFact
from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.analysis.rules.host_fill import HOST_DRAWS, HOST_FILLS
from gpuadvisor.fixes.context import Edit, FixContext
from gpuadvisor.fixes.helpers import always_a_device, is_device_expression, keyword_argument, with_last_argument

#: Draws that take `device=` the way the fills do (`normal` and `bernoulli` draw from tensors
#: they are given, on those tensors' device).
_DEVICE_DRAWS = frozenset(f"torch.{name}" for name in ("rand", "randn", "randint", "randperm"))
#: Fills whose every value is the same bits on any device.
_EXACT_FILLS = frozenset(f"torch.{name}" for name in ("zeros", "ones", "empty", "full", "eye"))
#: Methods that only change the element type (or layout) of the tensor, on whatever device it is.
_CASTS = frozenset({"float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "char", "contiguous"})
_DTYPE_NAMES = frozenset(
    {"float16", "float32", "float64", "half", "float", "double", "bfloat16", "int8", "int16", "int32", "int64",
     "long", "int", "short", "uint8", "bool", "complex64", "complex128"}
)
#: Factory arguments that make the device version mean something else: a CPU generator or
#: output buffer, pinned host memory, or a leaf that requires grad (the moved copy is not one).
_REFUSED_KEYWORDS = frozenset({"device", "generator", "out", "pin_memory", "requires_grad"})


def _device_argument(transfer: cst.Call, module: cst.Module) -> tuple[cst.BaseExpression, bool] | None:
    """The device a `.cuda(...)` / `.to(...)` moves to, and whether it is certainly a device
    (`.to(x)` with a tensor `x` would also take its dtype: then the rewrite is unsafe)."""
    method = transfer.func.attr.value  # type: ignore[attr-defined]
    args = transfer.args
    if any(arg.star for arg in args) or any(arg.keyword is not None and arg.keyword.value not in ("non_blocking", "device") for arg in args):
        return None
    positional = [arg.value for arg in args if arg.keyword is None]
    keyword = [arg.value for arg in args if arg.keyword is not None and arg.keyword.value == "device"]
    if method == "cuda":
        if keyword:
            return None
        if not positional:
            return cst.SimpleString('"cuda"'), True
        if len(positional) == 1 and isinstance(positional[0], cst.Integer):
            return cst.SimpleString(f'"cuda:{positional[0].value}"'), True
        return None
    if len(positional) + len(keyword) != 1:
        return None
    if keyword:
        return keyword[0], True  # `.to(device=x)` names a device whatever `x` is
    device = positional[0]
    certain = is_device_expression(device) or (isinstance(device, cst.Name) and always_a_device(device.value, module))
    return device, certain


def _is_cast(call: cst.Call, context: FixContext) -> bool:
    """`.long()`, `.to(torch.int64)`, `.to(x.dtype)`: a dtype change that never moves the tensor
    (`.to(t)` of a tensor `t`, or `.type("torch.cuda.FloatTensor")`, could)."""
    if not isinstance(call.func, cst.Attribute):
        return False
    method = call.func.attr.value
    if method in _CASTS:
        return not call.args
    if method != "to" or len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return False
    dtype = call.args[0].value
    if isinstance(dtype, cst.Attribute) and dtype.attr.value == "dtype":
        return True
    qualname = context.facts.imports.qualified_name(dtype) if isinstance(dtype, (cst.Name, cst.Attribute)) else None
    return qualname is not None and qualname.startswith("torch.") and qualname.removeprefix("torch.") in _DTYPE_NAMES


def _exact(made: CallFact) -> bool:
    """Does the fill give the same bits on every device?"""
    if made.qualname in _EXACT_FILLS:
        return True
    if made.qualname != "torch.arange":
        return False
    positional = [arg.value for arg in made.node.args if arg.keyword is None]
    step_is_one_or_integer = len(positional) < 3 or isinstance(positional[2], cst.Integer)
    return step_is_one_or_integer and not any(isinstance(value, cst.Float) for value in positional)


def _with_device_at(chain: cst.BaseExpression, depth: int, device: cst.BaseExpression) -> cst.BaseExpression:
    """`f(...).a().b()` with `device=` added to the call `depth` casts down the chain."""
    if depth == 0:
        return with_last_argument(chain, keyword_argument("device", device))  # type: ignore[arg-type]
    func = chain.func  # type: ignore[attr-defined]
    return chain.with_changes(func=func.with_changes(value=_with_device_at(func.value, depth - 1, device)))


def create_on_device(finding: Finding, context: FixContext) -> Edit | None:
    transfer = context.node_at(finding, cst.Call)
    if not isinstance(transfer, cst.Call) or not isinstance(transfer.func, cst.Attribute):
        return None
    factory, casts = transfer.func.value, 0
    while isinstance(factory, cst.Call) and isinstance(factory.func, cst.Attribute) and _is_cast(factory, context):
        factory, casts = factory.func.value, casts + 1
    made = context.facts.call_of.get(factory) if isinstance(factory, cst.Call) else None
    if made is None or made.qualname not in HOST_FILLS | _DEVICE_DRAWS:
        return None  # a fill reached through a name or arithmetic: not the one-chain shape this rewrites
    if any(arg.star for arg in made.node.args) or any(arg.keyword is not None and arg.keyword.value in _REFUSED_KEYWORDS for arg in made.node.args):
        return None
    found = _device_argument(transfer, context.module)
    if found is None:
        return None
    device, certain = found
    random = made.qualname in HOST_DRAWS

    def rewrite(updated: cst.CSTNode) -> cst.CSTNode:
        return _with_device_at(updated.func.value, casts, device)  # type: ignore[attr-defined]

    description = "draw the random numbers on the device (other numbers than the CPU generator's)" if random else "create the tensor on the device"
    return Edit({transfer: rewrite}, safe=certain and _exact(made), description=description)
