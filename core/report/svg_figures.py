"""The HTML report's figures, written as plain SVG from a ``PlotSpec``.

Every export for a paper (PNG, SVG, PDF) is drawn with matplotlib by
:mod:`core.report.figures`. The HTML report's inline figures are written here instead:
importing matplotlib and laying out its figures took about a second of the report on a
WebNLG-2020-sized session (three box plots), most of its HTML time, for figures a browser
draws from a few hundred elements. Both draw from the same ``PlotSpec`` with the same
numbers, taken from :mod:`core.report.figures`: the Tukey boxes (``box_stats``), the axis
ranges (``axis_limits``, within each metric's possible range), the bins (``BINS``), the
colours (``PALETTE``) and the thinning of outliers and points (``MAX_OUTLIERS``,
``MAX_POINTS``). Text is SVG text, in the reader's sans-serif font: it can be searched and
copied from the page. Everything from the session (model names, titles) is escaped.

A figure is ``WIDTH`` x ``HEIGHT`` pixels (``DEFAULT_SIZE_IN`` at 100 pixels an inch). Its
margins are sized from the longest tick label, with ``CHAR_EM`` as the width of an average
character (no font metrics are at hand in a browser's stead).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from core.report.figures import (
    BINS,
    DEFAULT_SIZE_IN,
    PALETTE,
    axis_label,
    box_plot_data,
    distribution_data,
    plot_arguments,
    scatter_data,
    shown_outliers,
)

PIXELS_PER_INCH = 100
WIDTH = round(DEFAULT_SIZE_IN[0] * PIXELS_PER_INCH)
HEIGHT = round(DEFAULT_SIZE_IN[1] * PIXELS_PER_INCH)
TITLE_PX = 13
LABEL_PX = 12
TICK_PX = 10
CHAR_EM = 0.6  # an average character's width, in font sizes (margins only)
LINE_EM = 1.2  # a line of text's height, in font sizes
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
GRID_OPACITY = 0.2
BOX_FILL_OPACITY = 0.27  # matplotlib's "#rrggbb44"
STEP_FILL_OPACITY = 0.19  # matplotlib's "#rrggbb30"
TICKS = 6  # about as many labelled ticks on a linear axis
TURN_DEGREES = 35  # x tick labels too wide to stand side by side are turned this much


def _num(value: float) -> str:
    """A coordinate with one decimal (a tenth of a pixel)."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


# -- axes ------------------------------------------------------------------------------------


def linear_ticks(low: float, high: float, target: int = TICKS) -> list[tuple[float, str]]:
    """Ticks at a round step (1, 2, 2.5 or 5 times a power of ten) inside [low, high], each
    with its label written with the decimals that step needs."""
    span = high - low
    if not span > 0 or not math.isfinite(span):
        return [(low, _plain(low))]
    raw = span / target
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(s * power for s in (1, 2, 2.5, 5, 10) if s * power >= raw * (1 - 1e-9))
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if abs(step / power - 2.5) < 1e-9 and step < 10:
        decimals += 1  # 2.5, 0.25: a digit more than their power of ten
    first = math.ceil(low / step - 1e-9)
    ticks = []
    for k in range(first, first + int(span / step) + 2):
        value = k * step
        if value > high + step * 1e-9:
            break
        label = f"{value:.{decimals}f}"
        ticks.append((value, "0" if float(label) == 0 else label))
    return ticks


def log_ticks(low: float, high: float) -> list[tuple[float, str]]:
    """Ticks on a log10 axis (``low``, ``high``: log10 of the values), labelled in the
    values themselves (10, 100, 1000): each power of ten inside, and 2 and 5 times them
    when the axis spans under three decades, 2, 3 and 5 times under one (one or two
    labelled ticks would not let a reader read values off)."""
    ticks = []
    span = high - low
    multiples = (1, 2, 3, 5) if span < 1 else (1, 2, 5) if span < 3 else (1,)
    for decade in range(math.floor(low), math.ceil(high) + 1):
        for m in multiples:
            at = decade + math.log10(m)
            if low - 1e-9 <= at <= high + 1e-9:
                ticks.append((at, _plain(m * 10.0**decade)))
    return ticks


