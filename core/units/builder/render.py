"""Rendering a draft as text per language from the labels the entity details carry. A
missing label is flagged (the unit is then not parallel in that language), never
invented; words a person kept for the session fill in where labels lack."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.store import SessionStore
from core.units.shapes import render_value
from core.vocab import LANGUAGES
from core.wikidata.records import EntityDetails

if TYPE_CHECKING:
    pass


from core.units.builder.draft import ENTITY_ID, PARTS, Overrides, UnitDraft, UnitError, claim_entity

# --- rendering --------------------------------------------------------------------------


@dataclass(frozen=True)
class RenderedTriple:
    """One triple as text in one language. ``subject``/``predicate``/``object`` are the
    rendered texts; overrides, when set, are what is shown, and the rendered text stays."""

    position: int
    subject: str
    predicate: str
    object: str
    subject_qid: str
    property_pid: str
    object_value: str | None
    statement_id: str | None = None
    subject_missing: bool = False
    predicate_missing: bool = False
    object_missing: bool = False
    subject_override: str | None = None
    predicate_override: str | None = None
    object_override: str | None = None
    claim_id: int | None = None  # set once saved and linked to the session's claims

    @property
    def label_missing(self) -> bool:
        return self.subject_missing or self.predicate_missing or self.object_missing

    def shown(self, part: str) -> str:
        override = getattr(self, f"{part}_override")
        return override if override is not None else getattr(self, part)

    @property
    def display(self) -> tuple[str, str, str]:
        return (self.shown("subject"), self.shown("predicate"), self.shown("object"))


KeptLabels = Mapping[str, Mapping[str, str]]  # lang -> entity id (Q…/P…) -> text
KEPT_LABELS_META_KEY = "units:kept-labels"


def kept_labels(store: SessionStore) -> dict[str, dict[str, str]]:
    """Words a person kept for the session (lang -> entity id -> text): new units use them."""
    from core.io.bounded import stored_json

    data = stored_json(store.get_meta(KEPT_LABELS_META_KEY), {})
    if not isinstance(data, dict):
        return {}
    return {
        str(lang): {str(q): str(t) for q, t in by.items()}
        for lang, by in data.items()
        if isinstance(by, dict)
    }


def keep_label(
    store: SessionStore, lang: str, entity: str, text: str | None, *, source: str = "gui"
) -> None:
    """Keep ``text`` for ``entity`` in ``lang`` for the session (None: forget it), as a
    recorded edit from ``source``."""
    if not ENTITY_ID.fullmatch(entity or ""):
        raise UnitError(
            f"{entity!r} is not a Wikidata id (Q… or P…): only an entity's or a "
            "property's words can be kept for the session"
        )
    from core.edits import apply_edit
    from core.edits.units import KeptLabelEdit

    # A recorded edit of the one entity's words (the others kept are left as they are).
    apply_edit(store, KeptLabelEdit(lang, entity, text), source=source)


def label_index(details_by_qid: Mapping[str, EntityDetails]) -> dict[str, dict[str, str]]:
    """lang -> item/property id -> label, from every entity's terms (first one wins)."""
    index: dict[str, dict[str, str]] = {}
    for details in details_by_qid.values():
        for term in details.terms:
            if term.kind == "label":
                index.setdefault(term.lang, {}).setdefault(term.item_id, term.text)
    return index


def render_unit(
    draft: UnitDraft,
    details_by_qid: Mapping[str, EntityDetails],
    langs: Sequence[str] = LANGUAGES,
    overrides: Overrides | None = None,
    labels: Mapping[str, Mapping[str, str]] | None = None,
    kept: KeptLabels | None = None,
) -> dict[str, list[RenderedTriple]]:
    """Each claim of the draft as text per language. A missing label shows the id and is
    flagged; ``labels`` (from :func:`label_index`) may be passed to render many units.
    ``kept`` (lang -> entity id -> text, :func:`kept_labels`) are a person's words kept for
    the session: they stand wherever that entity appears, unless ``overrides`` say otherwise."""
    labels = labels if labels is not None else label_index(details_by_qid)
    overrides = dict(overrides or {})
    for lang in langs:
        for position, claim in enumerate(draft.claims):
            for part in PARTS:
                entity = claim_entity(claim, part)
                text = (kept or {}).get(lang, {}).get(entity) if entity else None
                if text is not None:
                    overrides.setdefault((lang, position, part), text)
    for lang, position, part in overrides:
        if part not in PARTS or not 0 <= position < len(draft.claims) or lang not in langs:
            raise UnitError(
                f"override for a triple part that does not exist: {lang} {position} {part}"
            )
    rendered: dict[str, list[RenderedTriple]] = {}
    for lang in langs:
        names = labels.get(lang, {})
        rows = []
        for position, claim in enumerate(draft.claims):
            subject = names.get(claim.subject_qid)
            predicate = names.get(claim.property_pid)
            value = render_value(claim.value, claim.value_type, claim.value_json, lang, names)
            if claim.value is None:
                # No/some value was let through the filters: say so rather than leave a gap.
                value = "no value" if claim.snak_type == "novalue" else "unknown value"
            rows.append(
                RenderedTriple(
                    position=position,
                    subject=subject or claim.subject_qid,
                    predicate=predicate or claim.property_pid,
                    object=value if value is not None else (claim.value or ""),
                    subject_qid=claim.subject_qid,
                    property_pid=claim.property_pid,
                    object_value=claim.value,
                    statement_id=claim.statement_id,
                    subject_missing=subject is None,
                    predicate_missing=predicate is None,
                    object_missing=value is None,
                    subject_override=overrides.get((lang, position, "subject")),
                    predicate_override=overrides.get((lang, position, "predicate")),
                    object_override=overrides.get((lang, position, "object")),
                )
            )
        rendered[lang] = rows
    return rendered


def parallel_languages(rendered: Mapping[str, Sequence[RenderedTriple]]) -> set[str]:
    """Languages where every part of every triple has text: a label, or a person's override
    (an override is a deliberate text, so it fills the gap a missing label left)."""

    def filled(t: RenderedTriple, part: str) -> bool:
        return not getattr(t, f"{part}_missing") or getattr(t, f"{part}_override") is not None

    return {
        lang
        for lang, rows in rendered.items()
        if rows and all(filled(t, part) for t in rows for part in PARTS)
    }
