"""Typed details of a metric value: one dataclass per metric, with a JSON form.

A scorer builds its metric's class (:class:`BleuDetails`, :class:`BertScoreDetails`, …)
instead of a dict; ``to_json`` is what the ``scores.details`` column holds, and
:func:`core.metrics.base.details_from_json` reads a stored object back into its metric's
class (``core.metrics.base.DETAILS``: metric name -> class). What the scoring job adds
about where a value came from (``quality``, ``prompt``, ``output``, ``run_texts``, …) is
not a metric's detail: it travels in ``extra`` and is written back as it was. Fields left
``None`` are not written (stored objects stay as small as they were), except those a class
keeps (``_kept_nulls``: a similarity without a swap states ``inversion_drop: null``).

Every class is also a read-only mapping of its JSON form, so code that reads stored
details by key (``details.get("quality")``) reads a typed value the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

D = TypeVar("D", bound="MetricDetails")


@dataclass(frozen=True, eq=False)
class MetricDetails(Mapping[str, Any]):
    """What every metric's details may say: why there is no value (``note``), how many
    references an item had, and for a corpus figure how many texts made it."""

    note: str | None = None
    references: int | None = None
    n: int | None = None
    without_reference: int | None = None
    aggregate: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    # JSON names that are not Python names (attribute -> JSON key).
    _json_names: ClassVar[Mapping[str, str]] = {}

    def _kept_nulls(self) -> frozenset[str]:
        """Fields written even when None (a stated "no value", not an absent one)."""
        return frozenset()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        nulls = self._kept_nulls()
        for item in dataclasses.fields(self):
            if item.name == "extra":
                continue
            value = getattr(self, item.name)
            if value is None and item.name not in nulls:
                continue
            out[self._json_names.get(item.name, item.name)] = _plain(value)
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    @classmethod
    def from_json(cls: type[D], data: Mapping[str, Any] | None) -> D:
        data = dict(data or {})
        by_json = {cls._json_names.get(f.name, f.name): f for f in dataclasses.fields(cls)}
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            found = by_json.get(key)
            if found is None or found.name == "extra":
                extra[key] = value
            else:
                kwargs[found.name] = cls._field_from_json(found.name, value)
        return cls(**kwargs, extra=extra)

    @classmethod
    def _field_from_json(cls, name: str, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    def with_extra(self: D, **extra: Any) -> D:
        return dataclasses.replace(self, extra={**self.extra, **extra})

    def without(self: D, *names: str) -> D:
        """The same details less some fields (set back to None) and extra keys."""
        fields = {f.name for f in dataclasses.fields(self)}
        changes: dict[str, Any] = {n: None for n in names if n in fields}
        changes["extra"] = {k: v for k, v in self.extra.items() if k not in names}
        return dataclasses.replace(self, **changes)

    # --- the read-only mapping of the JSON form --------------------------------------------

    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_json()!r})"


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in dataclasses.asdict(value).items()}
    return value


@dataclass(frozen=True, eq=False)
class SacreDetails(MetricDetails):
    """Details of a sacrebleu metric (BLEU, chrF++, TER). ``statistics``: a sentence's
    match statistics as sacrebleu sums them into a corpus score (BLEU: hypothesis and
    reference lengths, then matching and total n-grams per order; chrF++: hypothesis,
    reference and matching n-grams per character and word order; TER: edits and
    reference length), so a corpus score over any set of texts is read, not recomputed."""

    statistics: tuple[float, ...] | None = None


@dataclass(frozen=True, eq=False)
class BleuDetails(SacreDetails):
    precisions: tuple[float, ...] | None = None
    bp: float | None = None
    sys_len: int | None = None
    ref_len: int | None = None


@dataclass(frozen=True, eq=False)
class ChrfDetails(SacreDetails):
    pass


@dataclass(frozen=True, eq=False)
class TerDetails(SacreDetails):
    edits: float | None = None  # the edits TER counted
    ref_length: float | None = None  # the (average) reference length it divided by


@dataclass(frozen=True, eq=False)
class RougeDetails(MetricDetails):
    precision: float | None = None
    recall: float | None = None


@dataclass(frozen=True, eq=False)
class MeteorDetails(MetricDetails):
    without_score: int | None = None


@dataclass(frozen=True, eq=False)
class BertScoreDetails(MetricDetails):
    model: str | None = None
    layer: int | None = None
    rescaled: bool | None = None
    f1_raw: float | None = None
    precision_raw: float | None = None
    recall_raw: float | None = None
    baseline_f: float | None = None
    empty_text: bool | None = None


@dataclass(frozen=True, eq=False)
class SimilarityDetails(MetricDetails):
    encoder: str | None = None
    inverted_similarity: float | None = None
    inversion_drop: float | None = None
    inversion_drop_mean: float | None = None

    def _kept_nulls(self) -> frozenset[str]:
        # A text's similarity states its drop (null: no triple to swap); a corpus its mean.
        if self.n is not None:
            return frozenset({"inversion_drop_mean"})
        return frozenset({"inversion_drop"}) if self.encoder else frozenset()


@dataclass(frozen=True, eq=False)
class PerplexityDetails(MetricDetails):
    tokens: int | None = None
    mean_nll: float | None = None
    conditioned: bool | None = None
    chat_template: bool | None = None
    reason: str | None = None  # why there is no value
    source: str | None = None  # "server logprobs" where a server's log-probabilities made it
    model: str | None = None


@dataclass(frozen=True)
class LabelPerplexity:
    """One entity label's perplexity (None where it had no tokens)."""

    label: str
    ppl: float | None
    tokens: int


