"""GPU701: a CPU array operation predicted to run markedly faster on the target GPU."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuadvisor.analysis.facts.module_facts import Context, ModuleFacts
from gpuadvisor.analysis.findings.records import PredictionCandidate, Severity
from gpuadvisor.analysis.prescan import ARRAY_WORDS
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.prediction.formatting import duration, factor

if TYPE_CHECKING:
    from gpuadvisor.prediction.predictor import Prediction


def candidates(facts: ModuleFacts, on_gpu: bool) -> Iterator[tuple[Report, Context]]:
    """One report per array operation of known shape on the host (or on the GPU), outside tests."""
    for operation, ctx in facts.array_operations:
        if operation.on_gpu != on_gpu or facts.in_test_code(ctx):
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
            repeated=ctx.repeated or id(operation.node) in facts.ran_repeatedly,
            library="torch" if operation.library == "torch" else "numpy",
        )
        yield Report(operation.node, operation.description, "", candidate=candidate), ctx


#: Time a port must save per run of the operation to be worth suggesting: a one-off
#: operation needs to save a quarter of a second (a reviewer does not move one 30 ms `np.sum` of a
#: notebook to the GPU, with its copies and a new dependency), one in a loop a millisecond.
MIN_SAVING_ONCE = 0.25
MIN_SAVING_REPEATED = 0.001
#: How far above its roofline bound a CPU operation runs at worst in our measurements (single-core
#: sorts and FFTs reach 10-20x): generous, because the screen must never hide a real finding.
CPU_SLOWDOWN_BOUND = 100.0


class GpuCandidate(Rule):
    code = "GPU701"
    category = "gpu-candidate"
    severity = Severity.INFO
    summary = "CPU array operation predicted to run markedly faster on the target GPU, copies included"
    prefilter = (ARRAY_WORDS,)

    VALID = [
        # One 30 ms sum in a notebook: faster on a GPU, but not by enough to port.
        Valid(
            """
            import numpy as np
            rng = np.random.default_rng(0)
            weights = rng.random((10_000_000, 5))
            totals = np.sum(weights, axis=1)
            """
        ),
        # A product inside a numba-compiled function is native code already: its cost is not
        # NumPy's, and moving it is a different port.
        Valid(
            """
            import numba
            import numpy as np
            @numba.njit
            def kernel():
                a = np.ones((4096, 4096))
                b = np.ones((4096, 4096))
                return a @ b
            """
        ),
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
            N = 16384
            a = np.random.rand(N, N).astype(np.float32)
            b = np.random.rand(N, N).astype(np.float32)
            c = a @ b
            """,
            line=5,
        ),
        # A product written as an einsum of two matrices is costed as the product it is.
        Invalid(
            """
            import numpy as np
            N = 16384
            a = np.random.rand(N, N).astype(np.float32)
            b = np.random.rand(N, N).astype(np.float32)
            c = np.einsum("ij,jk->ik", a, b)
            """,
            line=5,
            message="16384x16384 @ 16384x16384 float32 matmul",
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for report, _ctx in candidates(facts, on_gpu=False):
            yield report

    @classmethod
    def may_conclude(cls, candidate: PredictionCandidate, fastest_cpu_seconds: float) -> bool:
        """The saving is at most the CPU time; measured CPU times stay within 100x of the roofline."""
        needed = MIN_SAVING_REPEATED if candidate.repeated else MIN_SAVING_ONCE
        return fastest_cpu_seconds * CPU_SLOWDOWN_BOUND >= needed

    @classmethod
    def conclude(cls, candidate: PredictionCandidate, prediction: Prediction, threshold: float) -> tuple[str, str] | None:
        if prediction.speedup < threshold:
            return None
        saving = prediction.cpu_seconds - prediction.gpu_seconds - prediction.transfer_seconds
        if saving < (MIN_SAVING_REPEATED if candidate.repeated else MIN_SAVING_ONCE):
            return None  # faster, but by too little time for anyone to port it
        low, high = prediction.interval
        moved = "the result back" if candidate.input_copy_bytes == 0 else "the inputs in and the result back"
        copies = f" + ~{duration(prediction.transfer_seconds)} to copy {moved}" if prediction.transfer_seconds > 0 else ""
        where = "this CPU" if prediction.cpu == "local" else prediction.cpu_name  # `--cpu laptop` is not this one
        message = (
            f"{candidate.description}: ~{duration(prediction.cpu_seconds)} on {where}, "
            f"~{duration(prediction.gpu_seconds)} on {prediction.gpu_name}{copies}: ~{factor(prediction.speedup)} faster on the GPU"
        )
        create = " Its inputs are generated (random, zeros, ranges): create them on the GPU directly." if candidate.input_copy_bytes == 0 else ""
        suggestion = (
            f"Run it on the GPU with CuPy (`cp.asarray`) or torch (`.cuda()`), keeping the data there across "
            f"steps; predicted {factor(low)} to {factor(high)} faster.{create}"
        )
        return message, suggestion
