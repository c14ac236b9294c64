"""Candidate claims for a draft: the claims around an entity with the METHODS §4 filter
rule that drops each (if any) and how many each rule drops."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from core.errors import UserFacingError
from core.units.claim_filters import RULES, ClaimFilterSettings, drop_reasons
from core.wikidata.records import ClaimRecord, EntityDetails

if TYPE_CHECKING:
    pass


from core.units.builder.draft import UnitDraft, UnitError, claim_triple

# --- candidate claims and filter counts -------------------------------------------------


@dataclass(frozen=True)
class FilterCounts:
    """How many claims each rule of :data:`core.units.claim_filters.RULES` dropped."""

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
