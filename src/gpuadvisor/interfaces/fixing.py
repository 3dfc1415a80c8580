"""`check --fix` / `--diff` over files: rewrite in place, or show what would change.

Only files whose bytes are plain UTF-8 text are rewritten (a file in another encoding or with
a byte-order mark is left as it is: writing it back would change more than the fix).
"""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gpuadvisor.analysis.reading.source import SourceError, decode_source
from gpuadvisor.fixes import fix_text
from gpuadvisor.interfaces.config import Config
from gpuadvisor.interfaces.discovery import discover
from gpuadvisor.interfaces.runner import read_source_file


@dataclass
class FixRun:
    fixed: int = 0
    files: list[str] = field(default_factory=list)
    unsafe_available: int = 0
    diffs: list[str] = field(default_factory=list)


def write_atomically(path: Path, text: str) -> None:
    """Replace the file in one step, keeping its permissions: an interrupted run never leaves half a file."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_utf8_text(path: str) -> str | None:
    """The file's text when writing it back as UTF-8 gives the same bytes, else None."""
    try:
        data = read_source_file(path)
        text = decode_source(data)
    except (OSError, SourceError):
        return None  # the check that follows reports it
    return text if text.encode("utf-8") == data else None


def _labels(file: Path) -> tuple[str, str]:
    """git's `a/` and `b/` for relative paths (so `git apply` / `patch -p1` take the diff)."""
    return (str(file), str(file)) if file.is_absolute() else (f"a/{file.as_posix()}", f"b/{file.as_posix()}")


def fix_paths(
    paths: list[str], config: Config, *, unsafe: bool, show_diff: bool, select: list[str] | None, ignore: list[str]
) -> FixRun:
    run = FixRun()
    for file in discover([p for p in paths if p != "-"], config.is_excluded).files:
        if file.suffix != ".py":
            continue  # notebooks: a rewrite would have to go back into the JSON cells
        text = read_utf8_text(str(file))
        if text is None:
            continue
        try:
            outcome = fix_text(text, str(file), unsafe=unsafe, select=select, ignore=ignore, keep=config.keeps)
        except ValueError:
            continue  # does not parse: the check reports it
        run.unsafe_available += len(outcome.unsafe_available)
        if not outcome.changed:
            continue
        run.fixed += len(outcome.fixed)
        run.files.append(str(file))
        if show_diff:
            run.diffs.append(
                "".join(difflib.unified_diff(text.splitlines(True), outcome.text.splitlines(True), *_labels(file)))
            )
        else:
            write_atomically(file, outcome.text)
    return run
