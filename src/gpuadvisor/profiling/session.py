"""`gpuadvisor profile`: run the user's script under the line tracer, then predict each line.

The script runs in this process, as `python script.py args` would run it (its `sys.argv`,
`sys.path[0]`, `__main__`). Its own exceptions and exit code stay its own: the traceback is
printed as Python prints it, without our frames, and the exit status is the script's.
Ctrl-C stops the script and still reports what was gathered.

After the run, each user file with watched statements is walked again by the shared static
analysis, with the names seeded with what they held (analysis/facts/watch.py); the array
operations found on each line get a GPU prediction, while the CPU side is the time measured.
"""

from __future__ import annotations

import os
import runpy
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import libcst as cst
from libcst.metadata import CodeRange

from gpuadvisor._safe_io import MAX_SOURCE_BYTES, UnsafeFile, read_regular
from gpuadvisor.analysis.facts.array_ops import ArrayOperation
from gpuadvisor.analysis.facts.observations import FileObservations, LineRecord, signatures_by_rank, text_digest
from gpuadvisor.analysis.reading.source import SourceError, code_lines, decode_source, parse_source
from gpuadvisor.prediction.hardware import GpuProfile
from gpuadvisor.profiling.torch_modules import ModuleCost
from gpuadvisor.profiling.tracer import ArrayWork, LineTracer, Plan, WatchedLine

#: Frames LibCST may add to the stack while a user file is planned (real code needs a few hundred).
PLAN_RECURSION = 3_000
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
    #: multiprocessing started this many worker processes (their work is not measured).
    workers: int = 0
    #: This is a child the script forked that finished the script's code: the parent reports.
    forked_child: bool = False
    #: file -> (source text, records by statement line)
    files: dict[str, tuple[str, dict[int, LineRecord]]] = field(default_factory=dict)
    #: (file, statement line) -> what is known of the array work of lines that ran it,
    #: whatever their syntax (see tracer.library_of)
    array_work: dict[tuple[str, int], ArrayWork] = field(default_factory=dict)
    #: (file, line) of import statements: their time is start-up, the same on any device
    imports: frozenset[tuple[str, int]] = frozenset()
    #: seconds importlib spent loading modules (imports inside library calls included)
    import_seconds: float = 0.0
    #: bytes and tensors of the parameters of the torch.nn leaf modules that ran (what an optimizer updates)
    parameter_bytes: float = 0.0
    parameter_tensors: int = 0


class UserFiles:
    """Which files are the user's (traced): under the script's folder (or a folder given with
    `--include`), outside installed packages."""

    def __init__(self, root: Path, *included: Path) -> None:
        self.roots = tuple(str(folder.resolve()) for folder in (root, *included))
        self.excluded = tuple({str(Path(p).resolve()) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix)})
        self.texts: dict[str, str] = {}

    def is_users(self, filename: str) -> bool:
        if not filename.endswith(".py") or filename.startswith("<"):
            return False
        resolved = os.path.realpath(filename)
        for root in self.roots:
            if not resolved.startswith(root + os.sep) or "site-packages" in resolved or "dist-packages" in resolved:
                continue
            if not resolved.startswith(self.excluded) or root.startswith(self.excluded):
                return True
        return False

    def plan_for(self, filename: str) -> Plan | None:
        """line -> its watched statement, parsed once per file."""
        if not self.is_users(filename) or filename.startswith(_OUR_FILES):
            return None
        from gpuadvisor.analysis.facts.watch import watch_plan

        limit = sys.getrecursionlimit()
        # LibCST recurses over the tree: under a limit the script raised (generated code often
        # does), a long generated expression would overflow the C stack instead of raising
        sys.setrecursionlimit(min(limit, _stack_depth() + PLAN_RECURSION))
        try:
            text = decode_source(read_regular(filename, MAX_SOURCE_BYTES))
            watches = watch_plan(parse_source(text).module)
        except (OSError, UnsafeFile, SourceError, RecursionError, MemoryError):
            return None  # not analysable (a generated module, too large or too deep): it runs untraced
        finally:
            sys.setrecursionlimit(limit)
        plan: dict[int, WatchedLine] = {}
        for watch in watches:
            watched = WatchedLine(watch.line, watch.names, watch.targets, watch.is_import)
            for line in range(watch.line, watch.last_line + 1):
                plan.setdefault(line, watched)
        self.texts[filename] = text
        return plan


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1  # type: ignore[assignment]
    return depth


