"""Speedup prediction: costs, hardware profiles, the model cache, the API and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
import math

import pytest

import gpuadvisor
from gpuadvisor.prediction import model as model_module
from gpuadvisor.prediction.costs import CostError, expression_cost, op_cost
from gpuadvisor.prediction.hardware import HardwareError, catalog, match_gpu_name, resolve_cpu, resolve_gpu

REPO = Path(__file__).resolve().parents[1]

CONTRACT_FIELDS = {
    "op", "shapes", "dtype", "gpu", "cpu", "data_on", "cpu_seconds", "gpu_seconds", "transfer_seconds",
    "speedup", "speedup_compute_only", "interval", "recommendation",
}


def test_costs_follow_the_usual_conventions() -> None:
    matmul = op_cost("matmul", [(512, 256), (256, 128)], "float32")
    assert matmul.flops == 2 * 512 * 256 * 128
    assert matmul.input_bytes == (512 * 256 + 256 * 128) * 4 and matmul.output_bytes == 512 * 128 * 4
    batched = op_cost("matmul", [(8, 64, 64), (8, 64, 64)], "float64")
    assert batched.flops == 8 * 2 * 64**3
    assert op_cost("solve", [(1000, 1000)], "float64").flops == pytest.approx(2 / 3 * 1e9 + 2e6)
    with pytest.raises(CostError, match="do not align"):
        op_cost("matmul", [(3, 4), (5, 6)])
    with pytest.raises(CostError, match="unknown op"):
        op_cost("conv", [(3, 3)])


def test_expression_counts_kernels_and_flops() -> None:
    cost = expression_cost("sin(x)**2 + cos(x)**2")
    assert cost.kernels == 5 and cost.inputs == ("x",)
    assert expression_cost("np.sqrt(x*x + y*y)").kernels == 4
    assert expression_cost("x * 2.0 + 1").kernels == 2
    with pytest.raises(CostError, match="unsupported function"):
        expression_cost("myfunc(x)")
    with pytest.raises(CostError, match="cannot parse"):
        expression_cost("sin(x")


def test_catalogue_has_the_common_gpus_with_sources() -> None:
    gpus, cpus = catalog()
    wanted = {"t4", "v100", "a10", "a100-40gb", "a100-80gb", "l4", "l40s", "h100-sxm", "h100-pcie", "h200",
              "rtx3060", "rtx3080", "rtx3090", "rtx4070", "rtx4090", "rtx5090"}
    assert wanted <= set(gpus)
    assert {"laptop", "desktop", "server"} <= set(cpus)
    assert all(g.sources for g in gpus.values()) and all(c.sources for c in cpus.values())
    assert gpus["h200"].mem_bandwidth_gbs > gpus["h100-sxm"].mem_bandwidth_gbs
    assert match_gpu_name("NVIDIA H100 80GB HBM3").key == "h100-sxm"
    assert match_gpu_name("Tesla T4").key == "t4"


@pytest.mark.parametrize(("reported", "key"), [
    ("NVIDIA H100 80GB HBM3", "h100-sxm"), ("NVIDIA H100 PCIe", "h100-pcie"), ("NVIDIA H200", "h200"),
    ("NVIDIA A100-SXM4-40GB", "a100-40gb"), ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
    ("NVIDIA A100 80GB PCIe", "a100-80gb-pcie"), ("NVIDIA A100-PCIE-40GB", "a100-40gb"), ("NVIDIA L40S", "l40s"),
    ("NVIDIA L4", "l4"), ("NVIDIA A10", "a10"), ("Tesla V100-SXM2-32GB", "v100"), ("Tesla V100-PCIE-32GB", "v100-pcie"),
    ("NVIDIA GeForce RTX 4090", "rtx4090"), ("NVIDIA GeForce RTX 3060", "rtx3060"), ("Tesla T4", "t4"),
    ("NVIDIA L40", None), ("NVIDIA A40", None), ("Tesla P100-PCIE-16GB", None), ("", None),
])
def test_nvidia_smi_names_match_their_own_profile(reported: str, key: str | None) -> None:
    """The name nvidia-smi prints picks that card's profile, never a sibling's (PCIe is not SXM)."""
    match = match_gpu_name(reported)
    assert (match.key if match else None) == key


def test_custom_profiles_from_toml_and_json(tmp_path) -> None:
    gpu_file = tmp_path / "mygpu.toml"
    gpu_file.write_text(
        'name = "Lab GPU"\nfp32_tflops = 20\nfp64_tflops = 10\nfp16_tflops = 300\n'
        "mem_bandwidth_gbs = 1500\nmemory_gb = 40\nhost_link_gbs = 25\nvendor = \"extra keys are fine\"\n"
    )
    cpu_file = tmp_path / "mycpu.json"
    cpu_file.write_text(json.dumps({"name": "Lab CPU", "cores": 8, "fp32_gflops": 500, "fp64_gflops": 250, "mem_bandwidth_gbs": 60}))
    assert resolve_gpu(str(gpu_file)).name == "Lab GPU"
    assert resolve_cpu(str(cpu_file)).cores == 8
    broken = tmp_path / "broken.toml"
    broken.write_text('name = "x"\nfp32_tflops = 1\n')
    with pytest.raises(HardwareError, match="missing key"):
        resolve_gpu(str(broken))
    with pytest.raises(HardwareError, match="unknown GPU"):
        resolve_gpu("gtx-9999")


def test_predict_returns_the_contract_fields() -> None:
    result = gpuadvisor.predict("matmul", [(4096, 4096), (4096, 4096)], gpu="h100-sxm")
    data = result.to_dict()
    assert CONTRACT_FIELDS <= set(data)
    assert data["op"] == "matmul" and data["shapes"] == [[4096, 4096], [4096, 4096]] and data["data_on"] == "host"
    assert data["speedup"] == pytest.approx(data["cpu_seconds"] / (data["gpu_seconds"] + data["transfer_seconds"]))
    low, high = data["interval"]
    assert low < data["speedup"] < high
    assert data["speedup"] > 1 and "GPU" in data["recommendation"]
    # Copies from pageable memory were measured at 7-10 GB/s on the H100's host: whether 200 MB of
    # copies pay off depends on the CPU, but with the data already on the GPU a big product does.
    on_device = gpuadvisor.predict("matmul", [(4096, 4096), (4096, 4096)], gpu="h100-sxm", data_on="device").to_dict()
    assert on_device["transfer_seconds"] == 0 and on_device["speedup"] > 3


def test_tiny_work_stays_on_the_cpu_and_device_data_needs_no_copies() -> None:
    tiny = gpuadvisor.predict("add", [(16,), (16,)], gpu="h100-sxm")
    assert tiny.speedup < 1 and "Stay on the CPU" in tiny.recommendation
    resident = gpuadvisor.predict("add", [(1 << 24,), (1 << 24,)], gpu="h100-sxm", data_on="device")
    assert resident.transfer_seconds == 0 and resident.speedup == pytest.approx(resident.speedup_compute_only)


def test_bigger_gpu_predicts_faster_gpu_time() -> None:
    shapes = [(8192, 8192), (8192, 8192)]
    assert gpuadvisor.predict("matmul", shapes, gpu="h100-sxm").gpu_seconds < gpuadvisor.predict("matmul", shapes, gpu="t4").gpu_seconds


@pytest.fixture
def refitting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No usable shipped model: predictions fit (and cache) their own, as with a user's bench rows."""
    monkeypatch.setattr(model_module, "SHIPPED_MODEL", tmp_path / "missing.json")


