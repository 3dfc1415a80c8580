"""GPU301: a Python loop launching tiny GPU operations element by element or row by row."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gpuadvisor.analysis.facts import EventKind, LoopFacts, ModuleFacts
from gpuadvisor.analysis.findings import Severity
from gpuadvisor.analysis.rule import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import referenced_names, short
from gpuadvisor.analysis.traverse import child_nodes


def _launches_per_element(loop: LoopFacts, facts: ModuleFacts) -> bool:
    if loop.function.compiled or loop.has_opaque_call or loop.gpu_ops == 0:
        return False
    iterates_gpu_array = loop.iter_value is not None and loop.iter_value.is_gpu_array
    per_element = iterates_gpu_array or (loop.counts_indices and bool(loop.element_reads))
    return per_element and not _works_on_whole_arrays(loop, facts)


def _works_on_whole_arrays(loop: LoopFacts, facts: ModuleFacts) -> bool:
    """Does some kernel of the loop take a whole GPU array that stays the same across iterations?

    `for c in coefficients: y = y * x + c` or `for lo, hi in bands: h += cupy.sinc(hi * m)`
    launch one kernel per element of a short list, but each kernel runs over all of `x` or
    `m`: the launches are not what costs, and there is no batched form to suggest. A loop
    that also waits for the GPU each time (`(table == t).nonzero().item()`) stays flagged:
    the round trips add up whatever the kernels cost.
    """
    events = [event for event in loop.function.events if loop in event.ctx.loops()]
    if any(event.kind is EventKind.SYNC for event in events):
        return False
    return any(event.kind is EventKind.GPU_WORK and _whole_array_kernel(event.node, loop, facts) for event in events)


def _whole_array_kernel(operation: cst.CSTNode, loop: LoopFacts, facts: ModuleFacts) -> bool:
    """An operand is a GPU array that does not change across iterations, and none is indexed
    by the loop (`x[i] / peak` works on one element even though `peak` is a whole array)."""
    whole = False
    stack: list[cst.CSTNode] = [operation]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Subscript):
            if any(referenced_names(element) & loop.varying for element in node.slice):
                return False
            continue
        if isinstance(node, cst.Name) and node.value not in loop.varying:
            value = facts.value(node)
            whole = whole or (value is not None and value.is_gpu_array)
        stack.extend(child_nodes(node))
    return whole


class SmallKernelLoop(Rule):
    code = "GPU301"
    category = "small-kernel-loop"
    severity = Severity.WARNING
    summary = "Python loop launching one tiny GPU kernel per element or row; batch it"

    VALID = [
        Valid(
            """
            import cupy
            def polyval(p, x):
                p = cupy.asarray(p)
                x = cupy.asarray(x)
                y = cupy.zeros_like(x)
                for coefficient in p:
                    y = y * x + coefficient
                return y
            """
        ),
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
            schedule = torch.linspace(999, 0, 1000, device="cuda").long()
            for batch in loader:
                timesteps = torch.randint(0, 1000, (batch.shape[0],), device="cuda")
                indices = [(schedule == t).nonzero().item() for t in timesteps]
            """,
            line=5,
        ),
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
            if not loop.few_iterations and _launches_per_element(loop, facts) and not (facts.test_file or loop.function.is_test)
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
