"""`predict --cpu local` against NumPy measured on this machine, in the same run.

For each op the issue names (matmul, solve, svd, fft, sort, sum, sin, add) at sizes from
1e4 to 1e8 elements (fewer for the O(n^3) ops, whose largest sizes would run for minutes on a
small machine), the script times NumPy with the harness's own method (warm-up, median of
repeats) and prints the predicted CPU time next to it, the ratio, and per op the median
factor. Target: median factor <= 1.4 per op.

The prediction must describe this machine: `local` is calibrated here (the first prediction
calibrates when no calibration is stored), never another machine's rows under this name.

Usage: python benchmarks/predict_local.py [--quick]
"""

from __future__ import annotations

import math
import statistics
import sys

from gpuadvisor.bench.backends import NumpyBackend
from gpuadvisor.bench.plan import Config
from gpuadvisor.bench.timing import TimingPolicy, measure
from gpuadvisor.prediction.predictor import predict

SQUARE_SIDES = (100, 316, 1000, 3162, 10000)  # 1e4 .. 1e8 elements
CUBIC_SIDES = (100, 316, 1000, 2048)  # solve and svd: 1e4 .. 4e6 elements
VECTOR_SIZES = (10_000, 100_000, 1_000_000, 10_000_000, 100_000_000)


def cases(quick: bool) -> list[Config]:
    vectors = VECTOR_SIZES[:3] if quick else VECTOR_SIZES
    squares = SQUARE_SIDES[:3] if quick else SQUARE_SIDES[:4]  # a 10000^2 matmul is 2e12 FLOPs
    cubic = CUBIC_SIDES[:3] if quick else CUBIC_SIDES
    plan: list[Config] = []
    plan += [Config("matmul", ((n, n), (n, n)), "float32") for n in squares]
    plan += [Config("matmul", ((n, n), (n, n)), "float64") for n in squares]
    plan += [Config("solve", ((n, n), (n, 1)), "float64") for n in cubic]
    plan += [Config("svd", ((n, n),), "float64") for n in cubic[:-1]]
    for op in ("fft", "sort", "sum", "sin"):
        plan += [Config(op, ((n,),), dtype) for n in vectors for dtype in ("float32", "float64")]
    plan += [Config("add", ((n,), (n,)), dtype) for n in vectors for dtype in ("float32", "float64")]
    return plan


def main() -> None:
    quick = "--quick" in sys.argv
    backend = NumpyBackend()
    policy = TimingPolicy(warmup=1, min_repeats=3, max_repeats=200, min_total_s=0.2, max_total_s=2.0)
    factors: dict[str, list[float]] = {}
    print(f"{'op':<8} {'shapes':<24} {'dtype':<8} {'measured':>11} {'predicted':>11} {'pred/meas':>9}")
    for config in cases(quick):
        work = backend.prepare(config)
        if work is None:
            continue
        measured = measure(work, backend.sync, policy).median_s
        predicted = predict(config.op, [list(s) for s in config.shapes], config.dtype, cpu="local").cpu_seconds
        ratio = predicted / measured
        factors.setdefault(config.op, []).append(abs(math.log10(ratio)))
        print(f"{config.op:<8} {config.shape_text:<24} {config.dtype:<8} {measured:>10.3g}s {predicted:>10.3g}s {ratio:>9.2f}")
        del work
    print("\nper op: median factor between predicted and measured (target <= 1.4)")
    for op, errors in factors.items():
        print(f"  {op:<8} {10 ** statistics.median(errors):5.2f}   worst {10 ** max(errors):5.2f}   ({len(errors)} sizes)")
    every = [e for errors in factors.values() for e in errors]
    print(f"  {'all':<8} {10 ** statistics.median(every):5.2f}")


if __name__ == "__main__":
    main()
