"""Static figures for papers: the exported plots.

The live panels draw with pyqtgraph; every export (PNG at a chosen size and DPI, SVG, PDF)
is drawn here with matplotlib, from the same data the panel draws, so what a user takes
into a paper is what the panel shows. Pure functions from plot data to a matplotlib
``Figure`` (Agg canvas, never a GUI backend; matplotlib is imported only when a figure is
made), and :func:`save_figure` to write one. The HTML report's inline figures are written
as SVG by :mod:`core.report.svg_figures` from the same plot data, with the numbers defined
here (box statistics, axis ranges, bins, colours, thinning).

Box statistics (Tukey: quartiles by linear interpolation, whiskers at the last value within
1.5 IQR of the box, outliers beyond) are computed once, by :func:`box_stats`, and used by the
Report panel's live boxes, the exported figure and the HTML report's figure.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.report.statistics import quartiles

if TYPE_CHECKING:  # matplotlib is imported lazily, when a figure is made
    from matplotlib.figure import Figure

    from core.tiers.cutoffs import Distribution

PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
MAX_OUTLIERS = 300  # per box: beyond that the rings say nothing more
MAX_POINTS = 20_000
BINS = 20
DEFAULT_SIZE_IN = (6.4, 3.6)  # inches: a page-wide figure (half height)
DEFAULT_DPI = 300  # dots per inch of an exported PNG (papers)
FORMATS = (".png", ".svg", ".pdf")

# Each metric's possible range in its own units (None: open). An axis follows the data
# with a small margin, but never past these (BLEU's axis does not run below 0).
METRIC_BOUNDS: dict[str, tuple[float | None, float | None]] = {
    "bleu": (0.0, 100.0),
    "chrf++": (0.0, 100.0),
    "meteor": (0.0, 100.0),
    "rouge1": (0.0, 100.0),
    "rouge2": (0.0, 100.0),
    "rougeL": (0.0, 100.0),
    "ter": (0.0, None),
    "hallucination": (0.0, None),
    "ppl": (1.0, None),
    "entity_ppl": (1.0, None),
}

# The Browser's cut-off lines (colour, legend), as the panel draws them.
LINE_STYLES = {
    "pareto": ("#d9822b", "Pareto cut-off"),
    "head_tail": ("#c23b22", "Head–tail threshold"),
    "torso": ("#8a6fb3", "Torso line"),
}
SERIES_COLOURS = ("#2b7bb9", "#3a9e5f", "#b9472b", "#8a6fb3", "#b99b2b", "#555555")
TIER_PLOTS = ("histogram", "rank_frequency", "lorenz")


# -- box statistics (one definition, for the panel and the figures) ---------------------------


@dataclass(frozen=True)
class BoxStats:
    """What one box shows (in plot coordinates: log10 of the values for log plots)."""

    label: str
    n: int
    q1: float
    median: float
    q3: float
    whisker_low: float
    whisker_high: float
    outliers: np.ndarray


def plot_values(values: Sequence[float], log10: bool) -> np.ndarray:
    """Finite values, as log10 on a log axis (non-positive values cannot be drawn there)."""
    array = np.asarray(values, dtype=float)
    array = array[np.isfinite(array)]
    if log10:
        array = np.log10(array[array > 0])
    return array


def box_stats(label: str, values: Sequence[float], log10: bool = False) -> BoxStats | None:
    """Quartiles by linear interpolation, whiskers at the last value within 1.5 IQR."""
    array = plot_values(values, log10)
    if array.size == 0:
        return None
    q1, median, q3 = quartiles(np.sort(array))
    iqr = q3 - q1
    inside = array[(array >= q1 - 1.5 * iqr) & (array <= q3 + 1.5 * iqr)]
    outliers = array[(array < q1 - 1.5 * iqr) | (array > q3 + 1.5 * iqr)]
    return BoxStats(
        label, int(array.size), q1, median, q3, float(inside.min()), float(inside.max()), outliers
    )


def axis_limits(
    low: float, high: float, metric: str = "", log10: bool = False, margin: float = 0.05
) -> tuple[float, float]:
    """The data's range (in plot coordinates) widened by ``margin``, bounded by the metric's
    possible range (``METRIC_BOUNDS``, log10 of it on a log axis)."""
    span = high - low
    pad = span * margin if span > 0 else 0.5
    low, high = low - pad, high + pad
    bound_low, bound_high = METRIC_BOUNDS.get(metric, (None, None))
    if bound_low is not None:
        limit = math.log10(bound_low) if log10 else bound_low
        low = max(low, limit) if not log10 or bound_low > 0 else low
    if bound_high is not None:
        high = min(high, math.log10(bound_high) if log10 else bound_high)
    if high <= low:
        high = low + 1.0
    return low, high


# -- what each kind of plot shows (for the matplotlib figures and the HTML's SVG) -------------


def axis_label(label: str, log10: bool) -> str:
    """An axis's title, saying so when the axis is log10."""
    return label + (" (log10 axis)" if log10 else "")


