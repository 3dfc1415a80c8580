"""The test suite once per catalogue CPU, to show that no test depends on the machine running it.

    python benchmarks/cpu_matrix.py                   # every [cpu.*] key of prediction/catalog.toml
    python benchmarks/cpu_matrix.py laptop server -x  # some keys; arguments after them go to pytest

`tests/conftest.py` makes `--cpu local` (what `/proc/cpuinfo` detection reports) the CPU that
`GPUADVISOR_TEST_CPU` names, or the 2-core development machine when it is unset. A test that
passes on one of these and fails on another reads the host CPU where it should name one
(`--cpu laptop`). The default run (no variable) is the first row. Exit status 1 when any run fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gpuadvisor.prediction.hardware import catalog  # noqa: E402

SIMULATED_CPU_ENV = "GPUADVISOR_TEST_CPU"
_COUNTS = re.compile(r"(\d+) (passed|failed|error|errors|skipped|xfailed|xpassed)\b")


def run_suite(cpu: str, pytest_args: list[str]) -> tuple[int, str]:
    """Exit status and pytest's summary line, with `cpu` as the simulated host ('' for the default)."""
    env = {**os.environ, SIMULATED_CPU_ENV: cpu}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    summary = next((line for line in reversed(run.stdout.splitlines()) if _COUNTS.search(line)), run.stdout[-200:])
    return run.returncode, summary.strip("= ")


def main(argv: list[str]) -> int:
    keys = [arg for arg in argv if not arg.startswith("-")]
    pytest_args = [arg for arg in argv if arg.startswith("-")]
    cpus = keys or ["", *catalog()[1]]
    failed = False
    for cpu in cpus:
        status, summary = run_suite(cpu, pytest_args)
        failed |= status != 0
        print(f"{cpu or '(default: 2-core EPYC)':<24} {'ok' if status == 0 else 'FAILED':<7} {summary}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
