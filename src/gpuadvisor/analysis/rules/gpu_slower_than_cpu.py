"""GPU702: a GPU operation predicted to be slower than the same work with NumPy on the CPU.

Only where the advice can be followed: the operation repeats, its operands are built where it
runs (not handed in by a caller whose sizes we would be guessing), and none of them is a
trained parameter, which the optimizer updates on the GPU and autograd needs there.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from gpuadvisor.analysis.facts.module_facts import Context, ModuleFacts
from gpuadvisor.analysis.findings.records import Finding, PredictionCandidate, Severity
from gpuadvisor.analysis.facts.imports import dotted_name, names_in_target
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import referenced_names
from gpuadvisor.analysis.rules.gpu_candidate import candidates
from gpuadvisor.analysis.facts.traverse import child_nodes, own_nodes
from gpuadvisor.prediction.formatting import duration, factor

if TYPE_CHECKING:
    from gpuadvisor.prediction.predictor import Prediction


def _trained_names(facts: ModuleFacts) -> set[str]:
    """Names holding tensors autograd trains: `requires_grad=True`, `nn.Parameter(...)`,
    `x.requires_grad_()`, or the parameter list handed to a `torch.optim` optimizer, and their
    gradients (`delta = y.grad`: backward makes them where the tensor lives)."""
    trained: set[str] = set()
    for call in facts.calls:
        qualname = call.qualname or ""
        if call.method == "requires_grad_" and call.receiver is not None:
            name = dotted_name(call.node.func.value)  # type: ignore[attr-defined]
            trained.update([name] if name is not None else [])
        elif qualname.startswith("torch.optim.") and call.node.args:
            params = call.node.args[0].value
            elements = params.elements if isinstance(params, (cst.List, cst.Tuple)) else []
            trained.update(name for element in elements if (name := dotted_name(element.value)) is not None)
    gradients: list[tuple[str, str]] = []  # (name bound, tensor whose .grad it is)
    stack: list[cst.CSTNode] = [facts.module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and _makes_parameter(node.value, facts):
            trained.update(name for target in node.targets if (name := dotted_name(target.target)) is not None)
        elif isinstance(node, cst.Assign) and isinstance(node.value, cst.Attribute) and node.value.attr.value == "grad":
            owner = dotted_name(node.value.value)
            gradients.extend((name, owner) for target in node.targets if owner is not None and (name := dotted_name(target.target)) is not None)
        stack.extend(child_nodes(node))
    return trained | {name for name, owner in gradients if owner in trained}


def _makes_parameter(call: cst.Call, facts: ModuleFacts) -> bool:
    qualname = facts.imports.qualified_name(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
    if qualname is not None and qualname.rsplit(".", 1)[-1] == "Parameter":
        return True
    return any(
        arg.keyword is not None and arg.keyword.value == "requires_grad" and isinstance(arg.value, cst.Name) and arg.value.value == "True"
        for arg in call.args
    )


def _caller_inputs(ctx: Context) -> set[str]:
    """Parameters of the enclosing function (but `self`/`cls`): their sizes are the caller's."""
    node = ctx.function.node
    if not isinstance(node, cst.FunctionDef):
        return set()
    params = node.params
    names = {param.name.value for param in (*params.params, *params.posonly_params, *params.kwonly_params)}
    return names - {"self", "cls"}


#: Stands for the elements of a container the object holds (`for p in self.params`).
_HELD_ELEMENTS = "<held elements>"


def _name_sources(node: cst.FunctionDef) -> dict[str, set[str]]:
    """For each name a function binds, the names its values are computed from (assignments and
    loop targets, flow-insensitive); a loop over something the object holds also reads
    `_HELD_ELEMENTS`."""
    sources: dict[str, set[str]] = {}
    for found in own_nodes(node.body):
        if isinstance(found, cst.Assign):
            for target in found.targets:
                for name in names_in_target(target.target):
                    sources.setdefault(name, set()).update(referenced_names(found.value))
        elif isinstance(found, (cst.AugAssign, cst.AnnAssign)) and found.value is not None:
            for name in names_in_target(found.target):
                sources.setdefault(name, set()).update(referenced_names(found.value))
        elif isinstance(found, cst.For):
            iterated = referenced_names(found.iter)
            if "self" in iterated:
                iterated = iterated | {_HELD_ELEMENTS}
            for name in names_in_target(found.target):
                sources.setdefault(name, set()).update(iterated)
    return sources


