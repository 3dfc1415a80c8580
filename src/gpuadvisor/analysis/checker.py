"""Analyse one file: prefilter, parse once, gather facts once, run every rule, position findings."""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from dataclasses import replace
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import libcst as cst
from libcst.metadata import CodeRange

from gpuadvisor.analysis.findings.records import FileError, FileResult, Finding, PredictionCandidate
from gpuadvisor.analysis.findings.positions import resolve_positions
from gpuadvisor.analysis.rules.base import Report, Rule
from gpuadvisor.analysis.reading.source import MAX_CHAIN, SourceError, decode_source, ensure_valid_syntax, parse_source
from gpuadvisor.analysis.rules.unused_suppression import UnusedSuppression, suppression_findings
from gpuadvisor.analysis.reading.parsed_files import ParsedFiles
from gpuadvisor.analysis.reading.suppression import find_suppressions
from gpuadvisor.analysis.facts.project import ModuleExports, ProjectContext, module_exports, names_gpu, turns_off_distribution_checks
from gpuadvisor.analysis.facts.walker import FEW_ITERATIONS, gather_facts
from gpuadvisor.analysis.prescan import PreScan, enabled as prescan_enabled

if TYPE_CHECKING:  # needed only for notebooks and `--shapes`: kept off the start-up path
    from gpuadvisor.analysis.facts.observations import FileObservations
    from gpuadvisor.analysis.facts.watch import Seeds


#: Seconds a file may take by default: real files take milliseconds, the slowest library
#: modules a second; past this, a file is generated code that would hold up the whole run.
DEFAULT_TIME_BUDGET = 20.0


