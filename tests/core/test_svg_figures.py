"""The HTML report's figures, written as SVG: read off their axes as a person would, they
show the numbers the exported figures show (the same Tukey boxes, shares, points and axis
ranges), stay well-formed with any text a session holds, and keep their ids apart."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from core.report import PlotSpec
from core.report.figures import MAX_OUTLIERS, MAX_POINTS, BoxStats, axis_limits, box_stats
from core.report.svg_figures import (
    HEIGHT,
    TICK_PX,
    WIDTH,
    box_svg,
    distribution_svg,
    linear_ticks,
    log_ticks,
    scatter_svg,
    spec_svg,
)

NS = "{http://www.w3.org/2000/svg}"


def _at(element: ET.Element | None, name: str) -> float:
    """An element's numeric attribute."""
    assert element is not None
    return float(element.get(name) or "nan")


def _colour(element: ET.Element | None) -> str:
    assert element is not None
    return element.get("stroke", "")


def _stats(label: str, values: list[float], log10: bool) -> BoxStats:
    stats = box_stats(label, values, log10)
    assert stats is not None
    return stats


def _root(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    return root


def _y_axis(root: ET.Element, log10: bool = False):
    """Pixel row -> value, fitted through the y tick labels' places (each label's baseline
    sits TICK_PX * 0.35 below its tick): reading the axis as a reader does."""
    ticks = [
        (_at(t, "y") - TICK_PX * 0.35, float((t.text or "nan").replace(",", "")))
        for t in root.iter(f"{NS}text")
        if t.get("class") == "ytick"
    ]
    assert len(ticks) >= 2
    rows = np.array([row for row, _ in ticks])
    values = np.array([math.log10(v) if log10 else v for _, v in ticks])
    slope, intercept = np.polyfit(rows, values, 1)
    return lambda row: slope * row + intercept, abs(slope)


def _groups(seed: int, n: int = 6, size: int = 400) -> list[tuple[str, list[float]]]:
    rng = np.random.default_rng(seed)
    return [
        (f"system_{i} · {'head' if i % 2 else 'long_tail'}", list(rng.gamma(2 + i, 6, size)))
        for i in range(n)
    ]


@pytest.mark.parametrize("log10", [False, True])
def test_boxes_read_off_the_axis_are_the_tukey_statistics(log10: bool) -> None:
    groups = _groups(3)
    groups[0][1].extend([400.0, 500.0, 650.0])  # outliers above
    root = _root(box_svg(groups, title="t", ylabel="BLEU", log10=log10, metric="ppl"))
    value_at, per_pixel = _y_axis(root, log10)
    boxes = [g for g in root.iter(f"{NS}g") if g.get("class") == "box"]
    assert [g.get("data-group") for g in boxes] == [label for label, _ in groups]
    for box, (label, values) in zip(boxes, groups, strict=True):
        stats = _stats(label, values, log10)
        rect = box.find(f"{NS}rect")
        top, height = _at(rect, "y"), _at(rect, "height")
        tolerance = per_pixel * 0.2  # coordinates are written to a tenth of a pixel
        assert value_at(top) == pytest.approx(stats.q3, abs=tolerance)
        assert value_at(top + height) == pytest.approx(stats.q1, abs=tolerance)
        lines = box.findall(f"{NS}line")
        (median,) = [line for line in lines if line.get("stroke-width") == "3"]
        assert value_at(_at(median, "y1")) == pytest.approx(stats.median, abs=tolerance)
        whisker_ends = sorted(value_at(_at(line, "y2")) for line in lines[0:4:2])
        assert whisker_ends == pytest.approx([stats.whisker_low, stats.whisker_high], abs=tolerance)
        rings = box.findall(f"{NS}circle")
        assert len(rings) == len(stats.outliers[:: max(1, stats.outliers.size // MAX_OUTLIERS)])
        assert sorted(value_at(_at(c, "cy")) for c in rings) == pytest.approx(
            sorted(stats.outliers.tolist()), abs=tolerance
        )
    # Boxes stand left to right in the groups' order, each in its own colour.
    centres = [_at(g.find(f"{NS}line"), "x1") for g in boxes]
    assert centres == sorted(centres)
    assert len({_colour(g.find(f"{NS}rect")) for g in boxes}) == len(boxes)


def test_the_axis_follows_the_data_within_the_metric_range() -> None:
    """BLEU's axis runs from the data's range, widened a little, never past 0–100 (a hand-
    written SVG once drew it down to -25); a perplexity axis is log10, labelled in
    perplexities, never below 1."""
    bleu = [("a", [0.0, 10.0, 55.0, 100.0]), ("b", [3.0, 40.0, 97.0])]
    root = _root(box_svg(bleu, title="t", metric="bleu"))
    value_at, _ = _y_axis(root)
    frame = next(r for r in root.iter(f"{NS}rect") if r.get("stroke-width") == "0.8")
    top = _at(frame, "y")
    bottom = top + _at(frame, "height")
    assert value_at(bottom) == pytest.approx(0, abs=0.1)
    assert value_at(top) == pytest.approx(100, abs=0.1)
    low, high = axis_limits(40.0, 60.0, "bleu")
    value_at, _ = _y_axis(_root(box_svg([("a", [40.0, 50.0, 60.0])], title="t", metric="bleu")))
    assert 35 < low < 40 and 60 < high < 65
    ppl = [("a", [1.0, 3.0, 12.0, 80.0, 300.0])]
    svg = box_svg(ppl, title="t", ylabel="perplexity", log10=True, metric="ppl")
    labels = [t.text for t in _root(svg).iter(f"{NS}text") if t.get("class") == "ytick"]
    assert "10" in labels and "100" in labels and "perplexity (log10 axis)" in svg
    assert min(float(v or "nan") for v in labels) >= 1


def test_distribution_steps_read_off_the_axis_are_the_shares_per_bin() -> None:
    rng = np.random.default_rng(5)
    groups = [("head", list(rng.normal(2, 1, 500))), ("long_tail", list(rng.normal(3, 2, 300)))]
    root = _root(distribution_svg(groups, title="ESA", xlabel="ESA", metric="esa", bins=12))
    value_at, per_pixel = _y_axis(root)
    edges = np.linspace(min(min(v) for _, v in groups), max(max(v) for _, v in groups), 13)
    steps = [p for p in root.iter(f"{NS}path") if p.get("class") == "step"]
    assert [p.get("data-group") for p in steps] == ["head", "long_tail"]
    for path, (_label, values) in zip(steps, groups, strict=True):
        heights = [float(v) for v in re.findall(r"V(-?[\d.]+)H", path.get("d") or "")]
        shares = np.histogram(values, bins=edges)[0] / len(values)
        assert [value_at(h) for h in heights] == pytest.approx(shares.tolist(), abs=per_pixel)
    legend = [t.text for g in root.iter(f"{NS}g") if g.get("class") == "legend" for t in g]
    assert "head (n=500)" in legend and "long tail (n=300)" in legend


def test_scatter_draws_what_it_keeps() -> None:
    """Non-finite values, and non-positive ones on a log axis, are left out; past
    MAX_POINTS every k-th point is drawn."""
    x = [1.0, 10.0, 100.0, 0.0, -5.0, float("nan"), 1000.0]
    y = [2.0, 20.0, float("inf"), 3.0, 4.0, 5.0, 50.0]
    root = _root(scatter_svg(x, y, title="t", log_x=True, log_y=True, metric="entity_ppl"))
    points = [c for g in root.iter(f"{NS}g") if g.get("class") == "points" for c in g]
    assert len(points) == 3  # (1, 2), (10, 20), (1000, 50)
    many = np.arange(1, 3 * MAX_POINTS + 2, dtype=float)
    root = _root(scatter_svg(many.tolist(), many.tolist(), title="t"))
    points = [c for g in root.iter(f"{NS}g") if g.get("class") == "points" for c in g]
    assert len(points) == len(many[:: len(many) // MAX_POINTS]) <= MAX_POINTS + 1


def test_text_from_the_session_is_escaped() -> None:
    label = '<script>alert("x")</script> & <b>co</b> · head'
    svg = box_svg([(label, [1.0, 2.0, 3.0])], title="BLEU of <i>" + label, metric="bleu")
    assert "<script>" not in svg and "<b>" not in svg and "<i>" not in svg
    texts = [t.text for t in _root(svg).iter(f"{NS}text")]
    assert '<script>alert("x")</script> & <b>co</b>' in texts  # the label's first line


def test_figures_on_one_page_keep_their_own_ids() -> None:
    specs = [
        PlotSpec("box", "a", "bleu", groups=(("m · head", (1.0, 2.0, 3.0)),)),
        PlotSpec("distribution", "b", "bleu", groups=(("head", (1.0, 2.0)),)),
        PlotSpec("scatter", "c", "ppl", x=(1.0, 2.0), y=(3.0, 4.0)),
    ]
    page = "".join(spec_svg(s, prefix=f"plot{i}") for i, s in enumerate(specs))
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(specs) == len(set(ids))
    assert set(re.findall(r"url\(#([^)]+)\)", page)) == set(ids)
    assert spec_svg(specs[0], prefix='x"><script>').count("<script>") == 0


def test_no_values_says_so_and_every_kind_has_its_size_and_title() -> None:
    for spec in (
        PlotSpec("box", "empty box", "bleu", groups=(("x", ()),)),
        PlotSpec("distribution", "empty distribution", "bleu", groups=(("x", ()),)),
        PlotSpec("scatter", "empty scatter", "ppl", log_x=True, x=(0.0,), y=(1.0,)),
    ):
        root = _root(spec.svg())
        assert (root.get("width"), root.get("height")) == (str(WIDTH), str(HEIGHT))
        assert [t.text for t in root.iter(f"{NS}title")] == [spec.title]
        assert "no values" in [t.text for t in root.iter(f"{NS}text")]
    with pytest.raises(ValueError, match="kind 'pie'"):
        spec_svg(PlotSpec("pie", "t", "bleu"))


def test_labels_too_wide_to_stand_side_by_side_are_turned_and_the_plot_keeps_its_height() -> None:
    narrow = _root(box_svg(_groups(1, n=3), title="t", metric="bleu"))
    wide_groups = [
        (f"a rather long system name number {i} · long_tail", v)
        for i, (_, v) in enumerate(_groups(1, n=16, size=50))
    ]
    wide = _root(box_svg(wide_groups, title="t", metric="bleu"))
    turned = [t for t in wide.iter(f"{NS}text") if t.get("class") == "xtick"]
    assert len(turned) == 16 and all("rotate(" in t.get("transform", "") for t in turned)
    assert not any(
        t.get("transform") for t in narrow.iter(f"{NS}text") if t.get("class") == "xtick"
    )

    def plot_height(root: ET.Element) -> float:
        frame = next(r for r in root.iter(f"{NS}rect") if r.get("stroke-width") == "0.8")
        return _at(frame, "height")

    assert _at(wide, "height") > HEIGHT
    assert plot_height(wide) >= HEIGHT * 0.55 - 0.1


def test_linear_ticks_are_round_steps_inside_the_range() -> None:
    rng = np.random.default_rng(9)
    for _ in range(300):
        low = float(rng.uniform(-1000, 1000)) * 10.0 ** int(rng.integers(-4, 3))
        high = low + float(rng.uniform(0.001, 2000)) * 10.0 ** int(rng.integers(-4, 3))
        ticks = linear_ticks(low, high)
        assert 3 <= len(ticks) <= 13, (low, high, ticks)
        values = [v for v, _ in ticks]
        assert all(
            low - 1e-9 * abs(high - low) <= v <= high + 1e-9 * abs(high - low) for v in values
        )
        steps = np.diff(values)
        assert np.allclose(steps, steps[0])
        mantissa = steps[0] / 10.0 ** math.floor(math.log10(steps[0]))
        assert any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 2.5, 5, 10))
        labels = [label for _, label in ticks]
        assert len(set(labels)) == len(labels)  # enough decimals to tell them apart
        assert [float(label) for label in labels] == pytest.approx(values, abs=steps[0] / 100)
    assert [label for _, label in linear_ticks(0, 100)] == ["0", "20", "40", "60", "80", "100"]
    assert [label for _, label in log_ticks(0.2, 4.5)] == ["10", "100", "1000", "10000"]
    assert [label for _, label in log_ticks(0.9, 2.1)] == ["10", "20", "50", "100"]
