"""Turning prediction candidates from all files into findings, with one batched prediction."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from gpuadvisor.analysis.findings.records import Finding, PredictionCandidate
from gpuadvisor.analysis.facts.precision import tf32_allowed
from gpuadvisor.ops.registry import OPS

if TYPE_CHECKING:
    from gpuadvisor.prediction.costs import OpCost
    from gpuadvisor.prediction.result import Prediction

#: The GPU predictions are made for when none is named and none is found on this machine.
DEFAULT_GPU = "h100-sxm"
DEFAULT_THRESHOLD = 3.0


@lru_cache(maxsize=None)
def detected_gpu() -> str | None:
    """The catalogue key of this machine's first NVIDIA GPU, asked of nvidia-smi (no torch/CuPy)."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    from gpuadvisor.prediction.hardware import match_gpu_name

    profile = match_gpu_name(out.stdout.strip().splitlines()[0]) if out.returncode == 0 and out.stdout.strip() else None
    return profile.key if profile is not None else None


def resolve_candidates(
    candidates: list[tuple[Finding, PredictionCandidate]],
    gpu: str | None = None,
    cpu: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[Finding]:
    """Findings for the candidates the prediction confirms (raises HardwareError for bad names)."""
    if not candidates:
        return []
    from gpuadvisor.analysis.findings.prediction_requests import operation_cost, prediction_request
    from gpuadvisor.analysis.rules import RULES_BY_CODE  # here: `profile` imports this module without the rules
    from gpuadvisor.prediction.hardware import resolve_cpu, resolve_gpu
    from gpuadvisor.prediction.libraries import cpu_time

    gpu_profile = resolve_gpu(gpu or detected_gpu() or DEFAULT_GPU)
    cpu_profile = resolve_cpu(cpu or "local")
    kept: list[tuple[Finding, PredictionCandidate, OpCost]] = []
    for finding, candidate in candidates:
        entry = OPS.get(candidate.op)
        tf32 = entry is not None and entry.tf32_capable and tf32_allowed(finding.path, candidate.library)
        cost = operation_cost(candidate, tf32=tf32)
        if cost is None:
            continue
        fastest_cpu = cpu_time(cost, cpu_profile, candidate.dtype, candidate.library).total_s
        if candidate.measured_cpu_seconds is not None:
            fastest_cpu = max(fastest_cpu, candidate.measured_cpu_seconds)
        if RULES_BY_CODE[finding.rule].may_conclude(candidate, fastest_cpu):
            kept.append((finding, candidate, cost))
    if not kept:
        return []  # no prediction could make a finding: the model is not even loaded
    from gpuadvisor.prediction.predictor import predict_requests

    requests = [prediction_request(candidate, cost, gpu_profile, cpu_profile) for _, candidate, cost in kept]
    predictions = _measured_where_profiled(kept, predict_requests(requests))
    findings = []
    for (finding, candidate, _), prediction in zip(kept, predictions):
        verdict = RULES_BY_CODE[finding.rule].conclude(candidate, prediction, threshold)
        if verdict is not None:
            message, suggestion = verdict
            findings.append(replace(finding, message=message, suggestion=suggestion, prediction=prediction))
    return _combined_per_line(findings)


def _measured_where_profiled(kept: list[tuple[Finding, PredictionCandidate, OpCost]], predictions: list[Prediction]) -> list[Prediction]:
    """Where `profile` measured the statement (check --shapes), its time replaces the model's CPU
    side, shared among the statement's operations as the model shares it: `check` and
    `profile` then give the same line the same CPU time."""
    from gpuadvisor.prediction.predictor import with_measured_cpu

    model_total: dict[tuple[str, int], float] = {}
    for (finding, candidate, _), prediction in zip(kept, predictions):
        if candidate.measured_cpu_seconds is not None:
            key = (finding.path, candidate.measured_statement)
            model_total[key] = model_total.get(key, 0.0) + prediction.cpu_seconds
    shared = []
    for (finding, candidate, _), prediction in zip(kept, predictions):
        if candidate.measured_cpu_seconds is not None:
            share = prediction.cpu_seconds / max(model_total[(finding.path, candidate.measured_statement)], 1e-300)
            prediction = with_measured_cpu(prediction, candidate.measured_cpu_seconds * share)
        shared.append(prediction)
    return shared


def _combined_per_line(findings: list[Finding]) -> list[Finding]:
    """Merge the findings of rules that report once per statement line (GPU702)."""
    from gpuadvisor.analysis.rules import RULES_BY_CODE

    groups: dict[tuple[str, str, int | None, int], list[Finding]] = {}
    kept: list[Finding] = []
    for finding in findings:
        if RULES_BY_CODE[finding.rule].combines_per_line:
            groups.setdefault((finding.rule, finding.path, finding.cell, finding.line), []).append(finding)
        else:
            kept.append(finding)
    for (rule, *_), members in groups.items():
        kept.append(members[0] if len(members) == 1 else RULES_BY_CODE[rule].combine(members))
    return kept
