"""The selected text's detail as HTML: ESA mentions and hallucination candidates
highlighted, missing entities, scores; the unit's triples and references.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from core.surface import surface_triple
from widgets.scores.rows import Span, TextDetail
from widgets.theme import muted_colour, tone

# Highlights in the detail view (also drawn in its legend).
MENTION_COLOUR = "#b9e4c9"  # ESA: a unit entity found in the text
HALLUCINATION_COLOUR = "#f7c6a3"  # a name or number matching nothing in the unit
# Dark text on the light highlight colours, whatever the theme.
INK = "color:#1a1a1a"


def highlighted_html(text: str, mentions: Sequence[Span], hallucinations: Sequence[Span]) -> str:
    """The text as HTML, mentions and hallucination candidates on their own colours
    (a character in both gets the hallucination colour with the mention's underline)."""
    kinds = [0] * len(text)  # bit 1: mention, bit 2: hallucination
    titles: list[str] = [""] * len(text)
    for bit, spans in ((1, mentions), (2, hallucinations)):
        for span in spans:
            for i in range(max(0, span.start), min(len(text), span.end)):
                kinds[i] |= bit
                what = (
                    f"mentions {span.label}" + (f" ({span.how})" if span.how else "")
                    if bit == 1
                    else "hallucination candidate: matches nothing in the unit"
                )
                titles[i] = f"{titles[i]}; {what}" if titles[i] else what
    out: list[str] = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and kinds[j] == kinds[i] and titles[j] == titles[i]:
            j += 1
        piece = html.escape(text[i:j]).replace("\n", "<br>")
        kind = kinds[i]
        if kind == 0:
            out.append(piece)
        else:
            colour = HALLUCINATION_COLOUR if kind & 2 else MENTION_COLOUR
            style = f"background-color:{colour}; color:#1a1a1a;"
            if kind == 3:
                style += "text-decoration:underline;"
            out.append(f'<span style="{style}" title="{html.escape(titles[i])}">{piece}</span>')
        i = j
    return "".join(out)


def _legend() -> str:
    return (
        f"<span style='background-color:{MENTION_COLOUR}; {INK}'>&nbsp;entity mention (ESA)"
        f"&nbsp;</span> &nbsp; <span style='background-color:{HALLUCINATION_COLOUR}; {INK}'>"
        "&nbsp;hallucination candidate&nbsp;</span> &nbsp; "
        f"<span style='color:{tone('error')}'>✗ missing entity</span>"
    )


def detail_text_html(detail: TextDetail) -> str:
    parts = [
        f"<p><b>{html.escape(detail.title)}</b></p>",
        f"<p style='font-size:small'>{_legend()}</p>",
        "<p style='font-size:large'>"
        f"{highlighted_html(detail.text, detail.mentions, detail.hallucinations)}</p>",
    ]
    if detail.esa_scored:
        if detail.missing:
            items = "".join(
                f"<li style='color:{tone('error')}'>✗ {html.escape(m)}</li>" for m in detail.missing
            )
            parts.append(f"<p><b>Missing entities</b> ({len(detail.missing)}):</p><ul>{items}</ul>")
        else:
            parts.append("<p><b>Missing entities</b>: none, every entity is mentioned.</p>")
    else:
        parts.append(
            f"<p style='color:{muted_colour()}'>ESA not scored for this text yet: use "
            "<b>Score…</b> with <i>esa</i> to see its mentions and missing "
            "entities.</p>"
        )
    if detail.hallucination_scored:
        if detail.hallucinations:
            spans = ", ".join(
                f"<span style='background-color:{HALLUCINATION_COLOUR}; color:#1a1a1a'>"
                f"{html.escape(s.label)}</span>"
                for s in detail.hallucinations
            )
            parts.append(f"<p><b>Hallucination candidates</b>: {spans}</p>")
        else:
            parts.append("<p><b>Hallucination candidates</b>: none.</p>")
    if detail.scores:
        rows = "".join(
            f"<tr><td>{html.escape(c)}</td><td align='right'>&nbsp;{html.escape(v)}&nbsp;</td>"
            f"<td style='color:{muted_colour()}'>{html.escape(n)}</td></tr>"
            for c, v, n in detail.scores
        )
        parts.append(f"<p><b>Scores</b></p><table cellspacing='0'>{rows}</table>")
    return "".join(parts)


def detail_unit_html(detail: TextDetail) -> str:
    parts = [f"<p><b>Unit triples ({html.escape(detail.lang)})</b></p>"]
    if detail.triples:
        rows = "".join(
            f"<tr><td>{html.escape(s)}</td><td style='color:{muted_colour()}'>&nbsp;"
            f"{html.escape(p)}&nbsp;</td><td>{html.escape(o)}</td></tr>"
            for s, p, o in map(surface_triple, detail.triples)
        )
        parts.append(f"<table cellspacing='2'>{rows}</table>")
    else:
        parts.append(
            f"<p style='color:{muted_colour()}'>The unit has no triples in {detail.lang}.</p>"
        )
    parts.append(f"<p><b>References ({html.escape(detail.lang)})</b></p>")
    if detail.references:
        items = "".join(
            f"<li><span style='background-color:{'#fde9a9' if q == 'gold' else '#dfe3e8'}; {INK}'>"
            f"&nbsp;{html.escape(q)}&nbsp;</span> {html.escape(t)}</li>"
            for q, t in detail.references
        )
        parts.append(f"<ul>{items}</ul>")
    else:
        parts.append(
            f"<p style='color:{muted_colour()}'>No reference in {detail.lang}: reference-based "
            "metrics are absent for this text (not 0).</p>"
        )
    return "".join(parts)
