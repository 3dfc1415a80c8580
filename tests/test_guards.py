"""Guards against quiet breakage: each test fails if one small, plausible mistake slips in
(a constant cache key, a suppression read from the wrong line, a collapsed interval)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpuadvisor import check_source, predict
from gpuadvisor.interfaces import cache as cache_module
from gpuadvisor.interfaces import runner
from gpuadvisor.prediction import model as model_module
from gpuadvisor.prediction import training


def test_the_result_cache_key_changes_when_the_analysis_code_changes(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "analysis"
    package.mkdir()
    rule = package / "rule.py"
    rule.write_text("A = 1\n")
    monkeypatch.setattr(cache_module, "_ANALYSIS_PACKAGE", package)
    before = cache_module.analyzer_fingerprint()
    rule.write_text("A = 22\n")
    os.utime(rule, ns=(1, 2))
    assert cache_module.analyzer_fingerprint() != before


def test_the_model_cache_key_changes_when_the_training_data_changes(tmp_path: Path, monkeypatch) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("op,shape\nsum,1000\n")
    monkeypatch.setattr(training, "data_files", lambda: [rows])
    before = model_module.model_key()
    rows.write_text("op,shape\nsum,2000\n")
    assert model_module.model_key() != before


def test_a_suppression_on_the_last_line_of_a_multi_line_finding_hides_it() -> None:
    code = "import torch\nx = [torch.zeros(\n    8\n).cuda() for _ in range(9)]  # gpuadvisor: ignore[GPU102]\n"
    assert [f.rule for f in check_source(code, "a.py")] == []
    unsuppressed = code.replace("  # gpuadvisor: ignore[GPU102]", "")
    assert [f.rule for f in check_source(unsuppressed, "a.py")] == ["GPU102"]


def test_per_file_ignores_match_a_bare_file_name_in_any_folder(cli, write, tmp_path: Path) -> None:
    write("pyproject.toml", '[tool.gpuadvisor.per-file-ignores]\n"train.py" = ["GPU102"]\n')
    write("deep/inside/train.py", "import torch\nx = [torch.zeros(8).cuda() for _ in range(9)]\n")
    write("deep/inside/eval.py", "import torch\nx = [torch.zeros(8).cuda() for _ in range(9)]\n")
    report = json.loads(cli("check", tmp_path, "--format", "json").stdout)
    assert [Path(f["path"]).name for f in report["findings"]] == ["eval.py"]


def test_threads_running_a_recursive_pure_python_function_are_flagged() -> None:
    code = (
        "import threading\n"
        "def fib(n):\n"
        "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
        "threads = [threading.Thread(target=fib, args=(30,)) for _ in range(4)]\n"
    )
    assert "GPU501" in [f.rule for f in check_source(code, "a.py")]


@pytest.mark.parametrize(("op", "shape"), [("matmul", (4096, 4096)), ("sum", (10_000_000,)), ("fft", (1 << 20,))])
def test_the_prediction_interval_is_an_honest_range_not_a_point(op: str, shape: tuple[int, ...]) -> None:
    shapes = [shape, shape] if op == "matmul" else [shape]
    result = predict(op, shapes, gpu="h100-sxm", cpu="server")
    low, high = result.interval
    assert low < result.speedup < high
    assert high / low > 1.3, "an 80% range this narrow claims more certainty than the data holds"


def test_an_unreadable_file_is_a_read_entry(cli, write, monkeypatch) -> None:
    """Simulated, so the test asserts something when run as root too."""
    path = write("secret.py", "import torch\nx = [torch.zeros(8).cuda() for _ in range(9)]\n")

    def refuse(name: str) -> bytes:
        raise PermissionError(13, "Permission denied", name)

    monkeypatch.setattr(runner, "read_source_file", refuse)
    report = json.loads(cli("check", path, "--format", "json").stdout)
    assert [(e["kind"], "Permission denied" in e["message"]) for e in report["errors"]] == [("read", True)]
