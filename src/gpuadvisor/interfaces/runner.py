"""Checking many files: cache lookups, and all cores for the files that need parsing.

A file whose parse kills its worker process (native parser crash) is re-run alone so it
is reported as an error of its own and every other file is still checked.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from gpuadvisor._safe_io import MAX_SOURCE_BYTES, UnsafeFile, read_regular
from gpuadvisor.analysis.checker import DEFAULT_TIME_BUDGET, Checker
from gpuadvisor.analysis.facts.project import ProjectContext, ProjectIndex, names_gpu, project_contexts
from gpuadvisor.analysis.findings.records import FileError, FileResult
from gpuadvisor.analysis.rules import ALL_RULES
from gpuadvisor.analysis.reading.source import SourceError
from gpuadvisor.interfaces.cache import ResultCache, content_digest

if TYPE_CHECKING:
    import multiprocessing.context

    from gpuadvisor.analysis.facts.observations import FileObservations

#: Below this many files, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 24

_checker: Checker | None = None
_cache: ResultCache | None = None


def _init_worker(
    cache: ResultCache | None,
    time_budget: float | None = DEFAULT_TIME_BUDGET,
    observations: Mapping[str, FileObservations] | None = None,
) -> None:
    global _checker, _cache
    _checker, _cache = Checker(ALL_RULES, time_budget, observations), cache


#: Memory one worker may add while analysing a file: real files need tens of megabytes; past
#: this, the allocation fails (a `too-complex` entry, or a crashed worker re-run alone).
MEMORY_CEILING_BYTES = 2 * 1024**3


def _limit_worker_memory() -> None:
    """Cap this worker's address space at what it holds now plus MEMORY_CEILING_BYTES (never in
    the host process: an API caller's limits are its own)."""
    try:
        import resource

        with open("/proc/self/statm", encoding="ascii") as statm:
            held = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        wanted = held + MEMORY_CEILING_BYTES
        if soft == resource.RLIM_INFINITY or soft > wanted:
            resource.setrlimit(resource.RLIMIT_AS, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard))
    except (ImportError, OSError, ValueError):
        pass  # not Linux: the structural guard is the only protection there


def _init_pool_worker(
    cache: ResultCache | None,
    time_budget: float | None = DEFAULT_TIME_BUDGET,
    observations: Mapping[str, FileObservations] | None = None,
) -> None:
    _limit_worker_memory()
    _init_worker(cache, time_budget, observations)



def read_source_file(path: str) -> bytes:
    """Read a regular file of reasonable size; a FIFO named `x.py` would block forever."""
    try:
        return read_regular(path, MAX_SOURCE_BYTES)
    except UnsafeFile as exc:
        reason = f"{exc}; skipped" if "regular" in str(exc) else f"{exc}, generated code is the usual reason"
        raise SourceError("read", reason) from None


def _names_gpu(path: str) -> bool:
    try:
        return names_gpu(read_source_file(path))
    except (OSError, SourceError):
        return False  # reported when the file is checked


def check_one(path: str, context: ProjectContext | None = None) -> FileResult:
    """Read, look up in the cache, else analyse (with every rule; selection happens later).
    `context`: what the other checked files say about this one (part of the cache key)."""
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
    if _cache is not None:
        cached = _cache.get(digest, path)
        if cached is not None:
            return cached
    result = _checker.check_bytes(data, path, context)
    if _cache is not None and not (result.error is not None and result.error.kind == "timeout"):
        _cache.put(digest, result)  # a timeout depends on the budget and the machine: not cached
    return result


Task = tuple[str, "ProjectContext | None"]


def _check_chunk(tasks: list[Task]) -> list[FileResult]:
    return [check_one(path, context) for path, context in tasks]


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


def _balanced_chunks(tasks: Sequence[Task], workers: int) -> list[list[Task]]:
    """Largest files first, in small chunks: no worker is left with a big file at the end."""

    def size(task: Task) -> int:
        try:
            return os.path.getsize(task[0])
        except OSError:
            return 0

    ordered = sorted(tasks, key=size, reverse=True)
    per_chunk = max(1, min(8, len(ordered) // (workers * 16)))
    return [ordered[i : i + per_chunk] for i in range(0, len(ordered), per_chunk)]


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
    gpu_project = any(_names_gpu(path) for path in paths)
    base = ProjectContext(gpu_project=True) if gpu_project else None  # what every file is told
    results = _run_tasks([(path, base) for path in paths], cache, jobs, time_budget, observations, report)
    alone = dict(results)  # each file's result with the base context: reused when its context empties
    # A file walked once keeps its exports even when a later pass skips it again (no array
    # library in it and nothing handed in any more): what it defines does not change.
    exports = {path: result.exports for path, result in results.items()}
    index = ProjectIndex(paths)
    given: dict[str, ProjectContext] = {}
    for _ in range(MAX_PROJECT_ROUNDS):
        wanted = {path: context for path, context in project_contexts(exports, index, gpu_project).items() if context != base}
        changed = [path for path in results if wanted.get(path) != given.get(path)]
        if not changed:
            break
        given = wanted
        results.update((path, alone[path]) for path in changed if path not in wanted)
        rerun = [(path, wanted[path]) for path in changed if path in wanted]
        for path, result in _run_tasks(rerun, cache, jobs, time_budget, observations, lambda done, total: None).items():
            results[path] = result
            exports[path] = result.exports or exports.get(path)
    return [results[path] for path in paths]


def _run_tasks(
    tasks: Sequence[Task],
    cache: ResultCache | None,
    jobs: int | None,
    time_budget: float | None,
    observations: Mapping[str, FileObservations] | None,
    report: Callable[[int, int], None],
) -> dict[str, FileResult]:
    """Analyse each (path, context), on all cores when there are enough files."""
    workers = jobs or os.cpu_count() or 1
    if workers <= 1 or len(tasks) < PARALLEL_THRESHOLD:
        _init_worker(cache, time_budget, observations)
        serial: dict[str, FileResult] = {}
        for path, context in tasks:
            serial[path] = check_one(path, context)
            report(len(serial), len(tasks))
        return serial
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    chunks = _balanced_chunks(tasks, workers)
    results: dict[str, FileResult] = {}
    crashed: list[Task] = []
    with ProcessPoolExecutor(workers, mp_context=_context(), initializer=_init_pool_worker, initargs=(cache, time_budget, observations)) as pool:
        futures = {pool.submit(_check_chunk, chunk): chunk for chunk in chunks}
        for future in as_completed(futures):
            try:
                for result in future.result():
                    results[result.path] = result
            except BrokenProcessPool:
                crashed.extend(futures[future])
            report(len(results), len(tasks))
    for task in crashed:
        results[task[0]] = _isolated(task, cache, time_budget, observations)
    return results
