"""Text rendering of one prediction, for `gpuadvisor predict`."""

from __future__ import annotations

from gpuadvisor.interfaces.charts import line_chart_svg
from gpuadvisor.prediction.formatting import duration, factor
from gpuadvisor.prediction.predictor import Prediction
from gpuadvisor.prediction.sweep import Sweep


def render_prediction(p: Prediction) -> str:
    shapes = " , ".join("x".join(map(str, s)) for s in p.shapes)
    copies = "data starts on the host, result comes back" if p.data_on == "host" else "data already on the GPU"
    low, high = p.interval
    return "\n".join(
        [
            f"{p.op} {shapes} {p.dtype}",
            f"  CPU  {duration(p.cpu_seconds):>10}   {p.cpu_name} [{p.cpu}]",
            f"  GPU  {duration(p.gpu_seconds):>10}   {p.gpu_name} [{p.gpu}]",
            f"  copy {duration(p.transfer_seconds):>10}   {copies}",
            f"  speedup {factor(p.speedup)} (likely {factor(low)} to {factor(high)}); {factor(p.speedup_compute_only)} without copies",
            f"  {p.recommendation}",
            f"  basis: CPU time: {p.basis.get('cpu', '?')}",
            f"         GPU time: {p.basis.get('gpu', '?')}",
        ]
    )


def _size(n: int) -> str:
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def render_sweep(result: Sweep) -> str:
    first = result.predictions[0]
    lines = [
        f"{result.op} {first.dtype}: {first.cpu_name} [{first.cpu}] vs {first.gpu_name} [{first.gpu}], data on the {first.data_on}",
        f"  {result.size_label:>18} {'CPU':>10} {'GPU':>10} {'GPU+copies':>11} {'speedup':>8}",
    ]
    for n, p in zip(result.sizes, result.predictions):
        total = p.gpu_seconds + p.transfer_seconds
        lines.append(
            f"  {_size(n):>18} {duration(p.cpu_seconds):>10} {duration(p.gpu_seconds):>10} {duration(total):>11} {factor(p.speedup):>8}"
        )
    if result.crossover is not None:
        lines.append(f"  The GPU wins from {_size(result.crossover)} on, copies included.")
    else:
        lines.append("  The GPU does not win at any of these sizes once copies are counted.")
    if result.crossover_compute_only is not None and result.crossover_compute_only != result.crossover:
        lines.append(f"  With the data already on the GPU it wins from {_size(result.crossover_compute_only)} on.")
    return "\n".join(lines)


def sweep_series(result: Sweep) -> tuple[str, dict[str, list[tuple[float, float]]], tuple[float, str] | None]:
    first = result.predictions[0]
    title = f"{result.op} {first.dtype}: {first.cpu_name} vs {first.gpu_name}"
    series = {
        "CPU": [(float(n), p.cpu_seconds) for n, p in zip(result.sizes, result.predictions)],
        "GPU": [(float(n), p.gpu_seconds) for n, p in zip(result.sizes, result.predictions)],
        "GPU + copies": [(float(n), p.gpu_seconds + p.transfer_seconds) for n, p in zip(result.sizes, result.predictions)],
    }
    marker = (float(result.crossover), f"crossover {_size(result.crossover)}") if result.crossover else None
    return title, series, marker


def sweep_chart(result: Sweep) -> str:
    title, series, marker = sweep_series(result)
    return line_chart_svg(title, result.size_label, series, marker)
