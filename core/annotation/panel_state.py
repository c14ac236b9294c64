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

from core.annotation.types import NO, NOT_SURE, QueueFilter, QueueOptions
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
