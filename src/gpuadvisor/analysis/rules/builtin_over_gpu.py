"""GPU302: Python's sum()/max()/any()/sorted() iterating a GPU array element by element.

Iterating a GPU array yields 0-d (or row) views: no sync by itself. The cost comes from what
the builtin does with each element: `sum` launches an add kernel per element, and `max`, `min`,
`any`, `all` and `sorted` test each element's truth or order, which reads it back to the host.
`list(t)`/`tuple(t)` only make the views, and `max(a, b)` compares two values: not reported.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.call_sites import takes_branch
from gpuadvisor.analysis.facts.module_facts import ModuleFacts
from gpuadvisor.analysis.facts.traverse import own_nodes
from gpuadvisor.analysis.facts.values import Kind
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import short

_ARRAY_EQUIVALENT = {"sum": ".sum()", "max": ".max()", "min": ".min()", "sorted": ".sort()", "any": ".any()", "all": ".all()"}
#: What each builtin does per element of a GPU array.
_PER_ELEMENT = {
    "sum": "one indexing op and one add kernel per element (the launches add up; no sync until the total is read)",
    "any": "a 0-d GPU view per element whose truth value is read back to the host: one device->host sync per element",
    "all": "a 0-d GPU view per element whose truth value is read back to the host: one device->host sync per element",
    "max": "each comparison of two 0-d GPU views is read back to the host: one device->host sync per element",
    "min": "each comparison of two 0-d GPU views is read back to the host: one device->host sync per element",
    "sorted": "each comparison of two 0-d GPU views is read back to the host: n log n device->host syncs",
}


def _model_output(expr: cst.BaseExpression, scope: cst.CSTNode, facts: ModuleFacts) -> bool:
    """`model(x)`, or a name every assignment of this scope binds to a call of a module: what a
    model returns may be a tensor or a tuple or list of them, so a builtin over it may iterate a
    Python container, not a GPU array."""
    if isinstance(expr, cst.Call):
        callee = facts.value(expr.func)
        return callee is not None and callee.kind is Kind.MODULE
    if not isinstance(expr, cst.Name):
        return False
    bound = [
        node.value
        for node in own_nodes(scope)
        if isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == expr.value for t in node.targets)
    ]
    return bool(bound) and all(isinstance(value, cst.Call) and _model_output(value, scope, facts) for value in bound)


class BuiltinOverGpuArray(Rule):
    code = "GPU302"
    category = "small-kernel-loop"
    severity = Severity.WARNING
    summary = "Python builtin (sum, max, sorted, ...) iterating a GPU array element by element"

    VALID = [
        # A multi-head model returns one loss per head, in a Python list: `sum` adds a few
        # scalars, it does not iterate a tensor.
        Valid(
            """
            import torch
            model = MultiTokenModel(cfg).cuda()
            for input_ids, labels in loader:
                losses = model(input_ids.cuda(), labels.cuda())
                loss = sum(losses) / accumulation
                loss.backward()
            """
        ),
        Valid(
            """
            import torch
            x = torch.randn(10_000, device="cuda")
            total = x.sum()
            biggest = max(x.max().item(), 0.0)
            """
        ),
        Valid(
            """
            import numpy as np
            import torch
            x = torch.from_numpy(np.arange(10))
            total = sum(x)
            """
        ),
        Valid(
            """
            import cupy as cp
            import torch
            def broadcast(*arrays):
                return tuple(cp.broadcast_arrays(*arrays))
            grids = list(cp.meshgrid(cp.arange(3), cp.arange(4)))
            parts = list(torch.split(torch.ones(10, device="cuda"), 2))
            best, where = max(torch.max(torch.ones(3, 3, device="cuda"), dim=1))
            """
        ),
        # Iterating rows makes views (no sync); two-argument min/max compare two values; `in`
        # on a batch object is a key test.
        Valid(
            """
            import torch
            x = torch.randn(64, 128, device="cuda")
            rows = list(x)
            pairs = tuple(x)
            a, b = x.sum(), x.mean()
            hi = max(a, b)
            lo = min(x.min(), torch.zeros((), device="cuda"))
            if "edge_attr" in batch:
                pass
            """
        ),
        # The infinity-norm branch of a gradient-norm helper that every caller runs with the
        # default 2-norm: the per-parameter `max` never runs.
        Valid(
            """
            import torch
            from torch import inf
            def grad_norm(parameters, norm_type: float = 2.0):
                parameters = [p for p in parameters if p.grad is not None]
                norm_type = float(norm_type)
                device = parameters[0].grad.device
                if norm_type == inf:
                    return max(p.grad.detach().abs().max().to(device) for p in parameters)
                return torch.norm(torch.stack([torch.norm(p.grad.detach(), norm_type) for p in parameters]), norm_type)
            model = Net().cuda()
            for x in loader:
                model(x.cuda()).backward()
                print(grad_norm(model.parameters()))
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch
            losses = torch.rand(1000, device="cuda")
            total = sum(losses)
            """,
            line=3,
            message="one indexing op and one add kernel per element",
        ),
        Invalid(
            """
            import cupy
            poles = cupy.roots(cupy.array([1.0, 3.0, 3.0, 1.0]))
            if any(cupy.iscomplex(poles)):
                raise ValueError("complex poles")
            """,
            line=3,
            message="one device->host sync per element",
        ),
        Invalid(
            """
            import cupy as cp
            scores = cp.random.rand(500)
            ranked = sorted(scores)
            """,
            line=3,
        ),
        # A library function no code of the project calls: its users choose the method, so
        # the non-default branch is theirs to take.
        Invalid(
            """
            import cupy
            def minimum_phase(h, method="homomorphic"):
                H = cupy.abs(cupy.fft.fft(h))
                if method == "hilbert":
                    return max(H) - 1
                return cupy.log(H)
            """,
            line=5,
        ),
        # The same helper called with `norm_type=inf`: the branch runs.
        Invalid(
            """
            import torch
            from torch import inf
            def grad_norm(parameters, norm_type: float = 2.0):
                parameters = [p for p in parameters if p.grad is not None]
                device = parameters[0].grad.device
                if norm_type == inf:
                    return max(p.grad.detach().abs().max().to(device) for p in parameters)
                return torch.norm(torch.stack([torch.norm(p.grad.detach(), norm_type) for p in parameters]), norm_type)
            model = Net().cuda()
            for x in loader:
                model(x.cuda()).backward()
                print(grad_norm(model.parameters(), norm_type=inf))
            """,
            line=7,
        ),
        # A GPU array under another name is still a GPU array, not a model's output.
        Invalid(
            """
            import torch
            scores = torch.randn(1000, device="cuda")
            kept = scores
            total = sum(kept)
            """,
            line=4,
            message="`sum(kept)` makes Python iterate a GPU array",
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for call in facts.calls:
            if call.qualname not in kb.ITERATING_BUILTINS or not call.args:
                continue
            builtin = call.qualname.removeprefix("builtins.")
            per_element = _PER_ELEMENT.get(builtin)
            if per_element is None or (builtin in ("max", "min") and len(call.args) > 1):
                continue  # list()/tuple() make views; max(a, b) compares two values
            iterated = call.args[0]
            if iterated is None or not iterated.is_gpu_array or facts.in_test_code(call.ctx):
                continue
            if _model_output(call.node.args[0].value, call.ctx.function.node or facts.module, facts):
                continue  # `sum(model(x, y))`: a model may return a list of losses, one per head
            if any(takes_branch(test, call.ctx.function, facts) is False for test in call.ctx.guards):
                continue  # `if norm_type == inf:` where every caller keeps the default 2.0
            yield Report(
                call.node,
                f"`{short(facts.code(call.node))}` makes Python iterate a GPU array: {per_element}",
                f"Use the array's own method, which runs as one kernel: `x{_ARRAY_EQUIVALENT[builtin]}`.",
            )
