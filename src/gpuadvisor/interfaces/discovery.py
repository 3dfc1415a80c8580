"""Which files a `check` run looks at: walking folders the way a user expects."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from gpuadvisor.analysis.findings import FileError

#: Folders that never hold the user's own source.
SKIPPED_FOLDERS = frozenset(
    {
        ".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache",
        ".pytest_cache", ".ruff_cache", "build", "dist", "node_modules", "site-packages", ".eggs",
        "__pypackages__", ".ipynb_checkpoints", ".direnv",
    }
)
SOURCE_SUFFIXES = (".py", ".ipynb")


def _skip_folder(folder: Path) -> bool:
    name = folder.name
    return name in SKIPPED_FOLDERS or name.endswith(".egg-info") or (folder / "pyvenv.cfg").exists()


def _walk(root: Path, excluded: Callable[[Path], bool], errors: list[FileError]) -> list[Path]:
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()

    def unreadable(exc: OSError) -> None:
        errors.append(FileError(str(exc.filename or root), "read", f"cannot read folder: {exc.strerror or exc}"))

    for folder, subfolders, files in os.walk(root, onerror=unreadable, followlinks=True):
        here = Path(folder)
        try:
            stat = here.stat()
        except OSError:
            subfolders[:] = []
            continue
        identity = (stat.st_dev, stat.st_ino)
        if identity in seen:  # a symlink loop or a second link to the same folder
            subfolders[:] = []
            continue
        seen.add(identity)
        subfolders[:] = sorted(
            name for name in subfolders if not _skip_folder(here / name) and not excluded(here / name)
        )
        for name in sorted(files):
            path = here / name
            if name.endswith(SOURCE_SUFFIXES) and not excluded(path):
                found.append(path)
    return found


def discover(paths: list[str], excluded: Callable[[Path], bool]) -> tuple[list[Path], list[FileError]]:
    """Files to check (deduplicated, in a stable order) and errors for paths that do not exist."""
    files: list[Path] = []
    errors: list[FileError] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files.extend(_walk(path, excluded, errors))
        elif path.is_file():
            if not excluded(path):
                files.append(path)
        elif path.exists():
            errors.append(FileError(given, "read", "not a regular file (a pipe, socket or device); skipped"))
        else:
            errors.append(FileError(given, "read", "no such file or directory"))
    unique: dict[str, Path] = {}
    for path in files:
        unique.setdefault(os.path.normpath(path), path)
    return list(unique.values()), errors
