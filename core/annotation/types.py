"""The vocabulary of human annotation: answer codes, labels, and the records that the
session, the queues, the Annotate panel and the CLI exchange. Pure data: no session access.
"""

from __future__ import annotations

import numbers
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from core.errors import UserFacingError

FLUENCY_MIN, FLUENCY_MAX = 0, 5
YES, NO, NOT_SURE = 0, 1, 2
ADEQUACY_LABELS = {YES: "Yes", NO: "No", NOT_SURE: "Not sure"}
ADEQUACY_KEYS = {"y": YES, "n": NO, "s": NOT_SURE}  # the panel's keyboard
BLAME_PARTS = ("text", "subject", "predicate", "object", "other")
COMBINATION = "combination"
CHECKS = ("fluent_natural", "all_and_only_information", "no_spelling_grammar_errors")
CHECK_LABELS = {
    "fluent_natural": "fluent and natural",
    "all_and_only_information": "all and only the information",
    "no_spelling_grammar_errors": "no spelling or grammar errors",
}
ERROR_TAXONOMY: dict[str, tuple[str, ...]] = {
    "accuracy": ("terminology", "mistranslation", "omission", "addition", "untranslated"),
    "fluency": ("grammar", "style", "spelling", "typography", "unintelligible"),
}
VERBALISATION, REFERENCE = "verbalisation", "reference"
MAX_NAME_LENGTH = 100
GROUP_DIMENSIONS = ("category", "tier", "subtier", "model", "lang")


class AnnotationError(UserFacingError):
    """A rating, annotator or queue request that cannot be honoured; the message says why."""


def clean_annotator_name(name: object) -> str:
    """An annotator's name as the app stores it (runs of whitespace made one space), or an
    :class:`AnnotationError`: not text, empty, longer than :data:`MAX_NAME_LENGTH`, or
    holding a control character (ESC, BEL, NUL: a name is shown on terminals and screens).
    The one rule for a name typed in the app and one merged from a pack."""
    if not isinstance(name, str):
        raise AnnotationError(f"An annotator's name must be text, not {type(name).__name__}.")
    clean = " ".join(name.split())
    if not clean:
        raise AnnotationError("An annotator needs a name.")
    if len(clean) > MAX_NAME_LENGTH:
        raise AnnotationError(
            f"An annotator's name may have at most {MAX_NAME_LENGTH} "
            f"characters ({len(clean)} given)."
        )
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in clean):
        raise AnnotationError(
            f"An annotator's name may not hold control characters ({ascii(clean)[:60]})."
        )
    return clean


class ItemRef(NamedTuple):
    """What is rated: a verbalisation or a reference text, by id."""

    kind: str  # VERBALISATION | REFERENCE
    id: int


def item_ref(verbalisation_id: int | None, reference_id: int | None) -> ItemRef:
    """The item an annotation row is of (its verbalisation, else its reference)."""
    if verbalisation_id is not None:
        return ItemRef(VERBALISATION, verbalisation_id)
    return ItemRef(REFERENCE, reference_id)  # type: ignore[arg-type]


def natural_key(name: str) -> tuple[Any, ...]:
    """A sort key for names: wdv-worker-2 before wdv-worker-10."""
    return tuple(int(p) if p.isdigit() else p.casefold() for p in re.split(r"(\d+)", name))


# -- annotators -------------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotatorInfo:
    id: int
    name: str
    is_anonymous: bool
    ratings: int = 0  # ratings made (golden answers not counted)
    golden_answers: int = 0


# -- ratings ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Rating:
    """What an annotator says about an item; every field optional, at least one given.

    ``blame`` is one of :data:`BLAME_PARTS`, ``"combination"``, or several parts (a
    combination); it is only asked for when adequacy is No or Not sure.
    """

    fluency: int | None = None
    adequacy: int | None = None
    blame: str | Sequence[str] | None = None
    blame_other: str | None = None
    checks: Mapping[str, bool] | None = None
    error_taxonomy: Mapping[str, Sequence[str]] | None = None
    corrected_text: str | None = None
    # An MT review (METHODS §11, F.2) says 0 or 1 for every subcategory: keep each family
    # given, even with no flag, so a review that found no error is still a review.
    complete_taxonomy: bool = False


