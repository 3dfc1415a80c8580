"""The Python API: `check_source` for a string, `check_paths` for files and folders."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuadvisor.analysis.checker import DEFAULT_TIME_BUDGET, Checker
from gpuadvisor.analysis.facts.references import in_unreferenced_code
from gpuadvisor.analysis.findings.records import FileError, FileResult, Finding, PredictionCandidate, Severity
from gpuadvisor.analysis.rules import ALL_RULES, resolve_codes, select_rules
from gpuadvisor.analysis.rules.unused_suppression import UnusedSuppression
from gpuadvisor.analysis.findings.speedups import DEFAULT_THRESHOLD, resolve_candidates
from gpuadvisor.interfaces.cache import ResultCache
from gpuadvisor.interfaces.config import Config, discover_config
from gpuadvisor.interfaces.discovery import discover
from gpuadvisor.interfaces.runner import check_files

__all__ = ["Finding", "FileError", "Report", "check_source", "check_paths"]


@dataclass
class Report:
    """The outcome of a run: findings of every file, files that could not be analysed."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    files: int = 0
    fail_on: Severity = Severity.WARNING
    #: Source text of inputs that are not files on disk (standard input), for display.
    sources: dict[str, str] = field(default_factory=dict)
    #: Source files inside the given folders that a .gitignore left out.
    gitignored: int = 0
    #: Findings left out because they lie in top-level code nothing in the checked project
    #: refers to (`facts/references.py`).
    unreferenced: int = 0

    @property
    def failed(self) -> bool:
        return bool(self.errors) or any(f.severity >= self.fail_on for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1,
            "findings": [f.to_dict() for f in self.findings],
            "errors": [e.to_dict() for e in self.errors],
            "summary": {
                "files": self.files, "findings": len(self.findings), "errors": len(self.errors),
                **({"gitignored": self.gitignored} if self.gitignored else {}),
                **({"unreferenced": self.unreferenced} if self.unreferenced else {}),
            },
        }


def _in_unreferenced_code(results: Iterable[FileResult], given: Iterable[str], files: Iterable[Path]) -> set[tuple[str, int]]:
    """Findings in top-level code nothing in the checked folders' project names (none when
    no folder was given: a list of files is not a whole project)."""
    folders = [Path(path) for path in given if path != "-" and Path(path).is_dir()]
    if not folders:
        return set()
    lines: dict[str, list[int]] = {}
    for result in results:
        for finding in (*result.findings, *(f for f, _ in result.candidates)):
            lines.setdefault(finding.path, []).append(finding.line)
    return in_unreferenced_code(lines, folders, [str(path) for path in files]) if lines else set()


def _split(selectors: str | Iterable[str] | None) -> list[str] | None:
    if selectors is None:
        return None
    if isinstance(selectors, str):
        selectors = selectors.split(",")
    return [s.strip() for s in selectors if s.strip()]


def chosen_rule_codes(layers: list[tuple[list[str], list[str], list[str]]]) -> set[str]:
    """The codes left after each (select, extend_select, ignore) layer, in order (config, then CLI).

    As in ruff, a layer's `select` replaces everything chosen before it, including what
    earlier layers ignored; `extend_select` adds to it; `ignore` removes.
    """
    chosen = {rule.code for rule in select_rules()}
    for select, extend, ignore in layers:
        if select:
            chosen = resolve_codes(select)
        chosen = (chosen | resolve_codes(extend)) - resolve_codes(ignore)
    return chosen


def _ordered(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.path, f.cell or 0, f.line, f.column, f.rule))


def _validate_hardware(gpu: str | None, cpu: str | None) -> None:
    """An unknown GPU/CPU name (on the command line or in the config) is reported before any
    file is read, not only once some file needs a prediction (HardwareError)."""
    if gpu is None and cpu in (None, "local"):
        return
    from gpuadvisor.prediction.hardware import resolve_cpu, resolve_gpu

    if gpu is not None:
        resolve_gpu(gpu)
    if cpu not in (None, "local"):
        resolve_cpu(cpu)


