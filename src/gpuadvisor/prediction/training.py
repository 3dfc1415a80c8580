"""Measured rows -> training samples: each row with its analytic time on its own hardware.

Rows come from the packaged `training_data/*.csv` and the user's own `gpuadvisor bench`
output (in the user data folder). A row is usable when its machine's specs are known:
CPUs from `training_data/machines.toml` (or this machine, `--cpu local`), GPUs from the
catalogue by their reported name.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gpuadvisor.bench.results import user_results_folder
from gpuadvisor.prediction.costs import CostError, OpCost, op_cost
from gpuadvisor.prediction.hardware import CpuProfile, HardwareError, match_gpu_name, measured_cpus, training_data_folder
from gpuadvisor.prediction.roofline import SideTime, copy_time, cpu_time, gpu_time

#: Rows that describe "the same work on the CPU" a GPU port is compared with.
CPU_BASELINE_BACKENDS = frozenset({"numpy", "scipy"})
def data_files() -> list[Path]:
    files = sorted(training_data_folder().glob("*.csv"))
    if user_results_folder().is_dir():
        files += sorted(user_results_folder().glob("*.csv"))
    return files


def data_fingerprint() -> str:
    digest = hashlib.sha256()
    for path in [*data_files(), training_data_folder() / "machines.toml"]:
        if path.is_file():
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


@dataclass(frozen=True)
class Sample:
    side: str  # cpu | gpu | copy
    op: str
    dtype: str
    cost: OpCost
    analytic: SideTime
    measured_s: float
    machine: str  # which hardware it was measured on (for leave-one-hardware-out)
    backend: str = ""


def known_cpus() -> dict[tuple[str, int], CpuProfile]:
    machines = dict(measured_cpus())
    try:
        from gpuadvisor.prediction.local import local_cpu

        local = local_cpu()
        machines.setdefault((local.name, local.cores), local)
    except (OSError, HardwareError):
        pass
    return machines


def parse_shapes(text: str) -> list[tuple[int, ...]]:
    return [tuple(int(d) for d in part.split("x")) for part in text.split(";") if part]


def parse_params(text: str) -> dict[str, str]:
    params = {}
    for part in text.split(";") if text else []:
        key, _, value = part.partition("=")
        params[key] = value
    return params


def _cost_of(row: dict[str, str]) -> OpCost:
    params = parse_params(row.get("params", ""))
    return op_cost(
        row["op"], parse_shapes(row["shape"]), row["dtype"], expression=params.get("expr"),
        axis=int(params["axis"]) if "axis" in params else None, density=float(params.get("density", 0.01)),
    )


def _sample(row: dict[str, str], cpus: dict[tuple[str, int], CpuProfile]) -> Sample | None:
    op, dtype, measured = row["op"], row["dtype"], float(row["median_s"])
    if measured <= 0 or op == "launch":
        return None
    if op in ("h2d", "d2h"):
        gpu = match_gpu_name(row.get("gpu_name", ""))
        if gpu is None:
            return None
        nbytes = float(parse_shapes(row["shape"])[0][0]) * {"float32": 4, "float64": 8}.get(dtype, 4)
        cost = OpCost(0.0, nbytes, 1, nbytes, 0.0, nbytes, False)
        return Sample("copy", op, dtype, cost, copy_time(nbytes, gpu, row.get("pinned") == "true"), measured, gpu.key)
    cost = _cost_of(row)
    if row["device"] == "cuda":
        gpu = match_gpu_name(row.get("gpu_name", ""))
        if gpu is None:
            return None
        return Sample("gpu", op, dtype, cost, gpu_time(cost, gpu, dtype), measured, gpu.key, row["backend"])
    if row["backend"] not in CPU_BASELINE_BACKENDS:
        return None  # the CPU side predicts what NumPy/SciPy take: the code users would move
    cpu = cpus.get((row.get("cpu_name", ""), int(row.get("cpu_cores") or 0)))
    if cpu is None:
        return None
    return Sample("cpu", op, dtype, cost, cpu_time(cost, cpu, dtype), measured, f"{cpu.name}/{cpu.cores}", row["backend"])


def load_samples(files: list[Path] | None = None) -> Iterator[Sample]:
    cpus = known_cpus()
    for path in files if files is not None else data_files():
        try:
            with open(path, newline="", encoding="utf-8") as handle:
                rows = list(csv.DictReader(handle))
        except (OSError, UnicodeDecodeError, csv.Error):
            continue  # a damaged user file must not stop predictions
        for row in rows:
            try:
                sample = _sample(row, cpus)
            except (CostError, KeyError, ValueError, TypeError):
                continue
            if sample is not None:
                yield sample
