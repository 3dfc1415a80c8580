"""GPU801: a debugging switch that slows every training step left on in the code."""

from __future__ import annotations

from collections.abc import Iterator

from gpuadvisor.analysis.facts.module_facts import DebugSwitch, ModuleFacts
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.prescan import DEBUG_SWITCH_WORDS
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import short


class DebugSwitchLeftOn(Rule):
    code = "GPU801"
    category = "debug-switch-left-on"
    severity = Severity.WARNING
    summary = "Autograd anomaly detection or CUDA_LAUNCH_BLOCKING turned on unconditionally (slows every step)"
    prefilter = (DEBUG_SWITCH_WORDS,)

    VALID = [
        # Behind a flag: off unless the user asks for it.
        Valid(
            """
            import torch
            if args.detect_anomaly:
                torch.autograd.set_detect_anomaly(True)
            torch.autograd.set_detect_anomaly(args.debug)
            """
        ),
        # Turning it off is what a training script should do.
        Valid(
            """
            import torch
            torch.autograd.set_detect_anomaly(False)
            """
        ),
        Valid(
            """
            import os
            os.environ["CUDA_LAUNCH_BLOCKING"] = "0"
            os.environ["CUDA_VISIBLE_DEVICES"] = "1"
            """
        ),
        # A test that checks gradients for NaN on purpose.
        Valid(
            """
            import torch
            def test_backward_is_finite():
                with torch.autograd.detect_anomaly():
                    model(x).sum().backward()
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch
            torch.autograd.set_detect_anomaly(True)
            import torch.nn as nn
            """,
            line=2,
            message="anomaly detection stays on for every backward pass",
        ),
        Invalid(
            """
            import torch
            def train(model, loader, optimizer):
                for x, y in loader:
                    with torch.autograd.detect_anomaly():
                        loss = model(x, y)
                        loss.backward()
                    optimizer.step()
            """,
            line=4,
        ),
        Invalid(
            """
            import os
            os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
            import torch
            """,
            line=2,
            message="every CUDA kernel launch waits for the kernel to finish",
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for switch in facts.debug_switches:
            if switch.ctx.guards or facts.in_test_code(switch.ctx):
                continue  # behind an `if` (a --debug flag) or in a test: meant to be on there
            yield self._report(switch, facts)

    @staticmethod
    def _report(switch: DebugSwitch, facts: ModuleFacts) -> Report:
        code = short(facts.code(switch.node))
        if switch.what == "anomaly detection":
            return Report(
                switch.node,
                f"`{code}`: anomaly detection stays on for every backward pass; it records a stack "
                "trace for every autograd node and checks every gradient for NaN (a device sync per "
                "op), which makes training several times slower",
                "Remove it, or turn it on only while hunting a NaN: `torch.autograd.set_detect_anomaly("
                "args.detect_anomaly)` or `with torch.autograd.detect_anomaly():` around one step.",
            )
        return Report(
            switch.node,
            f"`{code}`: every CUDA kernel launch waits for the kernel to finish, so the CPU can never "
            "queue work ahead of the GPU: a debugging setting that slows every step",
            "Remove it from the code; set `CUDA_LAUNCH_BLOCKING=1` in the shell only while locating a "
            "CUDA error.",
        )
