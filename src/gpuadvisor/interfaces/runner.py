"""Checking many files: cache lookups, and all cores for the files that need parsing.

A file whose parse kills its worker process (native parser crash) is re-run alone so it
is reported as an error of its own and every other file is still checked.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from gpuadvisor._safe_io import MAX_SOURCE_BYTES, UnsafeFile, read_regular
from gpuadvisor.analysis.checker import DEFAULT_TIME_BUDGET, Checker
from gpuadvisor.analysis.facts.project import ModuleExports, ProjectContext, ProjectIndex, names_gpu, project_contexts
from gpuadvisor.analysis.findings.records import FileError, FileResult
from gpuadvisor.analysis.prescan import imported_modules
from gpuadvisor.analysis.reading.parsed_files import TREE_BYTES_PER_CHAR, ParsedFiles
from gpuadvisor.analysis.rules import ALL_RULES
from gpuadvisor.analysis.reading.source import SourceError
from gpuadvisor.interfaces.cache import ResultCache, content_digest

if TYPE_CHECKING:
    import multiprocessing.context
    from concurrent.futures import ProcessPoolExecutor

    from gpuadvisor.interfaces.pool import StickyPool

    from gpuadvisor.analysis.facts.observations import FileObservations

#: Below this many files, starting worker processes costs more than it saves...
PARALLEL_THRESHOLD = 24
#: ... unless they hold this much code: the files a project pass walks again with what the rest
#: of the project says about them are few, but large (a fork costs milliseconds, this much
#: code a second).
PARALLEL_BYTES = 128 * 1024

#: Memory the trees kept for a second walk may take, all workers together (see
#: `analysis/reading/parsed_files.py`), and at most this share of the memory available at the start.
PARSED_TREES_BYTES = 2 * 1024**3
PARSED_TREES_SHARE_OF_AVAILABLE = 0.25

_checker: Checker | None = None
_cache: ResultCache | None = None


def _init_worker(
    cache: ResultCache | None,
    time_budget: float | None = DEFAULT_TIME_BUDGET,
    observations: Mapping[str, FileObservations] | None = None,
    parsed_chars: int = 0,
    freeze: bool = False,
) -> None:
    """`parsed_chars`: how much source this process keeps parsed for the rest of the run;
    `freeze`: take the kept trees out of the collector's scans (see ParsedFiles)."""
    global _checker, _cache
    _checker = Checker(ALL_RULES, time_budget, observations, ParsedFiles(parsed_chars, freeze) if parsed_chars else None)
    _cache = cache


#: Memory one worker may add while analysing a file: real files need tens of megabytes; past
#: this, the allocation fails (a `too-complex` entry, or a crashed worker re-run alone).
MEMORY_CEILING_BYTES = 2 * 1024**3


def _held_and_limit() -> tuple[int, int | None]:
    """This process's address space now, and the lowest limit set on it (None: no limit)."""
    import resource

    with open("/proc/self/statm", encoding="ascii") as statm:
        held = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limits = [limit for limit in resource.getrlimit(resource.RLIMIT_AS) if limit != resource.RLIM_INFINITY]
    return held, min(limits, default=None)


def _room_for_trees(kept_bytes: int) -> int:
    """`kept_bytes`, less where a limit set from outside (`ulimit -v`) leaves less: the
    analysis of a file keeps MEMORY_CEILING_BYTES for itself."""
    try:
        held, limit = _held_and_limit()
    except (ImportError, OSError, ValueError):
        return kept_bytes  # not Linux: no limit read
    return kept_bytes if limit is None else max(0, min(kept_bytes, limit - held - MEMORY_CEILING_BYTES))


def _limit_worker_memory(kept_bytes: int = 0) -> None:
    """Cap this worker's address space at what it holds now, plus the trees it may keep
    (`kept_bytes`, see `_room_for_trees`), plus MEMORY_CEILING_BYTES (never in the host
    process: an API caller's limits are its own)."""
    try:
        import resource

        held, _ = _held_and_limit()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        wanted = held + kept_bytes + MEMORY_CEILING_BYTES
        if soft == resource.RLIM_INFINITY or soft > wanted:
            resource.setrlimit(resource.RLIMIT_AS, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard))
    except (ImportError, OSError, ValueError):
        pass  # not Linux: the structural guard is the only protection there


