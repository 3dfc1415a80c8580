"""Honest evaluation of the speedup predictor: leave one source out, then speed.

Accuracy. Every published source (training_data/published/: other people's GPUs, CPUs and
methods) is held out in turn: the model is trained on everything else and predicts that
source's rows, CPU side, GPU side and speedup (data on the device, as published). Printed per
held-out source and per op: median |log10 error| of the speedup and of each side, decision
accuracy at 1x (is the GPU faster?) and at 3x (the recommendation threshold), and how often
the 80% interval holds the measured speedup. Next to the model: a plain roofline
(max(FLOPs / peak, bytes / bandwidth) + a launch on each side) and the seed-001 calculator
formula (FLOPs / peak + a fixed overhead). Our own CPU rows are also scored
leave-size-range-out.

Speed: first prediction in a fresh process (cold cache = training; warm cache), then the
time per single prediction and batched predictions per second.

First look. `--first-look SOURCE` (repeatable; a file stem under training_data/published/ or a
CSV path) scores a source the model has never been fitted on: the model is trained on every
other row, all named first-look sources left out, and the source's rows are predicted as they
are. Printed per side (GPU, CPU) and per op/dtype: median |log10(predicted / measured)|, the
bias (median signed log10 error; + is too slow), the share of measured times inside the
predicted 80% interval, and the same for speedups where the source pairs CPU and GPU rows;
rows no op can express are counted as refused. Record these numbers before fitting anything
on the source (training_data/published/README.md keeps them next to the after-fit ones).

Held out. `--held-out` holds each published source out alone (all others in training) and scores its
GPU rows as `--first-look` does, one line per source and per op family within it, then the 80%
interval's coverage pooled over every source's rows and with each source weighing as much as another
(issue 24 asks for 0.75-0.85 on sources the fit never saw).

Tensor cores. `--tensor-cores` prints, per GPU, the median ratio predicted / measured of the
published tensor-core matrix products (fp16, bf16, TF32, FP64 on tensor cores), each row predicted
by the model fitted without its source (issue 24 asks for 1/1.3 to 1.3 on every GPU).

Usage: python benchmarks/predict_accuracy.py [--rows] [--no-speed] [--first-look SOURCE ...] [--held-out] [--tensor-cores]
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpuadvisor.prediction.hardware import catalog, measured_cpus, training_data_folder
from gpuadvisor.prediction.libraries import gpu_floor_s
from gpuadvisor.prediction.model import SideModel, fit_side
from gpuadvisor.prediction.tensor_cores import matmul_peak
from gpuadvisor.prediction.training import Sample, data_files, load_samples, read_rows

WORTH_IT = 3.0


@dataclass
class Scored:
    source: str
    op: str
    label: str
    measured: float  # speedup
    predicted: float
    low: float
    high: float
    cpu_error: float
    gpu_error: float
    roofline: float
    folk: float


def corrected(sample: Sample, side: SideModel) -> float:
    """The predictor's time for a row: the corrected analytic time of what it timed (kernel
    timings leave out the host's launches), on the GPU never under its datasheet floor (as
    `predict` does), plus any work timed with the op."""
    correction = float(side.row(sample.op, sample.dtype, sample.analytic, sample.library) @ side.coef)
    seconds = sample.timed_s * 10**correction
    if sample.side == "gpu":
        floor = gpu_floor_s(sample.cost, catalog()[0][sample.machine], sample.dtype, sample.analytic)
        seconds = max(seconds, floor - sample.untimed_s)
    return seconds + sample.extra_s


def plain_roofline(sample: Sample) -> float:
    """Library-blind roofline on the row's hardware: the yardstick the model must beat."""
    cost, overhead = sample.cost, (1e-5 if sample.side == "gpu" else 2e-6)
    cpu, gpu = _hardware(sample)
    if sample.side == "gpu":
        return max(cost.flops / gpu.peak_flops(sample.dtype), cost.memory_bytes / (gpu.mem_bandwidth_gbs * 1e9)) + overhead
    return max(cost.flops / cpu.peak_flops(sample.dtype), cost.memory_bytes / (cpu.mem_bandwidth_gbs * 1e9)) + overhead


def folk_formula(sample: Sample) -> float:
    """Seed 001: operations / throughput + an overhead (data already on the device)."""
    cpu, gpu = _hardware(sample)
    if sample.side == "gpu":
        return sample.cost.flops / gpu.peak_flops(sample.dtype) + 1e-5
    return max(sample.cost.flops / cpu.peak_flops(sample.dtype), 1e-7)  # no FLOPs (a copy): a floor


#: (source, pair id) -> (CPU row, GPU row): ids are unique within a source only (two lease files
#: both call their pairs `lease-<backend>-<op>-...`).
_pairs: dict[tuple[str, str], tuple[Sample, Sample]] = {}


