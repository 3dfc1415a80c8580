"""The `gpuadvisor` command.

Imports stay lazy per command so that `gpuadvisor check small.py` loads typer and LibCST
and nothing heavier (no NumPy, scikit-learn, torch or CuPy).
"""

from __future__ import annotations

import errno
import enum
import gc
import math
import os
import sys
from typing import Any, List, Optional

import typer

from gpuadvisor._safe_io import dumps_json
from gpuadvisor._version import __version__

#: The `gpuadvisor` group's settings, shared with the one-command app `main` starts.
_APP_SETTINGS: dict[str, Any] = {
    "add_completion": False,
    "no_args_is_help": True,
    "help": "Will this array code be faster on a GPU? And what makes your GPU Python slow?",
    "context_settings": {"help_option_names": ["-h", "--help"]},
}
app = typer.Typer(**_APP_SETTINGS)


class OutputFormat(str, enum.Enum):
    text = "text"
    concise = "concise"
    json = "json"
    sarif = "sarif"
    github = "github"
    html = "html"


class Color(str, enum.Enum):
    auto = "auto"
    always = "always"
    never = "never"


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


_SELECTION_HELP = "rule codes, prefixes (GPU2) or categories; comma separated or repeated"


def _joined(values: Optional[List[str]]) -> Optional[str]:
    """Repeated options merge: `--select GPU1 --select GPU2` is `--select GPU1,GPU2`."""
    return ",".join(values) if values else None