def box_plot_data(
    groups: Sequence[tuple[str, Sequence[float]]], log10: bool, metric: str
) -> tuple[list[BoxStats], tuple[float, float]]:
    """The boxes of the groups with values (``box_stats``) and the value axis's limits
    (plot coordinates), from the whiskers and outliers; no boxes, ``(0, 1)``."""
    boxes = [b for b in (box_stats(label, values, log10) for label, values in groups) if b]
    if not boxes:
        return [], (0.0, 1.0)
    everything = [v for b in boxes for v in (b.whisker_low, b.whisker_high)]
    everything += [float(v) for b in boxes for v in b.outliers]
    return boxes, axis_limits(min(everything), max(everything), metric, log10)


def shown_outliers(box: BoxStats) -> np.ndarray:
    """The outliers drawn as rings: at most about ``MAX_OUTLIERS``, evenly thinned."""
    return box.outliers[:: max(1, box.outliers.size // MAX_OUTLIERS)]


@dataclass(frozen=True)
class Histograms:
    """Step histograms on shared bins: each group's share of its items per bin."""

    groups: list[tuple[str, np.ndarray]]  # (label, values in plot coordinates)
    edges: np.ndarray
    shares: list[np.ndarray]
    x_limits: tuple[float, float]  # plot coordinates


def distribution_data(
    groups: Sequence[tuple[str, Sequence[float]]], log10: bool, metric: str, bins: int = BINS
) -> Histograms | None:
    """The shared bins over every group's values and each group's share per bin; None
    when no group has a value."""
    cleaned = [(label, plot_values(values, log10)) for label, values in groups]
    cleaned = [(label, v) for label, v in cleaned if v.size]
    if not cleaned:
        return None
    everything = np.concatenate([v for _, v in cleaned])
    low, high = float(everything.min()), float(everything.max())
    if high <= low:
        low, high = low - 0.5, high + 0.5
    edges = np.linspace(low, high, bins + 1)
    shares = [np.histogram(values, bins=edges)[0] / values.size for _, values in cleaned]
    return Histograms(cleaned, edges, shares, axis_limits(low, high, metric, log10, margin=0.02))


@dataclass(frozen=True)
class Points:
    """The points a scatter plot draws, as values and in plot coordinates."""

    x: np.ndarray
    y: np.ndarray
    plot_x: np.ndarray
    plot_y: np.ndarray
    x_limits: tuple[float, float]
    y_limits: tuple[float, float]


def scatter_data(
    x: Sequence[float],
    y: Sequence[float],
    log_x: bool,
    log_y: bool,
    metric: str,
) -> Points | None:
    """The points drawn: non-finite ones (and non-positive ones on a log axis) left out,
    at most about ``MAX_POINTS`` (every k-th); None when none is left."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(xs) & np.isfinite(ys)
    if log_x:
        keep &= xs > 0
    if log_y:
        keep &= ys > 0
    xs, ys = xs[keep], ys[keep]
    step = max(1, xs.size // MAX_POINTS)
    xs, ys = xs[::step], ys[::step]
    if not xs.size:
        return None
    px = np.log10(xs) if log_x else xs
    py = np.log10(ys) if log_y else ys
    return Points(
        xs,
        ys,
        px,
        py,
        axis_limits(float(px.min()), float(px.max()), "", log_x),
        axis_limits(float(py.min()), float(py.max()), metric, log_y),
    )


def plot_arguments(spec: Any) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    """A ``core.report.PlotSpec`` as the call that draws it, for either drawing
    (``spec_figure`` here, ``core.report.svg_figures.spec_svg``): its kind, and the data
    and labels that kind's function takes."""
    if spec.kind == "box":
        return (
            "box",
            (spec.groups,),
            {
                "title": spec.title,
                "ylabel": spec.ylabel,
                "log10": spec.log10,
                "metric": spec.metric,
            },
        )
    if spec.kind == "distribution":
        return (
            "distribution",
            (spec.groups,),
            {
                "title": spec.title,
                "xlabel": spec.xlabel,
                "log10": spec.log10,
                "metric": spec.metric,
            },
        )
    if spec.kind == "scatter":
        return (
            "scatter",
            (spec.x, spec.y),
            {
                "title": spec.title,
                "xlabel": spec.xlabel,
                "ylabel": spec.ylabel,
                "log_x": spec.log_x,
                "log_y": spec.log10,
                "metric": spec.metric,
            },
        )
    raise ValueError(f"no figure for a plot of kind {spec.kind!r}")


# -- figures ---------------------------------------------------------------------------------


def new_figure(size_in: tuple[float, float] = DEFAULT_SIZE_IN) -> Figure:
    """An empty figure on an Agg canvas, laid out so no label is clipped."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=size_in, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _log_axis(ax: Any, which: str) -> None:
    """A log10 ``which`` ("x"/"y") axis labelled in the original numbers (10, 100, 1000),
    as the panel does."""
    from matplotlib.ticker import LogFormatter

    getattr(ax, f"set_{which}scale")("log")
    axis = ax.xaxis if which == "x" else ax.yaxis
    # Decades as plain numbers; 2, 3, 5 ... between them too when the axis spans under
    # about two decades (one labelled tick would not let a reader read values off).
    axis.set_major_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def _pow10(limits: tuple[float, float]) -> tuple[float, float]:
    return (10 ** limits[0], 10 ** limits[1])


def _empty(figure: Figure, title: str) -> Figure:
    ax = figure.add_subplot()
    ax.set_title(title, fontsize=10)
    ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])
    return figure


def box_figure(
    groups: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    ylabel: str = "",
    log10: bool = False,
    metric: str = "",
    size_in: tuple[float, float] = DEFAULT_SIZE_IN,
) -> Figure:
    """One Tukey box per group (``box_stats``), as the Report panel draws them: quartile
    boxes, thick medians, whiskers with caps, outliers as rings; a log10 axis for
    perplexities, labels in the original numbers."""
    figure = new_figure(size_in)
    boxes, limits = box_plot_data(groups, log10, metric)
    if not boxes:
        return _empty(figure, title)
    ax = figure.add_subplot()
    ax.set_title(title, fontsize=10)
    # Statistics in plot coordinates (log10 values on a log axis), drawn on the axis's scale.
    back = (lambda v: np.power(10.0, v)) if log10 else (lambda v: v)  # noqa: E731
    stats = [
        {
            "label": f"{_wrap(b.label)}\nn={b.n:,}",
            "q1": back(b.q1),
            "med": back(b.median),
            "q3": back(b.q3),
            "whislo": back(b.whisker_low),
            "whishi": back(b.whisker_high),
            "fliers": back(shown_outliers(b)),
        }
        for b in boxes
    ]
    if log10:
        _log_axis(ax, "y")
    drawn = ax.bxp(
        stats,
        positions=range(len(boxes)),
        widths=0.6,
        patch_artist=True,
        showfliers=True,
        manage_ticks=True,
    )
    for i, patch in enumerate(drawn["boxes"]):
        colour = PALETTE[i % len(PALETTE)]
        patch.set(facecolor=colour + "44", edgecolor=colour, linewidth=1.5)
        drawn["medians"][i].set(color=colour, linewidth=3)
        for part in ("whiskers", "caps"):
            for line in drawn[part][2 * i : 2 * i + 2]:
                line.set(color=colour, linewidth=1.5)
        drawn["fliers"][i].set(
            marker="o",
            markerfacecolor="none",
            markeredgecolor=colour,
            markersize=4,
            linestyle="none",
        )
    ax.set_ylim(*(_pow10(limits) if log10 else limits))
    ax.set_xlim(-0.6, len(boxes) - 0.4)
    ax.set_ylabel(axis_label(ylabel, log10))
    ax.tick_params(axis="x", labelsize=7 if len(boxes) > 6 else 8)
    ax.grid(axis="y", alpha=0.2)
    return figure


def distribution_figure(
    groups: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    xlabel: str = "",
    log10: bool = False,
    metric: str = "",
    bins: int = BINS,
    size_in: tuple[float, float] = DEFAULT_SIZE_IN,
) -> Figure:
    """Overlaid step histograms, each the share of its group's items per bin (shared bins
    over all groups' values), as the Report panel draws them."""
    figure = new_figure(size_in)
    data = distribution_data(groups, log10, metric, bins)
    if data is None:
        return _empty(figure, title)
    ax = figure.add_subplot()
    ax.set_title(title, fontsize=10)
    edges = data.edges
    if log10:
        _log_axis(ax, "x")
    for i, ((label, values), share) in enumerate(zip(data.groups, data.shares, strict=True)):
        colour = PALETTE[i % len(PALETTE)]
        drawn_edges = np.power(10.0, edges) if log10 else edges
        ax.stairs(share, drawn_edges, fill=True, color=colour + "30")
        ax.stairs(
            share,
            drawn_edges,
            color=colour,
            linewidth=2,
            label=f"{label.replace('_', ' ')} (n={values.size:,})",
        )
    limits = data.x_limits
    ax.set_xlim(*(_pow10(limits) if log10 else limits))
    ax.set_ylim(bottom=0)
    ax.set_xlabel(axis_label(xlabel, log10))
    ax.set_ylabel("share of the group's items")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.2)
    return figure


def scatter_figure(
    x: Sequence[float],
    y: Sequence[float],
    *,
    title: str,
    xlabel: str = "",
    ylabel: str = "",
    log_x: bool = False,
    log_y: bool = False,
    metric: str = "",
    size_in: tuple[float, float] = DEFAULT_SIZE_IN,
) -> Figure:
    """Points (x, y), log10 axes where asked; non-finite (and, on a log axis, non-positive)
    points are left out, as in the panel."""
    figure = new_figure(size_in)
    points = scatter_data(x, y, log_x, log_y, metric)
    if points is None:
        return _empty(figure, title)
    ax = figure.add_subplot()
    ax.set_title(title, fontsize=10)
    if log_x:
        _log_axis(ax, "x")
    if log_y:
        _log_axis(ax, "y")
    ax.scatter(points.x, points.y, s=8, color=PALETTE[0], alpha=0.55, linewidths=0)
    x_limits, y_limits = points.x_limits, points.y_limits
    ax.set_xlim(*(_pow10(x_limits) if log_x else x_limits))
    ax.set_ylim(*(_pow10(y_limits) if log_y else y_limits))
    ax.set_xlabel(axis_label(xlabel, log_x))
    ax.set_ylabel(axis_label(ylabel, log_y))
    ax.grid(alpha=0.2)
    return figure


def spec_figure(spec: Any, *, size_in: tuple[float, float] = DEFAULT_SIZE_IN) -> Figure:
    """The figure of a ``core.report.PlotSpec`` (box, distribution or scatter)."""
    kind, args, kwargs = plot_arguments(spec)
    draw = {"box": box_figure, "distribution": distribution_figure, "scatter": scatter_figure}
    return draw[kind](*args, **kwargs, size_in=size_in)  # type: ignore[operator]


def tier_figure(
    which: str,
    series: Sequence[tuple[str, Distribution]],
    lines: Mapping[str, float | None] | None = None,
    *,
    size_in: tuple[float, float] = DEFAULT_SIZE_IN,
) -> Figure:
    """One of the Browser's statement-count plots, as the panel draws it.

    ``which``: ``histogram`` (share of entities per log-spaced bin, log x),
    ``rank_frequency`` (log-log; rank / n when several series) or ``lorenz`` (cumulative
    share of statements). ``lines``: cut-offs as statement counts (``pareto``,
    ``head_tail``, ``torso``; None hides one), placed as the panel places them.
    """
    if which not in TIER_PLOTS:
        raise ValueError(f"no statement-count plot {which!r}; choose from {TIER_PLOTS}")
    figure = new_figure(size_in)
    ax = figure.add_subplot()
    normalise_rank = len(series) > 1
    drawn = False
    for i, (name, dist) in enumerate(series):
        if dist.n > 0:
            colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
            drawn = _tier_series(ax, which, name, dist, colour, normalise_rank) or drawn
    _tier_axes(ax, which, normalise_rank, drawn)
    primary = next((d for _, d in series if d.n), None)
    if primary is not None:
        _tier_lines(ax, which, primary, lines or {})
    if drawn:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
    ax.grid(alpha=0.2)
    return figure


def _tier_series(
    ax: Any, which: str, name: str, dist: Distribution, colour: str, normalise_rank: bool
) -> bool:
    """One category's curve on a statement-count plot; whether anything was drawn."""
    if which == "histogram":
        histogram = dist.integer_log_histogram()
        if not len(histogram.counts):
            return False
        shares = histogram.counts / dist.n
        fill = colour + ("60" if normalise_rank else "90")
        ax.stairs(shares, histogram.edges, fill=True, color=fill)
        ax.stairs(shares, histogram.edges, color=colour, linewidth=2, label=name)
    elif which == "rank_frequency":
        ranks, values = dist.rank_frequency()
        positive = values > 0
        ax.plot(
            ranks[positive] / (dist.n if normalise_rank else 1),
            values[positive],
            color=colour,
            linewidth=2,
            label=name,
        )
    else:
        xs, ys = dist.lorenz_curve()
        ax.plot(xs, ys, color=colour, linewidth=2, label=name)
    return True


def _tier_axes(ax: Any, which: str, normalise_rank: bool, drawn: bool) -> None:
    if which == "histogram":
        ax.set_xscale("log")
        ax.set_xlabel("statements per entity (log scale)")
        ax.set_ylabel("share of entities")
        ax.set_ylim(bottom=0)
    elif which == "rank_frequency":
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rank / n (log)" if normalise_rank else "rank (log)")
        ax.set_ylabel("statements (log)")
    else:
        if drawn:
            ax.plot([0, 1], [0, 1], color="#999999", linestyle="--", linewidth=1)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("share of entities, most statements first")
        ax.set_ylabel("cumulative share of statements")


def _tier_lines(
    ax: Any, which: str, primary: Distribution, lines: Mapping[str, float | None]
) -> None:
    """The cut-off lines, placed on the first category's curve as the panel places them."""
    for kind, value in lines.items():
        if value is None or kind not in LINE_STYLES:
            continue
        colour, label = LINE_STYLES[kind]
        value = max(float(value), 1.0)
        if which == "histogram":
            ax.axvline(value, color=colour, linewidth=2, label=label)
        elif which == "rank_frequency":
            ax.axhline(value, color=colour, linewidth=2, label=label)
        else:
            ax.axvline(
                primary.entity_share_at_or_above(value), color=colour, linewidth=2, label=label
            )


def _wrap(label: str) -> str:
    """ "model · tier" on two lines; underscores read as spaces."""
    return label.replace(" · ", "\n").replace("_", " ")


# -- writing ---------------------------------------------------------------------------------


def check_format(path: Path | str) -> str:
    """The export format of ``path`` by its suffix (``.png``, ``.svg``, ``.pdf``), or a
    ``ValueError`` naming the file (raised before anything is written)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(
            f"{Path(path).name}: figures export to .png, .svg or .pdf, not {suffix or 'no suffix'}"
        )
    return suffix


def figure_suffixes(text: str) -> tuple[str, ...]:
    """``"svg,pdf"`` -> ``(".svg", ".pdf")`` (a command line's list of export formats);
    anything but png, svg and pdf is a ``UserFacingError`` naming it."""
    from core.errors import UserFacingError

    names = [part.strip().lower().lstrip(".") for part in text.split(",") if part.strip()]
    wrong = [name for name in names if f".{name}" not in FORMATS]
    if wrong or not names:
        raise UserFacingError(
            f"figure formats are png, svg and pdf (comma-separated); got {text!r}"
        )
    return tuple(dict.fromkeys(f".{name}" for name in names))


def save_figure(
    figure: Figure,
    path: Path | str,
    *,
    title: str = "",
    dpi: float = DEFAULT_DPI,
    size_in: tuple[float, float] | None = None,
    force: bool = False,
) -> Path:
    """Write ``figure`` as PNG (``dpi`` dots per inch), SVG or PDF, by the suffix.

    ``size_in`` (width, height in inches) resizes the figure first: a PNG is then
    ``size_in × dpi`` pixels exactly (constrained layout keeps every label inside).
    ``title`` goes into the file's metadata. Written atomically.
    """
    from core.formats.common import atomic_output

    path = Path(path).expanduser()
    suffix = check_format(path)
    if dpi <= 0 or not math.isfinite(dpi):
        raise ValueError(f"{path.name}: the resolution must be a positive number of dpi")
    if size_in is not None:
        if min(size_in) <= 0:
            raise ValueError(f"{path.name}: the figure's size must be positive")
        # A PNG of round(size × dpi) pixels, the number the export dialog shows:
        # matplotlib truncates (9.14 cm at 300 dpi is 1079.5 px and was written 1079).
        width, height = (round(side * dpi) / dpi for side in size_in)
        figure.set_size_inches(width, height)
    metadata = {"Title": title} if title and suffix != ".png" else None
    buffer = io.BytesIO()
    figure.savefig(buffer, format=suffix[1:], dpi=dpi, metadata=metadata, facecolor="white")
    with atomic_output(path, binary=True, force=force) as handle:
        handle.write(buffer.getvalue())
    # A figure is for sharing: the mode a new file gets (the temporary file was 0600).
    umask = os.umask(0)
    os.umask(umask)
    path.chmod(0o666 & ~umask)
    return path


def export_figures_job(
    specs: Sequence[Any],
    folder: Path | str,
    *,
    suffixes: Sequence[str] = FORMATS,
    dpi: float = DEFAULT_DPI,
    size_in: tuple[float, float] | None = None,
    force: bool = False,
) -> Any:
    """A job writing every ``PlotSpec``'s figure in each format into ``folder``, named
    ``NN-<kind>-<metric>.<suffix>``; its result is the list of paths written. Progress
    per file; cancel stops between files (those written stay). Every name is checked
    before the first is written (``core.io.output_guard``: a file TailLens did not write, or
    a session, is replaced only with ``force``), so a refusal leaves the folder as it was."""
    from core.io.output_guard import check_output_target
    from core.jobs import Job

    for suffix in suffixes:
        check_format(f"x{suffix}")
    folder = Path(folder).expanduser()
    specs = list(specs)

    def run(ctx: Any) -> list[Path]:
        folder.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        job.partial = written
        total = len(specs) * len(suffixes)
        stems = [
            f"{i + 1:02d}-{spec.kind}-{_safe_name(spec.metric)}" for i, spec in enumerate(specs)
        ]
        for stem in stems:
            for suffix in suffixes:
                check_output_target(folder / f"{stem}{suffix}", force=force)
        for spec, stem in zip(specs, stems, strict=True):
            for suffix in suffixes:
                ctx.progress(len(written), total, f"{stem}{suffix}")
                ctx.check_cancelled()
                written.append(
                    save_figure(
                        spec_figure(spec, size_in=size_in or DEFAULT_SIZE_IN),
                        folder / f"{stem}{suffix}",
                        title=spec.title,
                        dpi=dpi,
                        force=force,
                    )
                )
        ctx.progress(total, total, "")
        return written

    job = Job(
        f"Export {len(specs)} figures to {folder.name}",
        run,
        kind="report.figures",
        params={"folder": str(folder)},
        uses_session=False,
    )
    return job


def _safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name) or "plot"


__all__ = [
    "BoxStats",
    "DEFAULT_DPI",
    "FORMATS",
    "METRIC_BOUNDS",
    "TIER_PLOTS",
    "axis_limits",
    "box_figure",
    "box_stats",
    "check_format",
    "distribution_figure",
    "export_figures_job",
    "figure_suffixes",
    "new_figure",
    "plot_values",
    "save_figure",
    "scatter_figure",
    "spec_figure",
    "tier_figure",
]
