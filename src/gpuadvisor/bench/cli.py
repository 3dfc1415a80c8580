"""`gpuadvisor bench` / `python -m gpuadvisor.bench`: argument parsing with the standard library."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from gpuadvisor.bench.backends import BACKENDS, load_backends
from gpuadvisor.bench.plan import DTYPE_ORDER, MACHINE_MEASUREMENTS, configurations
from gpuadvisor.bench.results import ResultsFile, ResultsFileError, default_results_file
from gpuadvisor.bench.sweep import run_sweep
from gpuadvisor.bench.timing import TimingPolicy
from gpuadvisor.ops.registry import OPS

#: What --ops accepts: the registry's benchable ops, then the machine's own measurements.
ALL_OPS = (*(name for name, entry in OPS.items() if entry.bench is not None), *MACHINE_MEASUREMENTS)


def _list(text: str | None, allowed: tuple[str, ...], what: str) -> list[str] | None:
    if text is None:
        return None
    items = [item.strip() for item in text.split(",") if item.strip()]
    unknown = [item for item in items if item not in allowed]
    if unknown:
        print(f"gpuadvisor bench: unknown {what}: {', '.join(unknown)} (choose from {', '.join(allowed)})", file=sys.stderr)
        raise SystemExit(2)  # a usage error, as everywhere else
    return items


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gpuadvisor bench",
        description="Measure NumPy / SciPy / torch / CuPy operations on this machine and append CSV rows.",
    )
    p.add_argument(
        "--out",
        default=str(default_results_file()),
        help="CSV file to append to (resumes if it exists); default: your data folder, where predictions pick it up",
    )
    p.add_argument("--backends", help=f"comma-separated, from: {', '.join(BACKENDS)} (default: all available)")
    p.add_argument("--ops", help=f"comma-separated, from: {', '.join(ALL_OPS)} (default: all)")
    p.add_argument("--dtypes", default="float32,float64,float16,bfloat16", help="comma-separated dtypes (complex64 and complex128 are measured on request only)")
    p.add_argument("--quick", action="store_true", help="tiny sweep (seconds): for smoke tests")
    p.add_argument("--budget", type=float, help="stop starting new measurements after this many seconds")
    p.add_argument("--max-call-seconds", type=float, help="stop a size series once one call takes longer (default 1, quick 0.05)")
    p.add_argument(
        "--min-seconds", type=float,
        help="keep sampling a configuration until its samples add up to this (default 0.25; at least 5 samples always)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    names = _list(args.backends, tuple(BACKENDS), "backend") or list(BACKENDS)
    ops = _list(args.ops, ALL_OPS, "op")
    dtypes = _list(args.dtypes, DTYPE_ORDER, "dtype") or []
    backends, notes = load_backends(names)
    for note in notes:
        print(note, file=sys.stderr)
    if not backends:
        print("gpuadvisor bench: no backend could be loaded", file=sys.stderr)
        return 2
    try:
        results = ResultsFile(Path(args.out))
    except (ResultsFileError, OSError) as exc:
        print(f"gpuadvisor bench: {exc}", file=sys.stderr)
        return 2
    has_gpu = any(b.device == "cuda" for b in backends)
    plan = list(configurations(dtypes, set(ops) if ops else None, args.quick, has_gpu))
    policy = TimingPolicy.quick() if args.quick else TimingPolicy()
    if args.min_seconds is not None:
        if not 0 < args.min_seconds < 3600:
            print("gpuadvisor bench: --min-seconds takes a number of seconds between 0 and 3600", file=sys.stderr)
            return 2
        policy = dataclasses.replace(policy, min_total_s=args.min_seconds, max_total_s=max(policy.max_total_s, args.min_seconds))
    max_call = args.max_call_seconds or (0.05 if args.quick else 1.0)
    try:
        summary = run_sweep(backends, plan, results, policy, max_call, args.budget, None if args.quiet else sys.stderr)
    except KeyboardInterrupt:
        print(f"\ninterrupted: rows so far are in {args.out}; run the same command again to resume", file=sys.stderr)
        return 130
    print(
        f"{summary.measured} configurations measured, {summary.already_done} already in {args.out}"
        + (", stopped by --budget" if summary.stopped_by_budget else ""),
        file=sys.stderr,
    )
    for line in summary.skipped:
        print(f"skipped {line}", file=sys.stderr)
    return 0
