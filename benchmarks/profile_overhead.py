"""Overhead of `gpuadvisor profile`'s tracer: a script's run time traced vs plain, same process.

Each workload runs plain (runpy, no tracer) and traced (the profiler's tracer and plan, no
report), alternating, three times each, with each event source this Python has
(sys.settrace everywhere, sys.monitoring on 3.12+); the best of each is compared (target:
traced <= 1.3x plain). Start-up, analysis and prediction after the run are not the script's time and are
printed apart (one `gpuadvisor profile` call end to end).

Workloads: examples/signal_clusters.py on a generated recording (NumPy, data from a file),
a NumPy loop of small operations (the tracer's worst case among array code: many short
lines), and examples/naive_linear_algebra.py's pure-Python triple loop (no array at all).

Usage: python benchmarks/profile_overhead.py
"""

from __future__ import annotations

import io
import os
import runpy
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

from gpuadvisor.profiling.session import UserFiles, run_traced

REPO = Path(__file__).resolve().parent.parent
SMALL_OPS = """
import numpy as np
x = np.ones(256, dtype=np.float32)
total = 0.0
for step in range(20000):
    y = x * 1.5 + step
    total += float(y.sum())
print(total)
"""
PURE_PYTHON = """
import sys
sys.path.insert(0, {examples!r})
from naive_linear_algebra import matmul
A = [[float(i + j) for j in range(70)] for i in range(70)]
C = matmul(A, A)
print(C[0][0])
"""


def _plain(script: Path, args: list[str]) -> float:
    saved = sys.argv[:]
    sys.argv = [str(script), *args]
    start = time.perf_counter()
    try:
        with redirect_stdout(io.StringIO()):
            runpy.run_path(str(script), run_name="__main__")
    except SystemExit:
        pass
    finally:
        sys.argv = saved
    return time.perf_counter() - start


def _traced(script: Path, args: list[str], backend: str) -> float:
    with redirect_stdout(io.StringIO()):
        outcome = run_traced(str(script), args, False, UserFiles(script.parent), backend)
    return outcome.wall_seconds


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="gpuadvisor-profile-"))
    example = REPO / "examples" / "signal_clusters.py"
    recording = workdir / "recording.npy"
    subprocess.run([sys.executable, str(example), "--make-data", str(recording)], check=True)
    small = workdir / "small_ops.py"
    small.write_text(SMALL_OPS)
    pure = workdir / "pure_python.py"
    pure.write_text(PURE_PYTHON.format(examples=str(REPO / "examples")))
    workloads = [("signal_clusters (NumPy, file data)", example, [str(recording)]), ("small NumPy ops in a loop", small, []), ("pure-Python triple loop", pure, [])]
    backends = ["settrace", *(["monitoring"] if hasattr(sys, "monitoring") else [])]
    print(f"Python {sys.version.split()[0]}")
    print(f"{'workload':<36} {'backend':<11} {'plain':>9} {'traced':>9} {'ratio':>6}")
    for name, script, args in workloads:
        plain: list[float] = []
        traced: dict[str, list[float]] = {backend: [] for backend in backends}
        for _ in range(3):
            plain.append(_plain(script, args))
            for backend in backends:
                traced[backend].append(_traced(script, args, backend))
        for backend, times in traced.items():
            print(f"{name:<36} {backend:<11} {min(plain):>8.3f}s {min(times):>8.3f}s {min(times) / min(plain):>5.2f}x")
    start = time.perf_counter()
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    subprocess.run(
        [sys.executable, "-m", "gpuadvisor", "profile", "--save-shapes", "", str(example), str(recording)],
        check=True, capture_output=True, env=env,
    )
    print(f"\none `gpuadvisor profile` call end to end (start-up, run, analysis, prediction): {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