def _print_script_traceback(exc: BaseException) -> None:
    """The script's traceback as Python would print it, without runpy's or our frames."""
    summary = traceback.TracebackException.from_exception(exc)
    summary.stack = traceback.StackSummary.from_list(
        [frame for frame in summary.stack if not frame.filename.startswith((*_OUR_FILES, "<frozen runpy>"))]
    )
    sys.stderr.write("".join(summary.format()))


class _ProcessState:
    """What a script may change and the report still needs: the recursion limit, standard
    output and error (closed or replaced), the working folder."""

    def __init__(self) -> None:
        self.recursion_limit = sys.getrecursionlimit()
        self.stdout, self.stderr = sys.stdout, sys.stderr
        self.cwd = os.getcwd()

    def restore(self) -> None:
        sys.setrecursionlimit(max(sys.getrecursionlimit(), self.recursion_limit))
        sys.stdout = self.stdout if not self.stdout.closed else open(os.dup(1), "w", errors="backslashreplace", closefd=True)
        sys.stderr = self.stderr if not self.stderr.closed else open(os.dup(2), "w", errors="backslashreplace", closefd=True)
        try:
            os.chdir(self.cwd)
        except OSError:
            pass  # the folder is gone: the report's paths were made absolute before the run


def _workers_started() -> int:
    """Processes multiprocessing has started in this process so far (read, not consumed)."""
    process = sys.modules.get("multiprocessing.process")
    counter = getattr(process, "_process_counter", None)
    digits = "".join(ch for ch in repr(counter) if ch.isdigit())  # itertools.count(3) -> 3 next
    return int(digits) - 1 if digits else 0


def run_traced(
    target: str, args: list[str], as_module: bool, user_files: UserFiles, backend: str | None = None,
    on_hard_exit: Callable[[RunOutcome], None] | None = None,
) -> RunOutcome:
    """Run a script (or `-m module`) under the tracer; never raises the script's exceptions.
    `backend` picks the event source ("monitoring" or "settrace"; by default the best there is).
    `on_hard_exit(outcome)` runs when the script ends the process with `os._exit`, which skips
    every `finally` and `atexit`: the report is delivered there, then the process exits as asked
    (a forked child's `os._exit` just exits: the parent reports)."""
    tracer = LineTracer(user_files.plan_for, backend)
    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    saved = _ProcessState()
    script = str(Path(target).resolve()) if not as_module else target
    sys.argv = [script, *args]
    first_path = os.getcwd() if as_module else str(Path(script).parent)  # as `python -m` / `python script`
    sys.path.insert(0, first_path)
    workers_before = _workers_started()
    parent = os.getpid()
    real_exit = os._exit
    start = time.perf_counter()

    def finish(exit_code: int, interrupted: bool) -> RunOutcome:
        tracer.stop()
        wall = time.perf_counter() - start - tracer.own_seconds
        os._exit = real_exit
        saved.restore()
        sys.argv = saved_argv
        if saved_path0 is not None and sys.path and sys.path[0] == first_path:
            sys.path.pop(0)
        outcome = RunOutcome(
            exit_code, interrupted, wall, tracer.other_threads, _workers_started() - workers_before,
            forked_child=os.getpid() != parent, array_work=tracer.array_work, imports=tracer.imports,
            import_seconds=tracer.import_seconds, parameter_bytes=sum(tracer.modules.parameter_bytes.values()),
            parameter_tensors=sum(tracer.modules.parameter_tensors.values()),
        )
        for (filename, line), record in tracer.records.items():
            outcome.files.setdefault(filename, (user_files.texts[filename], {}))[1][line] = record
        return outcome

    def hard_exit(status: int) -> NoReturn:
        if os.getpid() == parent and on_hard_exit is not None:
            try:
                on_hard_exit(finish(status, False))
            except BaseException:  # the report failed: the process still exits as the script asked
                pass
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
        real_exit(status)

    exit_code, interrupted = 0, False
    os._exit = hard_exit
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
    return finish(exit_code, interrupted)


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
    #: "model": the op model's predictions; "measured": estimated from the measured time
    #: (profiling/measured.py); "model + measured": the model's ops plus the rest of the line
    basis: str = "model"

    @property
    def speedup(self) -> float:
        """For this line ported alone, copies on every run included."""
        return self.cpu_seconds / max(self.gpu_seconds + self.copy_seconds, 1e-12)