@pytest.mark.slow  # refits the model with scikit-learn (~11 s)
def test_corrupt_or_foreign_model_cache_is_rebuilt(isolated_cache, refitting) -> None:
    key = model_module.model_key()
    path = model_module.cache_file(key)
    model_module.load_model()
    assert path.is_file()
    path.write_text("{garbage")
    assert model_module.load_model().key == key
    data = json.loads(path.read_text())
    data["key"] = "someone-else"
    path.write_text(json.dumps(data))
    assert model_module.load_model().key == key


class NumpyRidge:
    """scikit-learn's Ridge without an intercept, in closed form: the same fit, without the
    seconds that importing scikit-learn costs a test that only asks which rows are fitted."""

    def __init__(self, alpha: float, fit_intercept: bool) -> None:
        assert not fit_intercept
        self.alpha = alpha

    def fit(self, features, target, sample_weight):
        import numpy as np

        weighted = features.T * sample_weight  # X'W; solved in its n x n form (far fewer rows than features)
        self.coef_ = weighted @ np.linalg.solve(features @ weighted + self.alpha * np.eye(len(target)), target)
        return self


def test_rows_kept_for_evaluation_and_rows_mostly_input_creation_do_not_train_the_model(tmp_path: Path, monkeypatch) -> None:
    """training_data/README: evaluation rows only score the model, and a row must be mostly its op
    (a timed region that mostly creates its inputs says little about the op); neither is fitted."""
    from dataclasses import replace

    from gpuadvisor.prediction.model import fit_side
    from gpuadvisor.prediction.training import load_samples

    monkeypatch.setattr(model_module, "_ridge", lambda: NumpyRidge)

    lines = (REPO / "training_data" / "cpu-amd-epyc-2cores.csv").read_text().splitlines()
    data = tmp_path / "rows.csv"
    data.write_text("\n".join([lines[0], *[line for line in lines[1:] if not line.startswith("#")][:60]]) + "\n")
    kept = list(load_samples([data]))
    assert len(kept) == 60 and all(s.side == "cpu" and s.role == "" and s.extra_s == 0 for s in kept)
    evaluation = [replace(s, role="evaluation", measured_s=s.measured_s * 3) for s in kept[:20]]
    mostly_creation = [replace(s, extra_s=s.measured_s * 0.9, measured_s=s.measured_s * 1.1) for s in kept[20:40]]
    alone, mixed = fit_side("cpu", kept), fit_side("cpu", kept + evaluation + mostly_creation)
    assert alone.rows == mixed.rows == 60
    assert alone.coef.tolist() == mixed.coef.tolist()


