"""Speed of `gpuadvisor check`, as ratios measured in one run on one machine.

1. Cold-cache `check` over scikit-learn's installed non-test sources, against a bare
   single-process `libcst.parse_module` loop over the same files (target <= 1.0x). The very
   first run on a machine, which also fits the speedup model once, is printed apart.
2. Warm-cache `check` over the same files (everything answered from the cache).
   `--mixed` replaces 1 and 2 by a mixed repository: every non-test source of the installed
   `--packages` and every `.py` file of the `--corpus` checkouts, one `check` over all of them
   (issue 26's target: cold check <= 0.5x the bare parse loop, `check` on every core as by
   default). `--compare` then checks them once more in this process with the pre-scan on and
   off (GPUADVISOR_PRESCAN=off parses every file) and prints how many files the pre-scan
   skipped and whether the findings and error entries are the same. `--against SRC` also
   times the cold check of another copy of the package (`SRC` goes first on PYTHONPATH: the
   `src` folder of a checkout of the code before a change), interleaved in the same run.
   Every time is given twice: wall-clock seconds, and CPU seconds of the process and all its
   workers (what a machine shared with other work still measures fairly: wall-clock ratios
   depend on how many cores each side got from the rest of the load).
   `--phases` instead checks the mixed repository once in this process (`--jobs 1`, cold cache)
   and splits its CPU seconds by phase (read, CPython's parse and the structural guard, LibCST's
   parse, the fact walks, rules, cache writes, the project passes...), each against the bare
   parse loop's CPU seconds measured in the same run.
3. `gpuadvisor check small.py` (a torch loop and a 3-element NumPy op) against
   `python -c "import libcst, typer"` (target <= 1.3x),
   and proof that NumPy, scikit-learn, torch and CuPy are not imported on that path.
   Both run with bytecode caching on, after one warm-up run each, as an installed package
   runs (pip writes the .pyc files): PYTHONDONTWRITEBYTECODE would make every start compile
   our modules again while libcst's stay compiled, which measures the environment, not us.

Usage: python benchmarks/check_speed.py [--repeats N] [--package sklearn] [--startup-only]
       python benchmarks/check_speed.py --mixed [--packages torch sklearn numpy scipy]
           [--corpus CHECKOUT ...] [--compare] [--against SRC] [--phases] [--repeats N]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SMALL = """\
import numpy as np
import torch

scale = np.ones(3) + np.ones(3)

def train(model, loader, device):
    for x, y in loader:
        loss = model(x.to(device)).sum()
        print(loss.item())
"""


def package_sources(package: str) -> list[Path]:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        sys.exit(f"{package} is not installed: pip install scikit-learn")
    root = Path(spec.origin).parent
    return sorted(p for p in root.rglob("*.py") if "tests" not in p.relative_to(root).parts)


@dataclass(frozen=True)
class Cost:
    """What one command cost: wall-clock seconds, and CPU seconds of it and every process it
    waited for (a check's workers are waited for by the check, so they count)."""

    wall_s: float
    cpu_s: float


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(cmd: list[str], env: dict[str, str] | None = None) -> tuple[Cost, subprocess.CompletedProcess[bytes]]:
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, check=False, capture_output=True, env=env)
    return Cost(time.perf_counter() - start, children_cpu() - cpu), proc


def bare_parse_loop(files: list[Path]) -> Cost:
    code = (
        "import sys, time, libcst\n"
        "files = sys.argv[1:]\n"
        "t = time.perf_counter()\n"
        "for f in files:\n"
        "    try:\n"
        "        libcst.parse_module(open(f, 'rb').read())\n"
        "    except Exception:\n"
        "        pass  # a file with a syntax error (check reports it)\n"
        "print(time.perf_counter() - t)\n"
    )
    cost, proc = measured([sys.executable, "-c", code, *map(str, files)])
    proc.check_returncode()
    return cost


def corpus_sources(checkout: Path) -> list[Path]:
    return sorted(p for p in checkout.rglob("*.py") if ".git" not in p.parts and p.is_file() and not p.is_symlink())


