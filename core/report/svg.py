"""Small SVG plots for the HTML report, written by hand so ``core`` needs no Qt and no
matplotlib: box plots per group (log10 axis for perplexities), a scatter plot (entity
perplexity against statement count) and overlaid distributions (head against tail).

Each function returns one ``<svg>`` element as text, meant to be embedded inline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import numpy as np

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
MAX_OUTLIERS = 150  # per box: beyond that, an SVG gets heavy and says nothing more
MAX_POINTS = 4000
FONT = "font-family='sans-serif' font-size='11'"

Groups = Sequence[tuple[str, Sequence[float]]]


def _clean(values: Sequence[float], log10: bool) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    array = array[np.isfinite(array)]
    if log10:
        array = np.log10(array[array > 0])
    return array


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (1, 2, 2.5, 5 × 10^k steps)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high <= low:
        high = low + 1.0
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def _axis_range(low: float, high: float, log10: bool) -> tuple[list[float], float, float]:
    """An axis's ticks (whole decades on a log10 axis) and its range widened to them."""
    ticks = ([float(t) for t in range(math.floor(low), math.ceil(high) + 1)] if log10
             else nice_ticks(low, high))
    if ticks:
        low, high = min(low, ticks[0]), max(high, ticks[-1])
    if high <= low:
        high = low + 1
    return ticks, low, high


def _fmt(value: float, log10: bool) -> str:
    if log10:
        return f"1e{int(value)}" if abs(value) >= 5 else f"{10 ** value:g}"
    return f"{value:g}"


class _Canvas:
    def __init__(self, width: int, height: int, title: str, *, left: int = 64,
                 bottom: int = 64, top: int = 28, right: int = 16) -> None:
        self.width, self.height = width, height
        self.left, self.right, self.top, self.bottom = left, right, top, bottom
        self.parts: list[str] = [
            f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
            f"viewBox='0 0 {width} {height}' role='img' aria-label='{escape(title, True)}'>",
            f"<rect width='{width}' height='{height}' fill='white'/>",
            f"<text x='{width / 2:.1f}' y='16' text-anchor='middle' {FONT} "
            f"font-weight='bold'>{escape(title)}</text>",
        ]

    @property
    def plot_width(self) -> float:
        return self.width - self.left - self.right

    @property
    def plot_height(self) -> float:
        return self.height - self.top - self.bottom

    def y_axis(self, low: float, high: float, label: str, log10: bool) -> tuple[float, float]:
        ticks, low, high = _axis_range(low, high, log10)
        for tick in ticks:
            y = self.y(tick, low, high)
            self.parts.append(f"<line x1='{self.left}' x2='{self.width - self.right}' "
                              f"y1='{y:.1f}' y2='{y:.1f}' stroke='#e5e5e5'/>")
            self.parts.append(f"<text x='{self.left - 4}' y='{y + 4:.1f}' text-anchor='end' "
                              f"{FONT}>{escape(_fmt(tick, log10))}</text>")
        self.parts.append(
            f"<text transform='translate(12 {self.top + self.plot_height / 2:.1f}) rotate(-90)'"
            f" text-anchor='middle' {FONT}>{escape(label)}</text>")
        return low, high

    def y(self, value: float, low: float, high: float) -> float:
        return self.top + self.plot_height * (1 - (value - low) / (high - low))

    def x_axis(self, low: float, high: float, label: str, log10: bool) -> tuple[float, float]:
        ticks, low, high = _axis_range(low, high, log10)
        base = self.height - self.bottom
        for tick in ticks:
            x = self.x(tick, low, high)
            self.parts.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{self.top}' y2='{base}' "
                              "stroke='#e5e5e5'/>")
            self.parts.append(f"<text x='{x:.1f}' y='{base + 14}' text-anchor='middle' "
                              f"{FONT}>{escape(_fmt(tick, log10))}</text>")
        self.parts.append(f"<text x='{self.left + self.plot_width / 2:.1f}' "
                          f"y='{self.height - 8}' text-anchor='middle' {FONT}>"
                          f"{escape(label)}</text>")
        return low, high

    def x(self, value: float, low: float, high: float) -> float:
        return self.left + self.plot_width * (value - low) / (high - low)

    def frame(self) -> None:
        self.parts.append(f"<rect x='{self.left}' y='{self.top}' width='{self.plot_width}' "
                          f"height='{self.plot_height}' fill='none' stroke='#999'/>")

    def empty(self, message: str) -> str:
        self.parts.append(f"<text x='{self.width / 2:.1f}' y='{self.height / 2:.1f}' "
                          f"text-anchor='middle' {FONT}>{escape(message)}</text>")
        return self.done()

    def done(self) -> str:
        return "".join(self.parts) + "</svg>"