class Checker:
    """Runs a fixed set of rules over files; reusable across files (and worker processes)."""

    def __init__(
        self,
        rules: Sequence[type[Rule]],
        time_budget: float | None = DEFAULT_TIME_BUDGET,
        observations: Mapping[str, FileObservations] | None = None,
        parsed_files: ParsedFiles | None = None,
    ) -> None:
        self.rules = list(rules)
        #: GPU901 reads comments, not code: it never makes a file worth parsing.
        self._reports_unused = UnusedSuppression in self.rules
        self._prescan = PreScan([rule for rule in self.rules if rule is not UnusedSuppression])
        #: Off (GPUADVISOR_PRESCAN=off): every file is parsed, to compare findings with and without it.
        self.prescan = prescan_enabled()
        #: Seconds one file may take (None: no limit); enforced where a timer signal can be used.
        self.time_budget = time_budget
        #: Shapes recorded by `gpuadvisor profile`, by resolved path (`check --shapes FILE`).
        self.observations = observations or {}
        #: Trees kept from earlier checks of the same files in this run (None: parse every time).
        self.parsed_files = parsed_files

    def check_bytes(self, data: bytes, path: str, context: ProjectContext | None = None, parse: bool = False) -> FileResult:
        """`context`: what the other files of the checked project say about this one; `parse`:
        walk the file even when the pre-scan says no rule can fire (its exports are needed)."""
        try:
            if path.endswith(".ipynb"):
                return self._check_notebook(data, path, parse)
            text = decode_source(data)
        except SourceError as exc:
            return FileResult(path, error=FileError(path, exc.kind, exc.message, exc.line))
        except Exception as exc:  # a bug of ours must not hide the other files' results
            return FileResult(path, error=_internal_error(path, exc))
        return self.check_text(text, path, context, parse)

    def _check_notebook(self, data: bytes, path: str, parse: bool = False) -> FileResult:
        from gpuadvisor.analysis.reading.notebook import read_notebook

        try:
            notebook = read_notebook(data)
        except SourceError as exc:
            return FileResult(path, error=FileError(path, exc.kind, exc.message))
        result = self.check_text(notebook.text, path, parse=parse)
        if result.error is not None and result.error.line:
            cell, line = notebook.origin[min(result.error.line, len(notebook.origin)) - 1]
            message = f"{result.error.message} (cell {cell}, line {line})"
            return FileResult(path, error=replace(result.error, message=message, line=None))
        return FileResult(
            path,
            [_in_cell(finding, notebook.origin) for finding in result.findings],
            candidates=[(_in_cell(finding, notebook.origin), c) for finding, c in result.candidates],
            exports=result.exports,  # a notebook calls into the project's modules too
        )

    def check_text(self, text: str, path: str, context: ProjectContext | None = None, parse: bool = False) -> FileResult:
        saved_limit = sys.getrecursionlimit()
        # Chains up to `MAX_CHAIN` links nest that deep in the tree; the walk recurses per level.
        sys.setrecursionlimit(max(saved_limit, 8 * MAX_CHAIN))
        try:
            with _time_budget(self.time_budget):
                return self._check_text(text, path, context, parse)
        except FileTimeout:
            message = (
                f"analysing this file took more than {self.time_budget:g} s of CPU time and was stopped "
                "(generated code is the usual reason; `--file-budget` allows more)"
            )
            return FileResult(path, error=FileError(path, "timeout", message))
        finally:
            sys.setrecursionlimit(saved_limit)

    def may_skip(self, text: str, path: str, context: ProjectContext | None) -> bool:
        """No rule can fire on this file (`analysis/prescan.py`): only its syntax is checked.
        A run's shapes, or anything another file tells (beyond "the project names CUDA", which
        only matters where a training step calls `.backward()`), make any file a candidate."""
        if not self.prescan or (context and replace(context, gpu_project=False, distribution_checks_off=False)):
            return False
        observed = bool(self.observations) and os.path.realpath(path) in self.observations
        # a file that turns the distribution checks off says so in its exports, which a skipped file has none of
        return not observed and not self._prescan.admits(text) and not turns_off_distribution_checks(text)

    def _check_text(self, text: str, path: str, context: ProjectContext | None, parse: bool = False) -> FileResult:
        try:
            if not parse and self.may_skip(text, path, context):
                ensure_valid_syntax(text)
                return FileResult(path, self._unused_suppressions(text, path))
            parsed = parse_source(text) if self.parsed_files is None else self.parsed_files.parse(path, text)
        except SourceError as exc:
            return FileResult(path, error=FileError(path, exc.kind, exc.message, exc.line))
        try:
            findings, exports = self._run_rules(parsed.module, text, path, context)
        except FileTimeout:
            raise
        except Exception as caught:
            # Code CPython refuses: its verdict, not our bug.
            error = parsed.cpython_error if parsed.cpython_error is not None else caught
            if isinstance(error, SourceError):
                return FileResult(path, error=FileError(path, error.kind, error.message, error.line))
            if isinstance(error, RecursionError):
                return FileResult(path, error=FileError(path, "too-complex", "code nested or chained too deeply to analyse"))
            if isinstance(error, MemoryError):
                return FileResult(path, error=FileError(path, "too-complex", "analysing this file needed more memory than a file may use"))
            return FileResult(path, error=_internal_error(path, error))  # a bug of ours must not hide the other files
        return replace(self._suppressed(text, path, findings), exports=exports)

    def _suppressed(self, text: str, path: str, findings: list[tuple[Finding, PredictionCandidate | None]]) -> FileResult:
        """Findings that no suppression comment hides, plus GPU901's findings when it runs. Most
        files have no finding: their comments are only read when GPU901 asks for them (reading
        them tokenizes the file, about a seventh of a cold check's parse time)."""
        if not findings and not self._reports_unused:
            return FileResult(path, [])
        suppressions = find_suppressions(text)
        kept = [(f, c) for f, c in findings if not suppressions.hides(f)]
        unused = suppression_findings(suppressions, path) if self._reports_unused else []
        return FileResult(
            path,
            sorted([f for f, candidate in kept if candidate is None] + unused, key=lambda f: (f.line, f.column, f.rule)),
            candidates=[(f, c) for f, c in kept if c is not None],
        )

    def _unused_suppressions(self, text: str, path: str) -> list[Finding]:
        """A file no rule parses has no findings: every suppression comment in it is unused."""
        return suppression_findings(find_suppressions(text), path) if self._reports_unused else []

    def _run_rules(
        self, module: cst.Module, text: str, path: str, context: ProjectContext | None
    ) -> tuple[list[tuple[Finding, PredictionCandidate | None]], ModuleExports]:
        checks_off = turns_off_distribution_checks(text)
        if context is None:  # a file checked alone speaks for its project
            context = ProjectContext(gpu_project=names_gpu(text), distribution_checks_off=checks_off) or None
        facts = gather_facts(module, path, self._observed_values(module, text, path), context, text)
        exports = replace(module_exports(facts), turns_off_distribution_checks=checks_off)
        reports: list[tuple[type[Rule], Report]] = []
        for rule in self.rules:
            reports.extend((rule, report) for report in rule().check(facts))
        if not reports:
            return [], exports
        reported = {r.node for _, r in reports} | {r.end_node for _, r in reports if r.end_node is not None}
        positions = resolve_positions(module, text, reported, facts.statement_of)
        unique: dict[tuple[object, ...], tuple[Finding, PredictionCandidate | None]] = {}
        measured = self._measured_statements(module, text, path)
        for rule, report in reports:
            finding = _finding(path, rule, report, positions)
            candidate = report.candidate
            if candidate is not None and finding.line in measured:
                first, seconds = measured[finding.line]
                candidate = replace(candidate, measured_cpu_seconds=seconds, measured_statement=first)
            unique.setdefault((finding.line, finding.column, finding.rule, finding.message), (finding, candidate))
        return sorted(unique.values(), key=lambda pair: (pair[0].line, pair[0].column, pair[0].rule)), exports

    def _measured_statements(self, module: cst.Module, text: str, path: str) -> dict[int, tuple[int, float]]:
        """Line -> (its statement's first line, seconds per run as `profile` measured it), for
        the statements of this file that profile ran (nothing when the file changed since)."""
        observed = self.observations.get(os.path.realpath(path)) if self.observations else None
        if observed is None:
            return {}
        from gpuadvisor.analysis.facts.observations import text_digest
        from gpuadvisor.analysis.facts.watch import statement_lines

        if observed.digest != text_digest(text):
            return {}
        return {
            line: (first, record.seconds / record.hits)
            for line, first in statement_lines(module).items()
            if (record := observed.lines.get(first)) is not None and record.hits
        }


    def _observed_values(self, module: cst.Module, text: str, path: str) -> Seeds | None:
        """What `profile` saw the names of this file hold (the most time-consuming shapes of
        each line) and which lines ran more than a handful of times; nothing when the file changed since, as its lines may not match any more."""
        observed = self.observations.get(os.path.realpath(path)) if self.observations else None
        if observed is None:
            return None
        from gpuadvisor.analysis.facts.observations import most_common, text_digest
        from gpuadvisor.analysis.facts.watch import seed_values, spread_to_lines

        if observed.digest != text_digest(text):
            return None

        by_statement = {line: seen for line, record in observed.lines.items() if (seen := most_common(record))}
        often = {line: () for line, record in observed.lines.items() if record.hits > FEW_ITERATIONS}
        return seed_values(module, spread_to_lines(module, by_statement), spread_to_lines(module, often))


