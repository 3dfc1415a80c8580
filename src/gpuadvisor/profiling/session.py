"""`gpuadvisor profile`: run the user's script under the line tracer, then predict each line.

The script runs in this process, as `python script.py args` would run it (its `sys.argv`,
`sys.path[0]`, `__main__`). Its own exceptions and exit code stay its own: the traceback is
printed as Python prints it, without our frames, and the exit status is the script's.
Ctrl-C stops the script and still reports what was gathered.

After the run, each user file with watched statements is walked again by the shared static
analysis, with the names seeded with what they held (analysis/watch.py); the array
operations found on each line get a GPU prediction, while the CPU side is the time measured.
"""

from __future__ import annotations

import os
import runpy
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from gpuadvisor.analysis.array_ops import ArrayOperation
from gpuadvisor.analysis.observations import FileObservations, LineRecord, signatures_by_rank, text_digest
from gpuadvisor.analysis.source import SourceError, code_lines, decode_source, parse_source
from gpuadvisor.profiling.tracer import LineTracer, Plan

#: At most this many distinct shape signatures of one line get their own prediction.
SIGNATURES_PREDICTED = 3
_OUR_FILES = (str(Path(__file__).resolve().parents[1]), runpy.__file__.rsplit(".", 1)[0])


@dataclass
class RunOutcome:
    exit_code: int
    interrupted: bool
    wall_seconds: float
    #: The user's code also ran in threads other than the main one (those are not measured).
    other_threads: bool = False
    #: file -> (source text, records by statement line)
    files: dict[str, tuple[str, dict[int, LineRecord]]] = field(default_factory=dict)


class UserFiles:
    """Which files are the user's (traced): under the script's folder, outside installed packages."""

    def __init__(self, root: Path) -> None:
        self.root = str(root.resolve())
        self.excluded = tuple({str(Path(p).resolve()) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix)})
        self.texts: dict[str, str] = {}

    def is_users(self, filename: str) -> bool:
        if not filename.endswith(".py") or filename.startswith("<"):
            return False
        resolved = os.path.realpath(filename)
        if not resolved.startswith(self.root + os.sep) or "site-packages" in resolved or "dist-packages" in resolved:
            return False
        return not resolved.startswith(self.excluded) or self.root.startswith(self.excluded)

    def plan_for(self, filename: str) -> Plan | None:
        """line -> (statement's first line, operand names), parsed once per file."""
        if not self.is_users(filename) or filename.startswith(_OUR_FILES):
            return None
        from gpuadvisor.analysis.watch import watch_plan

        try:
            text = decode_source(Path(filename).read_bytes())
            module = parse_source(text).module
        except (OSError, SourceError, RecursionError):
            return None  # not analysable: the script still runs, untraced here
        plan: dict[int, tuple[int, tuple[str, ...]]] = {}
        for watch in watch_plan(module):
            for line in range(watch.line, watch.last_line + 1):
                plan.setdefault(line, (watch.line, watch.names))
        self.texts[filename] = text
        return plan


def _print_script_traceback(exc: BaseException) -> None:
    """The script's traceback as Python would print it, without runpy's or our frames."""
    summary = traceback.TracebackException.from_exception(exc)
    summary.stack = traceback.StackSummary.from_list(
        [frame for frame in summary.stack if not frame.filename.startswith(_OUR_FILES)]
    )
    sys.stderr.write("".join(summary.format()))


def run_traced(target: str, args: list[str], as_module: bool, user_files: UserFiles, backend: str | None = None) -> RunOutcome:
    """Run a script (or `-m module`) under the tracer; never raises the script's exceptions.
    `backend` picks the event source ("monitoring" or "settrace"; by default the best there is)."""
    tracer = LineTracer(user_files.plan_for, backend)
    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    script = str(Path(target).resolve()) if not as_module else target
    sys.argv = [script, *args]
    if not as_module:
        sys.path.insert(0, str(Path(script).parent))
    exit_code, interrupted = 0, False
    start = time.perf_counter()
    tracer.start()
    try:
        if as_module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        exit_code = code if isinstance(code, int) else (0 if code is None else 1)
        if code is not None and not isinstance(code, int):
            sys.stderr.write(f"{code}\n")
    except KeyboardInterrupt:
        interrupted, exit_code = True, 130
    except BaseException as exc:  # the script's own error: reported as Python would
        tracer.stop()
        _print_script_traceback(exc)
        exit_code = 1
    finally:
        tracer.stop()
        wall = time.perf_counter() - start
        sys.argv = saved_argv
        if not as_module and saved_path0 is not None and sys.path and sys.path[0] == str(Path(script).parent):
            sys.path.pop(0)
    outcome = RunOutcome(exit_code, interrupted, wall, tracer.other_threads)
    for (filename, line), record in tracer.records.items():
        text = user_files.texts[filename]
        outcome.files.setdefault(filename, (text, {}))[1][line] = record
    return outcome


@dataclass
class LineOperation:
    description: str
    op: str
    shapes: list[list[int]]
    dtype: str
    library: str
    #: per run of the line
    gpu_seconds: float
    copy_seconds: float
    model_cpu_seconds: float
    low: float
    high: float


@dataclass
class LineResult:
    path: str
    line: int
    code: str
    hits: int
    cpu_seconds: float  # measured, all runs
    gpu_seconds: float  # predicted, all runs, data already on the GPU
    copy_seconds: float  # predicted copies if this line alone moved to the GPU, all runs
    copy_once_seconds: float  # the same copies made once (data kept on the GPU across runs)
    operations: list[LineOperation]
    shapes_seen: int

    @property
    def speedup(self) -> float:
        """For this line ported alone, copies on every run included."""
        return self.cpu_seconds / max(self.gpu_seconds + self.copy_seconds, 1e-12)