def is_int(value: Any) -> bool:
    """An integer (Python's or numpy's: ``np.integer`` registers as ``numbers.Integral``;
    no numpy import here, so ``import core.annotation`` stays light), never a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass(frozen=True)
class SavedRating:
    """A saved rating, and what it replaced (None: it was new), so it can be undone."""

    annotation_id: int
    annotator_id: int
    item: ItemRef
    values: dict[str, Any]
    previous: dict[str, Any] | None
    history_id: int | None = None  # its row of the session's edit history


@dataclass(frozen=True)
class StoredRating:
    annotation_id: int
    annotator_id: int
    item: ItemRef
    fluency: int | None
    adequacy: int | None
    blame: str | None
    blame_other: str | None
    checks: dict[str, bool] | None
    error_taxonomy: dict[str, list[str]] | None
    corrected_text: str | None
    is_golden: bool


# -- golden items ------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldenAnswer:
    item: ItemRef
    expert_id: int
    fluency: int | None
    adequacy: int | None


@dataclass(frozen=True)
class GoldenAccuracy:
    """How often an annotator's ratings of golden items matched the known answers.

    Adequacy must match exactly; fluency counts as right within ``fluency_tolerance``.
    """

    annotator_id: int
    annotator: str
    items: int
    adequacy_checked: int
    adequacy_correct: int
    fluency_checked: int
    fluency_within: int
    fluency_tolerance: int
    fluency_mae: float | None

    @property
    def adequacy_accuracy(self) -> float | None:
        return self.adequacy_correct / self.adequacy_checked if self.adequacy_checked else None

    @property
    def fluency_accuracy(self) -> float | None:
        return self.fluency_within / self.fluency_checked if self.fluency_checked else None


# -- the queue -----------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueFilter:
    """Which items an annotator sees. Empty tuples mean "any".

    ``models`` match a run's display name or model id; ``tiers`` match tiers and
    sub-tiers (``head`` includes TailNLG's ``top_head``). ``golden_rate`` is the share
    of the queue made of golden items (0 to 0.5), placed at seeded random positions.
    ``target`` "references" queues reference texts (``qualities`` picks gold/silver)
    instead of verbalisations, e.g. to mark errors of translated (silver) references.
    ``blind`` hides the model and the tier from the rater and shuffles the items in an
    order of the annotator's own (seeded by ``seed`` and the annotator: the same queue
    again comes in the same order; another annotator's comes in another).
    """

    models: tuple[str, ...] = ()
    run_ids: tuple[int, ...] = ()
    langs: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    unrated_only: bool = True
    disagreements_first: bool = False
    golden_rate: float = 0.0
    target: str = "verbalisations"
    qualities: tuple[str, ...] = ()
    seed: int = 0
    limit: int | None = None
    blind: bool = False


@dataclass(frozen=True)
class QueueItem:
    """One text to rate, with what the annotator needs to judge it."""

    ref: ItemRef
    unit_id: int
    unit_uid: str
    lang: str
    text: str
    triples: tuple[tuple[str, str, str], ...]  # in ``triples_lang``
    triples_lang: str  # the text's language, else English when the unit lacks it
    model: str | None  # verbalisations only
    run_id: int | None
    quality: str | None  # references only
    category: str
    tier: str
    sub_tier: str
    is_golden: bool = False  # the panel must not reveal it
    disagreement: float = 0.0


@dataclass(frozen=True)
class QueueProgress:
    done: int
    total: int

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


@dataclass(frozen=True)
class QueueOptions:
    """What a queue filter can choose from: the models, languages, categories and tiers
    (tiers and sub-tiers together) of the session's rateable, non-golden texts, in the
    order the panel lists them."""

    models: tuple[str, ...] = ()
    langs: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()

    def as_mapping(self) -> dict[str, list[str]]:
        return {
            "models": list(self.models),
            "langs": list(self.langs),
            "categories": list(self.categories),
            "tiers": list(self.tiers),
        }
