"""GPU301: a Python loop launching tiny GPU operations element by element or row by row."""

from __future__ import annotations

from collections.abc import Iterator

from gpuadvisor.analysis.facts import LoopFacts, ModuleFacts
from gpuadvisor.analysis.findings import Severity
from gpuadvisor.analysis.rule import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import short


def _launches_per_element(loop: LoopFacts) -> bool:
    if loop.function.compiled or loop.has_opaque_call or loop.gpu_ops == 0:
        return False
    iterates_gpu_array = loop.iter_value is not None and loop.iter_value.is_gpu_array
    return iterates_gpu_array or (loop.counts_indices and bool(loop.element_reads))


class SmallKernelLoop(Rule):
    code = "GPU301"
    category = "small-kernel-loop"
    severity = Severity.WARNING
    summary = "Python loop launching one tiny GPU kernel per element or row; batch it"

    VALID = [
        Valid(
            """
            import torch
            x = torch.randn(4096, 4096, device="cuda")
            for layer in layers:
                x = layer(x)
            for epoch in range(10):
                x = torch.tanh(x @ w)
            """
        ),
        Valid(
            """
            import torch
            x = torch.from_numpy(values)
            for i in range(len(x)):
                x[i] = x[i] * 2
            """
        ),
        Valid(
            """
            import torch
            seq = torch.randn(100, 32, 64, device="cuda")
            h = torch.zeros(32, 64, device="cuda")
            for t in range(100):
                h = cell(seq[t], h)
            """
        ),
        Valid(
            """
            from numba import cuda, njit
            import cupy as cp
            x = cp.arange(100)

            @njit
            def scale(a):
                for i in range(a.shape[0]):
                    a[i] = a[i] * 2
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch
            x = torch.randn(10_000, device="cuda")
            y = torch.empty_like(x)
            for i in range(x.shape[0]):
                y[i] = x[i] * 2
            """,
            line=4,
        ),
        Invalid(
            """
            import torch
            a = torch.randn(512, 64, device="cuda")
            b = torch.randn(512, 64, device="cuda")
            out = torch.empty(512, device="cuda")
            for i in range(512):
                out[i] = torch.dot(a[i], b[i])
            """,
            line=5,
        ),
        Invalid(
            """
            import torch
            mats = torch.randn(1000, 3, 3, device="cuda")
            inverses = [torch.linalg.inv(m) for m in mats]
            """,
            line=3,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        flagged = [
            loop
            for loop in facts.loops
            if not loop.few_iterations and _launches_per_element(loop) and not (facts.test_file or loop.function.is_test)
        ]
        flagged_nodes = {loop.node for loop in flagged}
        for loop in flagged:
            if any(outer.node in flagged_nodes for outer in self._ancestors(loop)):
                continue  # report the outermost loop of a nest once
            iterable = loop.iterable
            what = (
                f"one row of `{short(facts.code(iterable), 30)}`"
                if iterable is not None and loop.iter_value is not None and loop.iter_value.is_gpu_array
                else "a single element or row"
            )
            kernels = "a GPU kernel" if loop.gpu_ops == 1 else f"{loop.gpu_ops} GPU kernels"
            yield Report(
                loop.node,
                f"This Python loop launches {kernels} per iteration, each on {what}: the launch "
                "overhead (microseconds per kernel) dwarfs the work",
                "Replace the loop with one batched operation over the whole array (e.g. `y = x * 2`, "
                "`(a * b).sum(dim=1)`, `torch.linalg.inv(batch)`).",
                end_node=loop.header_end(),
            )

    @staticmethod
    def _ancestors(loop: LoopFacts) -> Iterator[LoopFacts]:
        parent = loop.parent
        while parent is not None:
            yield parent
            parent = parent.parent
