"""Building a data unit by hand or by sampling (METHODS §4–§5), rendering and saving it.

A :class:`UnitDraft` is an immutable, ordered list of claims around a root entity; every
edit returns a new draft, so an undo stack is a list of drafts. Rendering turns the
claims into text per language from the labels the entity details carry; a missing label
is flagged (the unit is then not parallel in that language), never invented. Manual
overrides are kept apart from the rendered text so the original is never lost.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import CursorResult, select, update

from core.claim_filters import RULES, ClaimFilterSettings, drop_reasons
from core.errors import UserFacingError
from core.store import SessionStore
from core.store import models as m
from core.units import MAX_SIZE, Triple, UnitStructure, render_value, unit_structure
from core.vocab import LANGUAGES
from core.wikidata.records import ClaimRecord, EntityDetails

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

PARTS: tuple[str, ...] = ("subject", "predicate", "object")
MAIN = "main"


class UnitError(UserFacingError):
    """A unit that cannot be saved or edited, with the reasons."""


# --- drafts ----------------------------------------------------------------------------


def claim_triple(claim: ClaimRecord) -> Triple:
    # No/some value claims have no value; their snak type stands in so two of them on
    # one property still count as the same triple.
    value = claim.value if claim.value is not None else f"<{claim.snak_type}>"
    return Triple(claim.subject_qid, claim.property_pid, value)


@dataclass(frozen=True)
class UnitDraft:
    """A unit being built: the root, its claims in order, and where the root stood."""

    root_qid: str
    claims: tuple[ClaimRecord, ...] = ()
    category: str | None = None
    tier: str | None = None
    sub_tier: str | None = None
    filters: ClaimFilterSettings = field(default_factory=ClaimFilterSettings)

    @property
    def triples(self) -> tuple[Triple, ...]:
        return tuple(claim_triple(c) for c in self.claims)

    @property
    def subjects(self) -> frozenset[str]:
        return frozenset({self.root_qid, *(c.subject_qid for c in self.claims)})

    def add(self, claim: ClaimRecord) -> UnitDraft:
        if claim_triple(claim) in self.triples:
            raise UnitError(f"{claim.property_pid} of {claim.subject_qid} is already in the unit")
        return replace(self, claims=(*self.claims, claim))

    def remove(self, index: int) -> UnitDraft:
        self._check_index(index)
        return replace(self, claims=self.claims[:index] + self.claims[index + 1 :])

    def move(self, index: int, new_index: int) -> UnitDraft:
        self._check_index(index)
        self._check_index(new_index)
        claims = list(self.claims)
        claims.insert(new_index, claims.pop(index))
        return replace(self, claims=tuple(claims))

    def reordered(self, new_order: Sequence[int]) -> UnitDraft:
        """``new_order`` lists the current positions in their new order."""
        _check_permutation(new_order, len(self.claims))
        return replace(self, claims=tuple(self.claims[i] for i in new_order))

    def _check_index(self, index: int) -> None:
        if not 0 <= index < len(self.claims):
            raise UnitError(f"no triple at position {index} (the unit has {len(self.claims)})")


def _check_permutation(order: Sequence[int], size: int) -> None:
    if sorted(order) != list(range(size)):
        raise UnitError(f"a new order must list each position 0..{size - 1} once, got {order}")


def structure(draft: UnitDraft) -> UnitStructure:
    return unit_structure(draft.triples, draft.root_qid)


# --- candidate claims and filter counts -------------------------------------------------


@dataclass(frozen=True)
class FilterCounts:
    """How many claims each rule of :data:`core.claim_filters.RULES` dropped."""

    by_rule: Mapping[str, int]
    kept: int

    @property
    def dropped(self) -> int:
        return sum(self.by_rule.values())


@dataclass(frozen=True)
class CandidateClaim:
    claim: ClaimRecord
    reason: str | None  # why it is dropped; None when it may enter the unit
    rule: str | None  # the RULES key that dropped it
    in_unit: bool


@dataclass(frozen=True)
class Candidates:
    qid: str
    claims: tuple[CandidateClaim, ...]
    counts: FilterCounts

    @property
    def kept(self) -> tuple[ClaimRecord, ...]:
        return tuple(c.claim for c in self.claims if c.reason is None and not c.in_unit)


def _only(rule: str) -> ClaimFilterSettings:
    return ClaimFilterSettings(**{f.name: f.name == rule for f in fields(ClaimFilterSettings)})


_SINGLE_RULE = {rule: _only(rule) for rule, _ in RULES}


def _rule_of(
    claim: ClaimRecord,
    claims: Sequence[ClaimRecord],
    settings: ClaimFilterSettings,
    unit_subjects: frozenset[str],
) -> str | None:
    # drop_reason tries the rules in RULES order and reports the first that drops the
    # claim; asking each enabled rule alone in that order finds the same one without
    # parsing the reason's wording.
    index = claims.index(claim)
    for rule, _ in RULES:
        if (
            getattr(settings, rule)
            and drop_reasons(claims, _SINGLE_RULE[rule], unit_subjects)[index]
        ):
            return rule
    return None


def candidates(
    draft: UnitDraft, details_by_qid: Mapping[str, EntityDetails], qid: str | None = None
) -> Candidates:
    """The claims of ``qid`` (the root by default) with drop reasons and counts per rule.

    The subjects already in the draft count as "in the unit" for the rules that keep a
    claim only when its object is in the unit."""
    qid = qid or draft.root_qid
    details = details_by_qid.get(qid)
    claims = details.claims if details else ()
    subjects = draft.subjects
    reasons = drop_reasons(claims, draft.filters, subjects)
    in_unit = set(draft.triples)
    counts = {rule: 0 for rule, _ in RULES}
    rows: list[CandidateClaim] = []
    for claim, reason in zip(claims, reasons, strict=True):
        rule = _rule_of(claim, claims, draft.filters, subjects) if reason else None
        if rule:
            counts[rule] += 1
        rows.append(CandidateClaim(claim, reason, rule, claim_triple(claim) in in_unit))
    kept = sum(1 for r in rows if r.reason is None)
    return Candidates(qid, tuple(rows), FilterCounts(counts, kept))


def follow(
    draft: UnitDraft, details_by_qid: Mapping[str, EntityDetails], object_qid: str
) -> Candidates:
    """Candidates for continuing the unit from an item value already in the draft."""
    objects = {c.value for c in draft.claims if c.value_type == "wikibase-item"}
    if object_qid != draft.root_qid and object_qid not in objects:
        raise UnitError(f"{object_qid} is not an object in the unit, so it cannot be followed")
    if object_qid not in details_by_qid:
        raise UnitError(f"{object_qid} has not been loaded: open it first to follow it")
    return candidates(draft, details_by_qid, object_qid)


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


Overrides = Mapping[tuple[str, int, str], str]  # (lang, position, part) -> text
KeptLabels = Mapping[str, Mapping[str, str]]  # lang -> entity id (Q…/P…) -> text
KEPT_LABELS_META_KEY = "units:kept-labels"
_ENTITY_ID = re.compile(r"[QP][1-9][0-9]*")


def add_candidates(draft: UnitDraft, rows: Sequence[CandidateClaim]) -> tuple[UnitDraft, list[str]]:
    """Add several candidate claims in one action, in the order given: the draft with every
    one that may enter, and a line per claim left out (already in, dropped by a rule, or
    refused by the draft) saying why."""
    skipped: list[str] = []
    for row in rows:
        name = f"{row.claim.property_pid} of {row.claim.subject_qid}"
        if row.in_unit:
            skipped.append(f"{name}: already in the unit")
            continue
        if row.reason is not None:
            skipped.append(f"{name}: {row.reason} (METHODS §4 filters)")
            continue
        try:
            draft = draft.add(row.claim)
        except UserFacingError as error:
            skipped.append(str(error))
    return draft, skipped


def claim_entity(claim: Any, part: str) -> str | None:
    """The Wikidata entity a part of a claim (or a stored triple) names: the subject's QID,
    the property's PID, the object's QID when the value is an item; None for a literal."""
    if part == "subject":
        return getattr(claim, "subject_qid", None)
    if part == "predicate":
        return getattr(claim, "property_pid", None)
    value_type = getattr(claim, "value_type", None)
    if value_type is not None and value_type not in ("wikibase-item", "wikibase-property"):
        return None  # a string that merely looks like an id is a literal
    value = getattr(claim, "value", getattr(claim, "object_value", None))
    return value if isinstance(value, str) and _ENTITY_ID.fullmatch(value) else None


def override_across(
    claims: Sequence[Any],
    overrides: Overrides,
    lang: str,
    position: int,
    part: str,
    text: str | None,
) -> dict[tuple[str, int, str], str]:
    """``overrides`` with ``text`` (None: cleared) set for the part at ``position`` and for
    every other place of the unit, in ``lang``, that names the same entity: the subject or
    the object of any triple (the property in any predicate, for a predicate). A literal
    object is only that one place."""
    if part not in PARTS or not 0 <= position < len(claims):
        raise UnitError(f"override for a triple part that does not exist: {lang} {position} {part}")
    entity = claim_entity(claims[position], part)
    places = [(position, part)]
    if entity is not None:
        kinds = ("predicate",) if part == "predicate" else ("subject", "object")
        places = [
            (p, k)
            for p, claim in enumerate(claims)
            for k in kinds
            if claim_entity(claim, k) == entity
        ]
    result = dict(overrides)
    for p, k in places:
        if text is None:
            result.pop((lang, p, k), None)
        else:
            result[(lang, p, k)] = text
    return result


def remap_overrides(overrides: Overrides, order: Sequence[int]) -> dict[tuple[str, int, str], str]:
    """Overrides follow their triple when the order changes (``order``: the old positions
    in their new order; an override of a position missing from it is dropped)."""
    new_position = {old: new for new, old in enumerate(order)}
    return {
        (lang, new_position[pos], part): text
        for (lang, pos, part), text in overrides.items()
        if pos in new_position
    }


def move_triple(
    draft: UnitDraft, overrides: Overrides, position: int, target: int
) -> tuple[UnitDraft, dict[tuple[str, int, str], str]]:
    """The draft with the triple at ``position`` moved to ``target``; its overrides move
    with it."""
    draft._check_index(position)
    draft._check_index(target)
    order = list(range(len(draft.claims)))
    order.insert(target, order.pop(position))
    return draft.reordered(order), remap_overrides(overrides, order)


def remove_triple(
    draft: UnitDraft, overrides: Overrides, position: int
) -> tuple[UnitDraft, dict[tuple[str, int, str], str]]:
    """The draft without the triple at ``position``, and without its overrides (those of
    the triples after it move up with them)."""
    order = [i for i in range(len(draft.claims)) if i != position]
    return draft.remove(position), remap_overrides(overrides, order)


def kept_labels(store: SessionStore) -> dict[str, dict[str, str]]:
    """Words a person kept for the session (lang -> entity id -> text): new units use them."""
    import json

    try:
        data = json.loads(store.get_meta(KEPT_LABELS_META_KEY) or "{}")
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(lang): {str(q): str(t) for q, t in by.items()}
        for lang, by in data.items()
        if isinstance(by, dict)
    }


def keep_label(store: SessionStore, lang: str, entity: str, text: str | None) -> None:
    """Keep ``text`` for ``entity`` in ``lang`` for the session (None: forget it)."""
    import json

    if not _ENTITY_ID.fullmatch(entity or ""):
        raise UnitError(
            f"{entity!r} is not a Wikidata id (Q… or P…): only an entity's or a "
            "property's words can be kept for the session"
        )
    kept = kept_labels(store)
    if text is None:
        kept.get(lang, {}).pop(entity, None)
    else:
        kept.setdefault(lang, {})[entity] = text
    store.set_meta(
        KEPT_LABELS_META_KEY,
        json.dumps(
            {lang: by for lang, by in kept.items() if by}, ensure_ascii=False, sort_keys=True
        ),
    )


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


# --- the session ------------------------------------------------------------------------


def provenance(draft: UnitDraft) -> dict[str, Any]:
    """What a saved unit records about how it was built (kept in ``attributes``)."""
    entities = [draft.root_qid]
    for claim in draft.claims:
        for qid in (
            claim.subject_qid,
            claim.value if claim.value_type == "wikibase-item" else None,
        ):
            if qid and qid not in entities:
                entities.append(qid)
    return {
        "entities": entities,
        "properties": [c.property_pid for c in draft.claims],
        "statements": [c.statement_id for c in draft.claims],
        "category": draft.category,
        "tier": draft.tier,
        "sub_tier": draft.sub_tier,
        "filters": {f.name: getattr(draft.filters, f.name) for f in fields(draft.filters)},
    }


def save_unit(
    store: SessionStore,
    draft: UnitDraft,
    rendered: Mapping[str, Sequence[RenderedTriple]],
    *,
    uid: str | None = None,
    origin: str = "built",
    category: str | None = None,
    source: str | None = None,
) -> int:
    """Write the unit and its triples per language in one transaction; returns its id.

    Refuses (:class:`UnitError`) a unit that is empty, larger than 7 or not connected."""
    with store.unit_of_work() as db:
        return _add_unit(
            db, draft, rendered, uid=uid, origin=origin, category=category, source=source
        )


def save_units(
    store: SessionStore,
    items: Sequence[tuple[UnitDraft, Mapping[str, Sequence[RenderedTriple]], Mapping]],
    *,
    origin: str,
    category: str | None = None,
    source: str | None = None,
) -> list[int]:
    """Save many units in one transaction (all or none); each item is a draft, its
    rendering and extra attributes merged into the unit's provenance."""
    with store.unit_of_work() as db:
        return [
            _add_unit(
                db, draft, rendered, origin=origin, category=category, source=source, extra=extra
            )
            for draft, rendered, extra in items
        ]


