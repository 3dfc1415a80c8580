"""Which files a `check` run looks at: walking folders the way a user expects.

The walk is a loop over a stack (a tree thousands of folders deep is fine), stays inside the
folders it was given (symbolic links are not followed unless asked: `vendor -> /usr` would
read the whole system), reports an unreadable folder as an error of its own and walks on,
and honours `.gitignore` files found on the way (with git's own matching rules, via pathspec).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gpuadvisor._safe_io import UnsafeFile, read_regular
from gpuadvisor.analysis.findings.records import FileError

if TYPE_CHECKING:
    from pathspec import PathSpec

#: Folders that never hold the user's own source.
SKIPPED_FOLDERS = frozenset(
    {
        ".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache",
        ".pytest_cache", ".ruff_cache", "build", "dist", "node_modules", "site-packages", ".eggs",
        "__pypackages__", ".ipynb_checkpoints", ".direnv",
    }
)
SOURCE_SUFFIXES = (".py", ".ipynb")
#: A .gitignore larger than this is not read (it is not one a person wrote).
_GITIGNORE_LIMIT = 1024 * 1024


@dataclass
class Discovered:
    files: list[Path] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    #: Source files left out because a .gitignore names them (said in the summary).
    gitignored: int = 0


def _skip_folder(entry: os.DirEntry[str]) -> bool:
    name = entry.name
    if name in SKIPPED_FOLDERS or name.endswith(".egg-info"):
        return True
    try:
        return os.path.isfile(os.path.join(entry.path, "pyvenv.cfg"))  # a virtual environment
    except OSError:
        return False


def _gitignore(folder: str, errors: list[FileError]) -> PathSpec | None:
    path = os.path.join(folder, ".gitignore")
    try:
        text = read_regular(path, _GITIGNORE_LIMIT).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except (OSError, UnsafeFile) as exc:
        errors.append(FileError(path, "read", f"cannot read .gitignore: {exc}; its patterns were not applied"))
        return None
    from pathspec import GitIgnoreSpec  # only where a .gitignore exists

    return GitIgnoreSpec.from_lines(text.splitlines())


#: The .gitignore patterns in force in a folder: (folder they are relative to, patterns).
_Ignores = tuple[tuple[str, "PathSpec"], ...]


def _ignored(path: str, is_folder: bool, ignores: _Ignores) -> bool:
    for base, spec in ignores:
        relative = os.path.relpath(path, base).replace(os.sep, "/")
        if spec.match_file(relative + "/" if is_folder else relative):
            return True
    return False


def _walk(root: str, excluded: Callable[[Path], bool], follow_links: bool, found: Discovered) -> None:
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[str, _Ignores]] = [(root, ())]
    while stack:
        folder, inherited = stack.pop()
        try:
            info = os.stat(folder)
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            found.errors.append(FileError(folder, "read", f"cannot read folder: {exc.strerror or exc}"))
            continue
        identity = (info.st_dev, info.st_ino)
        if identity in seen:  # a symlink loop or a second link to the same folder
            continue
        seen.add(identity)
        own = _gitignore(folder, found.errors)
        ignores = inherited + ((folder, own),) if own is not None else inherited
        subfolders: list[str] = []
        for entry in entries:
            try:
                if entry.is_symlink() and not follow_links:
                    continue
                is_folder = entry.is_dir()
            except OSError:
                continue
            path = Path(entry.path)
            if is_folder:
                if not _skip_folder(entry) and not excluded(path) and not _ignored(entry.path, True, ignores):
                    subfolders.append(entry.path)
            elif entry.name.endswith(SOURCE_SUFFIXES) and not excluded(path):  # a FIFO too: reported when read
                if _ignored(entry.path, False, ignores):
                    found.gitignored += 1
                else:
                    found.files.append(path)
        stack.extend((subfolder, ignores) for subfolder in reversed(subfolders))


def discover(paths: list[str], excluded: Callable[[Path], bool], follow_links: bool = False) -> Discovered:
    """Files to check (deduplicated, in a stable order) and errors for paths that cannot be read.

    A path named on the command line is always used, even a symbolic link; inside folders,
    links are followed only with `follow_links`."""
    found = Discovered()
    for given in paths:
        path = Path(given)
        try:
            is_folder, is_file, exists = path.is_dir(), path.is_file(), path.exists()
        except OSError as exc:
            found.errors.append(FileError(given, "read", f"cannot read: {exc.strerror or exc}"))
            continue
        if is_folder:
            _walk(given, excluded, follow_links, found)
        elif is_file:
            if not excluded(path):
                found.files.append(path)
        elif exists:
            found.errors.append(FileError(given, "read", "not a regular file (a pipe, socket or device); skipped"))
        else:
            found.errors.append(FileError(given, "read", "no such file or directory"))
    unique: dict[str, Path] = {}
    for path in found.files:
        unique.setdefault(os.path.realpath(path), path)
    found.files = list(unique.values())
    return found
