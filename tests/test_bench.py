"""The measurement harness: its timing method, resumable CSV output and CLI."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gpuadvisor.bench.backends import Backend, NumpyBackend
from gpuadvisor.bench.plan import Config, configurations
from gpuadvisor.bench.results import COLUMNS, KEY_COLUMNS, ResultsFile
from gpuadvisor.bench.sweep import run_sweep
from gpuadvisor.bench.timing import TimingPolicy, measure
from gpuadvisor.ops.registry import OPS

REPO = Path(__file__).resolve().parent.parent
CONTRACT_COLUMNS = {
    "backend", "device", "op", "shape", "dtype", "median_s", "repeats", "cpu_name", "gpu_name",
    "library_version", "timestamp", "pinned",
}


class FakeGpu(Backend):
    """An asynchronous 'device' that logs what the harness does, in order."""

    name = "fake"
    device = "cuda"

    def __init__(self) -> None:  # no library to import
        self.xp = np
        self.log: list[str] = []
        self.inputs: list[np.ndarray] = []

    @property
    def library_version(self) -> str:
        return "0"

    def gpu_name(self) -> str:
        return "Fake GPU"

    def sync(self) -> None:
        self.log.append("sync")

    def random(self, shape, dtype):
        array = np.random.default_rng(1).standard_normal(shape).astype(dtype)
        self.inputs.append(array)
        return array

    def prepare(self, config):
        work = super().prepare(config)
        if work is None:
            return None

        def logged():
            self.log.append("run")
            return work()

        return logged


def test_clock_is_read_only_after_a_sync_and_after_warmup() -> None:
    gpu = FakeGpu()
    work = gpu.prepare(Config("matmul", ((64, 64), (64, 64)), "float32"))
    ticks = iter(range(10**6))

    def clock() -> float:
        gpu.log.append("clock")
        return next(ticks) * 1e-3

    timing = measure(work, gpu.sync, TimingPolicy(warmup=2, min_repeats=5, min_total_s=0.0), clock=clock)
    log = gpu.log
    assert log[:2] == ["run", "run"], "warm-up calls come first"
    assert log.index("clock") > 1
    for i, event in enumerate(log):
        if event == "clock":
            assert log[i - 1] == "sync", f"clock read at {i} not preceded by a sync: {log[max(0, i - 3):i + 1]}"
    assert timing.repeats == 5 and log.count("run") == 7
    assert timing.p10_s <= timing.median_s <= timing.p90_s


def test_inputs_are_never_zero() -> None:
    gpu = FakeGpu()
    for op in ("matmul", "add", "sum", "sort", "solve"):
        shapes = ((32, 32), (32, 1)) if op == "solve" else ((256,), (256,)) if op == "add" else ((32, 32), (32, 32))
        gpu.prepare(Config(op, shapes, "float64"))
    assert gpu.inputs and all(np.count_nonzero(a) == a.size for a in gpu.inputs)


def test_sweep_with_fake_gpu_writes_contract_rows(tmp_path) -> None:
    results = ResultsFile(tmp_path / "rows.csv")
    plan = [c for c in configurations(["float32"], {"matmul", "sum"}, quick=True, gpu=True)]
    summary = run_sweep([FakeGpu()], plan, results, TimingPolicy.quick(), max_call_s=1.0, progress_stream=None)
    rows = results.rows()
    assert summary.measured == len(rows) > 0
    assert CONTRACT_COLUMNS <= set(rows[0])
    assert {r["gpu_name"] for r in rows} == {"Fake GPU"} and {r["device"] for r in rows} == {"cuda"}
    assert all(float(r["median_s"]) > 0 for r in rows)


def test_rerun_resumes_without_duplicates(tmp_path) -> None:
    out = tmp_path / "rows.csv"
    plan = list(configurations(["float32"], {"add", "matmul"}, quick=True, gpu=False))
    first = run_sweep([NumpyBackend()], plan, ResultsFile(out), TimingPolicy.quick(), 1.0, progress_stream=None)
    second = run_sweep([NumpyBackend()], plan, ResultsFile(out), TimingPolicy.quick(), 1.0, progress_stream=None)
    assert first.measured > 0 and second.measured == 0 and second.already_done == first.measured
    keys = [tuple(r[c] for c in KEY_COLUMNS) for r in ResultsFile(out).rows()]
    assert len(keys) == len(set(keys)) == first.measured


def test_killed_run_leaves_whole_rows_and_resumes(tmp_path) -> None:
    out = tmp_path / "rows.csv"
    # cheap ops only (about 60 rows: the kill comes after 9): the resume is the point, not svd's timings
    cmd = [sys.executable, "-m", "gpuadvisor.bench", "--quick", "--backends", "numpy", "--ops", "matmul,add,sum,mean", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 10):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with open(out, "a", encoding="utf-8") as handle:  # what a kill in the middle of a write leaves
        handle.write("numpy,cpu,matmul,16x16;16x1")
    subprocess.run(cmd, check=True, capture_output=True)
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and all(None not in r and all(r[c] is not None for c in COLUMNS) for r in rows)
    keys = [tuple(r[c] for c in KEY_COLUMNS) for r in rows]
    assert len(keys) == len(set(keys))
    assert all(float(r["median_s"]) > 0 for r in rows)


def test_cli_quick_run_and_bad_arguments(cli, tmp_path) -> None:
    out = tmp_path / "rows.csv"
    result = cli("bench", "--quick", "--backends", "numpy", "--ops", "matmul,sum", "--out", out, "--quiet")
    assert result.exit_code == 0, result.output
    assert len(ResultsFile(out).rows()) > 0
    assert cli("bench", "--backends", "tpu", "--out", out).exit_code != 0


def test_missing_backends_are_skipped_with_a_note(tmp_path) -> None:
    """CuPy and torch are hidden behind modules that fail to import, so the test means the
    same on a GPU box where both are installed."""
    out = tmp_path / "rows.csv"
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    for name in ("cupy", "torch"):
        (hidden / f"{name}.py").write_text(f"raise ImportError('{name} is hidden by the test')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hidden), str(REPO / "src")])}
    proc = subprocess.run(
        [sys.executable, "-m", "gpuadvisor.bench", "--quick", "--backends", "numpy,cupy,torch-cuda", "--ops", "add", "--out", str(out), "--quiet"],
        capture_output=True, text=True, env=env,
    )
    assert proc.returncode == 0
    assert "skipping backend" in proc.stderr and "Traceback" not in proc.stderr


def test_harness_imports_neither_libcst_nor_sklearn(tmp_path) -> None:
    probe = (
        "import runpy, sys\n"
        f"sys.argv = ['bench', '--quick', '--backends', 'numpy', '--ops', 'add', '--out', {str(tmp_path / 'x.csv')!r}, '--quiet']\n"
        "try:\n    runpy.run_module('gpuadvisor.bench', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('libcst', 'sklearn', 'typer') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr


def test_torch_backend_measures_every_cpu_op_of_the_quick_plan(tmp_path) -> None:
    """The torch code path itself, on the CPU build the test environment installs."""
    pytest.importorskip("torch")
    from gpuadvisor.bench.backends import TorchBackend

    plan = list(configurations(["float32"], None, quick=True, gpu=False))
    results = ResultsFile(tmp_path / "rows.csv")
    one_call = TimingPolicy(warmup=0, min_repeats=1, max_repeats=1, min_total_s=0.0, max_total_s=0.0)  # the path, not the figures
    summary = run_sweep([TorchBackend("cpu")], plan, results, one_call, max_call_s=0.2, progress_stream=None)
    rows = results.rows()
    assert summary.measured == len(rows) > 0
    assert {r["backend"] for r in rows} == {"torch"} and {r["device"] for r in rows} == {"cpu"}
    assert {"matmul", "add", "sum", "sort", "fft", "solve", "argmax", "softmax", "concat", "random"} <= {r["op"] for r in rows}


def test_softmax_concat_and_random_fills_compute_what_their_names_say() -> None:
    """The harness times the op itself, in every library: NumPy's softmax (the steps users write, as
    NumPy has none) matches torch's kernel, concat joins its two inputs, a fill draws uniform [0, 1)."""
    torch = pytest.importorskip("torch")
    from gpuadvisor.bench.backends import TorchBackend

    for backend in (NumpyBackend(), TorchBackend("cpu")):
        softmax = backend.prepare(Config("softmax", ((8, 300),), "float64", "axis=1"))
        concat = backend.prepare(Config("concat", ((5,), (7,)), "float32"))
        fill = backend.prepare(Config("random", ((10000,),), "float32"))
        assert softmax is not None and concat is not None and fill is not None
        rows = np.asarray(softmax())
        assert rows.shape == (8, 300) and np.allclose(rows.sum(axis=1), 1.0) and (rows > 0).all()
        assert np.asarray(concat()).shape == (12,)
        draws = np.asarray(fill())
        assert draws.dtype == np.float32 and draws.shape == (10000,) and 0.0 <= draws.min() and draws.max() < 1.0
        assert 0.45 < draws.mean() < 0.55
    x = NumpyBackend().random((4, 50), "float64")
    numpy_softmax = OPS["softmax"].bench.function(np)  # type: ignore[union-attr]
    assert np.allclose(numpy_softmax(x, axis=1), torch.softmax(torch.from_numpy(x), 1).numpy())