def _add_unit(
    db: Session,
    draft: UnitDraft,
    rendered: Mapping[str, Sequence[RenderedTriple]],
    *,
    uid: str | None = None,
    origin: str = "built",
    category: str | None = None,
    source: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> int:
    shape = structure(draft)
    if not shape.valid:
        raise UnitError("the unit cannot be saved: " + "; ".join(shape.problems))
    for lang, rows in rendered.items():
        if [(t.subject_qid, t.property_pid, t.object_value) for t in rows] != [
            (c.subject_qid, c.property_pid, c.value) for c in draft.claims
        ]:
            raise UnitError(f"the {lang} triples do not match the unit: render it again")
    category_name = category or draft.category
    attributes = provenance(draft)
    attributes["category"] = category_name
    attributes["label_missing"] = {
        lang: {
            str(t.position): [p for p in PARTS if getattr(t, f"{p}_missing")]
            for t in rows
            if t.label_missing
        }
        for lang, rows in rendered.items()
    }
    attributes.update(extra or {})
    category_id = None
    if category_name:
        category_id = db.execute(
            select(m.Category.id).where(m.Category.name == category_name)
        ).scalar_one_or_none()
    statement_ids = [c.statement_id for c in draft.claims if c.statement_id]
    claim_ids = (
        dict(
            db.execute(
                select(m.Claim.statement_id, m.Claim.id).where(
                    m.Claim.statement_id.in_(statement_ids)
                )
            ).all()
        )
        if statement_ids
        else {}
    )
    unit = m.DataUnit(
        uid=uid or uuid.uuid4().hex,
        root_qid=draft.root_qid,
        category_id=category_id,
        shape=shape.shape.value if shape.shape else None,
        size=shape.size,
        tier=draft.tier,
        sub_tier=draft.sub_tier,
        origin=origin,
        source=source,
        attributes=attributes,
    )
    db.add(unit)
    db.flush()
    db.add_all(
        m.UnitTriple(
            unit_id=unit.id,
            lang=lang,
            tripleset=MAIN,
            position=t.position,
            subject=t.subject,
            predicate=t.predicate,
            object=t.object,
            subject_qid=t.subject_qid,
            property_pid=t.property_pid,
            object_value=t.object_value,
            claim_id=claim_ids.get(t.statement_id) if t.statement_id else None,
            subject_override=t.subject_override,
            predicate_override=t.predicate_override,
            object_override=t.object_override,
            label_missing=t.label_missing,
        )
        for lang, rows in rendered.items()
        for t in rows
    )
    return unit.id


def set_override(
    store: SessionStore, unit_id: int, lang: str, position: int, part: str, text: str | None
) -> None:
    """Set (or, with None, clear) a manual text for one part of one triple; commits."""
    if part not in PARTS:
        raise UnitError(f"a triple has no part {part!r}: use subject, predicate or object")
    with store.unit_of_work() as db:
        result = db.execute(
            update(m.UnitTriple)
            .where(
                m.UnitTriple.unit_id == unit_id,
                m.UnitTriple.lang == lang,
                m.UnitTriple.tripleset == MAIN,
                m.UnitTriple.position == position,
            )
            .values({f"{part}_override": text})
        )
        if cast(CursorResult[Any], result).rowcount != 1:
            raise UnitError(f"unit {unit_id} has no {lang} triple at position {position}")


def set_label_override(
    store: SessionStore,
    unit_id: int,
    lang: str,
    position: int,
    part: str,
    text: str | None,
    keep: bool = False,
) -> int:
    """Set (None: clear) a person's words for the entity at ``position``/``part`` wherever
    it appears in the unit in ``lang`` (subject or object of any triple; the property in any
    predicate); a literal object is only that one place. With ``keep``, the words are also
    kept for the session (:func:`keep_label`), so new units use them. Commits; returns how
    many triple parts changed."""
    if part not in PARTS:
        raise UnitError(f"a triple has no part {part!r}: use subject, predicate or object")
    with store.unit_of_work() as db:
        rows = (
            db.execute(
                select(m.UnitTriple)
                .where(
                    m.UnitTriple.unit_id == unit_id,
                    m.UnitTriple.lang == lang,
                    m.UnitTriple.tripleset == MAIN,
                )
                .order_by(m.UnitTriple.position)
            )
            .scalars()
            .all()
        )
        by_position = {row.position: row for row in rows}
        if position not in by_position:
            raise UnitError(f"unit {unit_id} has no {lang} triple at position {position}")
        entity = claim_entity(by_position[position], part)
        places = [(by_position[position], part)]
        if entity is not None:
            kinds = ("predicate",) if part == "predicate" else ("subject", "object")
            places = [(row, k) for row in rows for k in kinds if claim_entity(row, k) == entity]
        for row, k in places:
            setattr(row, f"{k}_override", text)
    if keep:
        if entity is None:
            raise UnitError(
                "a literal value (a date, a number, a text) cannot be kept for "
                "the session: only an entity's or a property's words can"
            )
        keep_label(store, lang, entity, text)
    return len(places)


def reorder(store: SessionStore, unit_id: int, new_order: Sequence[int]) -> None:
    """Put the unit's triples (every language) in ``new_order`` (old positions); commits.

    Order never changes the shape (METHODS §5), so nothing else is recomputed."""
    with store.unit_of_work() as db:
        size = db.execute(
            select(m.DataUnit.size).where(m.DataUnit.id == unit_id)
        ).scalar_one_or_none()
        if size is None:
            raise UnitError(f"the session has no unit {unit_id}")
        _check_permutation(new_order, size)
        main = (m.UnitTriple.unit_id == unit_id, m.UnitTriple.tripleset == MAIN)
        # (unit, lang, tripleset, position) is unique and SQLite checks it row by row,
        # so positions go through negative values first to swap without a clash.
        for new, old in enumerate(new_order):
            db.execute(
                update(m.UnitTriple)
                .where(*main, m.UnitTriple.position == old)
                .values(position=-1 - new)
            )
        db.execute(
            update(m.UnitTriple)
            .where(*main, m.UnitTriple.position < 0)
            .values(position=-1 - m.UnitTriple.position)
        )
        unit = db.get(m.DataUnit, unit_id)
        if unit is not None and unit.attributes:
            attributes = dict(unit.attributes)
            for key in ("properties", "statements"):
                if isinstance(attributes.get(key), list) and len(attributes[key]) == size:
                    attributes[key] = [attributes[key][i] for i in new_order]
            missing = attributes.get("label_missing") or {}
            attributes["label_missing"] = {
                lang: {
                    str(new): parts[str(old)]
                    for new, old in enumerate(new_order)
                    if str(old) in parts
                }
                for lang, parts in missing.items()
            }
            unit.attributes = attributes


@dataclass(frozen=True)
class StoredUnit:
    id: int
    uid: str
    root_qid: str | None
    category: str | None
    shape: str | None
    size: int
    tier: str | None
    sub_tier: str | None
    origin: str
    source: str | None
    attributes: Mapping[str, Any]
    triples: Mapping[str, tuple[RenderedTriple, ...]]  # lang -> main triples in order

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.triples)

    @property
    def parallel(self) -> set[str]:
        return parallel_languages(self.triples)