@dataclass
class UnpredictedLine:
    path: str
    line: int
    code: str
    hits: int
    cpu_seconds: float


#: Lines listed as the costliest unpredicted ones.
UNPREDICTED_LISTED = 10
#: A line with modelled ops gets the rest of its measured time estimated as further work when
#: no op is its whole value (`features.append(np.log(m @ w))` aside, `irfft2(rfft2(x) * g)` where
#: only one transform is modelled), or when the op that is explains less than this share of the
#: time: a fragment such as the scalar division of `rz / (p @ Ap)` is off by 100x or more, while
#: a busy machine or a slow CPU path (NumPy's einsum) inflates a whole-line op 3-20x.
EXPLAINED_SHARE = 0.01
#: ... when that rest is real work, far above a statement's own Python cost.
UNEXPLAINED_PER_RUN_S = 5e-3


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
    #: the costliest watched lines with no prediction, costliest first: counted at CPU time
    unpredicted_lines: list[UnpredictedLine] = field(default_factory=list)
    #: worker processes multiprocessing started (not measured)
    workers: int = 0
    #: time in the user's import statements: start-up, the same on any device
    import_seconds: float = 0.0
    #: the host arrays the predicted lines read that no array work made, each copied to the
    #: GPU once (what the moved lines make stays there)
    copy_in_seconds: float = 0.0

    @property
    def coverage(self) -> float:
        """The share of the run's own time (imports aside) that the predicted lines measured."""
        return min(self.lines_cpu_seconds / max(self.wall_seconds - self.import_seconds, 1e-12), 1.0)

    @property
    def lines_cpu_seconds(self) -> float:
        return sum(line.cpu_seconds for line in self.lines)

    @property
    def lines_gpu_seconds(self) -> float:
        """The predicted lines on the GPU, data kept there: what they read from the host copied once."""
        return sum(line.gpu_seconds for line in self.lines) + self.copy_in_seconds

    @property
    def script_gpu_seconds(self) -> float:
        """The whole run with the predicted lines on the GPU and everything else as measured."""
        return max(self.wall_seconds - self.lines_cpu_seconds, 0.0) + self.lines_gpu_seconds


def _whole_values(module: cst.Module, positions: Mapping[cst.CSTNode, CodeRange]) -> dict[int, CodeRange]:
    """First line of a one-statement line -> where its value is (what is assigned, returned or
    evaluated): an operation spanning it is the statement's whole work."""
    values: dict[int, CodeRange] = {}
    for node, where in positions.items():
        if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
            small = node.body[0]
            value = getattr(small, "value", None) if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Return, cst.Expr)) else None
            if value is not None and value in positions:
                values[where.start.line] = positions[value]
    return values


def _spans(outer: CodeRange, inner: CodeRange) -> bool:
    return (outer.start.line, outer.start.column) <= (inner.start.line, inner.start.column) and (
        outer.end.line, outer.end.column) >= (inner.end.line, inner.end.column)