@dataclass(frozen=True, eq=False)
class EntityPerplexityDetails(PerplexityDetails):
    entities: tuple[LabelPerplexity, ...] | None = None

    @classmethod
    def _field_from_json(cls, name: str, value: Any) -> Any:
        if name == "entities" and isinstance(value, list):
            return tuple(
                LabelPerplexity(str(e["label"]), e.get("ppl"), int(e.get("tokens") or 0))
                for e in value
            )
        return super()._field_from_json(name, value)


@dataclass(frozen=True, eq=False)
class EsaDetails(MetricDetails):
    """A text's ESA (entities looked for, detected, missing, each mention found) or, for
    a corpus, ESI@1/ESI@2 and the ESA means."""

    entities: int | None = None
    detected: tuple[str, ...] | None = None
    missing: tuple[str, ...] | None = None
    undetected: int | None = None
    mentions: tuple[Mapping[str, Any], ...] | None = None
    esi_at_1: float | None = None
    esi_at_2: float | None = None
    esa_mean: float | None = None
    esa_mean_ge1: float | None = None
    esa_mean_ge2: float | None = None
    texts_ge1: int | None = None
    texts_ge2: int | None = None

    _json_names: ClassVar[Mapping[str, str]] = {"esi_at_1": "esi@1", "esi_at_2": "esi@2"}
    _CORPUS: ClassVar[tuple[str, ...]] = (
        "esi_at_1",
        "esi_at_2",
        "esa_mean",
        "esa_mean_ge1",
        "esa_mean_ge2",
    )

    def _kept_nulls(self) -> frozenset[str]:
        # A corpus figure states every ESI and mean, null where no text had entities.
        return frozenset(self._CORPUS) if self.texts_ge1 is not None else frozenset()


@dataclass(frozen=True)
class Span:
    """A hallucination candidate: the text's characters ``start:end``."""

    text: str
    start: int
    end: int


@dataclass(frozen=True, eq=False)
class HallucinationDetails(MetricDetails):
    spans: tuple[Span, ...] | None = None
    texts_with_candidates: int | None = None
    share_with_candidates: float | None = None
    total: float | None = None

    @classmethod
    def _field_from_json(cls, name: str, value: Any) -> Any:
        if name == "spans" and isinstance(value, list):
            return tuple(Span(str(s["text"]), int(s["start"]), int(s["end"])) for s in value)
        return super()._field_from_json(name, value)
