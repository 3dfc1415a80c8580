"""Speed of `gpuadvisor check`, as ratios measured in one run on one machine.

1. Cold-cache `check` over scikit-learn's installed non-test sources, against a bare
   single-process `libcst.parse_module` loop over the same files (target <= 1.0x). The very
   first run on a machine, which also fits the speedup model once, is printed apart.
2. Warm-cache `check` over the same files (everything answered from the cache).
3. `gpuadvisor check small.py` (a torch loop and a 3-element NumPy op) against
   `python -c "import libcst, typer"` (target <= 1.3x),
   and proof that NumPy, scikit-learn, torch and CuPy are not imported on that path.
   Both run with bytecode caching on, after one warm-up run each, as an installed package
   runs (pip writes the .pyc files): PYTHONDONTWRITEBYTECODE would make every start compile
   our modules again while libcst's stay compiled, which measures the environment, not us.

Usage: python benchmarks/check_speed.py [--repeats N] [--package sklearn] [--startup-only]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMALL = """\
import numpy as np
import torch

scale = np.ones(3) + np.ones(3)

def train(model, loader, device):
    for x, y in loader:
        loss = model(x.to(device)).sum()
        print(loss.item())
"""


def package_sources(package: str) -> list[Path]:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        sys.exit(f"{package} is not installed: pip install scikit-learn")
    root = Path(spec.origin).parent
    return sorted(p for p in root.rglob("*.py") if "tests" not in p.relative_to(root).parts)


def bare_parse_loop(files: list[Path]) -> float:
    code = (
        "import sys, time, libcst\n"
        "files = sys.argv[1:]\n"
        "t = time.perf_counter()\n"
        "for f in files:\n"
        "    libcst.parse_module(open(f, 'rb').read())\n"
        "print(time.perf_counter() - t)\n"
    )
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *map(str, files)], check=True, capture_output=True)
    return time.perf_counter() - start


def run_check(files: list[Path], cache_home: str) -> float:
    env = {**os.environ, "XDG_CACHE_HOME": cache_home}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "gpuadvisor", "check", "--format", "json", "--no-config", *map(str, files)],
        capture_output=True,
        env=env,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"check failed: {proc.stderr.decode()[-2000:]}")
    return elapsed


def wall(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--package", default="sklearn")
    parser.add_argument("--startup-only", action="store_true", help="only the small-file start-up comparison")
    args = parser.parse_args()
    if not args.startup_only:
        whole_package(args.package, args.repeats)
    startup(args.repeats)


def whole_package(package: str, repeats: int) -> None:
    files = package_sources(package)
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(f"corpus: {package}, {len(files)} non-test files, {lines:,} lines, {os.cpu_count()} cores")

    parse_times, cold_times, warm_times = [], [], []
    with tempfile.TemporaryDirectory() as cache_home:
        # The first run on a machine also fits the speedup model (kept in the cache for every
        # later run): timed on its own, then only the per-file results are dropped between runs.
        first_run_s = run_check(files, cache_home)
        for _ in range(repeats):  # interleaved, so machine noise hits both sides alike
            parse_times.append(bare_parse_loop(files))
            shutil.rmtree(Path(cache_home) / "gpuadvisor" / "check", ignore_errors=True)
            cold_times.append(run_check(files, cache_home))
            warm_times.append(run_check(files, cache_home))
    parse_s, cold_s, warm_s = map(statistics.median, (parse_times, cold_times, warm_times))
    print(f"bare libcst.parse_module loop (1 process): {parse_s:7.2f} s  ({lines / parse_s:,.0f} lines/s)")
    print(f"gpuadvisor check, first run on a machine:   {first_run_s:7.2f} s  (includes fitting the speedup model once)")
    print(f"gpuadvisor check, cold cache:               {cold_s:7.2f} s  ratio {cold_s / parse_s:.2f}x (target <= 1.0x)")
    print(f"gpuadvisor check, warm cache:               {warm_s:7.2f} s  ratio {warm_s / parse_s:.2f}x")


def startup(repeats: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        small = Path(folder) / "small.py"
        small.write_text(SMALL)
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env["XDG_CACHE_HOME"] = folder
        baseline = [sys.executable, "-c", "import libcst, typer"]
        check_small = [sys.executable, "-m", "gpuadvisor", "check", "--no-cache", str(small)]
        wall(baseline, env), wall(check_small, env)  # warm-up: .pyc files written where they may be
        base, ours = [], []
        for _ in range(max(9, repeats * 3)):
            base.append(wall(baseline, env))
            ours.append(wall(check_small, env))
        # Start-up noise only ever adds time: the best run of each is the steadiest ratio.
        base_s, ours_s = min(base), min(ours)
        median_ratio = statistics.median(ours) / statistics.median(base)
        print(f'python -c "import libcst, typer":            {base_s:7.3f} s  (best of {len(base)})')
        print(f"gpuadvisor check small.py:                  {ours_s:7.3f} s  ratio {ours_s / base_s:.2f}x (target <= 1.3x; medians {median_ratio:.2f}x)")
        probe = (
            "import sys, runpy; sys.argv=['gpuadvisor','check','--no-cache',sys.argv[1]]\n"
            "try:\n    runpy.run_module('gpuadvisor', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "heavy=[m for m in ('numpy','sklearn','torch','cupy','scipy') if m in sys.modules]\n"
            "print('heavy modules imported by check:', heavy or 'none')"
        )
        print(subprocess.run([sys.executable, "-c", probe, str(small)], capture_output=True, text=True, env=env).stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