def _plain(value: float) -> str:
    """A tick value as a reader writes it: 1000, 20, 0.5, 0.001."""
    if value != 0 and (abs(value) >= 1e7 or abs(value) < 1e-4):
        return f"{value:.0e}"
    return f"{value:.6f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class _Frame:
    """Where the plot area lies in the figure and how values map into it."""

    left: float
    top: float
    right: float
    bottom: float
    x_range: tuple[float, float]
    y_range: tuple[float, float]

    def x(self, value: float) -> float:
        low, high = self.x_range
        return self.left + (value - low) / (high - low) * (self.right - self.left)

    def y(self, value: float) -> float:
        low, high = self.y_range
        return self.bottom - (value - low) / (high - low) * (self.bottom - self.top)


class _Svg:
    """The elements of one figure, written in order."""

    def __init__(self, title: str, prefix: str) -> None:
        self.title = title
        self.prefix = re.sub(r"[^A-Za-z0-9_-]", "", prefix)
        self.parts: list[str] = []
        self.defs: list[str] = []
        self.height = HEIGHT

    @property
    def clip_id(self) -> str:
        return f"{self.prefix}-plot" if self.prefix else "plot"

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: float,
        *,
        anchor: str = "middle",
        rotate: float = 0,
        cls: str = "",
    ) -> None:
        """``text`` (escaped), its first baseline at ``y``, a ``<text>`` per line (every
        SVG reader draws those; not all draw ``<tspan>`` lines); ``rotate``: degrees
        anticlockwise about (x, y)."""
        for i, line in enumerate(text.split("\n")):
            at = y + i * size * LINE_EM
            attrs = f'x="{_num(x)}" y="{_num(at)}" font-size="{size:g}" text-anchor="{anchor}"'
            if rotate:
                attrs += f' transform="rotate({-rotate:g} {_num(x)} {_num(y)})"'
            if cls:
                attrs += f' class="{cls}"'
            self.parts.append(f"<text {attrs}>{escape(line)}</text>")

    def line(self, x1: float, y1: float, x2: float, y2: float, colour: str, width: float) -> None:
        self.parts.append(
            f'<line x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}" y2="{_num(y2)}" '
            f'stroke="{colour}" stroke-width="{width:g}"/>'
        )

    def document(self) -> str:
        # The clip path in <defs>: a reader that does not know clip paths skips it there
        # instead of drawing its rectangle.
        defs = f"<defs>{''.join(self.defs)}</defs>" if self.defs else ""
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{self.height}" '
            f'viewBox="0 0 {WIDTH} {self.height}" role="img" font-family="{FONT}">'
            f"<title>{escape(self.title)}</title>{defs}"
            f'<rect width="{WIDTH}" height="{self.height}" fill="white"/>'
            + "".join(self.parts)
            + "</svg>"
        )


def _label_width(labels: Sequence[str], size: float) -> float:
    longest = max((len(line) for label in labels for line in label.split("\n")), default=0)
    return longest * size * CHAR_EM


