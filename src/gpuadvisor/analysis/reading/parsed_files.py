"""Parsed files kept for the length of one run: a file walked again is not parsed again.

A project pass (`interfaces/runner.py`) walks 40-70% of a project's files a second time, with
what the other files say about them. Parsing (LibCST, after CPython's parser and the structural
guard) is more than half of a walk's cost and does not depend on that context, so a worker keeps
the trees it built and the runner sends each file back to the worker that parsed it.

LibCST trees are large (about 40 bytes of memory per character of source), so the memo admits
files until a budget of source characters is spent and then admits no more: the first files a
run parses are its largest (the runner hands them out first), which are also the ones a project
pass most often walks again and whose parse costs most.
"""

from __future__ import annotations

from gpuadvisor.analysis.reading.source import ParsedSource, parse_source

#: Memory a LibCST tree takes per character of its source (measured on library and project
#: code: 35-40 bytes), to turn a memory allowance into a budget of source characters.
TREE_BYTES_PER_CHAR = 40


class ParsedFiles:
    """`parse_source`, answered from memory for a file whose text has not changed since."""

    def __init__(self, budget_chars: int) -> None:
        self._budget = budget_chars
        self._held = 0
        self._parsed: dict[str, ParsedSource] = {}

    def parse(self, path: str, text: str) -> ParsedSource:
        """The parse of `text`, the file at `path`; raises SourceError as `parse_source` does
        (a file that cannot be parsed is not kept: its error is found again as fast)."""
        kept = self._parsed.get(path)
        if kept is not None and kept.text == text:
            return kept
        parsed = parse_source(text)
        if kept is not None:  # the file changed during the run: its old tree is of no use
            self._held -= len(kept.text)
            del self._parsed[path]
        if self._held + len(text) <= self._budget:
            self._parsed[path] = parsed
            self._held += len(text)
        return parsed