def load_unit(store: SessionStore, unit_id: int) -> StoredUnit:
    with store.snapshot() as db:
        unit = db.get(m.DataUnit, unit_id)
        if unit is None:
            raise UnitError(f"the session has no unit {unit_id}")
        return _stored(unit)


UNIT_PAGE = 200  # units the Units panel reads at a time


def list_units(
    store: SessionStore, *, after_id: int | None = None, limit: int | None = None
) -> list[StoredUnit]:
    """The session's units in id order; with ``after_id``/``limit`` one keyset page (the
    units with a larger id, at most ``limit``), so a panel never loads every unit."""
    from sqlalchemy.orm import selectinload

    query = (
        select(m.DataUnit)
        .order_by(m.DataUnit.id)
        .options(selectinload(m.DataUnit.triples), selectinload(m.DataUnit.category))
    )
    if after_id is not None:
        query = query.where(m.DataUnit.id > after_id)
    if limit is not None:
        query = query.limit(limit)
    with store.snapshot() as db:
        return [_stored(u) for u in db.scalars(query)]


def count_units(store: SessionStore) -> int:
    """How many units the session holds (COUNT(*), no unit loaded)."""
    from sqlalchemy import func

    with store.snapshot() as db:
        return int(db.scalar(select(func.count()).select_from(m.DataUnit)) or 0)


