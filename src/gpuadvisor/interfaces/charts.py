"""Small, dependency-free SVG charts: log-log lines for sweeps, bars for the HTML report."""

from __future__ import annotations

import math
from html import escape

PALETTE = {"CPU": "#7f7f7f", "GPU": "#1f77b4", "GPU + copies": "#ff7f0e", "copies": "#ff7f0e"}


def _decades(low: float, high: float) -> list[float]:
    return [10.0**k for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]


def _tick_label(value: float, seconds: bool, digits: int = 6) -> str:
    if not seconds:
        exponent = round(math.log10(value))
        return f"1e{exponent}" if abs(exponent) > 3 else f"{value:g}"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if value >= scale:
            return f"{value / scale:.{digits}g} {unit}"
    return f"{value:.{digits}g} s"


def line_chart_svg(
    title: str,
    x_label: str,
    series: dict[str, list[tuple[float, float]]],
    marker: tuple[float, str] | None = None,
    width: int = 760,
    height: int = 440,
) -> str:
    """Log-log chart of seconds against size, one polyline per series, optional vertical marker."""
    left, right, top, bottom = 90, 170, 50, 60
    points = [p for values in series.values() for p in values if p[0] > 0 and p[1] > 0]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x_ticks, y_ticks = _decades(min(xs), max(xs)), _decades(min(ys), max(ys))
    x0, x1 = math.log10(x_ticks[0]), math.log10(x_ticks[-1])
    y0, y1 = math.log10(y_ticks[0]), math.log10(y_ticks[-1])
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (math.log10(x) - x0) / (x1 - x0 or 1) * plot_w

    def py(y: float) -> float:
        return top + plot_h - (math.log10(y) - y0) / (y1 - y0 or 1) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="28" font-size="15" font-weight="bold">{escape(title)}</text>',
    ]
    for tick in x_ticks:
        parts.append(f'<line x1="{px(tick):.1f}" y1="{top}" x2="{px(tick):.1f}" y2="{top + plot_h}" stroke="#e5e5e5"/>')
        parts.append(f'<text x="{px(tick):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{_tick_label(tick, False)}</text>')
    for tick in y_ticks:
        parts.append(f'<line x1="{left}" y1="{py(tick):.1f}" x2="{left + plot_w}" y2="{py(tick):.1f}" stroke="#e5e5e5"/>')
        parts.append(f'<text x="{left - 8}" y="{py(tick) + 4:.1f}" text-anchor="end">{_tick_label(tick, True)}</text>')
    parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 18}" text-anchor="middle">{escape(x_label)}</text>')
    parts.append(f'<text x="22" y="{top + plot_h / 2}" text-anchor="middle" transform="rotate(-90 22 {top + plot_h / 2})">time per call</text>')
    if marker is not None:
        mx = px(marker[0])
        parts.append(f'<line x1="{mx:.1f}" y1="{top}" x2="{mx:.1f}" y2="{top + plot_h}" stroke="#d62728" stroke-dasharray="6 4"/>')
        parts.append(f'<text x="{mx + 5:.1f}" y="{top + 14}" fill="#d62728">{escape(marker[1])}</text>')
    for index, (name, values) in enumerate(series.items()):
        color = PALETTE.get(name, "#2ca02c")
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in values if x > 0 and y > 0)
        parts.append(f'<polyline class="series" points="{path}" fill="none" stroke="{color}" stroke-width="2.5"/>')
        ly = top + 20 + index * 22
        parts.append(f'<line x1="{left + plot_w + 15}" y1="{ly}" x2="{left + plot_w + 40}" y2="{ly}" stroke="{color}" stroke-width="3"/>')
        parts.append(f'<text x="{left + plot_w + 46}" y="{ly + 4}">{escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def bar_chart_svg(bars: list[tuple[str, float]], width: int = 420) -> str:
    """Horizontal bars of seconds on a log scale (times differ by orders of magnitude), with a
    labelled time axis: a tick per decade, so that a bar twice as long is not read as twice the time."""
    positive = [seconds for _, seconds in bars if seconds > 0]
    if not positive:
        return ""
    ticks = _decades(min(positive) / 3, max(positive))
    low, high = ticks[0], ticks[-1]
    label_w, value_w, row, axis_h = 90, 70, 26, 44
    span = width - label_w - value_w
    height = row * len(bars) + 10 + axis_h

    def px(seconds: float) -> float:
        return label_w + math.log10(seconds / low) / math.log10(high / low or 10) * span

    axis_y = 5 + row * len(bars) + 4
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bars" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
    ]
    for tick in ticks:
        x = px(tick)
        parts.append(f'<line x1="{x:.1f}" y1="5" x2="{x:.1f}" y2="{axis_y + 4}" stroke="#e0e0e0"/>')
        parts.append(f'<text class="tick" x="{x:.1f}" y="{axis_y + 17}" text-anchor="middle" font-size="10">{_tick_label(tick, True)}</text>')
    parts.append(f'<line class="axis" x1="{label_w}" y1="{axis_y}" x2="{label_w + span}" y2="{axis_y}" stroke="#333"/>')
    parts.append(f'<text class="axis-label" x="{label_w + span / 2:.1f}" y="{axis_y + 34}" text-anchor="middle">time per call (log scale)</text>')
    for index, (name, seconds) in enumerate(bars):
        y = 5 + index * row
        length = 0.0 if seconds <= 0 else max(2.0, px(seconds) - label_w)
        parts.append(f'<text x="0" y="{y + 15}">{escape(name)}</text>')
        parts.append(f'<rect class="bar" x="{label_w}" y="{y + 3}" width="{length:.1f}" height="16" fill="{PALETTE.get(name, "#2ca02c")}"/>')
        parts.append(f'<text x="{label_w + length + 6:.1f}" y="{y + 15}">{_tick_label(seconds, True, 3) if seconds > 0 else "none"}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
