"""Honest evaluation of the speedup predictor on measured rows, plus its speed.

Accuracy: held-out error of predicted times. With more than one machine per side this is
leave-one-hardware-out; with one, leave-size-range-out (train on the middle sizes of every
op series, test on the largest and on the smallest quarter, which the model never saw).
Compared against (a) the analytic roofline alone and (b) the folk formula
FLOPs / peak + fixed overhead (seed 001). Speedup error and decision accuracy need paired
CPU and GPU rows; they are reported when GPU rows exist.

Speed: first prediction in a fresh process (cold cache = training; warm cache), then the
time per single prediction and batched predictions per second.

Usage: python benchmarks/predict_accuracy.py
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict



from gpuadvisor.prediction.model import feature_row, fit_side
from gpuadvisor.prediction.training import Sample, load_samples


def folk_seconds(sample: Sample) -> float:
    """FLOPs / peak + a fixed overhead: the calculators' formula (peak from the analytic side)."""
    peak_time = sample.analytic.compute_s
    return peak_time + 1e-5


def log_error(predicted: float, measured: float) -> float:
    return abs(math.log10(predicted / measured))


def folds(samples: list[Sample]) -> list[tuple[str, list[Sample], list[Sample]]]:
    machines = {s.machine for s in samples}
    if len(machines) > 1:
        return [(f"leave out {m}", [s for s in samples if s.machine != m], [s for s in samples if s.machine == m]) for m in sorted(machines)]
    series: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    for s in samples:
        series[(s.op, s.dtype)].append(s)
    largest, smallest = set(), set()
    for rows in series.values():
        rows.sort(key=lambda s: s.analytic.total_s)
        quarter = max(1, len(rows) // 4)
        if len(rows) >= 4:
            largest.update(map(id, rows[-quarter:]))
            smallest.update(map(id, rows[:quarter]))
    return [
        ("largest sizes held out", [s for s in samples if id(s) not in largest], [s for s in samples if id(s) in largest]),
        ("smallest sizes held out", [s for s in samples if id(s) not in smallest], [s for s in samples if id(s) in smallest]),
    ]


def evaluate(side: str, samples: list[Sample]) -> None:
    print(f"\n{side.upper()} times: {len(samples)} measured rows on {len({s.machine for s in samples})} machine(s)")
    if not samples:
        print("  no rows: predictions for this side rest on the analytic model alone")
        return
    print(f"  {'fold':<26} {'test rows':>9} {'model':>8} {'roofline':>9} {'folk formula':>13}   (median |log10 error|)")
    for name, train, test in folds(samples):
        if not test or not train:
            continue
        fitted = fit_side(side, train)
        model_err, roof_err, folk_err, within = [], [], [], 0
        for s in test:
            correction = float(feature_row(side, s.op, s.dtype, s.analytic) @ fitted.coef)
            predicted = s.analytic.total_s * 10**correction
            model_err.append(log_error(predicted, s.measured_s))
            roof_err.append(log_error(s.analytic.total_s, s.measured_s))
            folk_err.append(log_error(folk_seconds(s), s.measured_s))
            low, high = fitted.interval(s.op)
            within += low <= math.log10(s.measured_s / predicted) <= high
        print(
            f"  {name:<26} {len(test):>9} {statistics.median(model_err):>8.3f} {statistics.median(roof_err):>9.3f} "
            f"{statistics.median(folk_err):>13.3f}   interval covers {within / len(test):.0%}"
        )


def speed() -> None:
    print("\nSpeed")
    probe = (
        "import time; t = time.perf_counter(); import gpuadvisor;"
        "gpuadvisor.predict('matmul', [(4096, 4096), (4096, 4096)]); print(time.perf_counter() - t)"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        cold = float(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True).stdout)
        warm = float(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True).stdout)
    print(f"  first prediction, fresh process, no cached model (trains): {cold:6.2f} s  (target <= 2 s)")
    print(f"  first prediction, fresh process, cached model:             {warm:6.2f} s  (target <= 2 s)")
    import gpuadvisor
    from gpuadvisor.prediction.costs import op_cost
    from gpuadvisor.prediction.hardware import resolve_cpu, resolve_gpu
    from gpuadvisor.prediction.predictor import Request, predict_requests

    gpuadvisor.predict("add", [(16,), (16,)])
    start = time.perf_counter()
    for n in range(2000):
        gpuadvisor.predict("add", [(n + 1,), (n + 1,)])
    single = (time.perf_counter() - start) / 2000
    print(f"  one prediction:                                            {single * 1e3:6.3f} ms (target <= 1 ms)")
    gpu, cpu = resolve_gpu("h100-sxm"), resolve_cpu("local")
    requests = [Request("add", op_cost("add", [(n,), (n,)]), [(n,), (n,)], "float32", gpu, cpu) for n in range(1, 20001)]
    start = time.perf_counter()
    predict_requests(requests)
    rate = len(requests) / (time.perf_counter() - start)
    print(f"  batched predictions:                                       {rate:8,.0f} /s (target >= 10,000/s)")


def main() -> None:
    samples = list(load_samples())
    for side in ("cpu", "gpu", "copy"):
        evaluate(side, [s for s in samples if s.side == side])
    gpu_rows = [s for s in samples if s.side == "gpu"]
    if not gpu_rows:
        print("\nSpeedup error and decision accuracy: not measurable yet (no GPU rows in training_data/).")
    speed()



if __name__ == "__main__":
    main()