def test_cli_predict_text_json_and_errors(cli) -> None:
    text = cli("predict", "matmul", "--shape", "4096x4096", "--shape", "4096x4096", "--gpu", "a100-80gb")
    assert text.exit_code == 0 and "speedup" in text.stdout and "A100" in text.stdout
    data = json.loads(cli("predict", "--expr", "sin(x)**2 + cos(x)**2", "--shape", "10000x10000", "--dtype", "float64", "--format", "json").stdout)
    assert data["op"] == "expr" and CONTRACT_FIELDS <= set(data)
    assert cli("predict", "matmul", "--shape", "3x4", "--shape", "5x6").exit_code == 2
    assert cli("predict", "matmul", "--shape", "4x4", "--shape", "4x4", "--gpu", "nope").exit_code == 2
    assert cli("predict", "sum", "--shape", "banana").exit_code == 2
    listed = cli("predict", "--list-ops").stdout
    assert all(op in listed for op in ("matmul", "fft2", "sparse_matmul", "argsort", "svd"))


def test_cli_hardware_lists_profiles(cli) -> None:
    result = cli("hardware")
    assert result.exit_code == 0 and "h100-sxm" in result.stdout and "laptop" in result.stdout and "local" in result.stdout
    data = json.loads(cli("hardware", "--format", "json").stdout)
    assert len(data["gpus"]) >= 16


# Importing gpuadvisor and checking code without scikit-learn: tests/test_cli.py's start-up probe.