@app.command()
def check(
    paths: Optional[List[str]] = typer.Argument(None, help="Files or folders to check; `-` reads standard input. Default: `.`"),
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", "--output-format", "-f", help="Output format (concise: one line per finding)."),
    select: Optional[List[str]] = typer.Option(None, help=f"Only these {_SELECTION_HELP}; replaces the configuration's selection."),
    extend_select: Optional[List[str]] = typer.Option(None, help=f"Also these {_SELECTION_HELP}, on top of the selection."),
    ignore: Optional[List[str]] = typer.Option(None, help=f"Skip these {_SELECTION_HELP}."),
    extend_ignore: Optional[List[str]] = typer.Option(None, help=f"Also skip these {_SELECTION_HELP}."),
    no_config: bool = typer.Option(False, "--no-config", help="Ignore the \\[tool.gpuadvisor] table of pyproject.toml."),
    fail_on: Optional[str] = typer.Option(None, help="Lowest severity that makes the exit code 1: info, warning, error."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the per-file result cache."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: all cores)."),
    stdin_filename: str = typer.Option("-", help="Name to report for code read from standard input."),
    gpu: Optional[str] = typer.Option(None, help="GPU to predict speedups for: profile name or TOML/JSON file (default: this machine's GPU, else h100-sxm)."),
    cpu: Optional[str] = typer.Option(None, help="CPU to compare with: profile name, file, or `local` (default)."),
    min_speedup: Optional[float] = typer.Option(None, min=0.0, help="Predicted speedup from which an operation is a gpu-candidate (default 3)."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when findings are reported (usage errors still exit 2)."),
    file_budget: Optional[float] = typer.Option(None, "--file-budget", min=0.1, help="Seconds one file may take before it becomes a `timeout` error entry (default 20)."),
    fix: bool = typer.Option(False, "--fix", help="Apply the safe automatic fixes, then report what is left."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="With --fix or --diff: also apply fixes that may change behaviour."),
    diff: bool = typer.Option(False, "--diff", help="Print the fixes as a unified diff and change nothing (exit 1 if there are any)."),
    add_noqa: bool = typer.Option(False, "--add-noqa", help="Add `# gpuadvisor: ignore[CODE]` to the line of every finding."),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Report only findings not recorded in this baseline FILE."),
    write_baseline: Optional[str] = typer.Option(None, "--write-baseline", help="Record every current finding in FILE (for --baseline) and exit 0."),
    follow_links: bool = typer.Option(False, "--follow-links", help="Follow symbolic links inside the given folders (by default they are skipped: a link may lead anywhere)."),
    shapes: Optional[str] = typer.Option(None, "--shapes", help="Shapes recorded by `gpuadvisor profile` (its --save-shapes file): predictions for arrays whose shapes only a run can tell."),
    statistics: bool = typer.Option(False, "--statistics", help="Print a count per rule instead of the findings (text or json)."),
    output_file: Optional[str] = typer.Option(None, "--output-file", "-o", help="Write the report to FILE instead of standard output."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print the findings only: no summary line, no progress."),
    silent: bool = typer.Option(False, "--silent", "-s", help="Print nothing; only the exit code tells."),
    color: Color = typer.Option(Color.auto, "--color", help="Colour the text output: auto (a terminal, unless NO_COLOR; FORCE_COLOR forces it), always, never."),
) -> None:
    """Check Python files for GPU performance anti-patterns."""
    from gpuadvisor.analysis.checker import DEFAULT_TIME_BUDGET
    from gpuadvisor.analysis.rules import UnknownRuleError
    from gpuadvisor.interfaces.api import check_paths
    from gpuadvisor.interfaces.config import ConfigError
    from gpuadvisor.interfaces.reporters import render_report
    from gpuadvisor.interfaces.terminal import CheckProgress, wants_color
    from gpuadvisor.prediction.errors import HardwareError, TrainingStackMissing

    targets = paths or ["."]
    if fix or diff:
        from gpuadvisor.interfaces.adoption import run_fixes

        if run_fixes(
            targets, _joined(select), _joined(ignore), _joined(extend_select), _joined(extend_ignore), no_config, unsafe_fixes, diff
        ) and diff:
            raise typer.Exit(1)
        if diff:
            raise typer.Exit(0)
    progress = CheckProgress(enabled=not (quiet or silent))
    try:
        report = check_paths(
            targets,
            select=_joined(select),
            ignore=_joined(ignore),
            extend_select=_joined(extend_select),
            extend_ignore=_joined(extend_ignore),
            use_config=not no_config,
            fail_on=fail_on,
            cache=not no_cache,
            jobs=jobs,
            stdin_filename=stdin_filename,
            gpu=gpu,
            cpu=cpu,
            threshold=min_speedup,
            file_budget=file_budget or DEFAULT_TIME_BUDGET,
            shapes=shapes,
            progress=progress.update,
            follow_links=follow_links,
        )
    # ValueError also covers a bad `--shapes` file (ShapesFileError), whose module only
    # `--shapes` needs: it stays off the start-up path.
    except (ConfigError, UnknownRuleError, HardwareError, ValueError, TrainingStackMissing) as exc:
        raise _fail(str(exc)) from None
    finally:
        progress.close()
    if add_noqa or baseline or write_baseline:
        from gpuadvisor.interfaces.adoption import adopt

        adopt(report, targets, no_config, add_noqa, baseline, write_baseline)
    use_color = output_file is None and wants_color(color.value, sys.stdout)
    rendered = render_report(report, output_format.value, statistics=statistics, summary=not quiet, color=use_color)
    if output_file is not None:
        try:
            with open(output_file, "w", encoding="utf-8") as handle:
                handle.write(rendered)
        except OSError as exc:
            raise _fail(f"cannot write {output_file}: {exc.strerror or exc}") from None
    elif not silent:
        sys.stdout.write(rendered)
    if report.files == 0 and report.errors:
        raise typer.Exit(2)  # nothing could be checked at all
    if report.files == 0 and output_format is OutputFormat.text and not (quiet or silent):
        typer.echo("No Python files to check.", err=True)
    raise typer.Exit(1 if report.failed and not exit_zero else 0)


@app.command()
def rules(output_format: ListFormat = typer.Option(ListFormat.text, "--format", "-f")) -> None:
    """List every rule: code, category, severity and a one-line summary."""
    from gpuadvisor.analysis.rules import ALL_RULES

    if output_format is ListFormat.json:
        rows = [
            {"code": r.code, "category": r.category, "severity": r.severity.label, "summary": r.summary}
            for r in ALL_RULES
        ]
        typer.echo(dumps_json(rows, indent=2))
        return
    width = max(len(r.category) for r in ALL_RULES)
    for rule in ALL_RULES:
        typer.echo(f"{rule.code}  {rule.category:<{width}}  {rule.severity.label:<7}  {rule.summary}")


@app.command()
def explain(code: str = typer.Argument(..., help="A rule code (GPU101), a code prefix (GPU2: lists its rules) or a category.")) -> None:
    """Print a rule's full documentation: why it matters, bad and good examples, the fix."""
    from gpuadvisor.analysis.rules import ALL_RULES, UnknownRuleError, resolve_codes
    from gpuadvisor.interfaces.ruledocs import rule_doc

    wanted = code.strip()
    try:
        codes = resolve_codes([wanted]) if wanted else set()
    except UnknownRuleError as exc:
        raise _fail(str(exc)) from None
    matches = [r for r in ALL_RULES if r.code in codes]
    if not matches:
        raise _fail(f"unknown rule {code!r}; `gpuadvisor rules` lists them")
    is_category = wanted.lower() in {r.category for r in ALL_RULES}
    if len(matches) > 1 and not is_category:  # a prefix, as `--select GPU2` takes it
        typer.echo(f"{len(matches)} rules match {wanted!r} (`gpuadvisor explain CODE` prints one):")
        for rule in matches:
            typer.echo(f"  {rule.code}  {rule.category}  {rule.summary}")
        return
    for rule in matches:
        doc = rule_doc(rule.code)
        if doc is None:
            raise _fail(f"no documentation found for {rule.code} (broken installation?)")
        typer.echo(doc.text)


class DataOn(str, enum.Enum):
    host = "host"
    device = "device"


class Library(str, enum.Enum):
    numpy = "numpy"
    torch = "torch"


def _parse_shape(text: str) -> tuple[int, ...]:
    from gpuadvisor.prediction.costs import LARGEST_ELEMENT_COUNT

    try:
        dims = tuple(int(part) for part in text.lower().replace(",", "x").split("x") if part.strip())
    except ValueError:
        raise _fail(f"bad --shape {text!r}: use sizes joined by x, e.g. 4096x4096") from None
    if not dims or any(d <= 0 for d in dims):
        raise _fail(f"bad --shape {text!r}: sizes must be positive integers")
    if math.prod(dims) > LARGEST_ELEMENT_COUNT:
        raise _fail(f"bad --shape {text!r}: more than {LARGEST_ELEMENT_COUNT:.0e} elements is no array any machine holds")
    return dims


@app.command()
def predict(
    op: Optional[str] = typer.Argument(None, help="Operation, e.g. matmul, fft2, sum (see --list-ops)."),
    shape: Optional[List[str]] = typer.Option(None, "--shape", "-s", help="Operand shape like 4096x4096; repeat per operand."),
    dtype: str = typer.Option("float32", help="float16, bfloat16, float32, float64, complex64 or complex128."),
    gpu: str = typer.Option("h100-sxm", help="GPU profile name or TOML/JSON file (`gpuadvisor hardware`)."),
    cpu: str = typer.Option("local", help="CPU profile name, TOML/JSON file, or `local` (this machine)."),
    data_on: DataOn = typer.Option(DataOn.host, help="host: inputs start on the host and results come back; device: data already on the GPU."),
    expr: Optional[str] = typer.Option(None, "--expr", help="Elementwise NumPy-style expression, e.g. 'sin(x)**2 + cos(x)**2'."),
    axis: Optional[int] = typer.Option(None, help="Axis for reductions (default: all elements), sort, softmax, fft, concat."),
    density: float = typer.Option(0.01, help="Fraction of non-zeros for sparse_matmul."),
    library: Library = typer.Option(Library.numpy, help="numpy: NumPy/SciPy on the CPU vs CuPy; torch: PyTorch on the CPU vs on CUDA."),
    output_format: ListFormat = typer.Option(ListFormat.text, "--format", "-f"),
    list_ops: bool = typer.Option(False, "--list-ops", help="List the operations and exit."),
    tf32: bool = typer.Option(False, "--tf32", help="float32 matrix products run on TF32 tensor cores (torch allow_tf32 / matmul precision 'high')."),
    full_matrices: bool = typer.Option(True, "--full-matrices/--thin", help="svd: full U and V (NumPy's and torch's default) or reduced."),
    compute_uv: bool = typer.Option(True, "--compute-uv/--no-compute-uv", help="svd, eig, eigh: vectors too (default) or values only."),
    sweep: bool = typer.Option(False, "--sweep", help="Predict over sizes from tiny to huge and report the crossover size."),
    plot: Optional[str] = typer.Option(None, "--plot", help="With --sweep: draw the curves to FILE.svg (or .png with matplotlib)."),
) -> None:
    """Predict CPU time, GPU time, copy time and the speedup of one array operation."""
    from gpuadvisor.ops.registry import OPS
    from gpuadvisor.prediction.errors import CostError, HardwareError, TrainingStackMissing

    if list_ops:
        for entry in OPS.values():
            typer.echo(f"{entry.name:<14} {entry.description}")
        return
    name = "expr" if expr is not None and op in (None, "expr") else op
    if name is None:
        raise _fail("name an operation (gpuadvisor predict matmul --shape 4096x4096 --shape 4096x4096) or give --expr")
    if plot is not None and not sweep:
        raise _fail("--plot draws a --sweep; add --sweep")
    if sweep:
        _predict_sweep(name, dtype, gpu, cpu, data_on.value, expr, density, output_format, plot)
        return
    shapes = [_parse_shape(text) for text in shape or []]
    from gpuadvisor.prediction.predictor import predict as run_prediction

    try:
        result = run_prediction(
            name, shapes, dtype, gpu, cpu, data_on.value, expression=expr, axis=axis, density=density,
            library=library.value, tf32=tf32, full_matrices=full_matrices, compute_uv=compute_uv,
        )
    except (CostError, HardwareError, ValueError, TrainingStackMissing) as exc:
        raise _fail(str(exc)) from None
    if output_format is ListFormat.json:
        typer.echo(dumps_json(result.to_dict(), indent=2))
        return
    from gpuadvisor.interfaces.reporters.prediction import render_prediction

    typer.echo(render_prediction(result))


def _predict_sweep(
    op: str, dtype: str, gpu: str, cpu: str, data_on: str, expr: str | None, density: float, output_format: ListFormat, plot: str | None
) -> None:
    from gpuadvisor.interfaces.reporters.prediction import render_sweep, sweep_chart
    from gpuadvisor.prediction.costs import CostError
    from gpuadvisor.prediction.hardware import HardwareError, resolve_cpu, resolve_gpu
    from gpuadvisor.prediction.sweep import sweep as run_sweep

    try:
        result = run_sweep(op, dtype, resolve_gpu(gpu), resolve_cpu(cpu), data_on, expr, density)
    except (CostError, HardwareError, ValueError) as exc:
        raise _fail(str(exc)) from None
    if output_format is ListFormat.json:
        typer.echo(dumps_json({
            "op": op, "crossover": result.crossover, "crossover_compute_only": result.crossover_compute_only,
            "predictions": [p.to_dict() for p in result.predictions],
        }, indent=2))
    else:
        typer.echo(render_sweep(result))
    if plot is not None:
        svg = sweep_chart(result)
        try:
            if plot.lower().endswith(".png"):
                _write_png(result, plot)
            else:
                with open(plot, "w", encoding="utf-8") as handle:
                    handle.write(svg)
        except OSError as exc:
            raise _fail(f"cannot write {plot}: {exc}") from None
        typer.echo(f"chart written to {plot}", err=True)


def _write_png(result: object, path: str) -> None:
    """PNG output needs matplotlib (optional); SVG needs nothing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise _fail("PNG output needs matplotlib (pip install matplotlib); --plot FILE.svg works without it") from None
    from gpuadvisor.interfaces.reporters.prediction import sweep_series

    title, series, crossover = sweep_series(result)  # type: ignore[arg-type]
    figure, axes = plt.subplots(figsize=(8, 4.6))
    for name, points in series.items():
        axes.loglog([x for x, _ in points], [y for _, y in points], label=name, linewidth=2)
    if crossover is not None:
        axes.axvline(crossover[0], color="#d62728", linestyle="--", label=crossover[1])
    axes.set_title(title)
    axes.set_ylabel("seconds per call")
    axes.legend()
    figure.savefig(path, dpi=120, bbox_inches="tight")


@app.command()
def hardware(output_format: ListFormat = typer.Option(ListFormat.text, "--format", "-f")) -> None:
    """List the GPU and CPU profiles that --gpu / --cpu accept."""
    from dataclasses import asdict

    from gpuadvisor.prediction.hardware import catalog
    from gpuadvisor.prediction.local import local_cpu

    gpus, cpus = catalog()
    local = local_cpu()
    if output_format is ListFormat.json:
        data = {"gpus": [asdict(g) for g in gpus.values()], "cpus": [asdict(c) for c in (*cpus.values(), local)]}
        typer.echo(dumps_json(data, indent=2))
        return
    typer.echo("GPUs (--gpu)            fp32 TF  fp64 TF  fp16 TF  mem GB/s  memory  host link GB/s")
    for g in gpus.values():
        typer.echo(
            f"  {g.key:<20} {g.fp32_tflops:>8.1f} {g.fp64_tflops:>8.2f} {g.fp16_tflops:>8.0f} {g.mem_bandwidth_gbs:>9.0f} "
            f"{g.memory_gb:>5.0f} GB {g.host_link_gbs:>10.1f}   {g.name}"
        )
    typer.echo("\nCPUs (--cpu)        cores  fp32 GF  fp64 GF  mem GB/s")
    for c in (*cpus.values(), local):
        typer.echo(f"  {c.key:<17} {c.cores:>6} {c.fp32_gflops:>8.0f} {c.fp64_gflops:>8.0f} {c.mem_bandwidth_gbs:>9.0f}   {c.name}")
    typer.echo("\nOr pass a TOML/JSON file with the same keys (see README).")


@app.command()
def calibrate() -> None:
    """Measure this machine's CPU (BLAS GFLOP/s, memory bandwidth) for `--cpu local` (about 10 s)."""
    from gpuadvisor.prediction.local import calibrate as run_calibration, calibration_file

    typer.echo("Measuring matrix products and memory copies on this CPU ...")
    try:
        profile = run_calibration()
    except OSError as exc:
        raise _fail(f"the measurement could not be saved to {calibration_file()}: {exc.strerror or exc}") from None
    typer.echo(
        f"{profile.name}, {profile.cores} cores: {profile.fp32_gflops:.0f} GFLOP/s fp32, "
        f"{profile.fp64_gflops:.0f} GFLOP/s fp64, {profile.mem_bandwidth_gbs:.1f} GB/s\nsaved to {calibration_file()}"
    )


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
    add_help_option=False,
)
def bench(ctx: typer.Context) -> None:
    """Measure NumPy / SciPy / torch / CuPy operations on this machine and write CSV rows (--help for options)."""
    from gpuadvisor.bench.cli import main as bench_main

    raise typer.Exit(bench_main(list(ctx.args)))


class ProfileFormat(str, enum.Enum):
    text = "text"
    json = "json"
    html = "html"


@app.command(context_settings={"allow_interspersed_args": False})
def profile(
    target: str = typer.Argument(..., help="The script to run (or, with -m, the module)."),
    script_args: Optional[List[str]] = typer.Argument(None, help="Arguments passed to the script."),
    as_module: bool = typer.Option(False, "-m", help="Run TARGET as a module, like `python -m TARGET`."),
    gpu: Optional[str] = typer.Option(None, help="GPU to predict for: profile name or TOML/JSON file (default: this machine's GPU, else h100-sxm)."),
    cpu: Optional[str] = typer.Option(None, help="CPU the model describes for its own CPU estimates (default `local`)."),
    output_format: ProfileFormat = typer.Option(ProfileFormat.text, "--format", "-f", help="Report format."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the report to FILE instead of standard output."),
    save_shapes: str = typer.Option(
        "gpuadvisor-shapes.json", "--save-shapes", help="Where to save the shapes seen, for `check --shapes FILE` ('' to skip)."
    ),
    include: Optional[List[str]] = typer.Option(
        None, "--include", help="Also trace the code in this folder (a library beside the script's folder); repeatable."
    ),
) -> None:
    """Run a script, measure its array lines, and predict each one on a GPU (runs your code)."""
    from pathlib import Path

    from gpuadvisor.analysis.facts.observations import save_observations
    from gpuadvisor.interfaces.reporters.profile import RENDERERS
    from gpuadvisor.prediction.errors import HardwareError
    from gpuadvisor.profiling.session import RunOutcome, UserFiles, build_report, run_traced

    if not as_module and not Path(target).is_file():
        raise _fail(f"no such script: {target}")
    if not as_module and target.endswith(".ipynb"):
        raise _fail(f"{target} is a notebook: export it first (`jupyter nbconvert --to script {target}`), then profile the .py")
    _check_profile_options(gpu, cpu, output, include or [])  # before the script runs, not after
    output_path = Path(output).resolve() if output else None  # the script may os.chdir
    shapes_path = Path(save_shapes).resolve() if save_shapes else None
    gc.set_threshold(700, 10, 10)  # the script runs with Python's usual collector, not ours
    root = Path.cwd() if as_module else Path(target).resolve().parent

    def deliver(outcome: RunOutcome) -> None:
        """The report and the saved shapes (also from inside the script's `os._exit`)."""
        try:
            report = build_report(target, outcome, gpu, cpu)
        except (HardwareError, ValueError) as exc:
            raise _fail(str(exc)) from None
        rendered = RENDERERS[output_format.value](report)
        if output_path is not None:
            try:  # a file name that is not UTF-8 must not leave a 0-byte report
                output_path.write_text(rendered, encoding="utf-8", errors="backslashreplace")
            except OSError as exc:
                raise _fail(f"cannot write {output}: {exc.strerror or exc}") from None
        else:
            sys.stdout.write(rendered)
            sys.stdout.flush()
        if shapes_path is not None and report.observed:
            try:
                save_observations(report.observed, shapes_path)
                typer.echo(f"shapes saved to {save_shapes}: `gpuadvisor check --shapes {save_shapes} ...` reuses them", err=True)
            except OSError as exc:
                typer.echo(f"gpuadvisor: could not save shapes to {save_shapes}: {exc.strerror or exc}", err=True)

    outcome = run_traced(target, list(script_args or []), as_module, UserFiles(root, *(Path(d) for d in include or [])), on_hard_exit=deliver)
    if outcome.forked_child:
        raise typer.Exit(outcome.exit_code)  # one report, from the process the command started
    deliver(outcome)
    raise typer.Exit(outcome.exit_code)


def _check_profile_options(gpu: str | None, cpu: str | None, output: str | None, include: list[str]) -> None:
    """Hardware names, the report's folder and --include folders, checked before the script runs."""
    import os
    from pathlib import Path

    from gpuadvisor.prediction.errors import HardwareError
    from gpuadvisor.prediction.hardware import resolve_cpu, resolve_gpu

    try:
        if gpu:
            resolve_gpu(gpu)
        if cpu:
            resolve_cpu(cpu)
    except (HardwareError, ValueError) as exc:
        raise _fail(str(exc)) from None
    if output:
        folder = Path(output).resolve().parent
        if not folder.is_dir() or not os.access(folder, os.W_OK) or Path(output).is_dir():
            raise _fail(f"cannot write {output}: {'no such folder' if not folder.is_dir() else 'not writable'}")
    for folder_name in include:
        if not Path(folder_name).is_dir():
            raise _fail(f"--include {folder_name}: no such folder")


@app.command()
def server() -> None:
    """Run the language server on standard input/output (diagnostics, fixes, hover) for editors."""
    from gpuadvisor.interfaces.server import serve

    serve()


def _tolerate_narrow_terminals() -> None:
    """`PYTHONIOENCODING=ascii` or a C locale must not turn "µs" or "→" into a traceback."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def main() -> None:
    import warnings

    from gpuadvisor.interfaces.terminal import show_warning, spinner
    from gpuadvisor.prediction import notices

    _stand_in_for_closed_streams()
    _tolerate_narrow_terminals()
    warnings.showwarning = show_warning
    notices.slow_step_display = spinner
    # A LibCST tree is hundreds of thousands of small objects that live until the file is
    # done: the default collector threshold rescans them over and over (about 10% of a
    # parse). Only the command-line process (and the workers it forks) is tuned; the API
    # leaves the host program's collector alone.
    gc.set_threshold(50_000, 20, 100)
    try:
        _app_for(sys.argv[1:])(prog_name="gpuadvisor")
    except OSError as exc:  # stdout is a full disk (`> /dev/full`) or a closed pipe
        if exc.errno not in (errno.ENOSPC, errno.EPIPE, errno.EIO):
            raise
        _give_up_on_stdout(exc)


def _app_for(args: list[str]) -> typer.Typer:
    """The group with only the command `args` names (the whole app for anything else).

    Typer turns the signature of every command into click options before it runs any, and
    that work is start-up time of `gpuadvisor check small.py`; the group built here has the
    same callback and settings, so usage lines, help and messages stay those of the whole app.
    """
    from typer.main import get_command_name

    named = [c for c in app.registered_commands if c.callback is not None and (c.name or get_command_name(c.callback.__name__)) == (args[:1] or [""])[0]]
    if not named:
        return app
    one = typer.Typer(**_APP_SETTINGS)
    one.registered_callback = app.registered_callback
    one.registered_commands = named
    return one


def _stand_in_for_closed_streams() -> None:
    """A standard stream closed by the caller (`gpuadvisor check . >&-`) is None in Python, and
    every write to it would fail with a traceback. What would go there goes nowhere instead, as
    for a reader that closed its pipe; the exit code still says what was found."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")


def _give_up_on_stdout(exc: OSError) -> None:
    """Say once, on stderr, that the output could not be written, and exit 1 without the
    interpreter's own complaint when it flushes stdout at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    if exc.errno != errno.EPIPE:  # a closed pipe (`| head`) is the reader's choice
        sys.stderr.write(f"gpuadvisor: error: cannot write the output: {exc.strerror or exc}\n")
    raise SystemExit(1)
