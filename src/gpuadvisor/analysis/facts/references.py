"""Top-level code that nothing in the checked project refers to: a loss class, a helper or a
copied trainer that no script, module or configuration file names.

In an application (a folder of scripts and the modules they import, not an installable package)
such code never runs, so a per-step cost inside it costs nothing: yolov7's `utils/loss.py` keeps five loss classes
its training scripts never build. In a package, users call what the package defines, so nothing
there is taken for unreferenced. The test is textual and errs towards keeping a finding: a name
counts as referenced wherever the word appears outside its own definition, in code, comments,
strings and configuration files alike (a model class named only in a YAML file is used), and
decorated definitions count as used (a decorator may register them).
"""

from __future__ import annotations

import ast
import bisect
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gpuadvisor._safe_io import UnsafeFile, read_regular
from gpuadvisor.analysis.facts.project import ProjectIndex
from gpuadvisor.analysis.prescan import imported_modules

#: Files a project names its code in: sources, notebooks, configurations, launch scripts (not
#: prose: a README that mentions a class does not run it).
REFERRING_SUFFIXES = frozenset({".py", ".pyi", ".ipynb", ".yaml", ".yml", ".json", ".toml", ".cfg", ".ini", ".txt", ".sh"})
#: Larger files are data, not code that names functions; reading them would only cost time.
MAX_REFERRING_BYTES = 2_000_000
#: Past this many files the project is too large to read again for names: nothing is dropped.
MAX_REFERRING_FILES = 20_000
#: Folders that hold no code of the project.
_SKIPPED_FOLDERS = frozenset({"node_modules", "site-packages", "__pycache__", "venv", "env"})
_PACKAGE_TABLE = re.compile(r"^\[(project|tool\.poetry)\]", re.MULTILINE)
_ENTRY_POINT = re.compile(r"""__name__\s*==\s*["']__main__["']""")


@dataclass(frozen=True)
class Definition:
    """A top-level `def` or `class`, or a method of a plain class, and the lines it spans
    (1-based, inclusive)."""

    name: str
    first: int
    last: int


def top_level_definitions(source: str) -> list[Definition]:
    """The undecorated top-level functions and classes of a Python file, and the undecorated
    methods of its plain classes (none if it does not parse). Dunder names and `main` are left
    out: the interpreter or a launcher calls them. A class with a base may have its methods
    called by that base's framework (`forward`, `training_step`, `setUp`), so only classes of
    their own (no base but `object`) give their methods."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not _candidate(node):
            continue
        found.append(Definition(node.name, node.lineno, node.end_lineno or node.lineno))
        if isinstance(node, ast.ClassDef) and _plain(node):
            found.extend(
                Definition(method.name, method.lineno, method.end_lineno or method.lineno)
                for method in node.body
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and _candidate(method)
            )
    return found


def _candidate(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    dunder = node.name.startswith("__") and node.name.endswith("__")
    return not node.decorator_list and not dunder and node.name != "main"


def _plain(node: ast.ClassDef) -> bool:
    """`class GaussianDiffusion:` or `(object)`, with no metaclass or other keyword."""
    return not node.keywords and all(isinstance(base, ast.Name) and base.id == "object" for base in node.bases)


def is_package(folder: Path) -> bool:
    """The folder belongs to an installable package: a `setup.py`, `setup.cfg` or a
    `pyproject.toml` with a `[project]` (or Poetry) table in it or above it, up to the
    repository's root (the folder holding `.git`)."""
    for candidate in (folder, *folder.parents):
        if (candidate / "setup.py").is_file() or (candidate / "setup.cfg").is_file():
            return True
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and _PACKAGE_TABLE.search(_read(pyproject)):
            return True
        if (candidate / ".git").exists():
            return False
    return False


