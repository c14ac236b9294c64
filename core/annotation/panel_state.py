"""What the Annotate panel shows and what the annotator chose, without Qt: who is
annotating (among the session's named annotators), the queue filter with the values
the session offers, whether the filter is open, and the fluency and adequacy of the
rating being made.

``widgets/annotate`` renders an :class:`AnnotateState` and writes the user's edits into
it (``widgets.binding.bind``); :meth:`AnnotateState.queue_filter` is what Build queue
asks ``core.annotation`` for, and :meth:`AnnotateState.set_filter` puts a remembered
filter back (``app/annotate.py`` keeps it per session). Tests drive it without a window.
"""

from __future__ import annotations

from core.annotation.types import (
    BLAME_PARTS,
    CHECKS,
    COMBINATION,
    ERROR_TAXONOMY,
    NO,
    NOT_SURE,
    QueueFilter,
    QueueOptions,
    Rating,
    StoredRating,
)
from core.state import Field, State

# The texts a queue can hold, by the key the target combo offers: (target, qualities).
TARGETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "verbalisations": ("verbalisations", ()),
    "references:silver": ("references", ("silver",)),
    "references:gold": ("references", ("gold",)),
    "references": ("references", ()),
}
# The filter's drop-downs: the state field and the QueueOptions field offering its values.
OFFERED = {"model": "models", "lang": "langs", "category": "categories", "tier": "tiers"}
ANY = ""  # a drop-down's "any"
# What the blame boxes offer, in their order: the parts, a combination, other.
BLAME_CHOICES = (*(p for p in BLAME_PARTS if p != "other"), COMBINATION, "other")


def target_key(target: str, qualities: tuple[str, ...]) -> str | None:
    return next((k for k, v in TARGETS.items() if v == (target, tuple(qualities))), None)


class AnnotateState(State):
    # -- who annotates ---------------------------------------------------------------------
    annotators: Field[tuple[tuple[int, str], ...]] = Field(())  # named ones: (id, name)
    annotator: Field[int | None] = Field(None)
    # -- the queue filter --------------------------------------------------------------------
    options: Field[QueueOptions] = Field(factory=QueueOptions)
    target: Field[str] = Field("verbalisations")  # a key of TARGETS
    model: Field[str] = Field(ANY)
    lang: Field[str] = Field(ANY)
    category: Field[str] = Field(ANY)
    tier: Field[str] = Field(ANY)
    unrated_only: Field[bool] = Field(True)
    disagreements_first: Field[bool] = Field(False)
    blind: Field[bool] = Field(True)  # raters rate blind unless asked otherwise
    golden_percent: Field[int] = Field(0)
    filter_open: Field[bool] = Field(True)  # folded away once a queue is built
    # -- the rating being made -----------------------------------------------------------------
    fluency: Field[int | None] = Field(None)
    adequacy: Field[int | None] = Field(None)
    blame: Field[tuple[str, ...]] = Field(())  # of BLAME_CHOICES
    blame_other: Field[str] = Field("")
    checks: Field[tuple[str, ...]] = Field(())  # the validation checks ticked
    checks_touched: Field[bool] = Field(False)  # checks untouched are not recorded
    is_reference: Field[bool] = Field(False)  # a reference text: the error taxonomy too
    taxonomy: Field[tuple[tuple[str, str], ...]] = Field(())  # (family, error) ticked

    # -- who annotates ---------------------------------------------------------------------
    def annotator_name(self) -> str | None:
        """The chosen annotator's name; None when none is chosen or they are not offered."""
        return next((n for i, n in self.annotators if i == self.annotator), None)

    # -- the queue filter --------------------------------------------------------------------
    def offer(self, options: QueueOptions) -> None:
        """The values the session offers; a choice no longer offered falls back to any."""
        with self.batch():
            self.options = options
            for field, offered in OFFERED.items():
                if getattr(self, field) not in getattr(options, offered):
                    setattr(self, field, ANY)

    def queue_filter(self) -> QueueFilter:
        """The queue the filter asks for (a model only for model outputs)."""
        target, qualities = TARGETS.get(self.target, TARGETS["verbalisations"])

        def one(value: str) -> tuple[str, ...]:
            return (value,) if value else ()

        return QueueFilter(
            target=target,
            qualities=qualities,
            models=one(self.model) if target == "verbalisations" else (),
            langs=one(self.lang),
            categories=one(self.category),
            tiers=one(self.tier),
            unrated_only=self.unrated_only,
            disagreements_first=self.disagreements_first,
            golden_rate=self.golden_percent / 100,
            blind=self.blind,
        )

    def set_filter(self, spec: QueueFilter) -> None:
        """Put a saved filter back (values not offered any more fall back to any)."""
        with self.batch():
            key = target_key(spec.target, spec.qualities)
            if key is not None:
                self.target = key
            for field, offered in OFFERED.items():
                chosen = getattr(spec, offered)
                keep = bool(chosen) and chosen[0] in getattr(self.options, offered)
                setattr(self, field, chosen[0] if keep else ANY)
            self.unrated_only = spec.unrated_only
            self.disagreements_first = spec.disagreements_first
            self.blind = spec.blind
            self.golden_percent = round(100 * spec.golden_rate)

    # -- the rating being made -----------------------------------------------------------------
    def blame_applies(self) -> bool:
        """What is to blame is asked for No and Not sure only."""
        return self.adequacy in (NO, NOT_SURE)

    def derive(self, changed: set[str]) -> None:
        # A check ticked or unticked by the annotator (not by a rating shown, which
        # says whether its checks were recorded) makes the checks part of the rating.
        if "checks" in changed and "checks_touched" not in changed:
            self.checks_touched = True

    def show_rating(self, rating: StoredRating | None) -> None:
        """The form as ``rating`` left it (None: empty); the text's kind stays."""
        blame = set((rating.blame or "").split("+")) if rating else set()
        checks = (rating.checks or {}) if rating else {}
        taxonomy = (rating.error_taxonomy or {}) if rating else {}
        self.update(
            fluency=rating.fluency if rating else None,
            adequacy=rating.adequacy if rating else None,
            blame=tuple(p for p in BLAME_CHOICES if p in blame),
            blame_other=(rating.blame_other or "") if rating else "",
            checks=tuple(name for name in CHECKS if checks.get(name)),
            checks_touched=bool(checks),
            taxonomy=tuple(
                (family, error)
                for family, errors in ERROR_TAXONOMY.items()
                for error in errors
                if error in taxonomy.get(family, ())
            ),
        )

    def rating(self, corrected_text: str | None) -> Rating:
        """The form as a rating (blame only for No / Not sure; checks only once touched;
        the error taxonomy only for a reference text)."""
        blame: str | list[str] | None = None
        other = None
        if self.blame_applies():
            parts = [p for p in BLAME_PARTS if p in self.blame]
            if parts:
                blame = parts
            elif COMBINATION in self.blame:
                blame = COMBINATION
            if "other" in self.blame:
                other = self.blame_other.strip() or None
        checks = {name: name in self.checks for name in CHECKS} if self.checks_touched else None
        taxonomy: dict[str, list[str]] = {}
        if self.is_reference:
            ticked = set(self.taxonomy)
            for family, errors in ERROR_TAXONOMY.items():
                for error in errors:
                    if (family, error) in ticked:
                        taxonomy.setdefault(family, []).append(error)
        return Rating(
            fluency=self.fluency,
            adequacy=self.adequacy,
            blame=blame,
            blame_other=other,
            checks=checks,
            error_taxonomy=taxonomy or None,
            corrected_text=corrected_text,
        )
