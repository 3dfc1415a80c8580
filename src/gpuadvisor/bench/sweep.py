"""Running a sweep: plan x backends, skipping what is done, stopping what is too slow or big."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TextIO

from gpuadvisor._version import __version__
from gpuadvisor.bench import machine
from gpuadvisor.bench.backends import Backend
from gpuadvisor.bench.plan import DTYPE_ORDER, Config
from gpuadvisor.bench.results import ResultsFile, row_key
from gpuadvisor.bench.timing import Timing, TimingPolicy, measure

_DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "complex64": 8, "complex128": 16}


@dataclass
class SweepSummary:
    measured: int = 0
    already_done: int = 0
    skipped: list[str] = field(default_factory=list)
    stopped_by_budget: bool = False


def _row(backend: Backend, config: Config, timing: Timing) -> dict[str, object]:
    import numpy

    return {
        "backend": "scipy" if backend.name == "scipy" else backend.name,
        "device": backend.device,
        "op": config.op,
        "shape": config.shape_text,
        "dtype": config.dtype,
        "params": config.params,
        "median_s": f"{timing.median_s:.9g}",
        "p10_s": f"{timing.p10_s:.9g}",
        "p90_s": f"{timing.p90_s:.9g}",
        "repeats": timing.repeats,
        "pinned": config.pinned,
        "threads": backend.threads(),
        "cpu_name": machine.cpu_name(),
        "cpu_cores": machine.cpu_cores(),
        "gpu_name": backend.gpu_name(),
        "gpu_driver": machine.gpu_driver() if backend.device == "cuda" else "",
        "library_version": backend.library_version,
        "numpy_version": numpy.__version__,
        "python_version": machine.python_version(),
        "harness_version": __version__,
        "timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _key(backend: Backend, config: Config) -> tuple[str, ...]:
    return row_key(
        {
            "backend": backend.name, "device": backend.device, "op": config.op, "shape": config.shape_text,
            "dtype": config.dtype, "params": config.params, "pinned": config.pinned,
            "cpu_name": machine.cpu_name(), "gpu_name": backend.gpu_name(),
        }
    )


class Progress:
    """One status line on a terminal (with ETA), one line per configuration otherwise."""

    def __init__(self, total: int, stream: TextIO | None) -> None:
        self.total, self.stream, self.started, self.done = total, stream, time.monotonic(), 0

    def step(self, label: str) -> None:
        self.done += 1
        if self.stream is None:
            return
        elapsed = time.monotonic() - self.started
        remaining = elapsed / self.done * (self.total - self.done)
        eta = f"{int(remaining // 60)}m{int(remaining % 60):02d}s"
        line = f"[{self.done}/{self.total}] {label}  ETA {eta}"
        if self.stream.isatty():
            self.stream.write("\r" + line[:120].ljust(120))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None and self.stream.isatty():
            self.stream.write("\n")


def run_sweep(
    backends: list[Backend],
    plan: list[Config],
    results: ResultsFile,
    policy: TimingPolicy,
    max_call_s: float,
    budget_s: float | None = None,
    progress_stream: TextIO | None = sys.stderr,
) -> SweepSummary:
    summary = SweepSummary()
    pairs = [(b, c) for b in backends for c in plan if b.supports(c)]
    pairs.sort(key=lambda pair: DTYPE_ORDER.index(pair[1].dtype) if pair[1].dtype in DTYPE_ORDER else len(DTYPE_ORDER))
    progress = Progress(len(pairs), progress_stream)
    stopped: set[tuple[object, ...]] = set()
    started = time.monotonic()
    try:
        for backend, config in pairs:
            label = f"{backend.name}/{backend.device} {config.op} {config.shape_text} {config.dtype} {config.params}".strip()
            progress.step(label)
            series = (backend.name, backend.device, config.series)
            if _key(backend, config) in results.done:
                summary.already_done += 1
                continue
            if series in stopped:
                continue
            if budget_s is not None and time.monotonic() - started > budget_s:
                summary.stopped_by_budget = True
                break
            needed = config.element_count() * _DTYPE_BYTES.get(config.dtype, 8) * 3
            if needed > backend.max_bytes():
                stopped.add(series)
                summary.skipped.append(f"{label}: needs ~{needed >> 20} MiB")
                continue
            try:
                work = backend.prepare(config)
                if work is None:
                    continue
                timing = measure(work, backend.sync, policy)
            except (MemoryError, RuntimeError, ValueError, AttributeError) as exc:  # out of memory, unsupported dtype, op missing from the library
                stopped.add(series)
                summary.skipped.append(f"{label}: {str(exc).splitlines()[0][:100]}")
                continue
            finally:
                work = None  # drop the inputs before the next configuration allocates its own
            results.append([_row(backend, config, timing)])
            summary.measured += 1
            if timing.median_s > max_call_s:
                stopped.add(series)  # bigger sizes of this series would take even longer
    finally:
        progress.close()
    return summary
