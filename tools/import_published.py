"""Convert published third-party CPU-vs-GPU tables into training rows (training_data/published/).

Each source becomes one CSV in the training-row format (the project contract's columns), with
its provenance as `#` lines on top: URL, GPU, CPU and cores, libraries, data placement, timing
method. Every published pair becomes two rows (the CPU one and the GPU one) sharing a `pair`
id, so `benchmarks/predict_accuracy.py` can score speedups, not only each side.

Inputs: `../shared/published/mlxbench_*.csv` (PyTorch CPU vs CUDA, four GPU/CPU pairs) and the
RTX 5090 tables of seed article 004 (NumPy/SciPy vs CuPy, transcribed below). Rows whose work
no `predict` op describes (a loss function, a three-reduction composite, sparse x sparse) are
left out and counted. Run from the repository root:

    python3 tools/import_published.py ../shared/published ../shared/seeds/004_*.txt
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

OUT = Path("training_data/published")
COLUMNS = (
    "backend", "device", "op", "shape", "dtype", "params", "median_s", "repeats", "threads", "cpu_name",
    "cpu_cores", "gpu_name", "library_version", "timestamp", "source", "pair", "role",
)
#: Rows that describe their host the way `gpuadvisor calibrate` does (BLAS rate, bandwidth):
#: training_data/machines.toml takes the CPU's rates from them, so they are not scored.
CALIBRATION_ROWS = {("matmul", "1000x1024x64@1000x64x256"), ("sum", "1000000x128(all)")}
ACTIVATIONS = {
    "relu": "relu(x)", "leakyrelu": "leaky_relu(x)", "prelu": "prelu(x)", "selu": "selu(x)",
    "sigmoid": "sigmoid(x)", "softplus": "softplus(x)",
}
MLXBENCH_MACHINES = {
    # file stem -> (cpu_name, cpu_cores, gpu_name)
    "mlxbench_rtx4090": ("Intel Core i9-10940X", 14, "NVIDIA GeForce RTX 4090"),
    "mlxbench_v100_nvlink": ("Intel Xeon Gold 6148", 20, "NVIDIA Tesla V100-SXM2-32GB"),
    "mlxbench_a100_pcie": ("Intel Xeon Gold 6254", 18, "NVIDIA A100 80GB PCIe"),
    "mlxbench_v100_pcie": ("Intel Xeon Gold 5120", 14, "NVIDIA Tesla V100-PCIE-32GB"),
}


def _mlxbench_op(name: str, shape_text: str) -> tuple[str, str, str] | None:
    """(op, shapes, params) of one mlx-benchmark row, or None when no predict op describes it."""
    match = re.fullmatch(r"([^()]+)(?:\((.*)\))?", shape_text)
    assert match, shape_text
    body, extra = match.group(1), match.group(2) or ""
    shapes = body.replace("@", ";").replace("+", ";")
    axis = extra.partition("axis=")[2] if extra.startswith("axis=") else ""
    params = f"axis={axis}" if axis else ""
    kind = name.removeprefix("elementwise_")
    if kind in ACTIVATIONS:
        return "expr", shapes, f"expr={ACTIVATIONS[kind]}"
    if kind in ("matmul", "sum", "sort", "argmax", "softmax", "concat"):
        return kind, shapes, params
    return None  # binary cross-entropy: a loss, no predict op


def _header(path: Path) -> list[str]:
    return [line.rstrip("\n") for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")]


def import_mlxbench(folder: Path) -> None:
    for stem, (cpu_name, cores, gpu_name) in MLXBENCH_MACHINES.items():
        path = folder / f"{stem}.csv"
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
        rows, skipped = [], 0
        for number, record in enumerate(csv.DictReader(lines)):
            mapped = _mlxbench_op(record["op"], record["shape"])
            if mapped is None:
                skipped += 1
                continue
            op, shapes, params = mapped
            common = {
                "backend": "torch", "op": op, "shape": shapes, "dtype": record["dtype"], "params": params,
                "repeats": "45", "cpu_name": cpu_name, "cpu_cores": str(cores), "library_version": "",
                "timestamp": "2024-09-01", "source": stem, "pair": f"{stem}-{number}",
                "role": "calibration" if (record["op"], record["shape"]) in CALIBRATION_ROWS else "",
            }
            rows.append({**common, "device": "cpu", "median_s": f"{float(record['cpu_ms']) / 1e3:.6g}", "threads": str(cores), "gpu_name": ""})
            rows.append({**common, "device": "cuda", "median_s": f"{float(record['gpu_ms']) / 1e3:.6g}", "threads": "", "gpu_name": gpu_name})
        notes = [
            f"# imported by tools/import_published.py from the project's copy ../shared/published/{stem}.csv",
            f"# rows: {len(rows) // 2} pairs (CPU row + CUDA row, same `pair`); {skipped} binary-cross-entropy pairs left out (no predict op)",
            "# mean of 9 calls x 5 processes (repeats = 45); published at 0.01 ms resolution: GPU rows under ~0.06 ms are launch+sync floors",
        ]
        _write(OUT / f"{stem}.csv", _header(path) + notes, rows)


#: Seed article 004: "285k i9 and 5090 RTX"; sizes N give N x N float32 inputs.
SEED004_TABLES = {
    # name: (op, params, shapes(N), cpu backend, [(N, cpu_ms, gpu_ms)])
    "matmul": ("matmul", "", lambda n: f"{n}x{n};{n}x{n}", "numpy", [
        (100, 0.58, 0.06), (500, 20.66, 0.08), (1000, 39.64, 0.09), (5000, 356.95, 3.94), (10000, 1844.69, 30.13)]),
    "elementwise": ("expr", "expr=x*y+sin(x)+cos(y)", lambda n: f"{n}x{n};{n}x{n}", "numpy", [
        (100, 0.32, 0.06), (500, 1.74, 0.06), (1000, 7.82, 0.06), (5000, 295.74, 1.15), (10000, 1184.07, 5.57)]),
    "fft2": ("fft2", "", lambda n: f"{n}x{n}", "scipy", [
        (100, 0.24, 0.11), (500, 1.34, 0.09), (512, 1.77, 0.07), (1024, 8.17, 0.09), (2048, 38.33, 0.15)]),
    "svd": ("svd", "", lambda n: f"{n}x{n}", "scipy", [
        (100, 124.44, 5.11), (500, 735.54, 30.26), (512, 765.53, 31.54), (1024, 114.06, 84.09), (2048, 591.56, 237.68)]),
}


def import_seed004(article: Path) -> None:
    text = article.read_text(encoding="utf-8")
    for _name, (_op, _params, _shape, _backend, table) in SEED004_TABLES.items():
        for size, cpu_ms, gpu_ms in table:  # the transcription must match the article
            assert re.search(rf"\n{size}\s+{cpu_ms:.2f}\s+{gpu_ms:.2f}\s", text), (size, cpu_ms, gpu_ms)
    rows = []
    for name, (op, params, shape, cpu_backend, table) in SEED004_TABLES.items():
        created = "created=random"  # inputs made by np/cp.random.rand inside the timed region
        for size, cpu_ms, gpu_ms in table:
            common = {
                "op": op, "shape": shape(size), "dtype": "float32", "params": ";".join(p for p in (params, created) if p),
                "repeats": "1", "library_version": "", "timestamp": "2025", "source": "seed004_rtx5090",
                "pair": f"seed004-{name}-{size}", "role": "",
            }
            # The CPU side ran once, cold: scored as published, never fitted (the model predicts warm calls).
            rows.append({**common, "role": "evaluation", "backend": cpu_backend, "device": "cpu", "median_s": f"{cpu_ms / 1e3:.6g}", "threads": "",
                         "cpu_name": "Intel Core Ultra 9 285K", "cpu_cores": "24", "gpu_name": ""})
            rows.append({**common, "backend": "cupy", "device": "cuda", "median_s": f"{gpu_ms / 1e3:.6g}", "threads": "",
                         "cpu_name": "Intel Core Ultra 9 285K", "cpu_cores": "24", "gpu_name": "NVIDIA GeForce RTX 5090"})
    header = [
        "# source: seed article 004 (project copy ../shared/seeds/004_*.txt), sections 'Numpy vs CuPy' and 'Scipy vs CuPy'",
        "# GPU: NVIDIA GeForce RTX 5090 (as stated: '285k i9 and 5090 RTX')",
        "# CPU: Intel Core Ultra 9 285K (8 performance + 16 efficient cores, 24 threads); NumPy/SciPy with their default BLAS threads",
        "# libs: NumPy + SciPy (CPU) vs CuPy (GPU); versions not stated",
        "# data placement: data on each side's own device; NO host<->device copies timed",
        "# timing: ONE call per size, time.time(); the timed region INCLUDES creating the inputs (np.random.rand(...).astype(float32)",
        "#   on the CPU, cp.random.rand(..., dtype=float32) on the GPU): params `created=random`; the GPU side had one warm-up call",
        "#   and cp.cuda.Stream.null.synchronize() before reading the clock; the CPU side had no warm-up",
        "# left out: the reduction table (sum, mean and std in one timed call), linear solve (builds X.T @ X + I inside the",
        "#   timed region and solves with Cholesky on the CPU but LU on the GPU), sparse x sparse products (no predict op)",
        "# reliability: LOW-MEDIUM (single samples, creation timed, CPU not warmed up: the 100-512 SVD CPU times look like",
        "#   first-call costs); kept because it is the only NumPy/SciPy-vs-CuPy source with named hardware",
    ]
    _write(OUT / "seed004_rtx5090.csv", header, rows)


def _write(path: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        handle.write("\n".join(header) + "\n")
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{path}: {len(rows)} rows")


def main() -> None:
    folder, article = Path(sys.argv[1]), Path(sys.argv[2])
    import_mlxbench(folder)
    import_seed004(article)


if __name__ == "__main__":
    main()