def test_predictions_are_finite_for_every_op() -> None:
    cases = {
        "matmul": [(256, 256), (256, 256)], "add": [(1000,), (1000,)], "mul": [(1000,)], "sin": [(1000,)],
        "exp": [(1000,)], "sum": [(100, 100)], "mean": [(100, 100)], "std": [(100, 100)], "sort": [(1000,)],
        "argsort": [(1000,)], "fft": [(1024,)], "fft2": [(64, 64)], "solve": [(128, 128)], "svd": [(64, 64)],
        "sparse_matmul": [(1024, 1024), (1024, 64)],
    }
    for op, shapes in cases.items():
        result = gpuadvisor.predict(op, shapes, gpu="l4", cpu="laptop")
        assert all(math.isfinite(v) and v > 0 for v in (result.cpu_seconds, result.gpu_seconds, result.speedup)), op


def test_users_own_bench_rows_are_picked_up(tmp_path, monkeypatch) -> None:
    from gpuadvisor.bench.results import COLUMNS
    from gpuadvisor.prediction.training import data_files, data_fingerprint

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    before = data_fingerprint()
    rows = tmp_path / "data" / "gpuadvisor" / "bench" / "mine.csv"
    rows.parent.mkdir(parents=True)
    rows.write_text(",".join(COLUMNS) + "\n")
    assert rows in data_files() and data_fingerprint() != before


@pytest.mark.parametrize("content", ["{garbage", "null", "[]", '"text"'])
def test_a_bad_parsed_catalogue_in_the_cache_is_parsed_again(isolated_cache: Path, content: str) -> None:
    from gpuadvisor.prediction.hardware import CATALOG, read_shipped_toml

    first = read_shipped_toml(CATALOG)
    (memo,) = (isolated_cache / "gpuadvisor" / "parsed").glob("catalog-*.json")
    assert json.loads(memo.read_text()) == first and "h100-sxm" in first["gpu"]
    memo.write_text(content)
    assert read_shipped_toml(CATALOG) == first
    assert json.loads(memo.read_text()) == first


@pytest.mark.slow  # refits the model with scikit-learn once per case (~3 s each)
@pytest.mark.parametrize("content", ["null", "[]", '{"key": 5}'])
def test_a_model_cache_entry_of_the_wrong_shape_is_rebuilt(content: str, refitting) -> None:
    path = model_module.cache_file(model_module.model_key())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    model = model_module.load_model()
    assert model.key == model_module.model_key()


@pytest.mark.parametrize("content", ["[]", "null", '{"name": "%s", "cores": %d, "fp32_gflops": 0, "fp64_gflops": 1, "mem_bandwidth_gbs": 1}'])
def test_a_calibration_of_the_wrong_shape_or_zero_rates_is_ignored(content: str) -> None:
    from gpuadvisor.prediction import local

    detected = local.detected_cpu()
    if "%s" in content:
        content = content % (detected.name, detected.cores)
    local.calibration_file().parent.mkdir(parents=True, exist_ok=True)
    local.calibration_file().write_text(content)
    profile = local.local_cpu()
    assert profile.fp32_gflops > 0 and math.isfinite(profile.fp32_gflops)


@pytest.mark.parametrize("other", ["name", "cores"])
def test_a_calibration_of_another_cpu_is_not_used(other: str) -> None:
    """A calibration file follows the machine's disk, not its CPU: a VM resized to other cores, or
    the home folder mounted on another host, measured a different CPU. Only the same name and
    core count use its rates."""
    import json

    from gpuadvisor.prediction import local

    detected = local.detected_cpu()
    stored = {"name": detected.name, "cores": detected.cores, "fp32_gflops": 12345.0, "fp64_gflops": 6000.0, "mem_bandwidth_gbs": 77.0}
    stored[other] = "Another CPU" if other == "name" else detected.cores + 8
    local.calibration_file().parent.mkdir(parents=True, exist_ok=True)
    local.calibration_file().write_text(json.dumps(stored))
    assert local.local_cpu().fp32_gflops != 12345.0