def _operations_by_line(module: cst.Module, lines: dict[int, LineRecord], path: str) -> tuple[dict[int, list[tuple[int, ArrayOperation]]], set[int]]:
    """Per watched statement: the array operations the walk finds there, with the rank of the
    signature they were found under (one walk per rank: each line under its k-th shapes); and
    the statements one of whose operations is their whole value (nothing else to estimate)."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    from gpuadvisor.analysis.facts.walker import gather_facts
    from gpuadvisor.analysis.facts.watch import seed_values, spread_to_lines, statement_lines

    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    statement_of = statement_lines(module)
    values = _whole_values(module, positions)
    found: dict[int, list[tuple[int, ArrayOperation]]] = {}
    whole: set[int] = set()
    for rank, by_statement in enumerate(signatures_by_rank(lines, SIGNATURES_PREDICTED)):
        facts = gather_facts(module, path, seed_values(module, spread_to_lines(module, by_statement)))
        for operation, _ctx in facts.array_operations:
            where = positions.get(operation.node)
            statement = statement_of.get(where.start.line) if where is not None else None
            if statement in by_statement and not operation.on_gpu:
                found.setdefault(statement, []).append((rank, operation))  # type: ignore[arg-type]
                if where is not None and statement in values and _spans(where, values[statement]):  # type: ignore[index]
                    whole.add(statement)  # type: ignore[arg-type]
    return found, whole


def build_report(target: str, outcome: RunOutcome, gpu: str | None, cpu: str | None) -> ProfileReport:
    """Predictions for every watched line that ran (raises HardwareError for bad names)."""
    from gpuadvisor.analysis.findings.speedups import DEFAULT_GPU, detected_gpu
    from gpuadvisor.analysis.findings.prediction_requests import operation_cost, prediction_request
    from gpuadvisor.prediction.hardware import resolve_cpu, resolve_gpu
    from gpuadvisor.prediction.predictor import predict_requests
    from gpuadvisor.prediction.roofline import copy_time
    from gpuadvisor.profiling.measured import estimate_line, iterates_in_python
    from gpuadvisor.profiling.torch_modules import forward_costs

    gpu_profile = resolve_gpu(gpu or detected_gpu() or DEFAULT_GPU)
    cpu_profile = resolve_cpu(cpu or "local")
    results: list[LineResult] = []
    observed: list[FileObservations] = []
    unpredicted, imports = 0.0, outcome.import_seconds
    unpredicted_lines: list[UnpredictedLine] = []
    entering: dict[int, float] = {}  # host arrays the moved lines read: id -> bytes
    module_costs = {where: forward_costs(work.modules, gpu_profile, cpu_profile) for where, work in outcome.array_work.items() if work.modules}
    all_forward = [cost for costs in module_costs.values() for cost in costs]
    for path, (text, all_lines) in sorted(outcome.files.items()):
        imports += sum(record.seconds for line, record in all_lines.items() if (path, line) in outcome.imports)
        lines = {line: record for line, record in all_lines.items() if (path, line) not in outcome.imports}
        observed.append(FileObservations(path, text_digest(text), lines))
        module = _parse(text)
        by_line, whole = _operations_by_line(module, lines, path) if module is not None else ({}, set())
        source_lines = code_lines(text)
        for line, record in sorted(lines.items()):
            ranked = sorted(record.signatures.items(), key=lambda item: -item[1][1])[:SIGNATURES_PREDICTED]
            operations = by_line.get(line, [])
            requests, weights, owners = [], [], []
            for rank, operation in operations:
                cost = operation_cost(operation)
                if cost is None:
                    continue
                requests.append(prediction_request(operation, cost, gpu_profile, cpu_profile))
                weights.append(ranked[rank][1][0] if rank < len(ranked) else 0.0)
                owners.append((rank, operation))
            code = source_lines[line - 1].strip() if line <= len(source_lines) else ""
            work = outcome.array_work.get((path, line))
            predictions = predict_requests(requests) if requests else []
            predicted_hits = sum(counts[0] for _, counts in ranked) or 1.0
            scale = record.hits / predicted_hits  # signatures beyond the top few run like the top ones
            gpu_total = sum(p.gpu_seconds * w for p, w in zip(predictions, weights)) * scale
            copy_total = sum(p.transfer_seconds * w for p, w in zip(predictions, weights)) * scale
            copy_once = sum(p.transfer_seconds for p, w in zip(predictions, weights) if w > 0)
            explained = sum(p.cpu_seconds * w for p, w in zip(predictions, weights)) * scale
            top = [(operation, p) for (rank, operation), p in zip(owners, predictions) if rank == 0]
            shown = [
                LineOperation(
                    o.description, o.op, [list(s) for s in o.shapes], o.dtype, p.library,
                    p.gpu_seconds, p.transfer_seconds, p.cpu_seconds, p.interval[0], p.interval[1],
                )
                for o, p in top
            ]
            basis = "model"
            statement = _statement_text(source_lines, line)
            for module_cost in module_costs.get((path, line), []):
                calls = module_cost.calls
                gpu_total += module_cost.gpu_seconds * calls
                explained += module_cost.cpu_seconds * calls
                shown.append(LineOperation(
                    f"{module_cost.description}, {calls} call{'s' if calls != 1 else ''}", "module", [], "", "torch",
                    module_cost.gpu_seconds, 0.0, module_cost.cpu_seconds, 0.0, 0.0,
                ))
            training = _training_step(statement, work, all_forward, outcome, record.hits, gpu_profile)
            if training is not None:
                gpu_total += training.gpu_seconds * record.hits
                shown.append(training)
            rest = record.seconds - explained
            whole_line = training is not None or (line in whole and explained >= EXPLAINED_SHARE * record.seconds)
            modelled = bool(predictions) or len(shown) > len(top)
            unexplained = not modelled or (
                not whole_line and rest > EXPLAINED_SHARE * record.seconds and rest / record.hits > UNEXPLAINED_PER_RUN_S)
            if work is not None and unexplained and (modelled or not iterates_in_python(statement, work.array_names)):
                estimate = estimate_line(
                    statement, rest / record.hits, work, gpu_profile, cpu_profile,
                )
                gpu_total += estimate.gpu_seconds * record.hits
                shown.append(LineOperation(
                    estimate.description, "measured", [], "", work[0], estimate.gpu_seconds, 0.0,
                    rest / record.hits, estimate.low, estimate.high,
                ))
                basis = "model + measured" if modelled else "measured"
            elif not modelled:
                unpredicted += record.seconds
                unpredicted_lines.append(UnpredictedLine(path, line, code, record.hits, record.seconds))
                continue
            if work is not None:
                entering.update(work.entering)
            results.append(LineResult(
                path, line, code, record.hits, record.seconds, gpu_total, copy_total, min(copy_once, copy_total),
                shown, len(record.signatures), basis,
            ))
    results.sort(key=lambda r: -r.cpu_seconds)
    unpredicted_lines.sort(key=lambda u: -u.cpu_seconds)
    copy_in = sum(copy_time(size, gpu_profile).total_s for size in entering.values())
    return ProfileReport(
        target, outcome.exit_code, outcome.interrupted, outcome.wall_seconds,
        gpu_profile.key, gpu_profile.name, cpu_profile.key, results, observed, unpredicted, outcome.other_threads,
        unpredicted_lines[:UNPREDICTED_LISTED], outcome.workers, imports, copy_in,
    )


def _training_step(
    statement: str, work: ArrayWork | None, forward: list[ModuleCost], outcome: RunOutcome, hits: int, gpu: GpuProfile,
) -> LineOperation | None:
    """`loss.backward()` and `optimizer.step()` of a torch training loop, predicted from the
    modules the forward hook saw and the optimizer the statement names (torch_modules.py): all runs of the line."""
    from gpuadvisor.profiling.torch_modules import OptimizerNote, backward_seconds, optimizer_step_seconds

    if work is None or work.library != "torch" or not forward:
        return None
    if ".backward(" in statement:
        seconds, calls = backward_seconds(forward)
        kinds = f"{len(forward)} module kind{'s' if len(forward) != 1 else ''}"
        description = f"backward of the {kinds} seen in forward ({calls} calls): autograd's host time or their device work twice"
    elif ".step(" in statement and outcome.parameter_bytes > 0:
        note = work.optimizer or OptimizerNote("Adam", outcome.parameter_tensors)
        seconds = optimizer_step_seconds(outcome.parameter_bytes, note, gpu) * hits
        size = f"{outcome.parameter_bytes / 1e6:.1f} MB" if outcome.parameter_bytes >= 1e5 else f"{outcome.parameter_bytes / 1e3:.1f} kB"
        description = f"{note.kind} step (foreach kernels) over {note.tensors} tensors, {size} of parameters"
    else:
        return None
    return LineOperation(description, "module", [], "", "torch", seconds / max(hits, 1), 0.0, 0.0, 0.0, 0.0)


def _statement_text(source_lines: list[str], line: int) -> str:
    """The statement starting at `line` (up to 20 lines, until it parses on its own)."""
    import ast

    text = ""
    for index in range(line - 1, min(line + 19, len(source_lines))):
        text += source_lines[index].strip() + "\n"
        try:
            ast.parse(text)
            return text
        except SyntaxError:
            continue
    return source_lines[line - 1] if line <= len(source_lines) else ""


def _parse(text: str) -> cst.Module | None:
    try:
        return parse_source(text).module
    except (SourceError, RecursionError):
        return None
