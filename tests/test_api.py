"""The Python API and the promise that importing gpuadvisor stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gpuadvisor


def test_check_source_returns_findings() -> None:
    findings = gpuadvisor.check_source("import torch\nx = [torch.zeros(3).cuda() for _ in range(9)]\n", path="nb.py")
    # A host fill copied on every iteration: a warning.
    assert [(f.path, f.rule, f.line, f.severity.label) for f in findings] == [("nb.py", "GPU102", 2, "warning")]
    assert findings[0].to_dict()["prediction"] is None


def test_check_source_select_and_ignore() -> None:
    code = "import torch\nx = [torch.zeros(3).cuda() for _ in range(9)]\n"
    assert gpuadvisor.check_source(code, ignore="GPU102") == []
    assert gpuadvisor.check_source(code, select=["create-then-transfer"])


def test_check_source_rejects_unparseable_code_with_a_clear_error() -> None:
    with pytest.raises(ValueError, match="invalid syntax"):
        gpuadvisor.check_source("import torch\ndef f(:\n")


def test_check_paths_returns_a_report(write, tmp_path) -> None:
    write("a.py", "import torch\nx = [torch.zeros(3).cuda() for _ in range(9)]\n")
    write("b.py", "def f(:\n")
    report = gpuadvisor.check_paths([tmp_path])
    assert [f.rule for f in report.findings] == ["GPU102"]
    assert [e.kind for e in report.errors] == ["syntax"]
    assert report.files == 2 and report.failed


def test_import_is_light() -> None:
    code = "import sys, gpuadvisor; print(sorted(m for m in ('numpy', 'sklearn', 'torch', 'cupy', 'libcst') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"