def check_source(
    source: str,
    path: str = "<string>",
    *,
    select: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    gpu: str | None = None,
    cpu: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[Finding]:
    """Findings for one piece of source code. Unparseable code raises ValueError.

    `gpu`/`cpu` name the hardware the speedup rules predict for (see `gpuadvisor hardware`).
    """
    chosen = select_rules(_split(select), _split(ignore))
    # GPU901 judges suppressions by what every rule finds, so then every rule runs.
    result = Checker(ALL_RULES if UnusedSuppression in chosen else chosen).check_text(source, path)
    if result.error is not None:
        line = f" (line {result.error.line})" if result.error.line else ""
        raise ValueError(f"{path}: {result.error.message}{line}")
    codes = {rule.code for rule in chosen}
    candidates = [(f, c) for f, c in result.candidates if f.rule in codes]
    return _ordered([f for f in result.findings if f.rule in codes] + resolve_candidates(candidates, gpu, cpu, threshold))


def check_paths(
    paths: Iterable[str | Path],
    *,
    select: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    use_config: bool = True,
    fail_on: str | Severity | None = None,
    cache: bool = True,
    jobs: int | None = None,
    stdin_filename: str = "-",
    gpu: str | None = None,
    cpu: str | None = None,
    threshold: float | None = None,
    file_budget: float | None = DEFAULT_TIME_BUDGET,
    shapes: str | Path | None = None,
    extend_select: str | Iterable[str] | None = None,
    extend_ignore: str | Iterable[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    follow_links: bool = False,
) -> Report:
    """Check files and folders (`"-"` reads standard input) and return one Report.

    `shapes` names a file written by `gpuadvisor profile`: the shapes its run saw stand in for
    what static analysis cannot know (files whose text changed since are checked without them).

    Rule selection works like ruff's: the configuration's `select`/`extend-select`/`ignore`/
    `extend-ignore` apply first, then these arguments; a `select` starts over (so `select`
    here turns on a code the configuration ignores), `extend_select` adds, the ignores remove.
    `progress(done, total)` is called as files finish.

    Raises `ConfigError` (exit code 2 in the CLI) for a broken configuration,
    `UnknownRuleError` for an unknown code in `select`/`ignore`, and `HardwareError` for an
    unknown `gpu`/`cpu` profile, and `ShapesFileError` for an unreadable shapes file.
    Symbolic links inside the given folders are followed only with `follow_links`.
    """
    observations = None
    if shapes is not None:
        from gpuadvisor.analysis.facts.observations import load_observations

        observations = load_observations(Path(shapes))
    given = [str(p) for p in paths]
    config = discover_config(given) if use_config else Config()
    _validate_hardware(gpu or config.gpu, cpu or config.cpu)
    chosen_codes = chosen_rule_codes([
        (list(config.select), list(config.extend_select), [*config.ignore, *config.extend_ignore]),
        (_split(select) or [], _split(extend_select) or [], [*(_split(ignore) or []), *(_split(extend_ignore) or [])]),
    ])
    failing = Severity.parse(fail_on) if isinstance(fail_on, str) else (fail_on or config.fail_on)
    report = Report(fail_on=failing)

    found = discover([p for p in given if p != "-"], config.is_excluded, follow_links)
    file_paths, report.errors, report.gitignored = found.files, found.errors, found.gitignored
    use_cache = cache and observations is None  # results then depend on more than the file's text
    result_cache = ResultCache.default() if use_cache else None
    results = check_files([str(p) for p in file_paths], result_cache, jobs, file_budget, observations, progress)
    if result_cache is not None:
        result_cache.trim()
    if "-" in given:
        text = sys.stdin.buffer.read()
        results.append(Checker(ALL_RULES, file_budget, observations).check_bytes(text, stdin_filename))
        report.sources[stdin_filename] = text.decode("utf-8", errors="replace")
    dead = _in_unreferenced_code(results, given, file_paths)
    candidates: list[tuple[Finding, PredictionCandidate]] = []
    for result in results:
        report.files += 1
        if result.error is not None:
            report.errors.append(result.error)
        report.unreferenced += sum(1 for f in result.findings if (f.path, f.line) in dead and f.rule in chosen_codes)
        report.findings.extend(f for f in result.findings if f.rule in chosen_codes and config.keeps(f) and (f.path, f.line) not in dead)
        candidates.extend((f, c) for f, c in result.candidates if f.rule in chosen_codes and config.keeps(f) and (f.path, f.line) not in dead)
    limit = threshold if threshold is not None else config.threshold or DEFAULT_THRESHOLD
    predicted = resolve_candidates(candidates, gpu or config.gpu, cpu or config.cpu, limit)
    report.findings = _ordered(report.findings + predicted)
    return report
