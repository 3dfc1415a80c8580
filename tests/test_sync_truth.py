"""What the analyzer says waits, against what an H100 measured.

`benchmarks/gpu_sync_truth.py` queued a busy kernel and timed each call on the host
(benchmarks/gpu_truth/sync_h100.json: torch 2.11, CuPy 14.2; 2026-11-26, then on another H100 with seven more calls on 2026-11-28). Here every measured call is written
in a hot loop of a small realistic script and checked:

- a call that returned at once must not be reported as a wait (GPU201/GPU302);
- a call that waited must be reported: as a wait, or as a copy (GPU101) when the wait is a
  blocking copy, unless it is listed in NOT_REPORTED with the reason it is left alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gpuadvisor

TRUTH = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_truth" / "sync_h100.json").read_text())

SETUP = {
    "torch": """\
import io
import math
import numpy as np
import torch
import torch.nn.functional as F
dev = "cuda"
x = torch.randn(1 << 20, device=dev)
y = x.clone()
x_copy = x.clone()
s = x.sum()
m = x > 0
idx = torch.randint(0, 1 << 20, (1000,), device=dev)
labels = torch.randint(0, 10, (512,), device=dev)
p = torch.softmax(torch.randn(64, 10, device=dev), dim=-1)
probs = p
logits = torch.randn(512, 10, device=dev)
host = torch.randn(1000)
big_host = torch.randn(1 << 24)
pinned = torch.randn(1000).pin_memory()
a = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
r = torch.full((10,), 2, device=dev)
A = torch.randn(256, 256, device=dev)
b = torch.randn(256, 1, device=dev)
model = torch.nn.Linear(256, 256).to(dev)
params = list(model.parameters())
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cuda")
buffer = io.BytesIO()
mu = torch.randn(256, 8, device=dev)
sd = torch.rand(256, 8, device=dev) + 0.1
dist_logits = torch.randn(256, 10, device=dev)
dist = torch.distributions.Normal(mu, sd)
unchecked = torch.distributions.Normal(mu, sd, validate_args=False)
actions = dist.sample()
""",
    "cupy": """\
import numpy as np
import cupy as cp
a = cp.random.standard_normal(1 << 20, dtype=cp.float32)
s = a.sum()
m = a > 0
idx = cp.random.randint(0, 1 << 20, 1000)
labels = cp.random.randint(0, 10, 512)
host = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
big_host = np.random.default_rng(0).standard_normal(1 << 24).astype(np.float32)
A = cp.random.standard_normal((256, 256), dtype=cp.float32)
b = cp.random.standard_normal((256, 1), dtype=cp.float32)
""",
}

#: Cases whose recorded code is not a statement of the set-up's names as it stands.
STATEMENTS = {
    ("torch", "setitem_mask_scalar"): "y[m] = 0.0",
    ("torch", "setitem_mask_tensor"): "y[m] = x[m]",
    ("torch", "backward"): "model(x[:256 * 64].view(64, 256)).square().mean().backward()",
    ("torch", "clip_grad_norm"): "out = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
    ("torch", "clip_grad_norm_error_if_nonfinite"): "out = torch.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)",
    ("torch", "adam_step"): "optimizer.step()",
    ("torch", "adamw_fused_step"): "optimizer.step()",
    ("torch", "sgd_step"): "optimizer.step()",
    ("torch", "zero_grad"): "optimizer.zero_grad()",
    ("torch", "grad_scaler_scale_backward"): "scaler.scale(model(x[:256 * 64].view(64, 256)).mean()).backward()",
    ("torch", "grad_scaler_step"): "scaler.step(optimizer)",
    ("torch", "grad_scaler_update"): "scaler.update()",
    ("torch", "save"): "torch.save(x[:1000], buffer)",
    ("torch", "empty_cache_cached_block"): "torch.cuda.empty_cache()",
    ("torch", "linalg_cholesky"): "out = torch.linalg.cholesky(A @ A.T)",
    ("torch", "linalg_cholesky_ex"): "out = torch.linalg.cholesky_ex(A @ A.T)",
    ("torch", "linalg_eigh"): "out = torch.linalg.eigh(A @ A.T)",
    ("cupy", "cholesky"): "out = cp.linalg.cholesky(A @ A.T)",
    ("cupy", "eigh"): "out = cp.linalg.eigh(A @ A.T)",
}

#: Waits the analyzer leaves alone on purpose, each with why.
NOT_REPORTED = {
    ("torch", "grad_scaler_step"): "AMP's found-inf check: every mixed-precision step has it, and the loop cannot drop it",
    ("torch", "save"): "a checkpoint written inside a loop: the file write costs more than the wait",
    ("cupy", "stream_synchronize"): "a stream's wait orders work between streams; only device-wide waits are reported without a clock",
    ("torch", "distribution_sample"): "Normal's sample() draws with torch.normal(loc, scale), which checks scale >= 0 on the host; "
    "it is drawn in rollouts whose actions go to the host right after, and training draws with rsample(), which does not wait",
    ("torch", "distribution_log_prob"): "a known miss: the check of the value is reported where the distribution is built in the "
    "loop (validate_args=False removes both waits); one built once and scored per step is not tracked",
}

SYNC_RULES = {"GPU201", "GPU302"}
#: A per-step empty_cache() is reported as the flush it is (it waits only when the cache holds blocks).
FLUSH_RULES = {"GPU202"}
COPY_RULES = {"GPU101"}


def _statement(case: dict[str, str]) -> str:
    key = (case["library"], case["name"])
    if key in STATEMENTS:
        return STATEMENTS[key]
    return f"out = {case['code']}"


def _script(case: dict[str, str]) -> tuple[str, int]:
    """The case inside a training-like loop, and the line of the call."""
    work = "x" if case["library"] == "torch" else "a"
    setup = SETUP[case["library"]]
    body = f"for step in range(10000):\n    w = {work} * 2.0\n    {_statement(case)}\n    keep = w\n"
    return setup + body, setup.count("\n") + 3


MEASURED = [case for case in TRUTH["cases"] if "verdict" in case and case["library"] in SETUP]


def test_the_record_covers_both_libraries_and_both_verdicts() -> None:
    assert {case["library"] for case in MEASURED} == {"torch", "cupy"}
    assert {case["verdict"] for case in MEASURED} == {"waits", "returns"}
    assert TRUTH["machine"]["gpu"].startswith("NVIDIA H100")


@pytest.mark.parametrize("case", MEASURED, ids=lambda case: f"{case['library']}-{case['name']}")
def test_the_analyzer_agrees_with_the_measurement(case: dict[str, str]) -> None:
    source, line = _script(case)
    rules = {finding.rule for finding in gpuadvisor.check_source(source, path="probe.py") if finding.line == line}
    key = (case["library"], case["name"])
    if case["verdict"] == "returns":
        assert not rules & SYNC_RULES, f"{case['code']} returned at once on the GPU, yet is reported as a wait: {rules}"
    elif key in NOT_REPORTED:
        assert not rules & SYNC_RULES, f"{case['code']} is listed as left alone ({NOT_REPORTED[key]}), but is reported"
    else:
        assert rules & (SYNC_RULES | COPY_RULES | FLUSH_RULES), f"{case['code']} made the host wait on the GPU, but nothing is reported"
