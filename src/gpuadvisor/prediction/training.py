"""Measured rows -> training samples: each row with its analytic time on its own hardware.

Rows come from the packaged `training_data/*.csv` (our own `gpuadvisor bench` runs),
`training_data/published/*.csv` (third-party measurements, `#` provenance lines on top) and
the user's own `gpuadvisor bench` output (in the user data folder). A row is usable when its
machine's specs are known: CPUs from `training_data/machines.toml` (or this machine, `--cpu
local`), GPUs from the catalogue by their reported name.
"""

from __future__ import annotations

import csv
import hashlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gpuadvisor._safe_io import read_regular, report_damaged
from gpuadvisor.bench.results import user_results_folder
from gpuadvisor.prediction.costs import CostError, OpCost, op_cost
from gpuadvisor.prediction.hardware import CpuProfile, HardwareError, match_gpu_name, measured_cpus, training_data_folder
from gpuadvisor.prediction.libraries import GPU_SYNC_S, cpu_time, gpu_time
from gpuadvisor.prediction.roofline import SideTime, copy_time

#: Each backend's library family: NumPy users move to CuPy, PyTorch users stay in PyTorch.
#: XLA (published tables only) calls cuBLAS as eager PyTorch does; its rows are kernel-timed.
LIBRARY_OF_BACKEND = {"numpy": "numpy", "scipy": "numpy", "cupy": "numpy", "torch": "torch", "xla": "torch"}


def packaged_data_files() -> list[Path]:
    """The rows shipped with gpuadvisor (the ones the shipped model is fitted on)."""
    folder = training_data_folder()
    return sorted(folder.glob("*.csv")) + sorted(folder.glob("published/*.csv"))


def user_data_files() -> list[Path]:
    """The user's own `gpuadvisor bench` rows: with any, the model is refitted on this machine."""
    folder = user_results_folder()
    return sorted(folder.glob("*.csv")) if folder.is_dir() else []


def data_files() -> list[Path]:
    return packaged_data_files() + user_data_files()


def data_fingerprint(files: list[Path] | None = None) -> str:
    digest = hashlib.sha256()
    for path in [*(data_files() if files is None else files), training_data_folder() / "machines.toml"]:
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
    #: "numpy" (NumPy/SciPy on the CPU, CuPy on the GPU) or "torch" (PyTorch on either).
    library: str = "numpy"
    #: The data file the row came from (for leave-one-source-out) and the id pairing a
    #: published CPU row with its GPU row.
    source: str = ""
    pair: str = ""
    #: Analytic seconds of work timed with the op that is not the op: inputs created inside
    #: the timed region (`created=random`). Subtracted before fitting, added when evaluating.
    extra_s: float = 0.0
    #: "calibration" for rows a machine's rates were taken from (not scored in evaluations).
    role: str = ""
    #: A third-party source (training_data/published/): held out whole when intervals are
    #: measured, paired with CPU rows or not.
    published: bool = False
    #: How the row was timed: "" on the host around the call and its wait for the result; "kernel":
    #: on the device (CUDA events around the kernels, launches hidden behind earlier work): the host's
    #: launches and synchronisation are outside the measurement, the kernels' own latency inside it;
    #: "events": CUDA events around one call on an idle stream, so the host's launches the device
    #: waits for are inside and only the wait for the result is outside.
    timing: str = ""

    @property
    def untimed_s(self) -> float:
        """Analytic seconds of the call that the row's timing leaves out."""
        if self.timing == "kernel":
            return self.analytic.overhead_s
        if self.timing == "events":
            return min(self.analytic.overhead_s, GPU_SYNC_S)
        return 0.0

    @property
    def timed_s(self) -> float:
        """Analytic seconds of what the row timed: what the learned correction scales for it."""
        return self.analytic.total_s - self.untimed_s


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
        tf32=params.get("tf32") == "1", full_matrices=params.get("full_matrices") != "0",
        compute_uv=params.get("compute_uv") != "0",
    )


