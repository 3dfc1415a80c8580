"""What `check` does for `--fix`/`--diff`, `--add-noqa` and baselines (kept out of cli.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from gpuadvisor.interfaces.api import Report, _split, chosen_rule_codes
from gpuadvisor.interfaces.config import Config, discover_config


def _config(targets: list[str], no_config: bool) -> Config:
    return Config() if no_config else discover_config(targets)


def _fail(message: str) -> typer.Exit:
    typer.echo(f"gpuadvisor: error: {message}", err=True)
    return typer.Exit(2)


def run_fixes(
    targets: list[str],
    select: str | None,
    ignore: str | None,
    extend_select: str | None,
    extend_ignore: str | None,
    no_config: bool,
    unsafe: bool,
    show_diff: bool,
) -> bool:
    """Fix (or, with `show_diff`, print the fixes of) every file; True when anything was fixable."""
    from gpuadvisor.analysis.rules import UnknownRuleError
    from gpuadvisor.interfaces.config import ConfigError
    from gpuadvisor.interfaces.fixing import fix_paths

    try:
        config = _config(targets, no_config)
        chosen = chosen_rule_codes([  # the rules `check` would run, layered the same way
            (list(config.select), list(config.extend_select), [*config.ignore, *config.extend_ignore]),
            (_split(select) or [], _split(extend_select) or [], [*(_split(ignore) or []), *(_split(extend_ignore) or [])]),
        ])
        run = fix_paths(targets, config, unsafe=unsafe, show_diff=show_diff, select=sorted(chosen), ignore=[])
    except (ConfigError, UnknownRuleError) as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"cannot write a fixed file: {exc}") from None
    for text in run.diffs:
        sys.stdout.write(text)
    verb = "Would fix" if show_diff else "Fixed"
    message = f"{verb} {run.fixed} finding{'s' * (run.fixed != 1)} in {len(run.files)} file{'s' * (len(run.files) != 1)}."
    if run.unsafe_available:
        message += f" {run.unsafe_available} more with --unsafe-fixes."
    typer.echo(message, err=True)
    return run.fixed > 0


def adopt(report: Report, targets: list[str], no_config: bool, add_noqa: bool, baseline: str | None, write_to: str | None) -> None:
    """Apply `--write-baseline`, `--baseline` and `--add-noqa` to a finished report."""
    from gpuadvisor.interfaces.baseline import BaselineError, new_findings, read_baseline, write_baseline

    config = _config(targets, no_config)

    def relative(path: str) -> str:
        return path if path in report.sources else config.relative(Path(path))

    if write_to is not None:
        try:
            count = write_baseline(Path(write_to), report.findings, report.sources, relative)
        except OSError as exc:
            raise _fail(f"cannot write baseline {write_to}: {exc.strerror or exc}") from None
        typer.echo(f"Baseline of {count} finding{'s' * (count != 1)} written to {write_to}.", err=True)
        raise typer.Exit(0)
    if baseline is not None:
        try:
            known = read_baseline(Path(baseline))
        except BaselineError as exc:
            raise _fail(str(exc)) from None
        before = len(report.findings)
        report.findings = new_findings(report.findings, known, report.sources, relative)
        typer.echo(f"{before - len(report.findings)} finding(s) in the baseline not shown.", err=True)
    if add_noqa:
        from gpuadvisor.interfaces.noqa import add_noqa as comment_findings

        written, skipped = comment_findings(report.findings)
        note = f" ({skipped} could not be commented: notebooks, standard input or lines inside strings)" if skipped else ""
        typer.echo(f"Added {written} suppression comment{'s' * (written != 1)}{note}.", err=True)
        report.findings = []
