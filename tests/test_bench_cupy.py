"""The CuPy backend of `gpuadvisor bench`, run on the CPU against a fake `cupy` module.

Without a GPU, `CupyBackend` would only ever be skipped ("no module named cupy"), so its code
(device properties, free memory, synchronisation, pinned host buffers, `.get(out=)` copies) would
run for the first time on a rented GPU box. The fake module holds exactly what the backend
calls, with NumPy arrays standing in for device arrays.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpuadvisor.bench.backends import CupyBackend
from gpuadvisor.bench.plan import Config
from gpuadvisor.bench.results import ResultsFile

FAKE_GPU_NAME = "Fake CuPy GPU"


class DeviceArray(np.ndarray):
    """A NumPy array with CuPy's copy back to the host, `a.get(out=host)`."""

    def get(self, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            return np.array(self)
        out[...] = self
        return out


@dataclass
class FakeDevice:
    """What the fake module records: device synchronisations and pinned host buffers."""

    syncs: int = 0
    pinned_buffers: list[tuple[int, ...]] = field(default_factory=list)


class DeviceRandom:
    """`cp.random.default_rng(seed)`: NumPy's generator, handing out device arrays."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def standard_normal(self, shape: tuple[int, ...], dtype: str = "float64") -> DeviceArray:
        return self.rng.standard_normal(shape, dtype=dtype).view(DeviceArray)

    def random(self, shape: tuple[int, ...], dtype: str = "float64") -> DeviceArray:
        return self.rng.random(shape, dtype=dtype).view(DeviceArray)


@pytest.fixture
def fake_gpu(monkeypatch: pytest.MonkeyPatch) -> FakeDevice:
    """Install fake `cupy` and `cupyx` modules for the test; NumPy does the arithmetic."""
    device = FakeDevice()

    class Device:
        def synchronize(self) -> None:
            device.syncs += 1

    def empty_pinned(shape: tuple[int, ...], dtype: str) -> np.ndarray:
        device.pinned_buffers.append(shape)
        return np.empty(shape, dtype=dtype)

    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1,
        getDeviceProperties=lambda index: {"name": FAKE_GPU_NAME.encode()},
        memGetInfo=lambda: (8 << 30, 16 << 30),
    )
    cupy = types.ModuleType("cupy")
    cupy.__dict__.update(
        __version__="0.0-fake",
        __getattr__=lambda name: getattr(np, name),  # cp.matmul, cp.sum, cp.eye, cp.float32, ...
        cuda=types.SimpleNamespace(runtime=runtime, Device=Device),
        random=types.SimpleNamespace(default_rng=DeviceRandom),
    )
    cupyx = types.ModuleType("cupyx")
    cupyx.__dict__.update(empty_pinned=empty_pinned)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)
    return device


def bench_rows(cli: Any, out: Path, ops: str) -> list[dict[str, str]]:
    """`gpuadvisor bench` on the cupy backend alone; no series is cut short by a slow call."""
    result = cli("bench", "--quick", "--backends", "cupy", "--ops", ops, "--dtypes", "float32", "--max-call-seconds", "1000", "--out", out, "--quiet")
    assert result.exit_code == 0, result.output
    return ResultsFile(out).rows()


def test_bench_writes_cupy_rows_for_each_op_and_size(cli, fake_gpu: FakeDevice, tmp_path: Path) -> None:
    rows = bench_rows(cli, tmp_path / "rows.csv", "add,h2d,d2h,launch")
    assert {(r["op"], r["shape"], r["pinned"]) for r in rows} == {
        ("add", "16;16", ""), ("add", "4096;4096", ""), ("launch", "1", ""),
        *((copy, size, pinned) for copy in ("h2d", "d2h") for size in ("16", "4096") for pinned in ("false", "true")),
    }


def test_cupy_rows_name_the_backend_the_device_and_the_gpu(cli, fake_gpu: FakeDevice, tmp_path: Path) -> None:
    rows = bench_rows(cli, tmp_path / "rows.csv", "matmul,sum")
    assert {(r["backend"], r["device"], r["gpu_name"], r["library_version"]) for r in rows} == {("cupy", "cuda", FAKE_GPU_NAME, "0.0-fake")}


def test_cupy_rows_hold_positive_times(cli, fake_gpu: FakeDevice, tmp_path: Path) -> None:
    rows = bench_rows(cli, tmp_path / "rows.csv", "matmul,sum")
    assert rows and all(0 < float(r["p10_s"]) <= float(r["median_s"]) <= float(r["p90_s"]) for r in rows)


def test_the_cupy_backend_waits_for_the_device_while_timing(cli, fake_gpu: FakeDevice, tmp_path: Path) -> None:
    bench_rows(cli, tmp_path / "rows.csv", "matmul")
    assert fake_gpu.syncs > 0


@pytest.mark.parametrize(("op", "pinned"), [("h2d", "true"), ("h2d", "false"), ("d2h", "true"), ("d2h", "false")])
def test_cupy_copies_use_pinned_memory_only_for_pinned_rows(fake_gpu: FakeDevice, op: str, pinned: str) -> None:
    work = CupyBackend().prepare(Config(op, ((1024,),), "float32", pinned=pinned))
    assert work is not None
    work()
    assert fake_gpu.pinned_buffers == ([(1024,)] if pinned == "true" else [])