def _stored(unit: m.DataUnit) -> StoredUnit:
    attributes = dict(unit.attributes or {})
    missing = attributes.get("label_missing") or {}
    triples: dict[str, list[RenderedTriple]] = {}
    for row in unit.triples:
        if row.tripleset != MAIN:
            continue
        parts = missing.get(row.lang, {}).get(str(row.position))
        if parts is None:
            # Units imported from files carry one flag for the triple, not one per part.
            parts = list(PARTS) if row.label_missing else []
        triples.setdefault(row.lang, []).append(
            RenderedTriple(
                position=row.position,
                subject=row.subject,
                predicate=row.predicate,
                object=row.object,
                subject_qid=row.subject_qid or "",
                property_pid=row.property_pid or "",
                object_value=row.object_value,
                subject_missing="subject" in parts,
                predicate_missing="predicate" in parts,
                object_missing="object" in parts,
                subject_override=row.subject_override,
                predicate_override=row.predicate_override,
                object_override=row.object_override,
                claim_id=row.claim_id,
            )
        )
    statements = attributes.get("statements") or []
    result = {}
    for lang, rows in triples.items():
        rows.sort(key=lambda t: t.position)
        result[lang] = tuple(
            replace(t, statement_id=statements[t.position])
            if t.position < len(statements) and len(rows) == len(statements)
            else t
            for t in rows
        )
    return StoredUnit(
        id=unit.id,
        uid=unit.uid,
        root_qid=unit.root_qid,
        category=unit.category.name if unit.category else attributes.get("category"),
        shape=unit.shape,
        size=unit.size,
        tier=unit.tier,
        sub_tier=unit.sub_tier,
        origin=unit.origin,
        source=unit.source,
        attributes=attributes,
        triples=result,
    )


