"""Parsed files kept for the length of one run: a file walked again is not parsed again.

A project pass (`interfaces/runner.py`) walks 40-70% of a project's files a second time, with
what the other files say about them. Parsing (LibCST, after CPython's parser and the structural
guard) is more than half of a walk's cost and does not depend on that context, so a worker keeps
the trees it built and the runner sends each file back to the worker that parsed it.

LibCST trees are large (about 40 bytes of memory per character of source), so the memo admits
files until a budget of source characters is spent and then admits no more: the first files a
run parses are its largest (the runner hands them out first), which are also the ones a project
pass most often walks again and whose parse costs most.

Kept trees are millions of objects that Python's cycle collector would otherwise scan on every
full collection (a quarter of a worker's time, measured). They are moved out of its reach
(`gc.freeze`) once kept, after the garbage of the files before is collected, so that nothing but
live objects is frozen. Trees hold no reference cycles: one dropped later (a changed file) is
still freed. A worker process is ours alone; a run in the caller's own process freezes only when
it is as large as one that would go to workers (`--jobs 1` on a project) and nothing was frozen
before it, and `release` gives every object back to the collector at its end (`runner.py`): for
a few small files the collections cost more (each scans the caller's whole heap) than they spare.
"""

from __future__ import annotations

import gc

from gpuadvisor.analysis.reading.source import ParsedSource, parse_source

#: Memory a LibCST tree takes per character of its source (measured on library and project
#: code: 35-40 bytes), to turn a memory allowance into a budget of source characters.
TREE_BYTES_PER_CHAR = 40


class ParsedFiles:
    """`parse_source`, answered from memory for a file whose text has not changed since."""

    def __init__(self, budget_chars: int, freeze: bool = False) -> None:
        """`freeze`: take kept trees out of the cycle collector's scans (it freezes every object
        the process holds, until `release`)."""
        self._budget = budget_chars
        self._freeze = freeze
        self._held = 0
        self._parsed: dict[str, ParsedSource] = {}

    def parse(self, path: str, text: str) -> ParsedSource:
        """The parse of `text`, the file at `path`; raises SourceError as `parse_source` does
        (a file that cannot be parsed is not kept: its error is found again as fast)."""
        kept = self._parsed.get(path)
        if kept is not None and kept.text == text:
            return kept
        keep = self._held + len(text) - (len(kept.text) if kept is not None else 0) <= self._budget
        if keep and self._freeze:
            gc.collect()  # what the files before left behind, so that only live objects are frozen
        parsed = parse_source(text)
        if kept is not None:  # the file changed during the run: its old tree is of no use
            self._held -= len(kept.text)
            del self._parsed[path]
        if keep:
            self._parsed[path] = parsed
            self._held += len(text)
            if self._freeze:
                gc.freeze()
        return parsed

    def release(self) -> None:
        """Drop the kept trees, and give what was frozen back to the collector (in the caller's
        process, its own objects among them)."""
        self._parsed.clear()
        self._held = 0
        if self._freeze:
            gc.unfreeze()
