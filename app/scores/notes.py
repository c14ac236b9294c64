"""Which models the scores come from: BERTScore's model and rescaling, the similarity
encoder, as the panel's note and its columns' tooltips.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.metrics.info import metric_info

if TYPE_CHECKING:
    from core.metrics.scoring import (
        CorpusScore,
    )


MBERT = "bert-base-multilingual-cased"
MINILM = "all-MiniLM-L6-v2"


class ModelNotes:
    """The notes, with whether BERTScore's default model is cached (checked once)."""

    def __init__(self) -> None:
        self._mbert_cached: bool | None = None

    def mbert_cached(self) -> bool:
        """Whether BERTScore's default model is in the local cache (checked once)."""
        if self._mbert_cached is None:
            from core.metrics.bertscore import default_model_cached

            self._mbert_cached = default_model_cached()
        return self._mbert_cached

    def bertscore_default_note(self) -> str:
        if self.mbert_cached():
            return (
                f"Default: {MBERT} (in the local cache), rescaled with bert_score's "
                "baseline for the text's language."
            )
        return (
            f"Default: {MBERT} is not in the local cache, so the packaged {MINILM} "
            "encoder is used and scores are NOT rescaled (raw F1, higher than and not "
            "comparable with published rescaled BERTScores)."
        )

    @staticmethod
    def _used(stored: Sequence[CorpusScore], metric: str, key: str) -> list[Any]:
        return sorted(
            {
                c.details.get(key)
                for c in stored
                if c.metric == metric and c.details.get(key) is not None
            },
            key=str,
        )

    def _bertscore_used(self, stored: Sequence[CorpusScore], *, short: bool = False) -> str | None:
        models = self._used(stored, "bertscore", "model")
        if not models:
            return None
        rescaled = self._used(stored, "bertscore", "rescaled")
        how = (
            "rescaled with bert_score's baseline"
            if rescaled == [True]
            else "NOT rescaled (raw F1)"
            if rescaled == [False]
            else "rescaled for some languages, raw for others"
        )
        if short:
            packaged = " (packaged)" if MINILM in models else ""
            return f"BERTScore: {', '.join(map(str, models))}{packaged}, {how}"
        why = (
            f" — the packaged encoder, as {MBERT} is not in the local cache"
            if MINILM in models
            else ""
        )
        return f"BERTScore: {', '.join(map(str, models))}{why}; {how}."

    def _similarity_used(self, stored: Sequence[CorpusScore]) -> str:
        encoders = self._used(stored, "similarity", "encoder")
        if not encoders:
            return f"the packaged {MINILM} by default"
        packaged = " (packaged)" if encoders == [MINILM] else ""
        return ", ".join(map(str, encoders)) + packaged

    def notes(self, stored: Sequence[CorpusScore]) -> tuple[str, str]:
        """A short note (a chip) and its full text, about the models behind the
        BERTScore and similarity scores; ("", "") when neither metric was scored (the
        columns' tooltips and the Score… dialog say what the default would be)."""
        used = [
            part
            for part in (
                self._bertscore_used(stored, short=True),
                f"Similarity encoder: {self._similarity_used(stored)}"
                if self._used(stored, "similarity", "encoder")
                else None,
            )
            if part
        ]
        if not used:
            return "", ""
        full = "\n".join(
            part
            for part in (
                self._bertscore_used(stored),
                f"Graph–text similarity encoder: {self._similarity_used(stored)}."
                if self._used(stored, "similarity", "encoder")
                else None,
            )
            if part
        )
        return "; ".join(used), full

    def column_tips(self, columns: Sequence[str], stored: Sequence[CorpusScore]) -> dict[str, str]:
        tips: dict[str, str] = {}
        for column in columns:
            metric, _, quality = column.partition(":")
            tip = metric_info(metric).description
            if quality:
                tip += f", against {quality} references of the same language"
            if metric == "bertscore":
                tip += "\n" + (self._bertscore_used(stored) or self.bertscore_default_note())
            if metric == "similarity":
                tip += f"\nencoder: {self._similarity_used(stored)}"
            tips[column] = tip
        return tips
