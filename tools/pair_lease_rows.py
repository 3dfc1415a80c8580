"""Join a lease file's rows into CPU/GPU pairs for the speedup scores (`pair` column).

A NumPy row pairs with the CuPy row of the same op, shape, dtype and params, or with the
torch-on-CUDA row where CuPy measured none: the speedup a user porting NumPy code would see,
data already on the device. Both rows get the id `lease-<gpu backend>-<op>-<shape>-<dtype>-<params>`.
Rows the other side lacks keep an empty id. Rewrites the file in place, comments kept.

Usage: python tools/pair_lease_rows.py training_data/h200-lease-2026-11-27.csv [--check]
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

COLUMNS_KEY = ("op", "shape", "dtype", "params")
#: Where the GPU half comes from, first choice first.
GPU_BACKENDS = ("cupy", "torch")


def paired(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows with their `pair` ids set (every other column as it was)."""
    gpu: dict[tuple[str, ...], dict[str, int]] = {}  # op, shape, dtype, params -> backend -> row index
    for index, row in enumerate(rows):
        if row["device"] == "cuda" and row["backend"] in GPU_BACKENDS:
            gpu.setdefault(tuple(row[c] for c in COLUMNS_KEY), {})[row["backend"]] = index
    out = [{**row, "pair": ""} for row in rows]
    for index, row in enumerate(rows):
        if row["backend"] != "numpy":
            continue
        key = tuple(row[c] for c in COLUMNS_KEY)
        candidates = gpu.get(key, {})
        backend = next((name for name in GPU_BACKENDS if name in candidates), None)
        if backend is not None:
            pair = f"lease-{backend}-{'-'.join(key)}"
            out[index]["pair"] = out[candidates[backend]]["pair"] = pair
    return out


def rewrite(path: Path) -> tuple[str, int]:
    """The file's text with its pairs set (comment lines first, as they were), and how many pairs."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    comments = [line for line in lines if line.startswith("#")]
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    fields = list(rows[0]) if rows else []
    if "pair" not in fields:
        fields.append("pair")
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    joined = paired(rows)
    writer.writerows(joined)
    return "".join(comments) + text.getvalue(), sum(1 for row in joined if row["pair"]) // 2


def main(argv: list[str]) -> int:
    path = Path(argv[0])
    text, pairs = rewrite(path)
    if "--check" in argv:
        same = text == path.read_text(encoding="utf-8")
        print(f"{path}: pairs {'in step' if same else 'differ: run without --check'}")
        return 0 if same else 1
    path.write_text(text, encoding="utf-8")
    print(f"{path}: {pairs} pairs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
