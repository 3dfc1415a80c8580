"""Top-level code that nothing in the checked project refers to: a loss class, a helper or a
copied trainer that no script, module or configuration file names.

In an application (a folder of scripts and the modules they import, not an installable package)
such code never runs, so a per-step cost inside it costs nothing: yolov7's `utils/loss.py` keeps five loss classes
its training scripts never build. In a package, users call what the package defines, so nothing
there is taken for unreferenced, except in the scripts of its top-level `examples/` or `scripts/`
folders, which users run rather than import. The test is textual and errs towards keeping a
finding: a name counts as referenced wherever the word appears outside its own definition, in
code, strings and configuration files alike (a model class named only in a YAML file is used),
and in comments as a call (a call commented out in a script's main block is a switch its author
flips), but not in an import that does not rename it, nor inside another definition that is
itself unreferenced, nor in another Python file when the script defining it is imported by none;
decorated definitions count as used (a decorator may register them)."""

from __future__ import annotations

import ast
import bisect
import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from gpuadvisor._safe_io import UnsafeFile, read_regular
from gpuadvisor.analysis.facts import knowledge as kb
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
#: Rounds of following references into the definitions that hold them (a loss class named only
#: inside a trainer class nothing builds); definitions reached past the last round count as used.
MAX_ROUNDS = 4
#: Top-level folders of a repository that hold scripts to run, not the package's modules: in a
#: package, `examples/` and `scripts/` are not what users import, so their unused helpers never run.
SCRIPT_FOLDERS = frozenset({"examples", "example", "scripts", "demos", "demo", "tutorials", "notebooks", "benchmarks"})
#: Levels climbed above a checked folder to find the project's files where no `.git` marks its root.
MAX_CLIMB = 3
#: A folder climbed into holds at most this many files that may name code: a shared folder such
#: as `/tmp` or a home folder, thousands of unrelated files around the checked one, is no project
#: (reading it all costs minutes for one checked script).
MAX_CLIMBED_FILES = 5_000
_PROJECT_MARKERS = frozenset({"setup.py", "setup.cfg", "pyproject.toml", "requirements.txt"})
_PACKAGE_TABLE = re.compile(r"^\[(project|tool\.poetry)\]", re.MULTILINE)


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
    return _definitions_of(_parsed(source))


def _definitions_of(tree: ast.Module | None) -> list[Definition]:
    found: list[Definition] = []
    for node in tree.body if tree is not None else ():
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