def run_check(files: list[Path], cache_home: str, src: Path | None = None) -> Cost:
    """`src`: import gpuadvisor from there (the code before a change) instead of as installed."""
    env = {**os.environ, "XDG_CACHE_HOME": cache_home}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])
    cost, proc = measured(
        # Through a file list on standard input would be kinder to ARG_MAX; 3,500 paths fit.
        [sys.executable, "-m", "gpuadvisor", "check", "--format", "json", "--no-config", *map(str, files)],
        env,
    )
    if proc.returncode not in (0, 1):
        sys.exit(f"check failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return cost


def wall(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--package", default="sklearn")
    parser.add_argument("--startup-only", action="store_true", help="only the small-file start-up comparison")
    parser.add_argument("--mixed", action="store_true", help="a mixed repository of --packages and --corpus checkouts")
    parser.add_argument("--packages", nargs="*", default=["torch", "sklearn", "numpy", "scipy"])
    parser.add_argument("--corpus", nargs="*", default=[], type=Path, help="checkouts whose .py files join the mixed repository")
    parser.add_argument("--compare", action="store_true", help="with --mixed: findings with the pre-scan on and off")
    parser.add_argument("--against", type=Path, help="with --mixed: also time the gpuadvisor package found in this folder (a src/)")
    parser.add_argument("--phases", action="store_true", help="with --mixed: CPU seconds by phase of one cold check in this process")
    args = parser.parse_args()
    if args.mixed and args.phases:
        phases(mixed_files(args.packages, args.corpus))
        return
    if args.mixed:
        mixed(args.packages, args.corpus, args.repeats, args.compare, args.against)
        return
    if not args.startup_only:
        whole_package(args.package, args.repeats)
    startup(args.repeats)


def mixed_files(packages: list[str], corpus: list[Path]) -> list[Path]:
    """The mixed repository: every non-test source of the packages, every `.py` file of the checkouts."""
    return [path for package in packages for path in package_sources(package)] + [path for checkout in corpus for path in corpus_sources(checkout)]


def mixed(packages: list[str], corpus: list[Path], repeats: int, compare: bool, against: Path | None) -> None:
    files = mixed_files(packages, corpus)
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    parts = [*packages, *(checkout.name for checkout in corpus)]
    print(f"mixed repository: {len(files):,} files, {lines:,} lines ({', '.join(parts)}); {os.cpu_count()} cores, check --jobs default (all)", flush=True)
    sides: dict[str, list[Cost]] = {"bare parse": [], "cold check": []}
    if against is not None:
        sides[f"cold check of {against}"] = []
    with tempfile.TemporaryDirectory() as cache_home:
        examples = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.py"))
        for _ in range(repeats):  # interleaved, so machine noise hits every side alike
            for side, costs in sides.items():
                if side == "bare parse":
                    costs.append(bare_parse_loop(files))
                    continue
                src = None if side == "cold check" else against
                run_check(examples, cache_home, src)  # the speedup model is fitted once per machine: not timed
                shutil.rmtree(Path(cache_home) / "gpuadvisor" / "check", ignore_errors=True)
                costs.append(run_check(files, cache_home, src))
            print("  " + "; ".join(f"{side} {costs[-1].cpu_s:.1f} s CPU ({costs[-1].wall_s:.1f} s wall)" for side, costs in sides.items()), flush=True)
    parse = sides.pop("bare parse")
    parse_cpu, parse_wall = statistics.median(c.cpu_s for c in parse), statistics.median(c.wall_s for c in parse)
    print(f"bare libcst.parse_module loop (1 process): {parse_cpu:7.1f} s CPU, {parse_wall:7.1f} s wall  ({lines / parse_cpu:,.0f} lines per CPU second)")
    for side, costs in sides.items():
        cpu_s, wall_s = statistics.median(c.cpu_s for c in costs), statistics.median(c.wall_s for c in costs)
        per_run = ", ".join(f"{c.cpu_s / p.cpu_s:.2f}" for p, c in zip(parse, costs))
        print(
            f"gpuadvisor {side}: {cpu_s:7.1f} s CPU, {wall_s:7.1f} s wall; ratio {cpu_s / parse_cpu:.2f}x in CPU seconds "
            f"(per run: {per_run}), {wall_s / parse_wall:.2f}x wall-clock (target <= 0.5x)"
        )
    if compare:
        compare_prescan([str(p) for p in files])


def phases(files: list[Path]) -> None:
    """One cold check in this process, its CPU seconds split by phase: each phase's function is
    wrapped where the checker calls it, and a phase's time leaves out the phases it calls."""
    from gpuadvisor.analysis import checker
    from gpuadvisor.analysis.reading import parsed_files, source
    from gpuadvisor.analysis.rules import ALL_RULES
    from gpuadvisor.interfaces import cache, runner

    spent: dict[str, float] = {}
    running: list[float] = []  # per phase under way: CPU seconds its inner phases took

    def timed(phase: str, function: Any) -> Any:
        def measured_phase(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            running.append(0.0)
            try:
                return function(*args, **kwargs)
            finally:
                inner, took = running.pop(), time.process_time() - start
                spent[phase] = spent.get(phase, 0.0) + took - inner
                if running:
                    running[-1] += took

        return measured_phase

    wrapped = [
        (source, "_cpython_tree", "CPython's parse and the structural guard"),
        (source, "_elide_large_literals", "CPython's parse and the structural guard"),
        (source, "_libcst_parse", "LibCST's parse"),
        (checker, "ensure_valid_syntax", "syntax check of files the pre-scan skips"),
        (checker, "gather_facts", "fact walks"),
        (checker, "module_exports", "exports for the project passes"),
        (checker, "resolve_positions", "positions of findings"),
        (checker, "find_suppressions", "suppression comments"),
        (checker.Checker, "may_skip", "pre-scan"),
        (checker, "decode_source", "read and decode"),
        (runner, "read_source_file", "read and decode"),
        (cache.ResultCache, "put", "cache writes"),
        (cache.ResultCache, "get", "cache reads"),
        (runner, "project_contexts", "project passes: contexts and files needed"),
        (runner, "_needed_skipped", "project passes: contexts and files needed"),
        (parsed_files.ParsedFiles, "parse", "kept trees (memo, collection, freezing)"),
        (checker.Checker, "_run_rules", "rules"),  # less the walks, exports and positions inside it
        (runner, "check_files", "the rest"),
    ]
    for owner, name, phase in wrapped:
        setattr(owner, name, timed(phase, getattr(owner, name)))
    parse = bare_parse_loop(files)
    with tempfile.TemporaryDirectory() as cache_home:
        start = time.process_time()
        runner.check_files([str(p) for p in files], cache.ResultCache(Path(cache_home), "phases"), jobs=1)
        total = time.process_time() - start
    print(f"{len(files):,} files, {len(ALL_RULES)} rules; bare libcst.parse_module loop {parse.cpu_s:.1f} s CPU")
    print(f"cold check in one process: {total:.1f} s CPU, {total / parse.cpu_s:.2f}x the parse loop")
    for phase, seconds in sorted(spent.items(), key=lambda item: -item[1]):
        print(f"  {phase:45s} {seconds:7.1f} s  {seconds / parse.cpu_s:5.2f}x")


def compare_prescan(paths: list[str]) -> None:
    """Check the files in this process with the pre-scan on, then off; same findings?"""
    from gpuadvisor.interfaces.runner import check_files

    def run(mode: str) -> tuple[float, list]:
        os.environ["GPUADVISOR_PRESCAN"] = mode
        start = time.perf_counter()
        results = check_files(paths, None)
        return time.perf_counter() - start, results

    on_s, on = run("on")
    off_s, off = run("off")
    os.environ.pop("GPUADVISOR_PRESCAN")

    def findings(results: list) -> list:
        return sorted(
            (f.path, f.line, f.column, f.rule, f.message)
            for result in results
            for f in [*result.findings, *(finding for finding, _ in result.candidates)]
        )

    def errors(results: list) -> list:
        return sorted((r.path, r.error.kind) for r in results if r.error is not None)

    skipped = sum(1 for r in on if r.exports is None and r.error is None)
    same = findings(on) == findings(off) and errors(on) == errors(off)
    print(f"pre-scan on:  {on_s:7.2f} s, {skipped:,} of {len(paths):,} files never parsed by LibCST")
    print(f"pre-scan off: {off_s:7.2f} s, every file parsed")
    print(f"findings (with speedup candidates) and error entries: {len(findings(on)):,} and {len(errors(on)):,}, "
          f"{'identical' if same else 'DIFFERENT'} with and without the pre-scan")
    if not same:
        for item in sorted(set(findings(on)) ^ set(findings(off)))[:40]:
            print("   ", "only with the pre-scan:" if item in findings(on) else "only without it:", item)


def whole_package(package: str, repeats: int) -> None:
    files = package_sources(package)
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(f"corpus: {package}, {len(files)} non-test files, {lines:,} lines, {os.cpu_count()} cores")

    parse: list[Cost] = []
    cold: list[Cost] = []
    warm: list[Cost] = []
    with tempfile.TemporaryDirectory() as cache_home:
        # The first run on a machine also fits the speedup model (kept in the cache for every
        # later run): timed on its own, then only the per-file results are dropped between runs.
        first_run = run_check(files, cache_home)
        for _ in range(repeats):  # interleaved, so machine noise hits both sides alike
            parse.append(bare_parse_loop(files))
            shutil.rmtree(Path(cache_home) / "gpuadvisor" / "check", ignore_errors=True)
            cold.append(run_check(files, cache_home))
            warm.append(run_check(files, cache_home))
    parse_cpu, parse_wall = statistics.median(c.cpu_s for c in parse), statistics.median(c.wall_s for c in parse)

    def line(label: str, costs: list[Cost], target: str = "") -> str:
        cpu_s, wall_s = statistics.median(c.cpu_s for c in costs), statistics.median(c.wall_s for c in costs)
        return f"{label} {cpu_s:7.2f} s CPU, {wall_s:7.2f} s wall; ratio {cpu_s / parse_cpu:.2f}x CPU, {wall_s / parse_wall:.2f}x wall{target}"

    print(f"bare libcst.parse_module loop (1 process): {parse_cpu:7.2f} s CPU, {parse_wall:7.2f} s wall  ({lines / parse_cpu:,.0f} lines per CPU second)")
    print(f"gpuadvisor check, first run on a machine:   {first_run.cpu_s:7.2f} s CPU, {first_run.wall_s:7.2f} s wall  (includes fitting the speedup model once)")
    print(line("gpuadvisor check, cold cache:              ", cold, " (target <= 1.0x)"))
    print(line("gpuadvisor check, warm cache:              ", warm))


def startup(repeats: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        small = Path(folder) / "small.py"
        small.write_text(SMALL)
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env["XDG_CACHE_HOME"] = folder
        baseline = [sys.executable, "-c", "import libcst, typer"]
        check_small = [sys.executable, "-m", "gpuadvisor", "check", "--no-cache", str(small)]
        wall(baseline, env), wall(check_small, env)  # warm-up: .pyc files written where they may be
        base, ours = [], []
        for _ in range(max(9, repeats * 3)):
            base.append(wall(baseline, env))
            ours.append(wall(check_small, env))
        # Start-up noise only ever adds time: the best run of each is the steadiest ratio.
        base_s, ours_s = min(base), min(ours)
        median_ratio = statistics.median(ours) / statistics.median(base)
        print(f'python -c "import libcst, typer":            {base_s:7.3f} s  (best of {len(base)})')
        print(f"gpuadvisor check small.py:                  {ours_s:7.3f} s  ratio {ours_s / base_s:.2f}x (target <= 1.3x; medians {median_ratio:.2f}x)")
        probe = (
            "import sys, runpy; sys.argv=['gpuadvisor','check','--no-cache',sys.argv[1]]\n"
            "try:\n    runpy.run_module('gpuadvisor', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "heavy=[m for m in ('numpy','sklearn','torch','cupy','scipy') if m in sys.modules]\n"
            "print('heavy modules imported by check:', heavy or 'none')"
        )
        print(subprocess.run([sys.executable, "-c", probe, str(small)], capture_output=True, text=True, env=env).stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