def _frame(
    svg: _Svg,
    *,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    y_ticks: list[tuple[float, str]],
    x_ticks: list[tuple[float, str]],
    x_tick_px: float,
    xlabel: str,
    ylabel: str,
) -> _Frame:
    """The title, the axes with their ticks, grid and labels; the frame inside them.

    X tick labels too wide for the space between two ticks are written on one line each
    and turned by ``TURN_DEGREES``; the figure grows by what they need below the plot, so
    the plot keeps its height."""
    left = 8 + (LABEL_PX * LINE_EM if ylabel else 0)
    left += _label_width([t for _, t in y_ticks], TICK_PX) + 8
    right: float = WIDTH - 12
    labels = [label for _, label in x_ticks]
    slot = (right - left) / max(len(x_ticks), 1)
    turned = len(x_ticks) > 1 and _label_width(labels, x_tick_px) > slot * 0.95
    if turned:
        labels = [" ".join(label.split("\n")) for label in labels]
        reach = _label_width(labels, x_tick_px) * math.sin(math.radians(TURN_DEGREES))
        below = reach + x_tick_px * 1.5
        # A turned label reaches left of its tick; the first ones must stay inside.
        along = math.cos(math.radians(TURN_DEGREES))
        for _ in range(3):
            span = (right - left) / (x_range[1] - x_range[0])
            reach_left = max(
                along * _label_width([label], x_tick_px) - (value - x_range[0]) * span
                for (value, _), label in zip(x_ticks, labels, strict=True)
            )
            if reach_left <= left - 4:
                break
            left = reach_left + 4
    else:
        lines = max((label.count("\n") + 1 for label in labels), default=1)
        below = lines * x_tick_px * LINE_EM
        # The last label may reach past the plot's right edge by half its width.
        right -= min(_label_width(labels[-1:], x_tick_px) / 2, 40)
    top = 8 + TITLE_PX * LINE_EM + 4
    bottom = HEIGHT - 8 - (LABEL_PX * LINE_EM if xlabel else 0) - below - 6
    plot_height = bottom - top
    minimum = HEIGHT * 0.55  # a plot never squeezed below this by its labels
    if plot_height < minimum:
        svg.height = math.ceil(HEIGHT + minimum - plot_height)
        bottom = top + minimum
    frame = _Frame(left, top, right, bottom, x_range, y_range)
    svg.text(WIDTH / 2, 8 + TITLE_PX, svg.title, TITLE_PX, cls="title")
    grid = []
    for value, label in y_ticks:
        y = frame.y(value)
        grid.append(f"M{_num(left)} {_num(y)}H{_num(right)}")
        svg.text(left - 6, y + TICK_PX * 0.35, label, TICK_PX, anchor="end", cls="ytick")
    for (value, _label), label in zip(x_ticks, labels, strict=True):
        x = frame.x(value)
        if turned:
            y = bottom + 6 + x_tick_px * 0.7
            svg.text(x, y, label, x_tick_px, anchor="end", rotate=TURN_DEGREES, cls="xtick")
        elif label:
            svg.text(x, bottom + 4 + x_tick_px, label, x_tick_px, cls="xtick")
    svg.parts.append(
        f'<path d="{"".join(grid)}" stroke="black" stroke-opacity="{GRID_OPACITY}" fill="none"/>'
    )
    svg.parts.append(
        f'<rect x="{_num(left)}" y="{_num(top)}" width="{_num(right - left)}" '
        f'height="{_num(bottom - top)}" fill="none" stroke="black" stroke-width="0.8"/>'
    )
    ticks = "".join(f"M{_num(frame.x(v))} {_num(bottom)}v3.5" for v, _ in x_ticks)
    ticks += "".join(f"M{_num(left)} {_num(frame.y(v))}h-3.5" for v, _ in y_ticks)
    svg.parts.append(f'<path d="{ticks}" stroke="black" stroke-width="0.8"/>')
    if ylabel:
        svg.text(8 + LABEL_PX, (top + bottom) / 2, ylabel, LABEL_PX, rotate=90, cls="ylabel")
    if xlabel:
        svg.text((left + right) / 2, svg.height - 8, xlabel, LABEL_PX, cls="xlabel")
    svg.defs.append(
        f'<clipPath id="{svg.clip_id}"><rect x="{_num(left)}" y="{_num(top)}" '
        f'width="{_num(right - left)}" height="{_num(bottom - top)}"/></clipPath>'
    )
    return frame


def _ticks(limits: tuple[float, float], log10: bool) -> list[tuple[float, str]]:
    return log_ticks(*limits) if log10 else linear_ticks(*limits)