def _init_pool_worker(
    cache: ResultCache | None,
    time_budget: float | None = DEFAULT_TIME_BUDGET,
    observations: Mapping[str, FileObservations] | None = None,
    parsed_chars: int = 0,
) -> None:
    kept_bytes = _room_for_trees(parsed_chars * TREE_BYTES_PER_CHAR)
    _limit_worker_memory(kept_bytes)
    _init_worker(cache, time_budget, observations, kept_bytes // TREE_BYTES_PER_CHAR, freeze=True)  # a process of ours alone


def _parsed_chars_per_worker(workers: int) -> int:
    """Each worker's share of the memory for kept trees, in characters of source."""
    allowed = PARSED_TREES_BYTES
    try:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        allowed = min(allowed, int(available * PARSED_TREES_SHARE_OF_AVAILABLE))
    except (OSError, ValueError, AttributeError):
        pass  # not reported here (macOS, Windows): the fixed allowance
    return allowed // TREE_BYTES_PER_CHAR // max(1, workers)


def read_source_file(path: str) -> bytes:
    """Read a regular file of reasonable size; a FIFO named `x.py` would block forever."""
    try:
        return read_regular(path, MAX_SOURCE_BYTES)
    except UnsafeFile as exc:
        reason = f"{exc}; skipped" if "regular" in str(exc) else f"{exc}, generated code is the usual reason"
        raise SourceError("read", reason) from None


def _names_gpu(path: str) -> bool:
    """The file names CUDA, which the whole project is then told (`names_gpu`)."""
    try:
        return names_gpu(read_source_file(path))
    except (OSError, SourceError):
        return False  # reported when the file is checked


def check_one(path: str, context: ProjectContext | None = None, parse: bool = False) -> FileResult:
    """Read, look up in the cache, else analyse (with every rule; selection happens later).
    `context`: what the other checked files say about this one (part of the cache key);
    `parse`: walk it even where the pre-scan would skip it (its exports are needed)."""
    global _checker
    if _checker is None:
        _checker = Checker(ALL_RULES)
    try:
        data = read_source_file(path)
    except OSError as exc:
        return FileResult(path, error=FileError(path, "read", f"cannot read file: {exc.strerror or exc}"))
    except SourceError as exc:
        return FileResult(path, error=FileError(path, exc.kind, exc.message))
    digest = content_digest(data) if _cache is not None else ""
    if _cache is not None and context:
        digest = content_digest(f"{digest}:{context!r}".encode())
    if _cache is not None and (parse or not _checker.prescan):
        digest = content_digest(f"{digest}:parsed".encode())  # a skipped file's entry has no exports
    if _cache is not None:
        cached = _cache.get(digest, path)
        if cached is not None:
            return cached
    result = _checker.check_bytes(data, path, context, parse)
    if _cache is not None and not (result.error is not None and result.error.kind == "timeout"):
        _cache.put(digest, result)  # a timeout depends on the budget and the machine: not cached
    return result


#: (path, context, parse even where the pre-scan would skip)
Task = tuple[str, "ProjectContext | None", bool]


def _check_chunk(tasks: list[Task]) -> list[FileResult]:
    return [check_one(path, context, parse) for path, context, parse in tasks]


def _context() -> multiprocessing.context.BaseContext:
    import multiprocessing  # imported here: single-file runs never start processes

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _isolated(
    task: Task, cache: ResultCache | None, time_budget: float | None, observations: Mapping[str, FileObservations] | None
) -> FileResult:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(1, mp_context=_context(), initializer=_init_pool_worker, initargs=(cache, time_budget, observations)) as pool:
            return pool.submit(_check_chunk, [task]).result()[0]
    except BrokenProcessPool:
        message = "the parser crashed on this file (its process died); the file was skipped"
        return FileResult(task[0], error=FileError(task[0], "crash", message))


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _imported_files(path: str, index: ProjectIndex) -> set[str]:
    """The checked files that `path` may import (see `prescan.imported_modules`)."""
    try:
        text = read_source_file(path).decode("utf-8", errors="replace")
    except (OSError, SourceError):
        return set()
    found = set()
    for module in imported_modules(text):
        # `.__module__` stands for any name inside: resolve() cuts a name down to its module.
        where = index.resolve(f"{module}__module__" if module.endswith(".") else f"{module}.__module__", path)
        if where is not None:
            found.add(where[0])
    return found


def _needed_skipped(
    exports: Mapping[str, ModuleExports | None], results: Mapping[str, FileResult], index: ProjectIndex, imports: dict[str, set[str]]
) -> list[str]:
    """Skipped files whose facts another file can use, so they must be walked after all:

    - a walked file refers to them (calls one of their functions, derives from or builds one of
      their classes, moves one to the GPU): their classes, results, pass-throughs and the calls
      they receive shape that file's findings and their own;
    - they import a walked file: a call they make into it from a loop or a training step tells
      that file how often its functions run.

    What is left is a group of files with no array library, device word or rule's need in them
    that neither reads from nor writes into the walked files: walking them finds nothing."""
    skipped = {path for path, found in exports.items() if found is None and results[path].error is None}
    if not skipped:
        return []
    walked = {path for path, found in exports.items() if found is not None}
    needed: set[str] = set()
    for path in walked:
        found = exports[path]
        assert found is not None
        names = [call.target for call in found.calls] + [name for name, _ in found.gpu_instances]
        names += [base for _, bases in found.bases for base in bases]
        for name in names:
            where = index.resolve(name, path)
            if where is not None and where[0] in skipped:
                needed.add(where[0])
    for path in skipped - needed:
        if path not in imports:
            imports[path] = _imported_files(path, index)
        if not imports[path].isdisjoint(walked):
            needed.add(path)
    return sorted(needed)


#: Passes over the files whose project context changed; each pass carries facts one call
#: further across files (a helper called from a helper called from the training loop).
MAX_PROJECT_ROUNDS = 4


def check_files(
    paths: Sequence[str],
    cache: ResultCache | None,
    jobs: int | None = None,
    time_budget: float | None = DEFAULT_TIME_BUDGET,
    observations: Mapping[str, FileObservations] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[FileResult]:
    """Results for every path, in the order given (`observations`: shapes seen by `profile`;
    with them, results depend on more than a file's text, so the cache must be off).
    `progress(done, total)` is called as files finish.

    Every file is analysed once on its own; then the files that the rest of the project
    tells something (a GPU value handed to one of their functions, a call from a training
    loop, a class moved to the GPU) are analysed again with that context, until it settles.
    """
    report = progress or (lambda done, total: None)
    gpu_project = any(_names_gpu(path) for path in paths)  # stops at the first file that names CUDA
    base = ProjectContext(gpu_project=gpu_project) or None  # what every file is told
    with _TaskRunner(paths, cache, jobs, time_budget, observations) as run_tasks:
        results = run_tasks([(path, base, False) for path in paths], report)
        index = ProjectIndex(paths)
        alone = dict(results)  # each file's result with the base context: reused when its context empties
        # A file walked once keeps its exports even when a later pass skips it again (no array
        # library in it and nothing handed in any more): what it defines does not change.
        exports = {path: result.exports for path, result in results.items()}
        imports: dict[str, set[str]] = {}

        def walk_needed() -> None:
            """Files the pre-scan skipped that the walked ones need (see `_needed_skipped`), walked
            with the base context, before the project contexts are computed from the exports."""
            while needed := _needed_skipped(exports, results, index, imports):
                for path, result in run_tasks([(path, base, True) for path in needed]).items():
                    results[path] = alone[path] = result
                    exports[path] = result.exports

        walk_needed()
        given: dict[str, ProjectContext] = {}
        for _ in range(MAX_PROJECT_ROUNDS):
            walk_needed()  # a walk with context may refer to more files (a module class's forward)
            checks_off = any(found is not None and found.turns_off_distribution_checks for found in exports.values())
            wanted = {path: context for path, context in project_contexts(exports, index, gpu_project, checks_off).items() if context != base}
            changed = [path for path in results if wanted.get(path) != given.get(path)]
            if not changed:
                break
            given = wanted
            results.update((path, alone[path]) for path in changed if path not in wanted)
            rerun = [(path, wanted[path], False) for path in changed if path in wanted]
            for path, result in run_tasks(rerun).items():
                results[path] = result
                exports[path] = result.exports or exports.get(path)
    return [results[path] for path in paths]


def _large_run(paths: Sequence[str], sizes: Mapping[str, int]) -> bool:
    """As many files, or as much code, as is worth worker processes (`sizes`: those already
    known, the rest are read here)."""
    return len(paths) >= PARALLEL_THRESHOLD or sum(sizes[path] if path in sizes else _size(path) for path in paths) >= PARALLEL_BYTES


class _TaskRunner:
    """Analyses batches of (path, context) for one `check_files` call: in this process for a
    few small files, else on worker processes kept for the whole call (`pool.StickyPool`), so
    that a file walked again goes back to the worker that holds its tree."""

    def __init__(
        self,
        paths: Sequence[str],
        cache: ResultCache | None,
        jobs: int | None,
        time_budget: float | None,
        observations: Mapping[str, FileObservations] | None,
    ) -> None:
        self._settings = (cache, time_budget, observations)
        workers = min(jobs or os.cpu_count() or 1, len(paths))
        self._sizes = {path: _size(path) for path in paths} if workers > 1 else {}
        self._pool: StickyPool[Task, FileResult] | None = None
        large = _large_run(paths, self._sizes)
        if workers <= 1 or not large:
            kept_chars = _room_for_trees(_parsed_chars_per_worker(1) * TREE_BYTES_PER_CHAR) // TREE_BYTES_PER_CHAR
            # Kept trees are frozen out of the collector's scans here only for a run as large as
            # one that would have gone to workers (`--jobs 1` on a project), and only when nothing
            # is frozen yet (given back at the run's end): for a few small files the collections
            # that come with freezing (each scans the caller's whole heap, a test session's or a
            # host program's) cost more than the scans of their trees they spare.
            _init_worker(*self._settings, kept_chars, freeze=large and gc.get_freeze_count() == 0)
            return
        from concurrent.futures import ProcessPoolExecutor  # imported here: single-file runs never start processes

        from gpuadvisor.interfaces.pool import StickyPool

        initargs = (*self._settings, _parsed_chars_per_worker(workers))

        def start() -> ProcessPoolExecutor:
            return ProcessPoolExecutor(1, mp_context=_context(), initializer=_init_pool_worker, initargs=initargs)

        self._pool = StickyPool(workers, _check_chunk, lambda task: task[0], start)

    def __call__(self, tasks: Sequence[Task], report: Callable[[int, int], None] = lambda done, total: None) -> dict[str, FileResult]:
        """The result of each task, by path; `report(done, total)` as they finish."""
        if self._pool is None:
            serial: dict[str, FileResult] = {}
            for path, context, parse in tasks:
                serial[path] = check_one(path, context, parse)
                report(len(serial), len(tasks))
            return serial
        done, crashed = self._pool.run(tasks, lambda task: self._sizes.get(task[0], 0), report)
        results = {result.path: result for result in done}
        for task in crashed:
            results[task[0]] = _isolated(task, *self._settings)
        return results

    def __enter__(self) -> _TaskRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        global _checker, _cache
        if self._pool is not None:
            self._pool.close()
        else:
            if _checker is not None and _checker.parsed_files is not None:
                _checker.parsed_files.release()
            _checker = _cache = None  # the trees this process kept, and the run's cache
