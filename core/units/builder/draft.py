"""A unit being built (METHODS §4–§5): :class:`UnitDraft`, an immutable, ordered list of
claims around a root entity (every edit returns a new draft, so an undo stack is a list of
drafts), the edits that move or drop a triple with its overrides, and the draft's JSON form."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from core.errors import UserFacingError
from core.units.claim_filters import ClaimFilterSettings
from core.units.shapes import Triple, UnitStructure, unit_structure
from core.wikidata.records import ClaimRecord

if TYPE_CHECKING:
    pass


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
        check_permutation(new_order, len(self.claims))
        return replace(self, claims=tuple(self.claims[i] for i in new_order))

    def _check_index(self, index: int) -> None:
        if not 0 <= index < len(self.claims):
            raise UnitError(f"no triple at position {index} (the unit has {len(self.claims)})")


def check_permutation(order: Sequence[int], size: int) -> None:
    if sorted(order) != list(range(size)):
        raise UnitError(f"a new order must list each position 0..{size - 1} once, got {order}")


def structure(draft: UnitDraft) -> UnitStructure:
    return unit_structure(draft.triples, draft.root_qid)


Overrides = Mapping[tuple[str, int, str], str]  # (lang, position, part) -> text


ENTITY_ID = re.compile(r"[QP][1-9][0-9]*")


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
    return value if isinstance(value, str) and ENTITY_ID.fullmatch(value) else None


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

    try:
        from core.io.bounded import stored_json

        data = stored_json(text, None)
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