def project_root(folder: Path) -> Path:
    """The repository holding the folder (the nearest folder with `.git`), else the folder."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def referring_files(roots: Iterable[Path]) -> list[Path] | None:
    """Every file under the roots that may name project code (None past `MAX_REFERRING_FILES`)."""
    found: set[Path] = set()
    for root in roots:
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = [name for name in subfolders if not name.startswith(".") and name not in _SKIPPED_FOLDERS]
            found.update(Path(folder, name) for name in names if Path(name).suffix in REFERRING_SUFFIXES)
            if len(found) > MAX_REFERRING_FILES:
                return None
    return sorted(found)


def unreferenced(definitions: Mapping[str, list[Definition]], files: Iterable[Path]) -> dict[str, list[Definition]]:
    """Of `definitions` (by the path of the file defining them), those whose name appears in no
    file outside the lines of its own definition, in files that run: a script (`if __name__ ==
    "__main__":`) or a module another Python file imports. A module nothing imports is a
    library's file or a snippet to copy: its functions are what it offers, used or not."""
    wanted = {definition.name for found in definitions.values() for definition in found}
    if not wanted:
        return {}
    pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, wanted))) + r")\b")
    spans = {_absolute(path): found for path, found in definitions.items()}
    # Only a file that names a defining module's stem can import it: the others are not parsed
    # for imports (most of a repository, which costs more than the names themselves).
    stems = re.compile(r"\b(?:" + "|".join(sorted({re.escape(Path(path).stem) for path in spans})) + r")\b")
    files = sorted({Path(_absolute(path)) for path in files})
    index = ProjectIndex(str(path) for path in files)
    named: set[str] = set()
    running: set[str] = set()
    for path in files:
        text = _read(path)
        if path.suffix == ".py":
            if _ENTRY_POINT.search(text):
                running.add(str(path))
            if stems.search(text):
                running.update(_imported(text, str(path), index))
        own = spans.get(str(path), [])
        line_starts = [match.end() for match in re.finditer("\n", text)] if own else []
        for match in pattern.finditer(text):
            name = match.group()
            if name in named:
                continue
            line = bisect.bisect_right(line_starts, match.start()) + 1
            if not any(definition.name == name and definition.first <= line <= definition.last for definition in own):
                named.add(name)
    return {
        path: kept
        for path, found in definitions.items()
        if _absolute(path) in running and (kept := [d for d in found if d.name not in named])
    }


def _absolute(path: str | Path) -> str:
    """One spelling per file for paths given in different forms (relative, with `..`); links
    are not followed, as discovery does not follow them."""
    return os.path.normpath(os.path.abspath(path))


def _imported(text: str, importer: str, index: ProjectIndex) -> set[str]:
    """The files of the project that a Python file imports (other than itself)."""
    found = set()
    for module in imported_modules(text):
        # `.__module__` stands for any name inside: resolve() cuts a name down to its module.
        where = index.resolve(f"{module}__module__" if module.endswith(".") else f"{module}.__module__", importer)
        if where is not None and where[0] != importer:
            found.add(where[0])
    return found


def enclosing(definitions: Iterable[Definition], line: int) -> list[Definition]:
    """The definitions around a line: a top-level one, and the method inside it."""
    return [definition for definition in definitions if definition.first <= line <= definition.last]


def _read(path: Path) -> str:
    """The text of a regular file of at most `MAX_REFERRING_BYTES` (empty for anything else)."""
    try:
        return read_regular(path, MAX_REFERRING_BYTES).decode("utf-8", errors="replace")
    except (OSError, UnsafeFile):
        return ""


def in_unreferenced_code(finding_lines: Mapping[str, Iterable[int]], folders: Iterable[Path], files: Iterable[str]) -> set[tuple[str, int]]:
    """The (path, line) of the findings that lie in top-level code nothing refers to: only in
    Python files under a checked folder that is not part of a package, with every file of
    those folders' repositories (and the other checked `files`) read for references."""
    checked = [Path(_absolute(folder)) for folder in folders]
    applications = [folder for folder in checked if not is_package(folder)]
    if not applications:
        return set()
    definitions: dict[str, list[Definition]] = {}
    for path, lines in finding_lines.items():
        where = Path(_absolute(path))
        if where.suffix != ".py" or not any(where.is_relative_to(folder) for folder in applications):
            continue
        found = top_level_definitions(_read(where))
        hit = {definition for line in lines for definition in enclosing(found, line)}
        if hit:
            definitions[path] = sorted(hit, key=lambda definition: definition.first)
    if not definitions:
        return set()
    referring = referring_files({project_root(folder) for folder in checked})
    if referring is None:
        return set()
    dead = unreferenced(definitions, [*referring, *(Path(path) for path in files)])
    return {(path, line) for path, lines in finding_lines.items() for line in lines if enclosing(dead.get(path, []), line)}