def box_plot_svg(groups: Groups, *, title: str, ylabel: str = "", log10: bool = False,
                 width: int = 640, height: int = 320) -> str:
    """One Tukey box per group (whiskers at 1.5 IQR, outliers as dots)."""
    canvas = _Canvas(width, height, title)
    cleaned = [(label, _clean(values, log10)) for label, values in groups]
    cleaned = [(label, v) for label, v in cleaned if v.size]
    if not cleaned:
        return canvas.empty("no values")
    everything = np.concatenate([v for _, v in cleaned])
    low, high = float(everything.min()), float(everything.max())
    pad = (high - low) * 0.05 or 0.5
    low, high = canvas.y_axis(low - pad, high + pad,
                              f"{ylabel} (log10 axis)" if log10 else ylabel, log10)
    slot = canvas.plot_width / len(cleaned)
    box = min(slot * 0.6, 60)
    for i, (label, values) in enumerate(cleaned):
        colour = PALETTE[i % len(PALETTE)]
        q1, median, q3 = np.percentile(values, [25, 50, 75])
        iqr = q3 - q1
        inside = values[(values >= q1 - 1.5 * iqr) & (values <= q3 + 1.5 * iqr)]
        whisker_low, whisker_high = float(inside.min()), float(inside.max())
        centre = canvas.left + slot * (i + 0.5)
        y = lambda v: canvas.y(v, low, high)  # noqa: E731 - a local shorthand
        canvas.parts.append(
            f"<g><title>{escape(label)}: n={values.size}, median "
            f"{escape(_fmt(float(median), False) if not log10 else f'{10 ** median:.4g}')}"
            f"</title>"
            f"<line x1='{centre:.1f}' x2='{centre:.1f}' y1='{y(whisker_low):.1f}' "
            f"y2='{y(q1):.1f}' stroke='{colour}'/>"
            f"<line x1='{centre:.1f}' x2='{centre:.1f}' y1='{y(q3):.1f}' "
            f"y2='{y(whisker_high):.1f}' stroke='{colour}'/>"
            f"<rect x='{centre - box / 2:.1f}' y='{y(q3):.1f}' width='{box:.1f}' "
            f"height='{max(y(q1) - y(q3), 0.5):.1f}' fill='{colour}' fill-opacity='0.25' "
            f"stroke='{colour}'/>"
            f"<line x1='{centre - box / 2:.1f}' x2='{centre + box / 2:.1f}' "
            f"y1='{y(median):.1f}' y2='{y(median):.1f}' stroke='{colour}' stroke-width='2'/>"
            "</g>")
        outliers = values[(values < q1 - 1.5 * iqr) | (values > q3 + 1.5 * iqr)]
        for value in outliers[:: max(1, outliers.size // MAX_OUTLIERS)]:
            canvas.parts.append(f"<circle cx='{centre:.1f}' cy='{y(float(value)):.1f}' r='1.8' "
                                f"fill='none' stroke='{colour}'/>")
        short = label if len(label) <= 22 else label[:21] + "…"
        canvas.parts.append(
            f"<text transform='translate({centre + 4:.1f} {canvas.height - canvas.bottom + 12}) "
            f"rotate(-20)' text-anchor='end' {FONT}>{escape(short)} (n={values.size})</text>")
    canvas.frame()
    return canvas.done()


def scatter_svg(x: Sequence[float], y: Sequence[float], *, title: str, xlabel: str,
                ylabel: str, log_x: bool = False, log_y: bool = False, width: int = 640,
                height: int = 320) -> str:
    """Points (x, y); non-finite (and, on a log axis, non-positive) points are left out."""
    canvas = _Canvas(width, height, title, bottom=40)
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(xs) & np.isfinite(ys)
    if log_x:
        keep &= xs > 0
    if log_y:
        keep &= ys > 0
    xs, ys = xs[keep], ys[keep]
    if not xs.size:
        return canvas.empty("no values")
    if log_x:
        xs = np.log10(xs)
    if log_y:
        ys = np.log10(ys)
    pad_x = (xs.max() - xs.min()) * 0.05 or 0.5
    pad_y = (ys.max() - ys.min()) * 0.05 or 0.5
    x_low, x_high = canvas.x_axis(float(xs.min() - pad_x), float(xs.max() + pad_x),
                                  xlabel + (" (log10)" if log_x else ""), log_x)
    y_low, y_high = canvas.y_axis(float(ys.min() - pad_y), float(ys.max() + pad_y),
                                  ylabel + (" (log10)" if log_y else ""), log_y)
    step = max(1, xs.size // MAX_POINTS)
    for px, py in zip(xs[::step], ys[::step], strict=True):
        canvas.parts.append(f"<circle cx='{canvas.x(float(px), x_low, x_high):.1f}' "
                            f"cy='{canvas.y(float(py), y_low, y_high):.1f}' r='2.2' "
                            f"fill='{PALETTE[0]}' fill-opacity='0.5'/>")
    canvas.frame()
    return canvas.done()


def distribution_svg(groups: Groups, *, title: str, xlabel: str, bins: int = 20,
                     log10: bool = False, width: int = 640, height: int = 280) -> str:
    """Overlaid histograms (share of each group's items per bin) with a legend."""
    canvas = _Canvas(width, height, title, bottom=40)
    cleaned = [(label, _clean(values, log10)) for label, values in groups]
    cleaned = [(label, v) for label, v in cleaned if v.size]
    if not cleaned:
        return canvas.empty("no values")
    everything = np.concatenate([v for _, v in cleaned])
    low, high = float(everything.min()), float(everything.max())
    if high <= low:
        low, high = low - 0.5, high + 0.5
    edges = np.linspace(low, high, bins + 1)
    shares = [np.histogram(v, bins=edges)[0] / v.size for _, v in cleaned]
    top = float(max(s.max() for s in shares))
    x_low, x_high = canvas.x_axis(low, high, xlabel + (" (log10)" if log10 else ""), log10)
    y_low, y_high = canvas.y_axis(0.0, top * 1.1 or 1.0, "share of items", False)
    for i, ((label, values), share) in enumerate(zip(cleaned, shares, strict=True)):
        colour = PALETTE[i % len(PALETTE)]
        points = []
        for j, s in enumerate(share):
            for edge in (edges[j], edges[j + 1]):
                points.append(f"{canvas.x(float(edge), x_low, x_high):.1f},"
                              f"{canvas.y(float(s), y_low, y_high):.1f}")
        canvas.parts.append(f"<polyline points='{' '.join(points)}' fill='none' "
                            f"stroke='{colour}' stroke-width='1.6'/>")
        canvas.parts.append(
            f"<text x='{canvas.width - canvas.right - 4}' y='{canvas.top + 14 + 14 * i}' "
            f"text-anchor='end' fill='{colour}' {FONT}>{escape(label)} (n={values.size})"
            "</text>")
    canvas.frame()
    return canvas.done()
