"""The lease files' CPU/GPU pairs (the speedups `benchmarks/predict_accuracy.py` scores) are the ones
`tools/pair_lease_rows.py` joins: each NumPy row with the CuPy row of the same op, shape, dtype and
params, or the torch-on-CUDA row where CuPy has none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LEASE_FILES = sorted((REPO / "training_data").glob("*-lease-*.csv"))


@pytest.mark.parametrize("path", LEASE_FILES, ids=lambda p: p.stem)
def test_lease_pairs_are_in_step(path: Path) -> None:
    result = subprocess.run([sys.executable, str(REPO / "tools" / "pair_lease_rows.py"), str(path), "--check"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_numpy_row_pairs_with_cupy_first_and_torch_where_cupy_has_none() -> None:
    sys.path.insert(0, str(REPO / "tools"))
    from pair_lease_rows import paired

    def row(backend: str, device: str, op: str) -> dict[str, str]:
        return {"backend": backend, "device": device, "op": op, "shape": "64", "dtype": "float32", "params": ""}

    rows = [row("numpy", "cpu", "sum"), row("torch", "cuda", "sum"), row("cupy", "cuda", "sum"),
            row("numpy", "cpu", "sort"), row("torch", "cuda", "sort"), row("numpy", "cpu", "qr")]
    pairs = [r["pair"] for r in paired(rows)]
    assert pairs == ["lease-cupy-sum-64-float32-", "", "lease-cupy-sum-64-float32-",
                     "lease-torch-sort-64-float32-", "lease-torch-sort-64-float32-", ""]
