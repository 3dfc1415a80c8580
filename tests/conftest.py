from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuadvisor.interfaces.cli import app

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own user cache folder, so no result leaks between tests."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.fixture(autouse=True)
def no_local_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Findings name the default GPU (H100), whatever nvidia-smi says on the machine running the tests."""
    from gpuadvisor.analysis import speedups

    monkeypatch.setattr(speedups, "detected_gpu", lambda: None)


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