def _hardware(sample: Sample):  # type: ignore[no-untyped-def]
    cpu_row, gpu_row = _pairs[(sample.source, sample.pair)]
    cpu = next(c for c in measured_cpus().values() if f"{c.name}/{c.cores}" == cpu_row.machine)
    return cpu, catalog()[0][gpu_row.machine]


def interval(cpu: SideModel, gpu: SideModel, op: str, library: str, speedup: float) -> tuple[float, float]:
    cpu_lo, cpu_hi = cpu.interval(op, library)
    gpu_lo, gpu_hi = gpu.interval(op, library)
    below = math.sqrt(cpu_lo**2 + gpu_hi**2)
    above = math.sqrt(cpu_hi**2 + gpu_lo**2)
    return speedup / 10**below, speedup * 10**above


def leave_one_source_out(samples: list[Sample]) -> list[Scored]:
    published = sorted({s.source for s in samples if s.pair})
    scored: list[Scored] = []
    for source in published:
        train = [s for s in samples if s.source != source]
        cpu_model = fit_side("cpu", [s for s in train if s.side == "cpu"])
        gpu_model = fit_side("gpu", [s for s in train if s.side == "gpu"])
        for cpu_row, gpu_row in (pair for pair in _pairs.values() if pair[0].source == source and pair[0].role != "calibration"):
            cpu_pred, gpu_pred = corrected(cpu_row, cpu_model), corrected(gpu_row, gpu_model)
            measured = cpu_row.measured_s / gpu_row.measured_s
            predicted = cpu_pred / gpu_pred
            low, high = interval(cpu_model, gpu_model, cpu_row.op, cpu_row.library, predicted)
            label = f"{cpu_row.op} {'x'.join(map(str, cpu_row.cost.gemm[1:])) if cpu_row.op == 'matmul' else ''}".strip()
            scored.append(Scored(
                source, cpu_row.op, label, measured, predicted, low, high,
                math.log10(cpu_pred / cpu_row.measured_s), math.log10(gpu_pred / gpu_row.measured_s),
                plain_roofline(cpu_row) / plain_roofline(gpu_row), folk_formula(cpu_row) / folk_formula(gpu_row),
            ))
    return scored


def _median_abs(values: list[float]) -> float:
    return statistics.median(abs(v) for v in values) if values else float("nan")


def _decision(rows: list[Scored], threshold: float, pick: Callable[[Scored], float]) -> float:
    return sum((pick(r) >= threshold) == (r.measured >= threshold) for r in rows) / len(rows)


def summarise(title: str, rows: list[Scored]) -> str:
    err = [math.log10(r.predicted / r.measured) for r in rows]
    roof = [math.log10(r.roofline / r.measured) for r in rows]
    folk = [math.log10(r.folk / r.measured) for r in rows]
    cover = sum(r.low <= r.measured <= r.high for r in rows) / len(rows)
    width = statistics.median(math.log10(r.high / r.low) for r in rows)
    return (
        f"  {title:<22} {len(rows):>4} {_median_abs(err):>7.3f} {_median_abs([r.cpu_error for r in rows]):>6.3f} "
        f"{_median_abs([r.gpu_error for r in rows]):>6.3f} {_decision(rows, 1.0, lambda r: r.predicted):>6.2f} "
        f"{_decision(rows, WORTH_IT, lambda r: r.predicted):>6.2f} {cover:>6.0%} {10 ** width:>7.1f}x "
        f"{_median_abs(roof):>8.3f} {_decision(rows, 1.0, lambda r: r.roofline):>5.2f} "
        f"{_median_abs(folk):>6.3f} {_decision(rows, 1.0, lambda r: r.folk):>5.2f}"
    )


HEADER = (
    f"  {'held out':<22} {'rows':>4} {'|err|':>7} {'cpu':>6} {'gpu':>6} {'@1x':>6} {'@3x':>6} {'cover':>6} {'width':>8} "
    f"{'roofline':>8} {'@1x':>5} {'seed01':>6} {'@1x':>5}"
)


def report_published(samples: list[Sample], show_rows: bool) -> None:
    print("Leave one source out: speedup with data on the device (median |log10 error|; 0.146 = 1.4x)")
    print("  decision accuracy at 1x and 3x; 80% interval coverage (target 75-85%) and median width")
    scored = leave_one_source_out(samples)
    print(HEADER)
    by_source: dict[str, list[Scored]] = defaultdict(list)
    by_op: dict[str, list[Scored]] = defaultdict(list)
    for row in scored:
        by_source[row.source].append(row)
        by_op[row.op].append(row)
    for source, rows in by_source.items():
        print(summarise(source, rows))
    mlx = [r for r in scored if r.source.startswith("mlxbench")]
    print(summarise("all mlx-benchmark", mlx))
    print(summarise("all sources", scored))
    print("\n  per op, all held-out sources")
    print(HEADER.replace("held out", "op      "))
    for op, rows in sorted(by_op.items()):
        print(summarise(op, rows))
    if show_rows:
        print("\n  rows: source, op, measured speedup, predicted [interval]")
        for r in scored:
            print(f"    {r.source:<22} {r.label:<24} {r.measured:9.2f} {r.predicted:9.2f} [{r.low:.2f}, {r.high:.2f}]")