def test_the_layer_series_feeds_a_transformer_mlp_from_one_token_up() -> None:
    plan = [c for c in configurations(["float32"], {"matmul"}, quick=False, gpu=True) if c.shapes[1] == (4096, 11008)]
    assert [c.shapes[0][0] for c in plan if not c.params] == [1, 4, 16, 64, 256, 1024, 4096, 16384]
    assert {c.params for c in plan} == {"", "tf32=1"}


@pytest.mark.parametrize(("op", "pinned"), [("h2d", "true"), ("h2d", "false"), ("d2h", "true"), ("d2h", "false")])
def test_torch_copies_use_pinned_memory_only_for_pinned_rows(monkeypatch: pytest.MonkeyPatch, op: str, pinned: str) -> None:
    """The host buffer of a copy row is page-locked exactly when the row says `pinned = true`,
    and only a pinned copy is asked to overlap (non_blocking)."""
    torch = pytest.importorskip("torch")
    from gpuadvisor.bench.backends import TorchBackend

    pin_requests: list[bool] = []
    copies: list[bool] = []
    real_randn, real_empty = torch.randn, torch.empty

    def host_buffer(real):
        def make(*args, pin_memory: bool = False, **kwargs):
            pin_requests.append(pin_memory)
            return real(*args, **kwargs)
        return make

    backend = TorchBackend("cpu")
    backend.device = "cuda"  # a copy row's code path, with the copy itself run on the CPU
    monkeypatch.setattr(backend, "random", lambda shape, dtype: real_randn(shape))
    monkeypatch.setattr(torch, "randn", host_buffer(real_randn))
    monkeypatch.setattr(torch, "empty", host_buffer(real_empty))
    monkeypatch.setattr(torch.Tensor, "to", lambda self, device, non_blocking=False: copies.append(non_blocking) or self)
    monkeypatch.setattr(torch.Tensor, "copy_", lambda self, source, non_blocking=False: copies.append(non_blocking) or self)
    work = backend.prepare(Config(op, ((1024,),), "float32", pinned=pinned))
    assert work is not None
    work()
    assert pin_requests == [pinned == "true"] and copies == [pinned == "true"]