@dataclass
class ProfileReport:
    target: str
    exit_code: int
    interrupted: bool
    wall_seconds: float
    gpu: str
    gpu_name: str
    cpu: str
    lines: list[LineResult]
    observed: list[FileObservations]
    unpredicted_seconds: float  # time in watched lines where no operation of known shape was found
    other_threads: bool = False  # the user's code also ran in threads that were not measured

    @property
    def lines_cpu_seconds(self) -> float:
        return sum(line.cpu_seconds for line in self.lines)

    @property
    def lines_gpu_seconds(self) -> float:
        """The predicted lines on the GPU, data kept there (each line's copies made once)."""
        return sum(line.gpu_seconds + line.copy_once_seconds for line in self.lines)

    @property
    def script_gpu_seconds(self) -> float:
        """The whole run with the predicted lines on the GPU and everything else as measured."""
        return max(self.wall_seconds - self.lines_cpu_seconds, 0.0) + self.lines_gpu_seconds


def _operations_by_line(module: cst.Module, lines: dict[int, LineRecord], path: str) -> dict[int, list[tuple[int, ArrayOperation]]]:
    """Per watched statement: the array operations the walk finds there, with the rank of the
    signature they were found under (one walk per rank: each line under its k-th shapes)."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    from gpuadvisor.analysis.walker import gather_facts
    from gpuadvisor.analysis.watch import seed_values, spread_to_lines, statement_lines

    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    statement_of = statement_lines(module)
    found: dict[int, list[tuple[int, ArrayOperation]]] = {}
    for rank, by_statement in enumerate(signatures_by_rank(lines, SIGNATURES_PREDICTED)):
        facts = gather_facts(module, path, seed_values(module, spread_to_lines(module, by_statement)))
        for operation, _ctx in facts.array_operations:
            where = positions.get(operation.node)
            statement = statement_of.get(where.start.line) if where is not None else None
            if statement in by_statement and not operation.on_gpu:
                found.setdefault(statement, []).append((rank, operation))  # type: ignore[arg-type]
    return found


def build_report(target: str, outcome: RunOutcome, gpu: str | None, cpu: str | None) -> ProfileReport:
    """Predictions for every watched line that ran (raises HardwareError for bad names)."""
    from gpuadvisor.analysis.speedups import DEFAULT_GPU, detected_gpu
    from gpuadvisor.prediction.costs import CostError, op_cost
    from gpuadvisor.prediction.hardware import resolve_cpu, resolve_gpu
    from gpuadvisor.prediction.predictor import Request, predict_requests

    gpu_profile = resolve_gpu(gpu or detected_gpu() or DEFAULT_GPU)
    cpu_profile = resolve_cpu(cpu or "local")
    results: list[LineResult] = []
    observed: list[FileObservations] = []
    unpredicted = 0.0
    for path, (text, lines) in sorted(outcome.files.items()):
        observed.append(FileObservations(path, text_digest(text), lines))
        module = _parse(text)
        by_line = _operations_by_line(module, lines, path) if module is not None else {}
        source_lines = code_lines(text)
        for line, record in sorted(lines.items()):
            ranked = sorted(record.signatures.items(), key=lambda item: -item[1][1])[:SIGNATURES_PREDICTED]
            operations = by_line.get(line, [])
            requests, weights, owners = [], [], []
            for rank, operation in operations:
                shapes = [tuple(s) for s in operation.shapes]
                try:
                    cost = op_cost(operation.op, shapes, operation.dtype, expression=operation.expression, axis=operation.axis)
                except CostError:
                    continue
                library = "torch" if operation.library == "torch" else "numpy"
                requests.append(Request(
                    operation.op, cost, shapes, operation.dtype, gpu_profile, cpu_profile,
                    copy_in_bytes=operation.input_copy_bytes, copy_out_bytes=operation.output_bytes, library=library,
                ))
                weights.append(ranked[rank][1][0] if rank < len(ranked) else 0.0)
                owners.append((rank, operation))
            if not requests:
                unpredicted += record.seconds
                continue
            predictions = predict_requests(requests)
            predicted_hits = sum(counts[0] for _, counts in ranked) or 1.0
            scale = record.hits / predicted_hits  # signatures beyond the top few run like the top ones
            gpu_total = sum(p.gpu_seconds * w for p, w in zip(predictions, weights)) * scale
            copy_total = sum(p.transfer_seconds * w for p, w in zip(predictions, weights)) * scale
            copy_once = sum(p.transfer_seconds for p, w in zip(predictions, weights) if w > 0)
            top = [(operation, p) for (rank, operation), p in zip(owners, predictions) if rank == 0]
            results.append(LineResult(
                path, line, source_lines[line - 1].strip() if line <= len(source_lines) else "",
                record.hits, record.seconds, gpu_total, copy_total, min(copy_once, copy_total),
                [
                    LineOperation(
                        o.description, o.op, [list(s) for s in o.shapes], o.dtype, p.library,
                        p.gpu_seconds, p.transfer_seconds, p.cpu_seconds, p.interval[0], p.interval[1],
                    )
                    for o, p in top
                ],
                len(record.signatures),
            ))
    results.sort(key=lambda r: -r.cpu_seconds)
    return ProfileReport(
        target, outcome.exit_code, outcome.interrupted, outcome.wall_seconds,
        gpu_profile.key, gpu_profile.name, cpu_profile.key, results, observed, unpredicted, outcome.other_threads,
    )


def _parse(text: str) -> cst.Module | None:
    try:
        return parse_source(text).module
    except (SourceError, RecursionError):
        return None
