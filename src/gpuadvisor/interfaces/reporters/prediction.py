"""Text rendering of one prediction, for `gpuadvisor predict`."""

from __future__ import annotations

from gpuadvisor.prediction.predictor import Prediction


def duration(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def factor(value: float) -> str:
    return f"{value:.0f}x" if value >= 10 else f"{value:.2g}x"


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
            f"  basis: CPU {p.basis.get('cpu', '?')}; GPU {p.basis.get('gpu', '?')}",
        ]
    )