def test_tf32_products_are_planned_for_float32_only_and_measured_by_torch_on_cuda_only() -> None:
    from gpuadvisor.bench.backends import CupyBackend, TorchBackend
    from gpuadvisor.ops.registry import TF32

    plan = [c for dtype in ("float32", "float64", "float16") for c in configurations([dtype], {"matmul"}, quick=True, gpu=True)]
    tf32 = [c for c in plan if c.params == TF32]
    assert tf32 and {c.dtype for c in tf32} == {"float32"}
    assert not NumpyBackend().supports(tf32[0])
    assert not CupyBackend.supports(object.__new__(CupyBackend), tf32[0])  # no CuPy needed to ask
    torch_on_cuda = object.__new__(TorchBackend)
    torch_on_cuda.device = "cuda"
    assert TorchBackend.supports(torch_on_cuda, tf32[0])
    torch_on_cpu = object.__new__(TorchBackend)
    torch_on_cpu.device = "cpu"
    assert not TorchBackend.supports(torch_on_cpu, tf32[0])


def test_factorisations_get_inputs_they_accept(tmp_path) -> None:
    """Cholesky and eigh are handed symmetric positive definite matrices, inv/det/solve well
    conditioned ones: every factorisation of the quick plan runs and gives finite rows."""
    plan = [c for c in configurations(["float64"], {"inv", "det", "cholesky", "qr", "eigh", "eig"}, quick=True, gpu=False)]
    backend = NumpyBackend()
    spd = backend.symmetric_positive_definite(64, "float64")
    assert np.allclose(spd, spd.T) and np.linalg.eigvalsh(spd).min() > 0
    results = ResultsFile(tmp_path / "rows.csv")
    summary = run_sweep([backend], plan, results, TimingPolicy.quick(), max_call_s=1.0, progress_stream=None)
    assert not summary.skipped
    assert {r["op"] for r in results.rows()} == {"inv", "det", "cholesky", "qr", "eigh", "eig"}


