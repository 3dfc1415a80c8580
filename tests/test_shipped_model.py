"""The fitted model ships with the package: predictions need NumPy only, never a fit."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gpuadvisor.prediction import model as model_module
from gpuadvisor.prediction.costs import op_cost
from gpuadvisor.prediction.hardware import resolve_gpu
from gpuadvisor.prediction.libraries import gpu_time

#: Run in a fresh interpreter where `import sklearn` fails, as in the slim pre-commit environment.
WITHOUT_SKLEARN = "import sys; sys.modules['sklearn'] = None\n"


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-c", WITHOUT_SKLEARN + textwrap.dedent(code)], capture_output=True, text=True, env={**os.environ, **env}
    )


def test_the_shipped_model_is_in_step_with_the_training_data_and_the_model_code() -> None:
    recorded = json.loads(model_module.SHIPPED_MODEL.read_text(encoding="utf-8"))["key"]
    assert recorded == model_module.shipped_key(), "the shipped model is stale: run `python tools/fit_model.py`"


@pytest.mark.slow
def test_refitting_the_shipped_rows_reproduces_the_shipped_coefficients() -> None:
    text = model_module.SHIPPED_MODEL.read_text(encoding="utf-8")
    # Read under the key it was written with: a change to the model's code must show up as
    # different coefficients or intervals, not only as a stale key (the test above checks that).
    shipped = model_module.CorrectionModel.from_json(text, json.loads(text)["key"])
    refitted = model_module.fit_shipped_model()
    for side, fitted in refitted.sides.items():
        np.testing.assert_allclose(shipped.sides[side].coef, fitted.coef, rtol=1e-6, atol=1e-9)
        assert shipped.sides[side].spread.keys() == fitted.spread.keys()
        for slot, (low, high) in fitted.spread.items():  # the 80% intervals users read, not only their slots
            assert shipped.sides[side].spread[slot] == pytest.approx((low, high), abs=1e-9), slot


def test_check_and_predict_work_without_scikit_learn(tmp_path: Path) -> None:
    result = _run(
        """
        import gpuadvisor
        p = gpuadvisor.predict("matmul", [(4096, 4096), (4096, 4096)], gpu="h100-sxm", cpu="laptop")
        code = "import numpy as np\\nN = 8192\\na = np.random.rand(N, N)\\nb = a @ a\\n"
        found = [f.rule for f in gpuadvisor.check_source(code, "x.py", gpu="h100-sxm", cpu="laptop")]
        print(p.speedup > 3, found, "sklearn" in sys.modules and sys.modules["sklearn"] is not None)
        """,
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "['GPU701']", "False"]
    assert not (tmp_path / "cache" / "gpuadvisor" / "model").exists()  # nothing was fitted


def test_own_bench_rows_without_scikit_learn_fall_back_to_the_shipped_model_and_say_why(tmp_path: Path) -> None:
    from gpuadvisor.bench.results import COLUMNS

    rows = tmp_path / "data" / "gpuadvisor" / "bench" / "mine.csv"
    rows.parent.mkdir(parents=True)
    rows.write_text(",".join(COLUMNS) + "\n")
    result = _run(
        "import gpuadvisor; print(gpuadvisor.predict('sum', [(1000,)]).speedup > 0)\n",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    assert result.stdout.strip() == "True"
    assert "gpuadvisor[train]" in result.stderr and "your own `gpuadvisor bench` rows" in result.stderr


def test_cli_says_how_to_install_the_training_stack_when_a_fit_is_unavoidable(tmp_path: Path) -> None:
    result = _run(
        """
        from gpuadvisor.prediction import model
        from pathlib import Path
        model.SHIPPED_MODEL = Path("/nonexistent/fitted_model.json")
        from gpuadvisor.interfaces.cli import main
        sys.argv = ["gpuadvisor", "predict", "sum", "--shape", "1000"]
        main()
        """,
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "pip install 'gpuadvisor[train]'" in result.stderr


def test_a_gpu_product_is_corrected_by_one_level_whatever_its_size() -> None:
    """The shipped GPU correction of a matrix product does not depend on its size: tiles, waves and latency are
    analytic, and a size curve fitted between a few published sizes bent best-shape bf16 products 1.3-1.5x too slow."""
    gpu_side = model_module.load_model().sides["gpu"]
    a100 = resolve_gpu("a100-80gb-pcie")
    corrections = []
    for n in (256, 2048, 16384):
        shapes = [(n, n), (n, n)]
        analytic = gpu_time(op_cost("matmul", shapes), a100, "bfloat16", "torch")
        corrections.append(float(gpu_side.row("matmul", "bfloat16", analytic, "torch") @ gpu_side.coef))
    assert corrections == pytest.approx([corrections[0]] * 3)