__all__ = [
    "MAX_SIZE",
    "CandidateClaim",
    "Candidates",
    "FilterCounts",
    "RenderedTriple",
    "StoredUnit",
    "UnitDraft",
    "UnitError",
    "candidates",
    "follow",
    "label_index",
    "UNIT_PAGE",
    "count_units",
    "list_units",
    "load_unit",
    "parallel_languages",
    "render_unit",
    "reorder",
    "save_unit",
    "set_override",
    "structure",
]


# --- the draft being built, kept in the session so a crash loses nothing ---------------

DRAFT_META_KEY = "units:draft"


def draft_to_json(draft: UnitDraft) -> str:
    import json
    from dataclasses import asdict

    return json.dumps(
        {
            "root_qid": draft.root_qid,
            "claims": [asdict(c) for c in draft.claims],
            "category": draft.category,
            "tier": draft.tier,
            "sub_tier": draft.sub_tier,
            "filters": asdict(draft.filters),
        }
    )


def draft_from_json(text: str) -> UnitDraft | None:
    """The saved draft, or None when there is none or it cannot be read."""
    import json

    try:
        data = json.loads(text)
        return UnitDraft(
            root_qid=data["root_qid"],
            claims=tuple(ClaimRecord(**c) for c in data["claims"]),
            category=data.get("category"),
            tier=data.get("tier"),
            sub_tier=data.get("sub_tier"),
            filters=ClaimFilterSettings(**data.get("filters", {})),
        )
    except (ValueError, TypeError, KeyError):
        return None


def save_draft(store: SessionStore, draft: UnitDraft | None) -> None:
    store.set_meta(DRAFT_META_KEY, draft_to_json(draft) if draft is not None else "")


def load_draft(store: SessionStore) -> UnitDraft | None:
    text = store.get_meta(DRAFT_META_KEY)
    return draft_from_json(text) if text else None


DRAFT_OVERRIDES_META_KEY = "units:draft-overrides"


def save_draft_overrides(store: SessionStore, overrides: Overrides) -> None:
    """The draft's overrides ((lang, position, part) -> words), kept beside the draft."""
    import json

    rows = [[lang, pos, part, text] for (lang, pos, part), text in overrides.items()]
    store.set_meta(DRAFT_OVERRIDES_META_KEY, json.dumps(rows))


def load_draft_overrides(store: SessionStore) -> dict[tuple[str, int, str], str]:
    """The draft's overrides as saved; none when there are none or they cannot be read."""
    import json

    try:
        rows = json.loads(store.get_meta(DRAFT_OVERRIDES_META_KEY) or "[]")
        return {(lang, int(pos), part): value for lang, pos, part, value in rows}
    except (ValueError, TypeError):
        return {}
