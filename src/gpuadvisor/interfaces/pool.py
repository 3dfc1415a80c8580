"""Worker processes that last a whole run, each one given back the files it checked before.

`check_files` checks every file once, then walks many of them again with what the rest of the
project says about them (`runner.py`). A worker keeps the trees it parsed (see
`analysis/reading/parsed_files.py`), so a file is sent back to the worker that parsed it; a
worker with nothing of its own left takes new files first, then the smallest files another
worker still has queued (parsing them again is cheaper than waiting).

Each worker is a one-process `ProcessPoolExecutor`: a worker that dies (LibCST's native parser
can crash the process) loses only its own chunks, which the caller re-runs one file at a time,
and is replaced by a fresh one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Generic, TypeVar

Task = TypeVar("Task")
Result = TypeVar("Result")

#: Chunks handed to a worker ahead of the one it is on, so it never waits for the next one.
_AHEAD = 2


class StickyPool(Generic[Task, Result]):
    """`workers` processes, each started by `initializer(*initargs)`, running `work(chunk)`."""

    def __init__(
        self,
        workers: int,
        work: Callable[[list[Task]], list[Result]],
        key: Callable[[Task], str],
        start: Callable[[], ProcessPoolExecutor],
    ) -> None:
        self._work, self._key, self._start = work, key, start
        self._executors = [start() for _ in range(workers)]
        self._owner: dict[str, int] = {}  # a task's key -> the worker that ran it last

    def run(
        self, tasks: Sequence[Task], size: Callable[[Task], int], report: Callable[[int, int], None]
    ) -> tuple[list[Result], list[Task]]:
        """The results of every task, and the tasks whose worker died (to be re-run alone).
        Largest first, in small chunks: no worker is left with a big file at the end."""
        workers = len(self._executors)
        per_chunk = max(1, min(8, len(tasks) // (workers * 16)))
        own: list[deque[Task]] = [deque() for _ in range(workers)]
        new: deque[Task] = deque()
        for task in sorted(tasks, key=size, reverse=True):
            owner = self._owner.get(self._key(task))
            (new if owner is None else own[owner]).append(task)

        def next_chunk(worker: int, steal: bool) -> list[Task]:
            queue = own[worker] or new
            if queue:
                return [queue.popleft() for _ in range(min(per_chunk, len(queue)))]
            busiest = max(own, key=len)
            return [busiest.pop() for _ in range(min(per_chunk, len(busiest)))] if steal else []

        in_flight: dict[Future[list[Result]], tuple[int, ProcessPoolExecutor, list[Task]]] = {}

        def feed(worker: int, steal: bool = True) -> None:
            executor = self._executors[worker]
            while sum(1 for w, _, _ in in_flight.values() if w == worker) < _AHEAD and (chunk := next_chunk(worker, steal)):
                in_flight[executor.submit(self._work, chunk)] = (worker, executor, chunk)

        results: list[Result] = []
        crashed: list[Task] = []
        for steal in (False, True):  # each worker starts on its own files, then helps the others
            for worker in range(workers):
                feed(worker, steal)
        while in_flight:
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                worker, executor, chunk = in_flight.pop(future)
                try:
                    results.extend(future.result())
                    self._owner.update((self._key(task), worker) for task in chunk)
                except BrokenProcessPool:
                    crashed.extend(chunk)
                    if self._executors[worker] is executor:  # its other chunks fail the same way
                        executor.shutdown(wait=False)
                        self._executors[worker] = self._start()
                report(len(results) + len(crashed), len(tasks))
                feed(worker)
        return results, crashed

    def close(self) -> None:
        """Stop the workers (and drop the trees they kept)."""
        for executor in self._executors:
            executor.shutdown(wait=True, cancel_futures=True)
