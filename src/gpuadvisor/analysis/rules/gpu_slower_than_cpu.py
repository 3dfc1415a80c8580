"""GPU702: a GPU operation predicted to be slower than the same work with NumPy on the CPU."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuadvisor.analysis.facts import ModuleFacts
from gpuadvisor.analysis.findings import Finding, PredictionCandidate, Severity
from gpuadvisor.analysis.rule import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.gpu_candidate import candidates
from gpuadvisor.prediction.formatting import duration, factor

if TYPE_CHECKING:
    from gpuadvisor.prediction.predictor import Prediction


class GpuSlowerThanCpu(Rule):
    code = "GPU702"
    category = "gpu-slower-than-cpu"
    severity = Severity.WARNING
    summary = "GPU operation predicted slower than the same work on the CPU (too small to pay for its launch)"
    combines_per_line = True  # `P = F @ P @ F.T + Q` is one mistake, not four

    VALID = [
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
    ]
    INVALID = [
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
        Invalid(
            """
            import torch
            m = torch.randn(3, 3, device="cuda")
            for frame in frames:
                inv = torch.linalg.inv(m)
            """,
            line=4,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for report, ctx in candidates(facts, on_gpu=True):
            if ctx.repeated:  # one tiny launch costs microseconds once; in a loop it adds up
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
