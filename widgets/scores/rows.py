"""The Scores panel's view models: plain rows and details the controller hands in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.metrics import DEFAULT_METRICS
from core.metrics.score_pages import KEY_COLUMNS

# The texts table's key columns (core's names, which a ScoreSort uses): the key cells before
# the metric columns, and the text after them.
TEXT_KEYS = KEY_COLUMNS[:-1]  # unit, model, lang, #, tier
TEXT_TAIL = KEY_COLUMNS[-1:]  # text
SUMMARY_KEYS = ("model", "lang", "tier", "texts")


# -- plain data the controller hands in -------------------------------------------------


@dataclass(frozen=True)
class ScoreTableRow:
    """One table row: key cells (text or numbers) and scores by column."""

    key: Any  # the verbalisation id (texts) or the group (summary)
    cells: tuple[Any, ...]
    scores: Mapping[str, float | None]
    tooltip: str = ""
    score_tips: Mapping[str, str] = field(default_factory=dict)  # column -> cell tooltip


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    label: str  # the unit entity (mention) or the span's words (hallucination)
    how: str = ""  # how a mention was matched (label, alias, date, pronoun, …)


@dataclass(frozen=True)
class TextDetail:
    """Everything the detail view shows of one verbalisation."""

    title: str
    text: str
    lang: str
    mentions: Sequence[Span] = ()
    missing: Sequence[str] = ()
    hallucinations: Sequence[Span] = ()
    esa_scored: bool = False
    hallucination_scored: bool = False
    triples: Sequence[tuple[str, str, str]] = ()
    references: Sequence[tuple[str, str]] = ()  # (quality, text)
    scores: Sequence[tuple[str, str, str]] = ()  # (column, value, note)


@dataclass(frozen=True)
class ModelChoice:
    label: str
    value: str | None  # what goes into MetricOptions (None: the default)
    note: str = ""


@dataclass(frozen=True)
class ScoreChoices:
    """What the Score… dialog offers (the controller finds the models and runs)."""

    runs: Sequence[tuple[int, str]]  # (run id, label)
    langs: Sequence[str]
    bertscore_models: Sequence[ModelChoice]
    encoders: Sequence[ModelChoice]
    ppl_models: Sequence[ModelChoice]
    checked: Sequence[str] = DEFAULT_METRICS
    # Defaults left unticked on this machine, each with why (shown beside it).
    unticked: Mapping[str, str] = field(default_factory=dict)
    # METEOR's WordNet: where it was found, or why METEOR will be absent (one line).
    wordnet_found: bool = False
    wordnet_note: str = ""
