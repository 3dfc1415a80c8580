from __future__ import annotations

import os
import tempfile
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuadvisor.interfaces.cli import app
from gpuadvisor.prediction.hardware import CpuProfile, resolve_cpu

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def cache_folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("caches")


@pytest.fixture(autouse=True)
def isolated_cache(cache_folders: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own user cache folder, so no result leaks between tests. (Made with
    mkdtemp in one folder: tmp_path_factory.mktemp lists every numbered folder made so far in
    the run's temporary folder to number the next one, twice per test with tmp_path.)"""
    cache = Path(tempfile.mkdtemp(prefix="cache", dir=cache_folders))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.fixture(autouse=True)
def no_local_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Findings name the default GPU (H100), whatever nvidia-smi says on the machine running the tests."""
    from gpuadvisor.analysis.findings import speedups

    monkeypatch.setattr(speedups, "detected_gpu", lambda: None)


#: The machine the tests pretend to run on: a CPU profile key from `gpuadvisor hardware`, or
#: unset for the development machine whose measured rows are in training_data/ (2-core EPYC).
#: `GPUADVISOR_TEST_CPU=server-64core python -m pytest` shows that no test depends on the host.
SIMULATED_CPU_ENV = "GPUADVISOR_TEST_CPU"


def simulated_host_cpu() -> CpuProfile:
    """The CPU that `/proc/cpuinfo` detection reports during the tests (never the real host's)."""
    name = os.environ.get(SIMULATED_CPU_ENV, "").strip()
    if name:
        return replace(resolve_cpu(name), key="local")
    return CpuProfile(key="local", name="AMD EPYC", cores=2, fp32_gflops=180.0, fp64_gflops=90.0, mem_bandwidth_gbs=24.0)


@pytest.fixture(autouse=True)
def pinned_host_cpu(monkeypatch: pytest.MonkeyPatch) -> CpuProfile:
    """`--cpu local` means the same CPU on every machine that runs the tests."""
    from gpuadvisor.prediction import local

    host = simulated_host_cpu()
    monkeypatch.setattr(local, "detected_cpu", lambda: host)
    return host


@pytest.fixture
def write(tmp_path: Path):
    """Write dedented source files under tmp_path: write("a.py", code) -> Path."""

    def _write(name: str, code: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(code, bytes):
            path.write_bytes(code)
        else:
            path.write_text(textwrap.dedent(code).lstrip("\n"), encoding="utf-8")
        return path

    return _write


@pytest.fixture
def cli():
    """Run the CLI in-process: cli("check", path, ...) -> click Result (exit_code, stdout)."""
    runner = CliRunner()

    def _run(*args: str, input: str | None = None):
        return runner.invoke(app, [str(a) for a in args], input=input, catch_exceptions=False)

    return _run
