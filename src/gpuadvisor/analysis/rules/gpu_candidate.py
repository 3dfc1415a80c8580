"""GPU701: a CPU array operation predicted to run markedly faster on the target GPU."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuadvisor.analysis.facts import ModuleFacts
from gpuadvisor.analysis.findings import PredictionCandidate, Severity
from gpuadvisor.analysis.rule import Invalid, Report, Rule, Valid
from gpuadvisor.prediction.formatting import duration, factor

if TYPE_CHECKING:
    from gpuadvisor.prediction.predictor import Prediction


def candidates(facts: ModuleFacts, on_gpu: bool) -> Iterator[Report]:
    """One report per array operation of known shape on the host (or on the GPU)."""
    for operation, _ctx in facts.array_operations:
        if operation.on_gpu != on_gpu:
            continue
        candidate = PredictionCandidate(
            op=operation.op,
            shapes=operation.shapes,
            dtype=operation.dtype,
            on_gpu=operation.on_gpu,
            description=operation.description,
            expression=operation.expression,
            axis=operation.axis,
            input_copy_bytes=operation.input_copy_bytes,
            output_bytes=operation.output_bytes,
        )
        yield Report(operation.node, operation.description, "", candidate=candidate)


class GpuCandidate(Rule):
    code = "GPU701"
    category = "gpu-candidate"
    severity = Severity.INFO
    summary = "CPU array operation predicted to run markedly faster on the target GPU, copies included"
    prefilter = (r"numpy|torch|import np|scipy",)

    VALID = [
        Valid(
            """
            import numpy as np
            a = np.random.rand(16, 16)
            b = a @ a
            total = np.sin(a).sum()
            """
        ),
        Valid(
            """
            import numpy as np
            def scale(x, factor):
                return np.sqrt(x) * factor
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import numpy as np
            N = 8192
            a = np.random.rand(N, N).astype(np.float32)
            b = np.random.rand(N, N).astype(np.float32)
            c = a @ b
            """,
            line=5,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        yield from candidates(facts, on_gpu=False)

    @classmethod
    def conclude(cls, candidate: PredictionCandidate, prediction: Prediction, threshold: float) -> tuple[str, str] | None:
        if prediction.speedup < threshold:
            return None
        low, high = prediction.interval
        moved = "the result back" if candidate.input_copy_bytes == 0 else "the inputs in and the result back"
        copies = f" + ~{duration(prediction.transfer_seconds)} to copy {moved}" if prediction.transfer_seconds > 0 else ""
        message = (
            f"{candidate.description}: ~{duration(prediction.cpu_seconds)} on this CPU, "
            f"~{duration(prediction.gpu_seconds)} on {prediction.gpu_name}{copies}: ~{factor(prediction.speedup)} faster on the GPU"
        )
        create = " Its inputs are generated (random, zeros, ranges): create them on the GPU directly." if candidate.input_copy_bytes == 0 else ""
        suggestion = (
            f"Run it on the GPU with CuPy (`cp.asarray`) or torch (`.cuda()`), keeping the data there across "
            f"steps; predicted {factor(low)} to {factor(high)} faster.{create}"
        )
        return message, suggestion
