"""The selected text's detail: its scores (ESA mentions and missing entities,
hallucination spans, BERTScore model and rescaling), the unit's triples and references,
the human ratings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.labels import plural
from core.metrics.score_pages import (
    column_order,
)
from core.vocab import QUALITIES
from widgets.scores import (
    Span,
    TextDetail,
    format_value,
)

if TYPE_CHECKING:
    from core.metrics.scoring import (
        SentenceScoreRow,
        StoredScore,
    )
    from core.store import SessionStore


def text_detail(store: SessionStore, row: SentenceScoreRow) -> TextDetail:
    """What the detail shows of ``row``'s text (reads the session)."""
    from core.annotation import VERBALISATION, ItemRef, ratings_of_item
    from core.metrics.scoring import scores_of_verbalisation, unit_material

    verbalisation_id = row.verbalisation_id
    scores = scores_of_verbalisation(store, verbalisation_id)
    ratings = ratings_of_item(store, ItemRef(VERBALISATION, verbalisation_id))
    material = unit_material(store, row.unit_id, row.lang)
    references = [
        (quality, text)
        for quality in QUALITIES
        for _id, text in material.references.get(quality, ())
    ]
    esa = next((s for s in scores if s.metric == "esa"), None)
    hallucination = next((s for s in scores if s.metric == "hallucination"), None)
    mentions = [
        Span(int(m["start"]), int(m["end"]), str(m.get("entity", "")), str(m.get("via", "")))
        for m in (esa.details.get("mentions", []) if esa else [])
    ]
    spans = [
        Span(int(s["start"]), int(s["end"]), str(s.get("text", "")))
        for s in (hallucination.details.get("spans", []) if hallucination else [])
    ]
    tier = row.sub_tier or row.tier or "no tier"
    return TextDetail(
        title=f"{row.unit_uid} · {row.model} · {row.lang} · candidate "
        f"{row.candidate_index} · {tier}",
        text=row.text or "",
        lang=row.lang,
        mentions=mentions,
        missing=[str(m) for m in (esa.details.get("missing", []) if esa else [])],
        hallucinations=spans,
        esa_scored=esa is not None,
        hallucination_scored=hallucination is not None,
        triples=list(material.triples),
        references=references,
        scores=score_lines(scores) + rating_lines(ratings),
    )


def rating_lines(ratings: Sequence[tuple[str, Any]]) -> list[tuple[str, str, str]]:
    """One detail line per human rating: fluency, adequacy, and who rated."""
    from core.annotation import ADEQUACY_LABELS

    lines = []
    for name, rating in ratings:
        parts = []
        if rating.fluency is not None:
            parts.append(f"fluency {rating.fluency}")
        if rating.adequacy is not None:
            parts.append(f"adequacy {ADEQUACY_LABELS.get(rating.adequacy, rating.adequacy)}")
        note = f"by {name}" + (" (golden answer)" if rating.is_golden else "")
        if rating.corrected_text:
            note += "; corrected"
        lines.append(("human rating", ", ".join(parts) or "(no score)", note))
    return lines


def score_lines(scores: Sequence[StoredScore]) -> list[tuple[str, str, str]]:
    lines = []
    for s in sorted(
        scores, key=lambda s: column_order(f"{s.metric}:{s.quality}" if s.quality else s.metric)
    ):
        column = f"{s.metric} {s.quality}" if s.quality else s.metric
        d = s.details
        note = ""
        if s.metric == "bertscore":
            note = f"{d.get('model', '?')}, " + (
                "rescaled" if d.get("rescaled") else "NOT rescaled (raw F1)"
            )
        elif s.metric == "esa":
            note = f"{len(d.get('detected', []))} of {plural(d.get('entities', 0), 'entity')}"
        elif s.metric == "similarity":
            drop = d.get("inversion_drop")
            note = f"encoder {d.get('encoder', '?')}" + (
                f"; inversion drop {drop:+.3f}" if isinstance(drop, (int, float)) else ""
            )
        elif s.metric in ("ppl", "entity_ppl") and d.get("model"):
            note = f"under {d['model']}"
        elif d.get("note"):
            note = str(d["note"])
        lines.append((column, format_value(s.metric, s.value), note))
    return lines
