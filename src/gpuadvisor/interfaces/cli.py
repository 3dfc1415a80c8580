"""The `gpuadvisor` command.

Imports stay lazy per command so that `gpuadvisor check small.py` loads typer and LibCST
and nothing heavier (no NumPy, scikit-learn, torch or CuPy).
"""

from __future__ import annotations

import enum
import json
import sys
from typing import List, Optional

import typer

from gpuadvisor._version import __version__

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Will this array code be faster on a GPU? And what makes your GPU Python slow?",
    context_settings={"help_option_names": ["-h", "--help"]},
)


class OutputFormat(str, enum.Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


class ListFormat(str, enum.Enum):
    text = "text"
    json = "json"


def _fail(message: str) -> typer.Exit:
    typer.echo(f"gpuadvisor: error: {message}", err=True)
    return typer.Exit(2)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpuadvisor {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Will this array code be faster on a GPU? And what makes your GPU Python slow?"""


@app.command()
def check(
    paths: Optional[List[str]] = typer.Argument(None, help="Files or folders to check; `-` reads standard input. Default: `.`"),
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="Output format."),
    select: Optional[str] = typer.Option(None, help="Only these rule codes, prefixes or categories (comma separated)."),
    ignore: Optional[str] = typer.Option(None, help="Skip these rule codes, prefixes or categories (comma separated)."),
    no_config: bool = typer.Option(False, "--no-config", help="Ignore [tool.gpuadvisor] in pyproject.toml."),
    fail_on: Optional[str] = typer.Option(None, help="Lowest severity that makes the exit code 1: info, warning, error."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the per-file result cache."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: all cores)."),
    stdin_filename: str = typer.Option("-", help="Name to report for code read from standard input."),
) -> None:
    """Check Python files for GPU performance anti-patterns."""
    from gpuadvisor.analysis.rules import UnknownRuleError
    from gpuadvisor.interfaces.api import check_paths
    from gpuadvisor.interfaces.config import ConfigError
    from gpuadvisor.interfaces.reporters import RENDERERS

    targets = paths or ["."]
    try:
        report = check_paths(
            targets,
            select=select,
            ignore=ignore,
            use_config=not no_config,
            fail_on=fail_on,
            cache=not no_cache,
            jobs=jobs,
            stdin_filename=stdin_filename,
        )
    except (ConfigError, UnknownRuleError, ValueError) as exc:
        raise _fail(str(exc)) from None
    sys.stdout.write(RENDERERS[output_format.value](report))
    if report.files == 0 and report.errors:
        raise typer.Exit(2)  # nothing could be checked at all
    if report.files == 0 and output_format is OutputFormat.text:
        typer.echo("No Python files to check.", err=True)
    raise typer.Exit(1 if report.failed else 0)


@app.command()
def rules(output_format: ListFormat = typer.Option(ListFormat.text, "--format", "-f")) -> None:
    """List every rule: code, category, severity and a one-line summary."""
    from gpuadvisor.analysis.rules import ALL_RULES

    if output_format is ListFormat.json:
        rows = [
            {"code": r.code, "category": r.category, "severity": r.severity.label, "summary": r.summary}
            for r in ALL_RULES
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    width = max(len(r.category) for r in ALL_RULES)
    for rule in ALL_RULES:
        typer.echo(f"{rule.code}  {rule.category:<{width}}  {rule.severity.label:<7}  {rule.summary}")


@app.command()
def explain(code: str = typer.Argument(..., help="A rule code, e.g. GPU101, or a category.")) -> None:
    """Print a rule's full documentation: why it matters, bad and good examples, the fix."""
    from gpuadvisor.analysis.rules import ALL_RULES
    from gpuadvisor.interfaces.ruledocs import rule_doc

    wanted = code.strip()
    matches = [r for r in ALL_RULES if r.code == wanted.upper() or r.category == wanted.lower()]
    if not matches:
        raise _fail(f"unknown rule {code!r}; `gpuadvisor rules` lists them")
    for rule in matches:
        doc = rule_doc(rule.code)
        if doc is None:
            raise _fail(f"no documentation found for {rule.code} (broken installation?)")
        typer.echo(doc.text)


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
    add_help_option=False,
)
def bench(ctx: typer.Context) -> None:
    """Measure NumPy / SciPy / torch / CuPy operations on this machine and write CSV rows (--help for options)."""
    from gpuadvisor.bench.cli import main as bench_main

    raise typer.Exit(bench_main(list(ctx.args)))


def main() -> None:
    app(prog_name="gpuadvisor")