def test_an_op_missing_from_the_installed_library_is_skipped_not_fatal(tmp_path) -> None:
    class OldNumpy(NumpyBackend):
        def namespace(self):
            return type("linalg_less", (), {"linalg": object()})()

    plan = list(configurations(["float32"], {"eig", "sum"}, quick=True, gpu=False))
    summary = run_sweep([OldNumpy()], plan, ResultsFile(tmp_path / "rows.csv"), TimingPolicy.quick(), max_call_s=1.0, progress_stream=None)
    assert any("eig" in line for line in summary.skipped)


def test_min_seconds_must_be_a_positive_number_of_seconds(cli, tmp_path) -> None:
    out = tmp_path / "rows.csv"
    assert cli("bench", "--quick", "--backends", "numpy", "--ops", "add", "--out", out, "--min-seconds", "0.01", "--quiet").exit_code == 0
    assert cli("bench", "--quick", "--backends", "numpy", "--ops", "add", "--out", out, "--min-seconds", "-1").exit_code == 2


def test_complex_inputs_are_measured_only_for_ops_every_library_takes_them_for(tmp_path) -> None:
    """complex64 rows: products, transforms and the Hermitian solvers get complex inputs (eigh a
    Hermitian positive definite one); sorts, `rfft` and the machine copies are not planned."""
    plan = list(configurations(["complex64"], None, quick=True, gpu=True))
    planned = {c.op for c in plan}
    assert {"matmul", "fft", "eigh", "solve"} <= planned
    assert not planned & {"sort", "argsort", "rfft", "h2d", "d2h", "launch", "std"}
    backend = NumpyBackend()
    hermitian = backend.symmetric_positive_definite(32, "complex64")
    assert hermitian.dtype == np.complex64 and np.abs(hermitian.imag).max() > 0
    assert np.allclose(hermitian, hermitian.conj().T) and np.linalg.eigvalsh(hermitian).min() > 0
    results = ResultsFile(tmp_path / "rows.csv")
    summary = run_sweep([backend], [c for c in plan if c.op in ("eigh", "matmul", "svd")], results, TimingPolicy.quick(),
                        max_call_s=1.0, progress_stream=None)
    assert not summary.skipped
    assert {(r["op"], r["dtype"]) for r in results.rows()} == {("eigh", "complex64"), ("matmul", "complex64"), ("svd", "complex64")}


def test_the_cli_takes_complex_dtypes_on_request(cli, tmp_path) -> None:
    out = tmp_path / "rows.csv"
    result = cli("bench", "--quick", "--backends", "numpy", "--ops", "fft,rfft", "--dtypes", "complex128", "--out", str(out), "--quiet")
    assert result.exit_code == 0, result.output
    assert {(r["op"], r["dtype"]) for r in csv.DictReader(out.open())} == {("fft", "complex128")}
