"""ESA as a metric: per text, and at corpus level the mean with ESI@1/ESI@2 (METHODS §7)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from core.metrics.base import (
    ESA,
    CorpusFromSentences,
    MetricValue,
    ScoringItem,
)
from core.metrics.details import EsaDetails
from core.metrics.esa.detect import (
    DEFAULT_ESA_CONFIG,
    ESA_VERSION,
    MAX_DISTANCE,
    EsaResult,
    esa_config,
    esa_of_text,
    esi_summary,
    synonym_index,
    synonyms_signature,
)
from core.metrics.signature import Signature


class EntityAdequacy(CorpusFromSentences):
    """ESA per text; at corpus level the mean ESA with ESI@1/ESI@2 in details."""

    name = ESA

    def __init__(
        self,
        max_distance: float = MAX_DISTANCE,
        pronouns: bool = True,
        synonyms: Sequence[tuple[str, str, str]] = (),
        config: str = DEFAULT_ESA_CONFIG,
    ) -> None:
        if not 0.0 <= max_distance < 1.0:
            from core.errors import UserFacingError

            raise UserFacingError(f"ESA distance must be in [0, 1), got {max_distance}")
        self.config = esa_config(config)
        self.max_distance = max_distance
        self.pronouns = pronouns
        self.synonym_rows = tuple(sorted(set(synonyms)))
        self.synonyms = synonym_index(self.synonym_rows) if self.synonym_rows else None

    def signature(self) -> Signature:
        return Signature.of(
            ESA,
            "taillens-esa",
            ESA_VERSION,
            {
                "match": f"word-ngram-levenshtein<={self.max_distance:g}",
                "names": "surface+variants+aliases",
                "fold": "casefold+noaccents",
                "dates": "normalised",
                "numbers": "value",
                "overlaps": "distance,longest",
                "pronouns": "root" if self.pronouns else "off",
                "synonyms": synonyms_signature(self.synonym_rows).removeprefix("synonyms:"),
                **self.config.settings(),
            },
        )

    def results(self, items: Sequence[ScoringItem]) -> list[EsaResult]:
        return [
            esa_of_text(
                item.text or "",
                item.entities,
                item.lang,
                max_distance=self.max_distance,
                pronouns=self.pronouns,
                synonyms=self.synonyms,
                second_chance=self.config.second_chance,
                group_names=self.config.group_names,
                literal_strings=self.config.literal_strings,
            )
            for item in items
        ]

    def sentence_scores(self, items: Sequence[ScoringItem]) -> list[MetricValue]:
        return [self._value(result) for result in self.results(items)]

    @staticmethod
    def _value(result: EsaResult) -> MetricValue:
        details = EsaDetails.from_json(result.details())
        if not result.entities:
            note = "the unit has no subject or object labels to look for"
            details = dataclasses.replace(details, note=note)
        return MetricValue(result.esa, details)

    def corpus_from_sentences(
        self, items: Sequence[ScoringItem], values: Sequence[MetricValue]
    ) -> MetricValue | None:
        results = [
            EsaResult(
                v.details.get("entities", 0),
                tuple(v.details.get("detected", ())),
                tuple(v.details.get("missing", ())),
                (),
            )
            for v in values
        ]
        summary = esi_summary(results)
        return MetricValue(summary["esa_mean"], EsaDetails.from_json(summary))
