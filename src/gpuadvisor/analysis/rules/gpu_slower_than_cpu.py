"""GPU702: a GPU operation predicted to be slower than the same work with NumPy on the CPU."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuadvisor.analysis.facts import ModuleFacts
from gpuadvisor.analysis.findings import PredictionCandidate, Severity
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
