"""GPU102: `torch.zeros(n).to(dev)` -> `torch.zeros(n, device=dev)`.

Safe for fills whose values do not depend on where they are made, when the target is surely a
device. Random draws (`torch.randn(n).cuda()`) are unsafe: the CUDA generator gives other
numbers than the CPU one, so a seeded run no longer reproduces.
"""

from __future__ import annotations

import libcst as cst

from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.analysis.rules.create_then_transfer import HOST_DRAWS, HOST_FILLS
from gpuadvisor.fixes.context import Edit, FixContext
from gpuadvisor.fixes.helpers import always_a_device, is_device_expression, keyword_argument, with_last_argument

#: Draws that take `device=` the way the fills do (`normal` and `bernoulli` draw from tensors
#: they are given, on those tensors' device).
_DEVICE_DRAWS = frozenset(f"torch.{name}" for name in ("rand", "randn", "randint", "randperm"))
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


def create_on_device(finding: Finding, context: FixContext) -> Edit | None:
    transfer = context.node_at(finding, cst.Call)
    if not isinstance(transfer, cst.Call) or not isinstance(transfer.func, cst.Attribute):
        return None
    factory = transfer.func.value
    made = context.facts.call_of.get(factory) if isinstance(factory, cst.Call) else None
    if made is None or made.qualname not in HOST_FILLS | _DEVICE_DRAWS:
        return None  # a fill behind a cast or a name: not the one-call shape this rewrites
    if any(arg.star for arg in made.node.args) or any(arg.keyword is not None and arg.keyword.value in _REFUSED_KEYWORDS for arg in made.node.args):
        return None
    found = _device_argument(transfer, context.module)
    if found is None:
        return None
    device, certain = found
    random = made.qualname in HOST_DRAWS

    def rewrite(updated: cst.CSTNode) -> cst.CSTNode:
        return with_last_argument(updated.func.value, keyword_argument("device", device))  # type: ignore[attr-defined]

    description = "draw the random numbers on the device (other numbers than the CPU generator's)" if random else "create the tensor on the device"
    return Edit({transfer: rewrite}, safe=certain and not random, description=description)
