"""The layers of the package hold: no module imports from a layer above its own."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parent.parent / "tools" / "layers.py"


@pytest.fixture(scope="module")
def layers():
    spec = importlib.util.spec_from_file_location("gpuadvisor_layers", TOOL)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_no_module_imports_from_a_higher_layer(layers) -> None:
    assert layers.upward_imports() == []


def test_the_readme_layer_list_is_generated_from_the_layers(layers) -> None:
    assert not layers.sync_readme(write=False), "run `python tools/layers.py`"


def test_an_upward_import_is_reported(layers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "src" / "gpuadvisor"
    (package / "prediction").mkdir(parents=True)
    (package / "analysis").mkdir()
    (package / "prediction" / "model.py").write_text("def f():\n    from gpuadvisor.analysis import rules\n")
    (package / "analysis" / "rules.py").write_text("from ..prediction import model\n")
    monkeypatch.setattr(layers, "PACKAGE", package)
    monkeypatch.setattr(layers, "ROOT", tmp_path)
    assert layers.upward_imports() == [
        "src/gpuadvisor/prediction/model.py: prediction imports gpuadvisor.analysis (analysis)",
        "src/gpuadvisor/prediction/model.py: prediction imports gpuadvisor.analysis.rules (analysis)",
    ]


def test_every_module_has_a_layer(layers) -> None:
    for path in layers.PACKAGE.rglob("*.py"):
        layers.layer_of(layers._module_name(path))