class FileTimeout(Exception):
    """Raised by the timer when a file's analysis runs past its budget."""


#: Budgets beyond this many seconds are no budget (`--file-budget inf`, `1e300`).
_LONGEST_BUDGET = 86_400.0


@contextmanager
def _time_budget(seconds: float | None) -> Iterator[None]:
    """Interrupt the analysis after `seconds` of this process's own CPU time (ITIMER_PROF), so
    the verdict does not depend on how busy the machine is or whether the process was paused.
    Used where a timer signal can be (the main thread of a Unix process: the CLI and its
    workers). LibCST's native parse cannot be interrupted, which is why pathological shapes
    are refused before it runs (see `guard.py`)."""
    usable = (
        seconds is not None
        and 0 < seconds <= _LONGEST_BUDGET  # also False for NaN
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_PROF)[0] == 0  # never steal a timer someone else set
    )
    if not usable:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise FileTimeout()

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)  # type: ignore[arg-type]
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _internal_error(path: str, exc: Exception) -> FileError:
    message = f"gpuadvisor failed on this file ({type(exc).__name__}: {exc}); please report it"
    return FileError(path, "internal", message)


def _in_cell(finding: Finding, origin: list[tuple[int, int]]) -> Finding:
    cell, line = origin[finding.line - 1]
    end_cell, end_line = origin[finding.end_line - 1]
    return replace(finding, cell=cell, line=line, end_line=end_line if end_cell == cell else line)


def _finding(path: str, rule: type[Rule], report: Report, positions: Mapping[cst.CSTNode, CodeRange]) -> Finding:
    start = positions[report.node]
    end = positions[report.end_node] if report.end_node is not None else start
    return Finding(
        path=path,
        line=start.start.line,
        column=start.start.column,
        end_line=end.end.line,
        end_column=end.end.column,
        rule=rule.code,
        category=rule.category,
        severity=report.severity or rule.severity,
        message=report.message,
        suggestion=report.suggestion,
    )
