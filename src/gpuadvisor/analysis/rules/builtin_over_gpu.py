"""GPU302: Python's sum()/max()/sorted() iterating a GPU array element by element."""

from __future__ import annotations

from collections.abc import Iterator

from gpuadvisor.analysis import knowledge as kb
from gpuadvisor.analysis.facts import ModuleFacts
from gpuadvisor.analysis.findings import Severity
from gpuadvisor.analysis.rule import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import short

_ARRAY_EQUIVALENT = {
    "sum": ".sum()", "max": ".max()", "min": ".min()", "sorted": ".sort()", "any": ".any()",
    "all": ".all()", "list": ".tolist()", "tuple": ".tolist()",
}


class BuiltinOverGpuArray(Rule):
    code = "GPU302"
    category = "small-kernel-loop"
    severity = Severity.WARNING
    summary = "Python builtin (sum, max, sorted, ...) iterating a GPU array element by element"

    VALID = [
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
    ]
    INVALID = [
        Invalid(
            """
            import torch
            losses = torch.rand(1000, device="cuda")
            total = sum(losses)
            """,
            line=3,
        ),
        Invalid(
            """
            import cupy as cp
            scores = cp.random.rand(500)
            ranked = sorted(scores)
            """,
            line=3,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for call in facts.calls:
            if call.qualname not in kb.ITERATING_BUILTINS or not call.args:
                continue
            iterated = call.args[0]
            if iterated is None or not iterated.is_gpu_array or facts.in_test_code(call.ctx):
                continue
            builtin = call.qualname.removeprefix("builtins.")
            better = _ARRAY_EQUIVALENT.get(builtin, ".sum()")
            yield Report(
                call.node,
                f"`{short(facts.code(call.node))}` makes Python iterate a GPU array: one indexing kernel and "
                "one device->host sync per element",
                f"Use the array's own method, which runs as one kernel: `x{better}`.",
            )