def _derived_from_inputs(read: set[str], ctx: Context, sources: dict[str, set[str]]) -> bool:
    """The operands are computed, in this function, from data it was handed: a parameter, or the
    elements of a container it iterates that the object holds (`for p in group["params"]` in an
    optimizer's `step`: `trust = p.norm() / g.norm()`). Moving them to the CPU would need a copy
    of GPU results, and their sizes are the caller's. `sources` is `_name_sources` of the function."""
    inputs = _caller_inputs(ctx) | {_HELD_ELEMENTS}
    seen: set[str] = set()
    pending = list(read)
    while pending:
        name = pending.pop()
        if name in inputs:
            return True
        if name not in seen:
            seen.add(name)
            pending.extend(sources.get(name, ()))
    return False


class GpuSlowerThanCpu(Rule):
    code = "GPU702"
    category = "gpu-slower-than-cpu"
    severity = Severity.WARNING
    summary = "GPU operation predicted slower than the same work on the CPU (too small to pay for its launch)"
    combines_per_line = True  # `P = F @ P @ F.T + Q` is one mistake, not four

    VALID = [
        # Gradient descent on a signal autograd trains: its gradient comes from backward on the
        # GPU, so the small update step has no NumPy version without copies both ways.
        Valid(
            """
            import torch
            y = torch.randn((8192,), requires_grad=True, device="cuda")
            for k in range(200):
                err = torch.norm(target - model(y))
                err.backward()
                delta_y = y.grad
                with torch.no_grad():
                    update = -100 * delta_y
                    y = (y + update).detach().requires_grad_()
            """
        ),
        # Run once, a tiny GPU op costs a few microseconds: not worth a finding.
        Valid(
            """
            import cupy as cp
            taps = cp.array([1.0, 4.0, 1.0]) / 6.0
            """
        ),
        Valid(
            """
            import cupy as cp
            a = cp.random.rand(8192, 8192, dtype=cp.float32)
            b = a @ a
            """
        ),
        Valid(
            """
            import torch
            def step(x):
                return torch.tanh(x @ x)
            """
        ),
        # A trained parameter: the optimizer updates it on the GPU and autograd needs it there.
        Valid(
            """
            import torch
            log_alpha = torch.zeros(1, requires_grad=True, device="cuda")
            a_optimizer = torch.optim.Adam([log_alpha], lr=1e-3)
            for step in range(100_000):
                alpha_loss = (-log_alpha.exp() * (log_pi + target_entropy)).mean()
                alpha_loss.backward()
                a_optimizer.step()
                alpha = log_alpha.exp()
            """
        ),
        # Inputs handed in by the caller: their sizes are not this function's to know.
        Valid(
            """
            import torch
            def rotate(points, angles):
                for _ in range(1000):
                    points = points @ angles
                return points
            rotate(torch.randn(4, 4, device="cuda"), torch.randn(4, 4, device="cuda"))
            """
        ),
        # A loop of three: a handful of launches in all.
        Valid(
            """
            import torch
            m = torch.randn(3, 3, device="cuda")
            for axis in range(3):
                m = m @ m
            """
        ),
        # Scalars computed from the parameters an optimizer is handed (a LAMB trust ratio): they
        # are GPU results; moving them to the CPU would cost a copy and a wait per parameter.
        Valid(
            """
            import torch
            class Lamb(torch.optim.Optimizer):
                def step(self):
                    one = torch.tensor(1.0, device="cuda")
                    for group in self.param_groups:
                        for p in group["params"]:
                            ratio = p.norm(2.0) / p.grad.norm(2.0)
                            ratio = torch.minimum(ratio, one)
                            p.add_(p.grad * ratio, alpha=-group["lr"])
            """
        ),
    ]
    INVALID = [
        # A four-element state stepped on the GPU: a method call on it (`state.clone()`) does not
        # make it a trained tensor (only `requires_grad_()` does), so its launches are still the cost.
        Invalid(
            """
            import torch
            state = torch.zeros(4, device="cuda")
            transition = torch.eye(4, device="cuda")
            for step in range(1000):
                state = transition @ state.clone() + 1.0
            """,
            line=5,
            message="4 float32 elementwise `x0 + 1.0` on the GPU",
        ),
        Invalid(
            """
            import cupy as cp
            a = cp.random.rand(16, 16)
            for step in range(10_000):
                b = cp.dot(a, a)
            """,
            line=4,
            message="16x16 @ 16x16 float64 matmul on the GPU",
        ),
        # Several tiny operations on one line: one finding naming them all, the fix is the same.
        Invalid(
            """
            import torch
            a = torch.randn(4, 4, device="cuda")
            b = torch.randn(4, 4, device="cuda")
            for step in range(10_000):
                c = torch.tanh(a @ b) * 0.5 + a
            """,
            line=5,
            message="2 GPU operations on this line (4x4 float32 elementwise `(tanh(x0) * 0.5) + x1`; 4x4 @ 4x4 float32 matmul)",
        ),
        Invalid(
            """
            import torch
            m = torch.randn(3, 3, device="cuda")
            for frame in frames:
                inv = torch.linalg.inv(m)
            """,
            line=4,
        ),
        # A reduction along an axis is still one tiny launch per iteration.
        Invalid(
            """
            import cupy as cp
            a = cp.random.rand(16, 16)
            for step in range(10_000):
                b = a.sum(axis=1)
            """,
            line=4,
            message="16x16 float64 sum on the GPU",
        ),
        # A tensor changed in place is not a trained parameter: its tiny solve stays a finding.
        Invalid(
            """
            import torch
            m = torch.randn(3, 3, device="cuda")
            m.mul_(0.5)
            for frame in frames:
                inv = torch.linalg.inv(m)
            """,
            line=5,
            message="3x3 float32 solve on the GPU",
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        # One tiny launch costs microseconds once; in a loop it adds up.
        repeated = [(report, ctx) for report, ctx in candidates(facts, on_gpu=True) if ctx.repeated]
        if not repeated:
            return
        trained = _trained_names(facts)
        # Every operation is predicted; the findings of one line are then merged into one
        # (`combines_per_line`), naming all its operations and their summed GPU time.
        sources_of: dict[int, dict[str, set[str]]] = {}  # one walk per function, not per operation
        for report, ctx in repeated:
            read = referenced_names(report.node)
            if read & trained:
                continue
            node = ctx.function.node
            if isinstance(node, cst.FunctionDef):
                if id(node) not in sources_of:
                    sources_of[id(node)] = _name_sources(node)
                if _derived_from_inputs(read, ctx, sources_of[id(node)]):
                    continue
            yield report

    @classmethod
    def conclude(cls, candidate: PredictionCandidate, prediction: Prediction, threshold: float) -> tuple[str, str] | None:
        if prediction.speedup_compute_only >= 1.0:
            return None
        message = (
            f"{candidate.description} on the GPU: ~{duration(prediction.gpu_seconds)} (mostly launch overhead) "
            f"vs ~{duration(prediction.cpu_seconds)} with NumPy on the CPU: "
            f"~{factor(1 / prediction.speedup_compute_only)} slower"
        )
        suggestion = "Keep arrays this small on the CPU (NumPy), or batch many of them into one larger GPU operation."
        return message, suggestion

    @classmethod
    def combine(cls, findings: list[Finding]) -> Finding:
        """The line's operations in one message; the prediction shown is the one losing the most time."""
        first = min(findings, key=lambda f: f.column)
        worst = max(findings, key=lambda f: f.prediction.gpu_seconds - f.prediction.cpu_seconds if f.prediction else 0.0)
        predictions = [f.prediction for f in findings if f.prediction is not None]
        gpu_total = sum(p.gpu_seconds for p in predictions)
        cpu_total = sum(p.cpu_seconds for p in predictions)
        listed = "; ".join(f.message.split(" on the GPU:")[0] for f in findings)
        message = (
            f"{len(findings)} GPU operations on this line ({listed}): ~{duration(gpu_total)} on the GPU "
            f"(mostly launch overhead) vs ~{duration(cpu_total)} with NumPy on the CPU: ~{factor(gpu_total / cpu_total)} slower"
        )
        return replace(
            worst,
            column=first.column,
            end_line=max(f.end_line for f in findings),
            end_column=max(f.end_column for f in findings if f.end_line == max(g.end_line for g in findings)),
            message=message,
        )