def _empty(svg: _Svg) -> str:
    svg.text(WIDTH / 2, 8 + TITLE_PX, svg.title, TITLE_PX, cls="title")
    svg.text(WIDTH / 2, HEIGHT / 2, "no values", LABEL_PX)
    return svg.document()


# -- the three kinds -------------------------------------------------------------------------


def box_svg(
    groups: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    ylabel: str = "",
    log10: bool = False,
    metric: str = "",
    prefix: str = "",
) -> str:
    """One Tukey box per group, as the exported box figure: quartile boxes, thick
    medians, whiskers with caps, outliers as rings; on a log10 axis for perplexities."""
    from core.report.figures import _wrap

    svg = _Svg(title, prefix)
    boxes, limits = box_plot_data(groups, log10, metric)
    if not boxes:
        return _empty(svg)
    tick_px: float = TICK_PX - 3 if len(boxes) > 6 else TICK_PX - 2
    frame = _frame(
        svg,
        x_range=(-0.6, len(boxes) - 0.4),
        y_range=limits,
        y_ticks=_ticks(limits, log10),
        x_ticks=[(i, f"{_wrap(b.label)}\nn={b.n:,}") for i, b in enumerate(boxes)],
        x_tick_px=tick_px,
        xlabel="",
        ylabel=axis_label(ylabel, log10),
    )
    half = frame.x(0.3) - frame.x(0.0)
    svg.parts.append(f'<g clip-path="url(#{svg.clip_id})">')
    for i, b in enumerate(boxes):
        colour = PALETTE[i % len(PALETTE)]
        x = frame.x(i)
        q1, q3 = frame.y(b.q1), frame.y(b.q3)
        svg.parts.append(f'<g class="box" data-group="{escape(b.label)}">')
        for end, edge in ((b.whisker_low, q1), (b.whisker_high, q3)):
            svg.line(x, edge, x, frame.y(end), colour, 1.5)
            svg.line(x - half / 2, frame.y(end), x + half / 2, frame.y(end), colour, 1.5)
        svg.parts.append(
            f'<rect x="{_num(x - half)}" y="{_num(q3)}" width="{_num(2 * half)}" '
            f'height="{_num(q1 - q3)}" fill="{colour}" fill-opacity="{BOX_FILL_OPACITY}" '
            f'stroke="{colour}" stroke-width="1.5"/>'
        )
        svg.line(x - half, frame.y(b.median), x + half, frame.y(b.median), colour, 3)
        shown = shown_outliers(b)
        svg.parts.extend(
            f'<circle cx="{_num(x)}" cy="{_num(frame.y(float(v)))}" r="2" fill="none" '
            f'stroke="{colour}"/>'
            for v in shown
        )
        svg.parts.append("</g>")
    svg.parts.append("</g>")
    return svg.document()


def distribution_svg(
    groups: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    xlabel: str = "",
    log10: bool = False,
    metric: str = "",
    bins: int = BINS,
    prefix: str = "",
) -> str:
    """Overlaid step histograms, each the share of its group's items per bin (shared bins
    over all groups' values), with a legend, as the exported distribution figure."""
    svg = _Svg(title, prefix)
    data = distribution_data(groups, log10, metric, bins)
    if data is None:
        return _empty(svg)
    edges, shares, x_limits = data.edges, data.shares, data.x_limits
    top = max(float(s.max()) for s in shares) * 1.05 or 1.0
    frame = _frame(
        svg,
        x_range=x_limits,
        y_range=(0.0, top),
        y_ticks=linear_ticks(0.0, top),
        x_ticks=_ticks(x_limits, log10),
        x_tick_px=TICK_PX,
        xlabel=axis_label(xlabel, log10),
        ylabel="share of the group's items",
    )
    svg.parts.append(f'<g clip-path="url(#{svg.clip_id})">')
    legend = []
    for i, ((label, values), share) in enumerate(zip(data.groups, shares, strict=True)):
        colour = PALETTE[i % len(PALETTE)]
        steps = f"M{_num(frame.x(edges[0]))} {_num(frame.y(0))}"
        for k, value in enumerate(share):
            steps += f"V{_num(frame.y(float(value)))}H{_num(frame.x(edges[k + 1]))}"
        svg.parts.append(
            f'<path class="share" d="{steps}V{_num(frame.y(0))}Z" fill="{colour}" '
            f'fill-opacity="{STEP_FILL_OPACITY}" stroke="none"/>'
        )
        svg.parts.append(
            f'<path class="step" data-group="{escape(label)}" d="{steps}V{_num(frame.y(0))}" '
            f'fill="none" stroke="{colour}" stroke-width="2"/>'
        )
        legend.append((colour, f"{label.replace('_', ' ')} (n={values.size:,})"))
    svg.parts.append("</g>")
    _legend(svg, frame, legend)
    return svg.document()


