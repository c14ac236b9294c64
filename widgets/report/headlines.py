"""The report's headline lines, head against long tail, one per metric (the verdict is
``core.report.verdict``'s), and which plot a build opens on.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from core.report import (
    Comparison,
    PlotSpec,
    metric_label,
)
from core.report.verdict import (
    centre,
    format_value,
    headline_scope,
    p_text,
    verdict,
)
from core.report.verdict import headline_text as core_headline_text
from widgets.theme import muted_colour, tone

# Friendlier headers for the comparison tables (the exports keep the core's names).


# -- headlines -------------------------------------------------------------------------------
def opening_plot(
    specs: Sequence[PlotSpec], headlines: Sequence[Comparison], shown: str | None = None
) -> int:
    """Which plot to show after a build: the one the user was looking at (same title), else
    the first plot of the first metric whose head-vs-tail verdict is significant, else 0."""
    titles = [spec.title for spec in specs]
    if shown is not None and shown in titles:
        return titles.index(shown)
    significant = [c.metric for c in headlines if c.significant]
    for metric in significant:
        for index, spec in enumerate(specs):
            if spec.metric == metric:
                return index
    return 0


def headline_parts(c: Comparison, *, show_model: bool) -> dict[str, Any]:
    """The pieces of one headline line, head (``a``) against long tail (``b``); the
    verdict is core's (core.report.verdict), worded as in the CLI and the HTML report."""
    v = verdict(c)
    colour = muted_colour()  # not significant: neither better nor worse
    if v.worse is not None and c.significant:
        colour = tone("error") if v.worse else tone("better")
    return {
        "label": metric_label(c.metric),
        "scope": headline_scope(c, show_model=show_model),
        "head": centre(c.a),
        "tail": centre(c.b),
        "n_head": c.a.n,
        "n_tail": c.b.n,
        "p": c.p_value,
        "p_adjusted": c.p_adjusted,
        "r": c.effect_size,
        "significant": c.significant,
        "verdict": v.direction,
        "colour": colour,
    }


def headline_text(c: Comparison, *, show_model: bool = False, correction: str = "none") -> str:
    """Plain text, e.g. ``BLEU: head 42.10 vs long tail 31.00, p = 0.003, Holm p = 0.012
    (significant; long tail worse)`` (core.report.verdict.headline_text)."""
    return core_headline_text(c, show_model=show_model, correction=correction)


def headline_html(
    c: Comparison, *, show_model: bool = False, table: bool = True, correction: str = "none"
) -> str:
    """One headline as a table row (``table``) or as a run of text for a narrow dock."""
    h = headline_parts(c, show_model=show_model)
    scope = (
        f" <span style='color:{muted_colour()}; font-weight:normal'>({escape(h['scope'])})</span>"
        if h["scope"]
        else ""
    )
    badge = "significant" if h["significant"] else "not significant"
    weight = "bold" if h["significant"] else "normal"
    effect = "" if h["r"] is None else f", r = {h['r']:+.2f}"
    cells = (
        f"<b>{escape(h['label'])}</b>{scope}",
        f"head <b>{format_value(h['head'])}</b>",
        f"vs long tail <b>{format_value(h['tail'])}</b>",
        f"<span style='color:{muted_colour()}'>{escape(p_text(c, correction))}{effect}</span>",
        f"<span style='color:{h['colour']}; font-weight:{weight}; "
        f"white-space:nowrap'>{badge}: "
        f"{escape(h['verdict'])}</span>",
    )
    if not table:
        return f"{cells[0]}: {cells[1]} {cells[2]} · {cells[3]} · {cells[4]}"
    pads = ("1px 10px 1px 0", "1px 6px", "1px 6px", "1px 6px", "1px 0 1px 6px")
    return (
        "<tr>"
        + "".join(
            f"<td style='padding:{pad}; white-space:nowrap'>{cell}</td>"
            for pad, cell in zip(pads, cells, strict=True)
        )
        + "</tr>"
    )


# -- the panel -------------------------------------------------------------------------------
