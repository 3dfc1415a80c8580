"""GPU102: a tensor built on the host only to be copied to the GPU right away."""

from __future__ import annotations

from collections.abc import Iterator

from gpuadvisor.analysis.facts import ModuleFacts
from gpuadvisor.analysis.findings import Severity
from gpuadvisor.analysis.rule import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import short


class CreateThenTransfer(Rule):
    code = "GPU102"
    category = "create-then-transfer"
    severity = Severity.WARNING
    summary = "Tensor created on the host and immediately moved to the GPU; create it there"

    VALID = [
        Valid(
            """
            import torch
            x = torch.zeros(1024, 1024, device="cuda")
            y = torch.randn(64, 3, device=x.device)
            """
        ),
        Valid(
            """
            import torch
            x = torch.from_numpy(frame).cuda()
            """
        ),
        Valid(
            """
            import torch
            x = torch.zeros(8).to(torch.float16)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch
            buffer = torch.zeros(4096, 4096).cuda()
            """,
            line=2,
        ),
        Invalid(
            """
            import torch
            device = "cuda" if torch.cuda.is_available() else "cpu"
            noise = torch.randn(batch, 128).to(device)
            """,
            line=3,
        ),
        Invalid(
            """
            from torch import arange
            idx = arange(10_000).to("cuda:0")
            """,
            line=2,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for move in facts.create_then_move:
            factory = move.factory.removeprefix("torch.")
            yield Report(
                move.node,
                f"`{short(facts.code(move.node))}` fills a tensor on the host and then copies it to the "
                "GPU: two allocations, a host fill and a host-to-device copy where one GPU fill would do",
                f"Create it on the GPU directly: `torch.{factory}(..., device=device)`.",
            )