def test_calibration_rates_are_in_the_catalogues_units(monkeypatch: pytest.MonkeyPatch) -> None:
    """`gpuadvisor calibrate` stores GFLOP/s counting 2 n^3 per n x n product and a bandwidth
    counting the bytes a copy reads and writes, as the catalogue's datasheet figures do: `--cpu
    local` is compared with them. Every timed run takes one second here, and the inputs are
    left unfilled (no 256 MiB of random numbers)."""
    import numpy as np

    from gpuadvisor.prediction import local

    drawn: list[np.ndarray] = []

    class Unfilled:
        def standard_normal(self, shape, dtype="float64"):
            drawn.append(np.empty(shape, dtype))
            return drawn[-1]

    monkeypatch.setattr(np.random, "default_rng", lambda seed=None: Unfilled())
    monkeypatch.setattr(local, "_best_rate", lambda work, run: work)
    profile = local.calibrate()
    n = drawn[0].shape[0]
    assert [a.shape for a in drawn[:4]] == [(n, n)] * 4 and drawn[-1].ndim == 1
    assert profile.fp32_gflops == profile.fp64_gflops == round(2 * n**3 / 1e9, 1)
    assert profile.mem_bandwidth_gbs == round(2 * drawn[-1].nbytes / 1e9, 1)
    assert local.local_cpu() == profile and profile.sources["all"].startswith("measured by `gpuadvisor calibrate`")


