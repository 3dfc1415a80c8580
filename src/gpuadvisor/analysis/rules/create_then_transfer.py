"""GPU102: a tensor built on the host only to be copied to the GPU right away."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gpuadvisor.analysis import knowledge as kb
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
        # Host data has to be copied whichever way it is written: no GPU fill replaces it.
        Valid(
            """
            import torch
            obs_t = torch.tensor(obs).to(device)
            batch = torch.FloatTensor(states).to(dev)
            """
        ),
        # Random numbers drawn on the host on purpose: CPU and CUDA generators give different
        # values, and seeded CPU draws keep runs reproducible across devices.
        Valid(
            """
            import torch
            device = "cuda" if torch.cuda.is_available() else "cpu"
            noise = torch.randn(batch, 128).to(device)
            """
        ),
        # `zeros_like` already allocates where its argument lives; the move is a no-op.
        Valid(
            """
            import torch
            mask = torch.zeros_like(embeds).to(embeds.device)
            """
        ),
        Valid(
            """
            import torch
            def test_kernel():
                ref = torch.ones(16).cuda()
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
            message="`torch.zeros(4096, 4096).cuda()` fills a tensor on the host and then copies it to the GPU",
        ),
        Invalid(
            """
            from torch import arange
            idx = arange(10_000).to("cuda:0")
            """,
            line=2,
        ),
        Invalid(
            """
            import torch
            def gradient_penalty(critic, real, fake, device):
                mix = critic(real * 0.5 + fake * 0.5)
                ones = torch.ones(mix.size()).to(device)
                return ones
            """,
            line=4,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for call in facts.calls:
            if call.method not in ("cuda", "to") or call.result is None or not call.result.on_gpu:
                continue
            source = call.node.func.value  # type: ignore[attr-defined]
            factory = facts.call_of.get(source) if isinstance(source, cst.Call) else None
            if factory is None or factory.qualname not in kb.TORCH_HOST_FILLS or factory.keyword("device") is not None:
                continue
            if facts.in_test_code(call.ctx):
                continue
            yield Report(
                call.node,
                f"`{short(facts.code(call.node))}` fills a tensor on the host and then copies it to the "
                "GPU: two allocations, a host fill and a host-to-device copy where one GPU fill would do",
                f"Create it on the GPU directly: `{factory.qualname}(..., device=device)`.",
            )