def report_own_cpu(samples: list[Sample]) -> None:
    own = [s for s in samples if s.side == "cpu" and not s.pair]
    print(f"\nOur CPU rows ({len(own)}), leave-size-range-out: median |log10 error|, model vs plain roofline")
    series: dict[tuple[str, str, str], list[Sample]] = defaultdict(list)
    for s in own:
        series[(s.op, s.dtype, s.library)].append(s)
    for name, pick in (("largest", slice(-1, None)), ("smallest", slice(0, 1))):
        held: set[int] = set()
        for rows in series.values():
            rows.sort(key=lambda s: s.analytic.total_s)
            quarter = max(1, len(rows) // 4)
            chosen = rows[-quarter:] if pick.start == -1 else rows[:quarter]
            held.update(map(id, chosen))
        others = [s for s in samples if s.side == "cpu" and id(s) not in held]
        fitted = fit_side("cpu", others)
        test = [s for s in own if id(s) in held]
        errors = [math.log10(corrected(s, fitted) / s.measured_s) for s in test]
        analytic = [math.log10(s.analytic.total_s / s.measured_s) for s in test]
        print(f"  {name} quarter of each series held out: {len(test):>4} rows  model {_median_abs(errors):.3f}  library-aware analytic {_median_abs(analytic):.3f}")


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


def _source_file(name: str) -> Path:
    path = Path(name)
    if path.suffix == ".csv" and path.is_file():
        return path
    return training_data_folder() / "published" / f"{name}.csv"


def _side_line(title: str, rows: list[tuple[Sample, float, float, float]]) -> str:
    """rows: (sample, predicted seconds, interval low, interval high) on one side."""
    errors = [math.log10(pred / s.measured_s) for s, pred, _, _ in rows]
    cover = sum(low <= s.measured_s <= high for s, _, low, high in rows) / len(rows)
    return f"    {title:<34} {len(rows):>5} {_median_abs(errors):>7.3f} {statistics.median(errors):>+7.3f} {cover:>6.0%}"


def first_look(samples: list[Sample], names: list[str]) -> None:
    """Score sources never fitted on: train without all of them, predict each as it is."""
    files = {Path(_source_file(name)).stem: _source_file(name) for name in names}
    missing = [str(path) for path in files.values() if not path.is_file()]
    if missing:
        sys.exit(f"no such source: {', '.join(missing)}")
    loaded = {path.resolve() for path in data_files()}
    outside = [path for path in files.values() if path.resolve() not in loaded]
    from_outside = list(load_samples(outside))
    _register_pairs(from_outside)  # a CSV named by its path pairs its own rows
    samples = samples + from_outside
    train = [s for s in samples if s.source not in files]
    models = {side: fit_side(side, [s for s in train if s.side == side]) for side in ("cpu", "gpu")}
    print("First look: the model fitted without these sources, predicting their rows")
    print("  median |log10(predicted / measured)|, bias (median signed; + = predicted too slow), 80% interval coverage")
    for stem, path in files.items():
        rows = [s for s in samples if s.source == stem and s.role != "calibration" and s.side in models]
        refused = len(read_rows(path)) - len([s for s in samples if s.source == stem])
        print(f"\n  {stem}: {len(rows)} rows scored, {refused} refused (no op, dtype or hardware profile expresses them)")
        print(f"    {'side / op dtype':<34} {'rows':>5} {'|err|':>7} {'bias':>7} {'cover':>6}")
        scored: dict[str, list[tuple[Sample, float, float, float]]] = defaultdict(list)
        for sample in rows:
            model = models[sample.side]
            predicted = corrected(sample, model)
            low, high = model.interval(sample.op, sample.library)
            entry = (sample, predicted, predicted * 10**low, predicted * 10**high)
            scored[sample.side].append(entry)
            variant = f"{sample.dtype}{' (TF32)' if sample.cost.tf32 else ''}"
            scored[f"{sample.side} {sample.op} {variant}"].append(entry)
            scored[f"{sample.side} {sample.op} {variant} on {sample.machine}"].append(entry)
            scored[f"{sample.side} on {sample.machine}"].append(entry)
        for side in ("gpu", "cpu"):
            if scored.get(side):
                print(_side_line(f"{side.upper()} side", scored[side]))
                for key in sorted(k for k in scored if k.startswith(f"{side} ")):
                    print(_side_line("  " + key.split(" ", 1)[1], scored[key]))
        pairs = [pair for pair in _pairs.values() if pair[0].source == stem and pair[0].role != "calibration"]
        if pairs:
            speedups = []
            for cpu_row, gpu_row in pairs:
                predicted = corrected(cpu_row, models["cpu"]) / corrected(gpu_row, models["gpu"])
                low, high = interval(models["cpu"], models["gpu"], cpu_row.op, cpu_row.library, predicted)
                speedups.append((predicted, cpu_row.measured_s / gpu_row.measured_s, low, high))
            errors = [math.log10(p / m) for p, m, _, _ in speedups]
            cover = sum(low <= m <= high for _, m, low, high in speedups) / len(speedups)
            print(f"    {'speedup':<34} {len(speedups):>5} {_median_abs(errors):>7.3f} {statistics.median(errors):>+7.3f} {cover:>6.0%}")


def held_out_sources(samples: list[Sample]) -> None:
    """Each published source with GPU rows held out alone: its GPU errors and interval coverage."""
    gpu_rows = [s for s in samples if s.side == "gpu" and s.published and s.role != "calibration"]
    print("Each source held out alone (all others in training): GPU side median |log10(predicted / measured)|,")
    print("  bias (+ = predicted too slow), 80% interval coverage")
    print(f"    {'source / op':<34} {'rows':>5} {'|err|':>7} {'bias':>7} {'cover':>6}")
    covered: dict[str, list[bool]] = defaultdict(list)
    for source in sorted({s.source for s in gpu_rows}):
        model = fit_side("gpu", [s for s in samples if s.side == "gpu" and s.source != source])
        scored: dict[str, list[tuple[Sample, float, float, float]]] = defaultdict(list)
        for sample in (s for s in gpu_rows if s.source == source):
            predicted = corrected(sample, model)
            low, high = model.interval(sample.op, sample.library)
            entry = (sample, predicted, predicted * 10**low, predicted * 10**high)
            scored[source].append(entry)
            scored[f"  {sample.op}"].append(entry)
            covered[source].append(entry[2] <= sample.measured_s <= entry[3])
        for key, rows in scored.items():
            print(_side_line(key, rows))
    pooled = [hit for hits in covered.values() for hit in hits]
    balanced = statistics.mean(sum(hits) / len(hits) for hits in covered.values())
    print(f"  coverage pooled over {len(pooled)} rows: {sum(pooled) / len(pooled):.0%}; each source weighing the same: {balanced:.0%}")


def tensor_core_ratios(samples: list[Sample]) -> None:
    """Median predicted / measured of tensor-core matrix products per GPU, each source held out."""
    rows = [s for s in samples if s.side == "gpu" and s.published and s.op == "matmul" and _on_tensor_cores(s)]
    ratios: dict[str, list[float]] = defaultdict(list)
    sources: dict[str, set[str]] = defaultdict(set)
    for source in sorted({s.source for s in rows}):
        model = fit_side("gpu", [s for s in samples if s.side == "gpu" and s.source != source])
        for sample in (s for s in rows if s.source == source):
            ratios[sample.machine].append(corrected(sample, model) / sample.measured_s)
            sources[sample.machine].add(source)
    print("Tensor-core matrix products, each source held out: median predicted / measured per GPU (target 1/1.3-1.3)")
    for machine, values in sorted(ratios.items()):
        median = statistics.median(values)
        verdict = "ok" if 1 / 1.3 <= median <= 1.3 else "OUTSIDE"
        print(f"  {machine:<20} {len(values):>5} rows  {median:6.3f}  {verdict:<7}  {', '.join(sorted(sources[machine]))}")


def _on_tensor_cores(sample: Sample) -> bool:
    return matmul_peak(catalog()[0][sample.machine], sample.dtype, sample.cost.tf32)[1]


def _register_pairs(samples: list[Sample]) -> None:
    """The CPU and GPU rows a source pairs (same `pair` id), for its speedups."""
    halves: dict[tuple[str, str], dict[str, Sample]] = defaultdict(dict)
    for s in samples:
        if s.pair:
            halves[(s.source, s.pair)][s.side] = s
    _pairs.update({key: (h["cpu"], h["gpu"]) for key, h in halves.items() if "cpu" in h and "gpu" in h})


def main() -> None:
    samples = list(load_samples())
    _register_pairs(samples)
    looks = [sys.argv[i + 1] for i, arg in enumerate(sys.argv[:-1]) if arg == "--first-look"]
    if looks:
        first_look(samples, looks)
        return
    if "--held-out" in sys.argv:
        held_out_sources(samples)
        return
    if "--tensor-cores" in sys.argv:
        tensor_core_ratios(samples)
        return
    report_published(samples, "--rows" in sys.argv)
    report_own_cpu(samples)
    if "--no-speed" not in sys.argv:
        speed()


if __name__ == "__main__":
    main()
