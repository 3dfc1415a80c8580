"""A long fuzz run: generated GPU-flavoured programs through the analysis and the prediction.

The CI test (tests/test_fuzz.py) checks 400 programs; this one-off run checks many more (10,000
by default), each in five forms: whole, cut two thirds in (usually broken), with one line
dropped (broken indentation), with one expression repeated into a long `+` chain, and one
hostile shape from issue 26 appended (chosen per seed): long `and` chains one operand per line,
multi-line attribute/subscript/method/ternary/unary chains CPython rejects, thousands of
implicitly joined strings, str joined to bytes, complex powers, deep brackets. Every
form must give findings or a clean error entry: never an `internal` error entry, a traceback,
a hang past the per-file budget, or a crash of the process. Candidates for speedup findings
go through the predictor too, so its code is fuzzed along.

Programs run in worker processes, a chunk each: a worker that dies (a segfault in the native
parser, say) is reported with the seed it was on, and the run goes on from the next seed.

Usage: python benchmarks/fuzz_run.py [--programs 10000] [--jobs 2] [--start 0]
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import random
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_fuzz import program  # noqa: E402  (the generator the CI test uses)

CHUNK = 250
#: The checker's own budget per file; a file over this is a hang for this run.
BUDGET_S = 20.0


def _hostile(rng: random.Random) -> str:
    """One generated shape that once crashed, hung or mis-reported (issue 26)."""
    n = rng.choice([50, 900, 1_100, 3_000, 8_000, 20_000])
    shapes = [
        lambda: "ok = (\n" + "".join(f"    a{i} and\n" for i in range(n)) + "    b\n)\n",
        lambda: "x = (a\n" + ".b\n" * n,
        lambda: "x = (a\n" + "[0]\n" * n,
        lambda: "x = (a\n" + ".m()\n" * n,
        lambda: "x = (a\n" + "if b else c\n" * n,
        lambda: "x = (\n" + "-\n" * n + "a)\n",
        lambda: "s = (\n" + "".join(f"    's{i}'\n" for i in range(n)) + ")\n",
        lambda: "x = 'a' b'b'\n",
        lambda: "z = (-8) ** 0.5\nw = (1 + 2j) ** 0.5\n",
        lambda: "x = " + "(" * min(n, 300) + "1" + ")" * min(n, 300) + "\n",
        lambda: "x = " + " or ".join(["a"] * n) + "\n",
    ]
    return rng.choice(shapes)()


def variants(seed: int) -> list[tuple[str, str]]:
    source = program(seed)
    rng = random.Random(seed ^ 0x5EED)
    lines = source.splitlines(keepends=True)
    dropped = lines[:]
    if len(dropped) > 3:
        del dropped[rng.randrange(2, len(dropped))]
    body = [i for i, line in enumerate(lines) if "=" in line and not line.lstrip().startswith(("def ", "for ", "if ", "while "))]
    chained = lines[:]
    if body:
        i = rng.choice(body)
        target, _, value = chained[i].partition("=")
        chained[i] = f"{target}= " + " + ".join([f"({value.strip()})"] * rng.choice([10, 200, 2000])) + "\n"
    return [
        ("whole", source),
        ("cut", source[: len(source) * 2 // 3]),
        ("line-dropped", "".join(dropped)),
        ("long-chain", "".join(chained)),
        ("hostile", source + _hostile(rng)),
    ]


def run_chunk(first: int, count: int, progress: multiprocessing.Value) -> dict[str, object]:  # type: ignore[valid-type]
    """Check `count` programs from seed `first` in this worker; counts by outcome."""
    from gpuadvisor.analysis.checker import Checker
    from gpuadvisor.analysis.rules import ALL_RULES
    from gpuadvisor.analysis.findings.speedups import resolve_candidates

    checker = Checker(ALL_RULES, time_budget=BUDGET_S)
    outcomes: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    slowest = (0.0, "")
    for seed in range(first, first + count):
        progress.value = seed  # type: ignore[attr-defined]
        for form, text in variants(seed):
            start = time.perf_counter()
            try:
                result = checker.check_text(text, f"fuzz_{seed}.py")
                if result.candidates:
                    resolve_candidates(result.candidates)
            except BaseException:  # noqa: BLE001 - the whole point is to catch anything
                outcomes["traceback"] += 1
                failures.append(f"seed {seed} ({form}): traceback\n{traceback.format_exc()}")
                continue
            elapsed = time.perf_counter() - start
            if elapsed > slowest[0]:
                slowest = (elapsed, f"seed {seed} ({form}, {len(text):,} chars)")
            kind = "findings" if result.error is None else f"error:{result.error.kind}"
            outcomes[kind] += 1
            if result.error is not None and result.error.kind in ("internal", "timeout"):
                failures.append(f"seed {seed} ({form}): {result.error.kind}: {result.error.message}")
    return {"outcomes": dict(outcomes), "failures": failures, "slowest": slowest}


def _worker(first: int, count: int, progress: multiprocessing.Value, results: multiprocessing.Queue) -> None:  # type: ignore[valid-type]
    results.put(run_chunk(first, count, progress))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--programs", type=int, default=10_000)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    context = multiprocessing.get_context("spawn")
    pending = collections.deque((first, min(CHUNK, args.start + args.programs - first)) for first in range(args.start, args.start + args.programs, CHUNK))
    running: list[tuple[multiprocessing.process.BaseProcess, multiprocessing.Queue, multiprocessing.Value, int, int]] = []  # type: ignore[type-arg]
    outcomes: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    crashes: list[str] = []
    slowest = (0.0, "")
    started = time.perf_counter()
    while pending or running:
        while pending and len(running) < args.jobs:
            first, count = pending.popleft()
            queue, progress = context.Queue(), context.Value("q", first)
            process = context.Process(target=_worker, args=(first, count, progress, queue))
            process.start()
            running.append((process, queue, progress, first, count))
        time.sleep(0.2)
        for entry in running[:]:
            process, queue, progress, first, count = entry
            if not queue.empty():
                chunk = queue.get()
                process.join()
                outcomes.update(chunk["outcomes"])
                failures += chunk["failures"]
                slowest = max(slowest, tuple(chunk["slowest"]))  # type: ignore[arg-type]
                running.remove(entry)
            elif not process.is_alive():
                seed = progress.value
                crashes.append(f"seed {seed}: worker died with exit code {process.exitcode}")
                running.remove(entry)
                if seed + 1 < first + count:
                    pending.append((seed + 1, first + count - seed - 1))
    elapsed = time.perf_counter() - started
    checked = sum(outcomes.values())
    print(f"programs: {args.programs:,} (seeds {args.start}-{args.start + args.programs - 1}), {checked:,} files checked (5 forms each) in {elapsed:.0f} s")
    for kind, n in sorted(outcomes.items()):
        print(f"  {kind:<22} {n:>7,}")
    print(f"tracebacks: {outcomes.get('traceback', 0)}, internal errors: {outcomes.get('error:internal', 0)}, "
          f"timeouts: {outcomes.get('error:timeout', 0)}, crashed workers: {len(crashes)}")
    print(f"slowest file: {slowest[0]:.2f} s ({slowest[1]})")
    for line in (crashes + failures)[:20]:
        print(line)
    sys.exit(1 if crashes or failures else 0)


if __name__ == "__main__":
    main()