def _creation_seconds(
    row: dict[str, str], library: str, side_time: Callable[[OpCost, str], SideTime], shared_wait_s: float = 0.0
) -> float:
    """Analytic time of making the inputs, when the row timed their creation too.

    `shared_wait_s`: the wait for the result that each analytic time counts once per call; the
    timed region waits once, for creation and op together, and the op's own time counts it."""
    if parse_params(row.get("params", "")).get("created") != "random":
        return 0.0
    total = 0.0
    for shape in parse_shapes(row["shape"]):
        total += side_time(op_cost("random", [shape], row["dtype"]), library).total_s - shared_wait_s
    return total


def _sample(row: dict[str, str], cpus: dict[tuple[str, int], CpuProfile], source: str, published: bool = False) -> Sample | None:
    op, dtype, measured = row["op"], row["dtype"], float(row["median_s"])
    library = LIBRARY_OF_BACKEND.get(row.get("backend", ""), "")
    if not library:
        return None
    if op == "launch":
        return None  # the bench's launch-overhead probe, not an op (non-positive times are dropped by `load_samples`)
    if op in ("h2d", "d2h"):
        gpu = match_gpu_name(row.get("gpu_name", ""))
        if gpu is None:
            return None
        nbytes = float(parse_shapes(row["shape"])[0][0]) * {"float32": 4, "float64": 8}.get(dtype, 4)
        cost = OpCost(
            flops=0.0, memory_bytes=nbytes, kernels=1, input_bytes=nbytes, output_bytes=0.0, elements=nbytes, parallel_cpu=False,
        )
        analytic = copy_time(nbytes, gpu, row.get("pinned") == "true")
        return Sample("copy", op, dtype, cost, analytic, measured, gpu.key, row["backend"], library, source)
    cost = _cost_of(row)
    pair = row.get("pair", "")
    if row["device"] == "cuda":
        gpu = match_gpu_name(row.get("gpu_name", ""))
        if gpu is None:
            return None
        extra = _creation_seconds(row, library, lambda c, lib: gpu_time(c, gpu, dtype, lib), GPU_SYNC_S)
        params = parse_params(row.get("params", ""))
        analytic = gpu_time(cost, gpu, dtype, library, l2_warm=params.get("l2") != "flushed")
        timing = params.get("timing", "")
        return Sample(
            "gpu", op, dtype, cost, analytic, measured, gpu.key, row["backend"], library, source, pair, extra,
            row.get("role") or "", published, timing,
        )
    cpu = cpus.get((row.get("cpu_name", ""), int(row.get("cpu_cores") or 0)))
    if cpu is None:
        return None
    extra = _creation_seconds(row, library, lambda c, lib: cpu_time(c, cpu, dtype, lib))
    analytic = cpu_time(cost, cpu, dtype, library)
    machine = f"{cpu.name}/{cpu.cores}"
    return Sample("cpu", op, dtype, cost, analytic, measured, machine, row["backend"], library, source, pair, extra, row.get("role") or "", published)


#: A training data file holds some thousands of rows; a far larger one is not one.
_DATA_SIZE_LIMIT = 512 * 1024 * 1024


def read_rows(path: Path) -> list[dict[str, str]]:
    """The data rows of a training CSV (its `#` provenance lines skipped); [] when the file is
    damaged, not a regular file or far too large (reported once: it must not stop predictions)."""
    try:
        text = read_regular(path, _DATA_SIZE_LIMIT).decode("utf-8")
        return list(csv.DictReader(line for line in text.splitlines(keepends=True) if not line.startswith("#")))
    except (OSError, ValueError, csv.Error) as exc:  # UnsafeFile and UnicodeDecodeError are ValueErrors
        report_damaged(path, exc)
        return []


def load_samples(files: list[Path] | None = None) -> Iterator[Sample]:
    cpus = known_cpus()
    for path in files if files is not None else data_files():
        for row in read_rows(path):
            try:
                sample = _sample(row, cpus, path.stem, path.parent.name == "published")
            except (CostError, KeyError, ValueError, TypeError, OverflowError):
                continue  # a 400-digit size, say
            if sample is not None and math.isfinite(sample.measured_s) and sample.measured_s > 0:
                yield sample  # `median_s = 1e400` is no measurement