def test_calibration_keeps_the_best_rate_of_the_runs_timed_within_its_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """What `calibrate` stores per measurement: work over the fastest run, after one untimed run
    (a cold cache, BLAS threads starting), repeating runs until the measuring window closes. A
    fake clock stands in for the machine: the runs take 5 s (cold), then 0.5, 0.25, 0.4, 1.0 s."""
    from types import SimpleNamespace

    from gpuadvisor.prediction import local

    durations, now = iter([5.0, 0.5, 0.25, 0.4, 1.0]), [0.0]
    timed: list[float] = []

    def run() -> None:
        now[0] += next(durations)
        timed.append(now[0])

    monkeypatch.setattr(local, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    monkeypatch.setattr(local, "_MEASURING_SECONDS", 2.0)
    assert local._best_rate(100.0, run) == 100.0 / 0.25
    assert timed == [5.0, 5.5, 5.75, 6.15, 7.15]  # the window opened after the cold run and closed at 7 s


BAD_PREDICT_CALLS = {
    "400-digit size": (["sum", "-s", "9" * 400], "no array any machine holds"),
    "1,000 unary minuses": (["--expr", "-" * 1000 + "x", "-s", "1000"], "nested too deeply"),
    "/dev/zero as a GPU profile": (["sum", "-s", "1000", "--gpu", "/dev/zero"], "not a regular file"),
}
BAD_PROFILES = {
    "half a core": ('name = "c"\ncores = 0.5\nfp32_gflops = 100\nfp64_gflops = 50\nmem_bandwidth_gbs = 20\n', "whole number"),
    "infinite FLOP/s": ('name = "c"\ncores = 8\nfp32_gflops = inf\nfp64_gflops = 50\nmem_bandwidth_gbs = 20\n', "finite positive"),
    "NaN bandwidth": ('name = "c"\ncores = 8\nfp32_gflops = 100\nfp64_gflops = 50\nmem_bandwidth_gbs = nan\n', "finite positive"),
    "sources not a table": ('name = "c"\nsources = 5\ncores = 8\nfp32_gflops = 1\nfp64_gflops = 1\nmem_bandwidth_gbs = 1\n', "sources"),
}


@pytest.mark.parametrize("name", sorted(BAD_PREDICT_CALLS))
def test_bad_predict_calls_are_exit_2_with_a_message(cli, name: str) -> None:
    args, expected = BAD_PREDICT_CALLS[name]
    result = cli("predict", *args)
    assert result.exit_code == 2 and expected in result.output


@pytest.mark.parametrize("name", sorted(BAD_PROFILES))
def test_bad_cpu_profiles_are_exit_2_with_a_message(cli, write, name: str) -> None:
    content, expected = BAD_PROFILES[name]
    result = cli("predict", "sum", "-s", "1000", "--cpu", write("cpu.toml", content))
    assert result.exit_code == 2 and expected in result.output


def test_cli_predicts_tensor_cores_linear_algebra_and_complex_dtypes(cli) -> None:
    """What `predict` accepts beyond the basics: --tf32, the LAPACK ops with NumPy's svd
    defaults and their switches, complex dtypes; a rectangle where a square is needed is refused."""

    def gpu_ms(*args: str) -> float:
        result = cli("predict", *args, "--data-on", "device", "--cpu", "server", "--format", "json")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["gpu_seconds"] * 1e3

    product = ("matmul", "--shape", "8192x8192", "--shape", "8192x8192")
    assert gpu_ms(*product) > 4 * gpu_ms(*product, "--tf32")
    assert gpu_ms(*product, "--dtype", "bfloat16", "--gpu", "v100") > 5 * gpu_ms(*product, "--dtype", "float16", "--gpu", "v100")
    assert gpu_ms("svd", "--shape", "20000x2000") > gpu_ms("svd", "--shape", "20000x2000", "--thin") > gpu_ms("svd", "--shape", "20000x2000", "--no-compute-uv")
    for op in ("inv", "det", "cholesky", "qr", "lstsq", "eigh", "eig"):
        assert gpu_ms(op, "--shape", "1024x1024", "--dtype", "complex64") > 0
    refused = cli("predict", "cholesky", "--shape", "1024x512")
    assert refused.exit_code == 2 and "square" in refused.output
    listed = cli("predict", "--list-ops").stdout
    assert all(op in listed for op in ("inv", "det", "cholesky", "qr", "lstsq", "eigh", "eig"))


def test_an_op_with_no_measured_rows_on_a_side_gets_a_range_of_about_3x_either_way() -> None:
    """With no rows to read spreads from, a side's 80% range is a factor of about 3 (10**0.5) each
    way: wide, where the fitted ops' ranges come from their held-out residuals."""
    from gpuadvisor.prediction.model import fit_side

    empty = fit_side("gpu", [])
    assert not empty.measured("matmul", "torch")
    low, high = empty.interval("matmul", "torch")
    assert 10**high == pytest.approx(3.16, rel=0.01) and 10**low == pytest.approx(1 / 3.16, rel=0.01)


def test_a_power_of_two_term_no_row_tells_apart_from_the_level_stays_out_of_the_fit() -> None:
    """mlx-benchmark's CPU argmax rows are all shaped 64 x 1024 x 128: fitted on them alone, a 1000-long
    argmax and a 1024-long one get the same correction (first look at the H200 host: the decimal sizes had
    come out up to 6x slower than the powers of two beside them)."""
    import dataclasses

    from gpuadvisor.prediction.model import fit_side
    from gpuadvisor.prediction.training import load_samples

    rows = [s for s in load_samples() if s.side == "cpu" and s.op == "argmax" and s.source.startswith("mlxbench")]
    assert rows and all(s.analytic.power_of_two for s in rows)
    fitted = fit_side("cpu", rows)
    sample = rows[0]
    as_power = fitted.row("argmax", "float32", sample.analytic, "torch") @ fitted.coef
    as_other = fitted.row("argmax", "float32", dataclasses.replace(sample.analytic, power_of_two=False), "torch") @ fitted.coef
    assert as_power != 0 and as_power == pytest.approx(as_other)


def test_a_cpu_library_without_rows_of_an_op_keeps_its_analytic_time() -> None:
    """torch's CPU argmax on mlx-benchmark's hosts says nothing about NumPy's: fitted without NumPy argmax
    rows, NumPy's argmax gets no correction and is reported as analytic; torch's keeps its curve."""
    from gpuadvisor.prediction.model import fit_side
    from gpuadvisor.prediction.training import load_samples

    rows = [s for s in load_samples() if s.side == "cpu" and not (s.op == "argmax" and s.library == "numpy")]
    fitted = fit_side("cpu", rows)
    analytic = next(s for s in rows if s.op == "argmax").analytic
    assert not fitted.measured("argmax", "numpy") and fitted.measured("argmax", "torch")
    assert not fitted.row("argmax", "float32", analytic, "numpy").any()
    assert fitted.row("argmax", "float32", analytic, "torch").any()
