"""The CSV file of measured rows: appended one whole line at a time, resumable.

A run killed mid-write can leave at most a partial last line; opening the file again cuts it
off, so the file always holds whole rows. Configurations already measured (same key on the
same machine) are skipped, so re-running a sweep resumes it.
"""

from __future__ import annotations

import csv
import io
import os
import platform
from collections.abc import Iterable
from pathlib import Path

from gpuadvisor._paths import user_data_dir
from gpuadvisor._safe_io import UnsafeFile, read_regular

#: A results file holds some thousands of rows; a far larger one is not one of ours.
RESULTS_SIZE_LIMIT = 512 * 1024 * 1024

COLUMNS = (
    "backend", "device", "op", "shape", "dtype", "params", "median_s", "p10_s", "p90_s", "repeats",
    "pinned", "threads", "cpu_name", "cpu_cores", "gpu_name", "gpu_driver", "library_version",
    "numpy_version", "python_version", "harness_version", "timestamp",
)
#: What identifies one configuration on one machine.
KEY_COLUMNS = ("backend", "device", "op", "shape", "dtype", "params", "pinned", "cpu_name", "gpu_name")


def user_results_folder() -> Path:
    """Where `gpuadvisor bench` writes by default, and where the predictor looks for your rows."""
    return user_data_dir() / "bench"


def default_results_file() -> Path:
    return user_results_folder() / f"{platform.node() or 'this-machine'}.csv"


class ResultsFileError(Exception):
    pass


def row_key(row: dict[str, str]) -> tuple[str, ...]:
    return tuple(str(row.get(column, "")) for column in KEY_COLUMNS)


class ResultsFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._repair()
        self.done: set[tuple[str, ...]] = {row_key(row) for row in self.rows()}

    def _repair(self) -> None:
        """Cut a partial last line left by an interrupted write; check the header."""
        if self.path.exists() and not self.path.is_file():  # a FIFO would block the run forever
            raise ResultsFileError(f"{self.path} is not a regular file; use another --out")
        if not self.path.exists() or self.path.stat().st_size == 0:
            self.path.write_text(",".join(COLUMNS) + "\n", encoding="utf-8")
            return
        try:
            data = read_regular(self.path, RESULTS_SIZE_LIMIT)
        except UnsafeFile as exc:
            raise ResultsFileError(f"{self.path}: {exc}; use another --out") from None
        if not data.endswith(b"\n"):
            with open(self.path, "r+b") as handle:
                handle.truncate(data.rfind(b"\n") + 1)
        header = data.split(b"\n", 1)[0].decode("utf-8", errors="replace").strip().split(",")
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            raise ResultsFileError(f"{self.path} has other columns (missing {', '.join(missing)}); use another --out")
        self._header = header

    def rows(self) -> list[dict[str, str]]:
        with open(self.path, newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))

    def append(self, rows: Iterable[dict[str, object]]) -> None:
        header = getattr(self, "_header", list(COLUMNS))
        for row in rows:
            buffer = io.StringIO()
            csv.DictWriter(buffer, fieldnames=header, lineterminator="\n").writerow(
                {column: row.get(column, "") for column in header}
            )
            line = buffer.getvalue().encode("utf-8")
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, line)  # one write of one whole line
            finally:
                os.close(fd)
            self.done.add(row_key({k: str(v) for k, v in row.items()}))
