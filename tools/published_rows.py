"""What every importer of a GPU-only (or CPU-only) published source shares: the row columns, one row, the file.

The importers (`import_*.py` beside this file) each know one source's format; the rows they
produce are the training-row format of `training_data/README.md`, written with the source's
provenance in `#` lines on top, so a source reads the same whichever importer made it.
"""

from __future__ import annotations

import csv
from pathlib import Path

PUBLISHED = Path("training_data/published")
COLUMNS = (
    "backend", "device", "op", "shape", "dtype", "params", "median_s", "repeats", "threads", "cpu_name",
    "cpu_cores", "gpu_name", "library_version", "timestamp", "source", "pair", "role",
)


def _row(**fields: str) -> dict[str, str]:
    """A row with every column, empty where the source says nothing (no repeats, threads or pair)."""
    return {column: fields.get(column, "") for column in COLUMNS}


def gpu_row(
    op: str, shape: str, dtype: str, params: str, seconds: float, gpu: str, source: str, when: str,
    backend: str = "torch", library_version: str = "",
) -> dict[str, str]:
    """One GPU-only row (no CPU side, so no pair): the time to 6 significant digits."""
    return _row(
        backend=backend, device="cuda", op=op, shape=shape, dtype=dtype, params=params, median_s=f"{seconds:.6g}",
        gpu_name=gpu, library_version=library_version, timestamp=when, source=source,
    )


def cpu_row(
    op: str, shape: str, dtype: str, params: str, seconds: float, cpu: str, cores: int, source: str, when: str,
    backend: str = "numpy", library_version: str = "", role: str = "",
) -> dict[str, str]:
    """One CPU-only row (no GPU side, so no pair): the time to 6 significant digits."""
    return _row(
        backend=backend, device="cpu", op=op, shape=shape, dtype=dtype, params=params, median_s=f"{seconds:.6g}",
        cpu_name=cpu, cpu_cores=str(cores), library_version=library_version, timestamp=when, source=source, role=role,
    )


def write_source(
    name: str, header: str, rows: list[dict[str, str]],
    kind: str = "GPU-only rows (no CPU side: scored per side, not as speedups)",
) -> None:
    """Write `training_data/published/<name>.csv`: the provenance header, a row count, the rows."""
    path = PUBLISHED / f"{name}.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        handle.write(header)
        handle.write(f"# rows: {len(rows)} {kind}\n")
        writer = csv.DictWriter(handle, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{path}: {len(rows)} rows")