def _declaring_lines(tree: ast.Module | None) -> dict[int, frozenset[str]]:
    """The lines of the file that name definitions without using them, each with the names on it
    that still count: an import binds a name its uses write again, and `__all__` lists what a
    module offers; a renaming import (`from agents.ql import Diffusion_QL as Agent`) uses its
    original name, which the code does not write again (`Agent` is no use of a class `Agent`)."""
    found: dict[int, frozenset[str]] = {}
    for node in _statements(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            counted = frozenset(alias.name.rsplit(".", 1)[-1] for alias in node.names if alias.asname)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and _declares_exports(node):
            counted = frozenset()
        else:
            continue
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            found[line] = counted
    return found


def _statements(tree: ast.Module | None) -> Iterator[ast.AST]:
    """Every statement of the module, nested ones too (an import inside a function), without
    walking the expressions in them (most of a tree's nodes)."""
    stack: list[ast.AST] = list(tree.body) if tree is not None else []
    while stack:
        node = stack.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                stack.extend(block)


def _declares_exports(node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> bool:
    """`__all__ = [...]` (or `+=`)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets)


_ACTING_STATEMENTS = (ast.Expr, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.If, ast.Try)


def runs_its_definitions(source: str) -> bool:
    """A top-level statement that does something (a call on its own, a loop, a `with`, an `if`:
    not a definition, an import or an assignment) names one of the file's own definitions: a
    gallery script that runs what it defines (`for i in range(5): fetch_file(i)`), so a helper it
    never names is unused. A module of definitions, even one building a constant from them
    (`checker = Checker()`, a pipeline loaded by name), offers them all."""
    tree = _parsed(source)
    if tree is None:
        return False
    defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    stack: list[ast.AST] = [node for node in tree.body if isinstance(node, _ACTING_STATEMENTS)]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and node.id in defined:
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _candidate(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    dunder = node.name.startswith("__") and node.name.endswith("__")
    return not node.decorator_list and not dunder and node.name != "main"


def _plain(node: ast.ClassDef) -> bool:
    """`class GaussianDiffusion:` or `(object)`, with no metaclass or other keyword."""
    return not node.keywords and all(isinstance(base, ast.Name) and base.id == "object" for base in node.bases)


def package_root(folder: Path) -> Path | None:
    """The root of the installable package the folder belongs to: the nearest folder, in it or
    above it up to the repository's root (the folder holding `.git`), with a `setup.py`,
    `setup.cfg` or a `pyproject.toml` with a `[project]` (or Poetry) table."""
    for candidate in (folder, *folder.parents):
        if (candidate / "setup.py").is_file() or (candidate / "setup.cfg").is_file():
            return candidate
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and _PACKAGE_TABLE.search(_read(pyproject)):
            return candidate
        if (candidate / ".git").exists():
            return None
    return None


class _Territory:
    """Which files' definitions may go unused, and which run as scripts, with the package root
    of each folder looked up once per check."""

    def __init__(self) -> None:
        self.package_root = functools.cache(package_root)
        self.is_packaged_script = functools.cache(self._is_packaged_script)

    def may_go_unused(self, path: Path) -> bool:
        """The file's definitions can be code nothing runs: it belongs to an application, not a
        package, or it is a script of a package's (users run those rather than import them)."""
        return self.package_root(path.parent) is None or self.is_packaged_script(path)

    def _is_packaged_script(self, path: Path) -> bool:
        """`examples/brain/track.py` in a package: a Python file of a top-level script folder
        whose top-level code runs what it defines (a file of definitions alone is a snippet
        offered to copy, imported or not)."""
        root = self.package_root(path.parent)
        parts = path.relative_to(root).parts if root is not None and path.is_relative_to(root) else ()
        return len(parts) > 1 and parts[0] in SCRIPT_FOLDERS and path.suffix == ".py" and runs_its_definitions(_read(path))


def project_root(folder: Path) -> Path:
    """The repository holding the folder (see `_project`)."""
    return _project(folder)[0]


def _project(folder: Path) -> tuple[Path, list[Path] | None]:
    """The repository holding the folder: the nearest folder with `.git`; without one (an
    unpacked archive), the folder and the folders above it that hold project files of their own
    (a `generate.py` beside the checked `megatron/` calls into it), up to `MAX_CLIMB` levels and
    `MAX_CLIMBED_FILES` files. With the root, the files that may name code under it where the
    climb already listed them (None: not listed yet), so that they are not listed twice."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate, None
    root: Path = folder
    listed: list[Path] | None = None
    for _ in range(MAX_CLIMB):
        parent = root.parent
        if parent == root or not _holds_project_files(parent):
            break
        climbed = referring_files([parent], MAX_CLIMBED_FILES)
        if climbed is None:
            break
        root, listed = parent, climbed
    return root, listed


def _holds_project_files(folder: Path) -> bool:
    """A Python file or a project marker directly in the folder."""
    try:
        return any(entry.is_file() and (entry.suffix == ".py" or entry.name in _PROJECT_MARKERS) for entry in folder.iterdir())
    except OSError:
        return False


def referring_files(roots: Iterable[Path], limit: int = MAX_REFERRING_FILES) -> list[Path] | None:
    """Every file under the roots that may name project code (None past `limit` of them)."""
    found: set[Path] = set()
    for root in roots:
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = [name for name in subfolders if not name.startswith(".") and name not in _SKIPPED_FOLDERS]
            found.update(Path(folder, name) for name in names if Path(name).suffix in REFERRING_SUFFIXES)
            if len(found) > limit:
                return None
    return sorted(found)


@dataclass(frozen=True)
class _Site:
    """Where a name is written: a file and a 1-based line (line 0 for a file that is not Python,
    where no definition can hold it)."""

    path: str
    line: int


class _References:
    """The names written in the project's files, followed from the definitions around findings
    into the definitions that refer to them, round by round."""

    def __init__(self, files: Iterable[Path], scripts: frozenset[str], may_go_unused: Callable[[str], bool]) -> None:
        self.files = sorted({Path(_absolute(path)) for path in files})
        self.index = ProjectIndex(str(path) for path in self.files)
        self.may_go_unused = may_go_unused
        self.sites: dict[str, list[_Site]] = {}
        self.running: set[str] = set(scripts)  # files that run as they are, imported or not
        self.imported: set[str] = set()  # files another Python file imports
        self.searched_stems: set[str] = set()
        self._outlines: dict[str, tuple[list[Definition], dict[int, frozenset[str]]]] = {}

    def search(self, names: set[str], stems: set[str]) -> None:
        """Record every site of `names` and which files run: a script with an entry point, or a
        file another file imports (only a file naming a module's stem can import it, so only those
        are parsed for imports). In a file whose definitions may go unused, imports and `__all__`
        name nothing but the originals of renamed imports (see `_declaring_lines`; a package's
        `__init__` offers what it imports), nor does prose in a Python comment (`# spaced in the
        grid`); a call in one (`# test02()`) is a switch to flip."""
        pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b")
        stem_pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, stems))) + r")\b") if stems else None
        for path in self.files:
            text = _read(path)
            python = path.suffix == ".py"
            if python and kb.ENTRY_POINT.search(text):
                self.running.add(str(path))
            if python and stem_pattern is not None and stem_pattern.search(text):
                self.imported.update(_imported(text, str(path), self.index))
            line_starts: list[int] | None = None
            declaring: dict[int, frozenset[str]] = {}
            for match in pattern.finditer(text):
                if not python:
                    self.sites.setdefault(match.group(), []).append(_Site(str(path), 0))
                    continue
                if line_starts is None:
                    line_starts = [found.end() for found in re.finditer("\n", text)]
                    declaring = self._outline(str(path), text)[1] if self.may_go_unused(str(path)) else {}
                line = bisect.bisect_right(line_starts, match.start()) + 1
                start = line_starts[line - 2] if line > 1 else 0
                prose = _in_comment(text[start : match.start()]) and not text.startswith("(", match.end())
                if match.group() in declaring.get(line, (match.group(),)) and not prose:
                    self.sites.setdefault(match.group(), []).append(_Site(str(path), line))
        self.searched_stems |= stems

    def definitions_in(self, path: str) -> list[Definition]:
        return self._outline(path)[0]

    def _outline(self, path: str, text: str | None = None) -> tuple[list[Definition], dict[int, frozenset[str]]]:
        """The file's candidate definitions and its declaring lines, from one parse kept for
        every round."""
        if path not in self._outlines:
            tree = _parsed(_read(Path(path)) if text is None else text)
            self._outlines[path] = (_definitions_of(tree), _declaring_lines(tree))
        return self._outlines[path]


def _in_comment(before: str) -> bool:
    """The text before a name on its line opens a comment: a `#` outside any string (quotes are
    followed within the line only)."""
    quote = ""
    escaped = False
    for char in before:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#":
            return True
    return False


def unreferenced(
    definitions: Mapping[str, list[Definition]], files: Iterable[Path], may_go_unused: Callable[[str], bool], scripts: Iterable[str | Path]
) -> dict[str, list[Definition]]:
    """Of `definitions` (by the path of the file defining them), those that nothing refers to
    from code that runs, in files that run: a script (`if __name__ == "__main__":`, or one of
    `scripts`), or a module another Python file imports. A module nothing imports is a library's
    file or a snippet to copy: its functions are what it offers, used or not.

    A name written inside another definition counts only if that one is used itself, followed
    for `MAX_ROUNDS` rounds (`may_go_unused(path)`: the file's definitions may go unused, not a package's
    API): yolov7's `APLoss` is named only inside a loss class no script builds."""
    found = _References(files, frozenset(_absolute(path) for path in scripts), may_go_unused)
    candidates: dict[str, set[Definition]] = {_absolute(path): set(defined) for path, defined in definitions.items()}
    searched: set[str] = set()
    for round_number in range(MAX_ROUNDS):
        names = {definition.name for defined in candidates.values() for definition in defined} - searched
        if not names:
            break
        found.search(names, {Path(path).stem for path in candidates} - found.searched_stems)
        searched |= names
        if round_number == MAX_ROUNDS - 1:
            break
        for name in names:
            for site in found.sites.get(name, []):
                if site.line and found.may_go_unused(site.path):  # whether the file runs is weighed below
                    holders = enclosing(found.definitions_in(site.path), site.line)
                    candidates.setdefault(site.path, set()).update(holder for holder in holders if holder.name != name)
    weighed = {
        (path, definition)
        for path, defined in candidates.items()
        if path in found.running or path in found.imported
        for definition in defined
        if definition.name in searched
    }
    used = _used(weighed, candidates, found)
    dead = weighed - used
    return {
        path: kept
        for path, defined in definitions.items()
        if (kept := [definition for definition in defined if (_absolute(path), definition) in dead])
    }


def _used(weighed: set[tuple[str, Definition]], candidates: Mapping[str, set[Definition]], found: _References) -> set[tuple[str, Definition]]:
    """The weighed definitions some code that runs refers to: a least fixed point, so that
    definitions referring only to each other stay unused. A site counts when every weighed
    definition around it is used (outside its own definition: recursion uses nothing), and,
    for a definition of a script no Python file imports, when it is in that script (another
    file's `grid()` is another function) or in a file that is not Python."""
    used: set[tuple[str, Definition]] = set()
    changed = True
    while changed:
        changed = False
        for path, definition in weighed - used:
            for site in found.sites.get(definition.name, []):
                if site.line and site.path != path and path not in found.imported:
                    continue  # a script nothing imports: only its own code (or a configuration) names its functions
                around = [(site.path, holder) for holder in enclosing(candidates.get(site.path, ()), site.line)] if site.line else []
                if (site.path, definition) in around:
                    continue
                if all(holder in used or holder not in weighed for holder in around):
                    used.add((path, definition))
                    changed = True
                    break
    return used


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
    Python files whose definitions may go unused (`may_go_unused`), with every file of the
    checked folders' repositories (and the other checked `files`) read for references."""
    checked = [Path(_absolute(folder)) for folder in folders]
    territory = _Territory()
    definitions: dict[str, list[Definition]] = {}
    for path, lines in finding_lines.items():
        where = Path(_absolute(path))
        if where.suffix != ".py" or not territory.may_go_unused(where):
            continue
        found = top_level_definitions(_read(where))
        hit = {definition for line in lines for definition in enclosing(found, line)}
        if hit:
            definitions[path] = sorted(hit, key=lambda definition: definition.first)
    if not definitions:
        return set()
    projects = dict(_project(folder) for folder in checked)
    listed = list(projects.values())
    if len(projects) == 1 and listed[0] is not None:
        referring: list[Path] | None = listed[0]
    else:
        referring = referring_files(projects)
    if referring is None:
        return set()
    everything = [*referring, *(Path(path) for path in files)]
    scripts = [path for path in everything if territory.is_packaged_script(path)]
    dead = unreferenced(definitions, everything, lambda path: territory.may_go_unused(Path(path)), scripts)
    return {(path, line) for path, lines in finding_lines.items() for line in lines if enclosing(dead.get(path, []), line)}