def _legend(svg: _Svg, frame: _Frame, entries: list[tuple[str, str]]) -> None:
    """Swatches and labels in the plot's top right corner, on a white box."""
    size = TICK_PX
    width = 28 + _label_width([label for _, label in entries], size)
    height = 6 + len(entries) * size * LINE_EM + 4
    x0, y0 = frame.right - width - 6, frame.top + 6
    svg.parts.append(
        f'<g class="legend"><rect x="{_num(x0)}" y="{_num(y0)}" width="{_num(width)}" '
        f'height="{_num(height)}" fill="white" fill-opacity="0.8" stroke="#cccccc"/>'
    )
    for i, (colour, label) in enumerate(entries):
        y = y0 + 6 + (i + 0.5) * size * LINE_EM
        svg.line(x0 + 6, y, x0 + 22, y, colour, 2)
        svg.text(x0 + 26, y + size * 0.35, label, size, anchor="start")
    svg.parts.append("</g>")


def scatter_svg(
    x: Sequence[float],
    y: Sequence[float],
    *,
    title: str,
    xlabel: str = "",
    ylabel: str = "",
    log_x: bool = False,
    log_y: bool = False,
    metric: str = "",
    prefix: str = "",
) -> str:
    """Points (x, y), log10 axes where asked; non-finite (and, on a log axis,
    non-positive) points are left out and at most ``MAX_POINTS`` drawn, as the export."""
    svg = _Svg(title, prefix)
    points = scatter_data(x, y, log_x, log_y, metric)
    if points is None:
        return _empty(svg)
    x_limits, y_limits = points.x_limits, points.y_limits
    frame = _frame(
        svg,
        x_range=x_limits,
        y_range=y_limits,
        y_ticks=_ticks(y_limits, log_y),
        x_ticks=_ticks(x_limits, log_x),
        x_tick_px=TICK_PX,
        xlabel=axis_label(xlabel, log_x),
        ylabel=axis_label(ylabel, log_y),
    )
    to_x: Callable[[float], float] = frame.x
    to_y: Callable[[float], float] = frame.y
    svg.parts.append(
        f'<g clip-path="url(#{svg.clip_id})" class="points" fill="{PALETTE[0]}" '
        'fill-opacity="0.55">'
    )
    svg.parts.extend(
        f'<circle cx="{_num(to_x(a))}" cy="{_num(to_y(b))}" r="1.6"/>'
        for a, b in zip(points.plot_x.tolist(), points.plot_y.tolist(), strict=True)
    )
    svg.parts.append("</g>")
    return svg.document()


def spec_svg(spec: Any, *, prefix: str = "") -> str:
    """The HTML figure of a ``core.report.PlotSpec`` (box, distribution or scatter);
    ``prefix`` starts its ids, so several figures on one page keep their own."""
    kind, args, kwargs = plot_arguments(spec)
    draw = {"box": box_svg, "distribution": distribution_svg, "scatter": scatter_svg}
    return draw[kind](*args, **kwargs, prefix=prefix)  # type: ignore[operator]
