"""Which claims may enter a data unit (METHODS §4), each rule a switch.

:func:`drop_reasons` says, for every claim of an entity, why it would be dropped
(or ``None`` when it is kept). The browser greys dropped claims with the reason;
the unit builder counts what each rule dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.wikidata.records import ClaimRecord

# Value types that read badly as text.
UNREADABLE_TYPES = frozenset(
    {
        "external-id",
        "url",
        "commonsMedia",
        "math",
        "geo-shape",
        "tabular-data",
        "musical-notation",
        "globe-coordinate",
    }
)

# Properties that serve the ontology or the wiki rather than the fact.
ONTOLOGY_PROPERTIES: dict[str, str] = {
    "P31": "instance of",
    "P279": "subclass of",
    "P910": "topic's main category",
    "P1659": "see also",
    "P18": "image",
    "P373": "Commons category",
    "P1343": "described by source",
    "P2354": "has list",
    "P1753": "list related to category",
    "P4224": "category contains",
    "P301": "category's main topic",
    "P971": "category combines topics",
    "P5008": "on focus list of Wikimedia project",
    "P1424": "topic's main template",
    "P1204": "Wikimedia portal's main topic",
    "P5869": "model item",
    # category-for-... properties
    "P1464": "category for people born here",
    "P1465": "category for people who died here",
    "P1791": "category of people buried here",
    "P1792": "category of associated people",
    "P1754": "category related to list",
    "P2033": "category for pictures taken with camera",
    "P2517": "category for recipients of this award",
    "P3876": "category for alumni of educational institution",
    "P4195": "category for employees of the organization",
    "P6112": "category for members of a team",
    "P7561": "category for the interior of the item",
    "P8989": "category for the view of the item",
}

# Kept only when the object is itself a subject in the unit.
ONLY_WITHIN_UNIT: dict[str, str] = {
    "P460": "said to be the same as",
    "P1889": "different from",
    "P7084": "related category",
    "P21": "sex or gender",
    "P735": "given name",
    "P361": "part of",
}


@dataclass(frozen=True)
class ClaimFilterSettings:
    drop_deprecated: bool = True
    truthy_only: bool = True  # where a property has preferred statements, drop its normal ones
    drop_no_or_some_value: bool = True
    drop_unreadable_types: bool = True
    drop_ontology_properties: bool = True
    only_within_unit: bool = True


RULES: tuple[tuple[str, str], ...] = (
    ("drop_deprecated", "deprecated rank"),
    ("truthy_only", "not the best rank of its property"),
    ("drop_no_or_some_value", "no value / unknown value"),
    ("drop_unreadable_types", "value type reads badly as text"),
    ("drop_ontology_properties", "property serves the ontology or the wiki"),
    ("only_within_unit", "kept only when its object is a subject in the unit"),
)


def _preferred_properties(claims: Iterable[ClaimRecord]) -> set[str]:
    return {c.property_pid for c in claims if c.rank == "preferred"}


def drop_reason(
    claim: ClaimRecord,
    preferred_properties: set[str],
    settings: ClaimFilterSettings = ClaimFilterSettings(),  # frozen, shared
    unit_subjects: frozenset[str] = frozenset(),
) -> str | None:
    """Why ``claim`` would be dropped, or None when it may enter a unit."""
    if settings.drop_deprecated and claim.rank == "deprecated":
        return "deprecated rank"
    if (
        settings.truthy_only
        and claim.rank == "normal"
        and claim.property_pid in preferred_properties
    ):
        return "not the best rank of its property (a preferred value exists)"
    if settings.drop_no_or_some_value and claim.snak_type in ("novalue", "somevalue"):
        return "no value" if claim.snak_type == "novalue" else "unknown value (somevalue)"
    if settings.drop_unreadable_types and claim.value_type in UNREADABLE_TYPES:
        return f"value type {claim.value_type} reads badly as text"
    if settings.drop_ontology_properties and claim.property_pid in ONTOLOGY_PROPERTIES:
        return f"{ONTOLOGY_PROPERTIES[claim.property_pid]} serves the ontology or the wiki"
    if (
        settings.only_within_unit
        and claim.property_pid in ONLY_WITHIN_UNIT
        and claim.value not in unit_subjects
    ):
        return f"{ONLY_WITHIN_UNIT[claim.property_pid]}: kept only when its object is in the unit"
    return None


def drop_reasons(
    claims: Sequence[ClaimRecord],
    settings: ClaimFilterSettings = ClaimFilterSettings(),  # frozen, shared
    unit_subjects: frozenset[str] = frozenset(),
) -> list[str | None]:
    """The drop reason of each claim (None = kept), aligned with ``claims``."""
    preferred = _preferred_properties(claims) if settings.truthy_only else set()
    return [drop_reason(c, preferred, settings, unit_subjects) for c in claims]
