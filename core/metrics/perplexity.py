"""Perplexity under a causal LM (METHODS §7): of a text given its prompt, or alone.

``PPL = exp(mean over the text's tokens of -log p(token | everything before it))``,
read from the model's logits at temperature 1: the model's own distribution, not the
sampling distribution (temperature, top-p) the text was drawn from.

* Given a prompt (``ScoringItem.prompt``), the context is built exactly as at
  generation (:func:`core.local_models.loader.prompt_token_ids`: the chat template when the model
  has one) and only the text's tokens are scored.
* Without a prompt the text is scored alone after the tokenizer's BOS token; a model
  without BOS cannot predict the first token from nothing, so that token is context.

:class:`EntityPerplexity` scores entity labels alone the same way.

Which text is "the generated tokens" is the caller's choice: the scoring job passes a
verbalisation's raw reply (everything the model wrote, marker and preamble included)
and the prompt stored with it at generation.

Two metrics over the same model share one loaded copy (:meth:`Perplexity.share_model`);
:meth:`Perplexity.close` frees it for both.

Texts are scored in batches (right-padded; the mask keeps padding out of the sums).
torch and transformers are imported when the first text is scored.

:class:`ServerLogprobPerplexity` is the same definition for a run made through an
OpenAI-compatible server that returned each generated token's log-probability with the
reply (stored in ``verbalisations.token_logprobs``): the server's model scored the
tokens as it generated them, given the prompt, so no local copy of the model is needed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import heavy
from core.local_models.loader import (
    CAUSAL,
    LoadedModel,
    ModelError,
    check_model_folder,
    load_model,
    model_fingerprint,
    prompt_token_ids,
    resolve_model,
)
from core.metrics.base import ENTITY_PPL, PPL, MetricValue, ScoringItem
from core.metrics.details import EntityPerplexityDetails, LabelPerplexity, PerplexityDetails
from core.metrics.signature import Signature, library_version
from core.surface import surface


@dataclass(frozen=True)
class TokenScores:
    """The summed negative log-likelihood of a text's tokens and how many were scored."""

    nll: float
    tokens: int

    @property
    def perplexity(self) -> float | None:
        return math.exp(self.nll / self.tokens) if self.tokens else None


def score_sequences(
    model: Any, tokenizer: Any, sequences: Sequence[tuple[list[int], int]], batch_size: int
) -> list[TokenScores]:
    """Summed NLL and count of the scored tokens of each ``(ids, n_context)`` sequence: the
    tokens after the first ``n_context`` (at least the first, which has no prediction).
    Batched shortest first, right-padded, padding masked out. Shared by perplexity and the
    entity likelihood (core.tiers.likelihood)."""
    with heavy.lock():
        import torch

    results = [TokenScores(0.0, 0)] * len(sequences)
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i][0]))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    device = getattr(model, "device", "cpu")
    size = max(1, int(batch_size))
    for start in range(0, len(order), size):
        # A sequence of one token has nothing to score: it stays (0, 0).
        chosen = [i for i in order[start : start + size] if len(sequences[i][0]) > 1]
        if not chosen:
            continue
        width = max(len(sequences[i][0]) for i in chosen)
        input_ids = torch.full((len(chosen), width), pad, dtype=torch.long)
        attention = torch.zeros((len(chosen), width), dtype=torch.long)
        scored = torch.zeros((len(chosen), width), dtype=torch.bool)
        for row, i in enumerate(chosen):
            ids, n_context = sequences[i]
            input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
            attention[row, : len(ids)] = 1
            scored[row, max(n_context, 1) : len(ids)] = True
        with torch.inference_mode():
            logits = model(
                input_ids=input_ids.to(device), attention_mask=attention.to(device)
            ).logits
        log_probs = torch.log_softmax(logits[:, :-1].float(), dim=-1).cpu()
        token_lp = log_probs.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        mask = scored[:, 1:]
        nll = -(token_lp * mask).sum(dim=1)
        counts = mask.sum(dim=1)
        for row, i in enumerate(chosen):
            results[i] = TokenScores(float(nll[row]), int(counts[row]))
    return results


class _ModelSlot:
    """A causal model loaded on first use, held once for every metric that shares it."""

    def __init__(self, path: Path, device: str, dtype: str) -> None:
        self.path, self.device, self.dtype = path, device, dtype
        self.loaded: LoadedModel | None = None

    def load(self) -> LoadedModel:
        if self.loaded is None:
            self.loaded = load_model(
                self.path, device=self.device, dtype=self.dtype, expected_type=CAUSAL
            )
        return self.loaded

    def close(self) -> None:
        if self.loaded is not None:
            from core.local_models.loader import free_device_memory

            device = self.loaded.device
            self.loaded = None
            free_device_memory(device)


class Perplexity:
    """Perplexity of each item's text under a causal model, given ``item.prompt``."""

    name = PPL

    def __init__(
        self,
        model: str | Path,
        device: str = "auto",
        *,
        dtype: str = "auto",
        batch_size: int = 8,
        use_prompt: bool = True,
    ) -> None:
        # Cheap checks now, so a missing or broken model fails before any scoring.
        self.path = resolve_model(model)
        if check_model_folder(self.path) != CAUSAL:
            raise ModelError(f"{self.path} is not a causal LM: perplexity needs one")
        self.model_id = str(model)
        self.fingerprint = model_fingerprint(self.path)
        self.device, self.dtype = device, dtype
        self.batch_size = max(1, batch_size)
        self.use_prompt = use_prompt
        self._slot = _ModelSlot(self.path, device, dtype)

    # --- the Metric interface -----------------------------------------------------------

    def signature(self) -> Signature:
        return Signature.of(
            self.name,
            "transformers",
            library_version("transformers"),
            {
                "model": self.model_id,
                "fp": self.fingerprint[:12],
                "context": "prompt" if self.use_prompt else "none",
                "temperature": 1,
                "torch": library_version("torch"),
            },
        )

    def sentence_scores(self, items: Sequence[ScoringItem]) -> list[MetricValue]:
        prompts = [item.prompt if self.use_prompt else None for item in items]
        scores = self.score_texts([item.text for item in items], prompts)
        return [
            self._value(score, prompt is not None)
            for score, prompt in zip(scores, prompts, strict=True)
        ]

    def corpus_score(self, items: Sequence[ScoringItem]) -> MetricValue | None:
        """exp of the mean NLL over every scored token of every text."""
        prompts = [item.prompt if self.use_prompt else None for item in items]
        scores = [s for s in self.score_texts([i.text for i in items], prompts) if s.tokens]
        return _pooled(scores)

    # --- scoring ------------------------------------------------------------------------

    def load(self) -> LoadedModel:
        return self._slot.load()

    def share_model(self, other: Perplexity) -> None:
        """Use ``other``'s model (loaded or not) from now on: the same folder on the same
        device in the same dtype is then in memory once, and closing either frees it."""
        if (self.path, self.device, self.dtype) != (other.path, other.device, other.dtype):
            raise ValueError(
                f"cannot share {other.path} ({other.device}, {other.dtype}) with "
                f"a metric of {self.path} ({self.device}, {self.dtype})"
            )
        if other._slot is not self._slot:
            self._slot.close()
            self._slot = other._slot

    def close(self) -> None:
        """Free the model (for every metric sharing it); the next score loads it again."""
        self._slot.close()

    def _value(self, score: TokenScores, conditioned: bool) -> MetricValue:
        if not score.tokens:
            return MetricValue(None, PerplexityDetails(reason="no tokens to score", tokens=0))
        loaded = self.load()
        return MetricValue(
            score.perplexity,
            PerplexityDetails(
                tokens=score.tokens,
                mean_nll=score.nll / score.tokens,
                conditioned=conditioned,
                chat_template=conditioned and loaded.has_chat_template,
            ),
        )

    def _sequence(self, text: str, prompt: str | None) -> tuple[list[int], int]:
        """Token ids of context + text, and how many leading ids are context."""
        tokenizer = self.load().tokenizer
        target = list(tokenizer(text, add_special_tokens=False)["input_ids"]) if text else []
        if prompt is not None:
            context = prompt_token_ids(tokenizer, prompt)
        elif tokenizer.bos_token_id is not None:
            context = [int(tokenizer.bos_token_id)]
        else:
            context = target[:1]
            target = target[1:]
        return context + target, len(context)

    def score_texts(
        self, texts: Sequence[str], prompts: Sequence[str | None] | None = None
    ) -> list[TokenScores]:
        """Summed NLL and token count of each text (given its prompt, or alone)."""

        prompts = list(prompts) if prompts is not None else [None] * len(texts)
        loaded = self.load()
        model, tokenizer = loaded.model, loaded.tokenizer
        limit = getattr(model.config, "max_position_embeddings", None)
        sequences = []
        for text, prompt in zip(texts, prompts, strict=True):
            ids, n_context = self._sequence(text, prompt)
            if limit and len(ids) > limit:
                # Drop the oldest context, never the scored text.
                cut = min(len(ids) - limit, max(n_context - 1, 0))
                ids, n_context = ids[cut:], n_context - cut
            sequences.append((ids, n_context))
        return score_sequences(model, tokenizer, sequences, self.batch_size)


class EntityPerplexity(Perplexity):
    """Perplexity of entity labels alone (no prompt), METHODS §7.

    An item's value is the mean of the perplexities of its item-valued entities'
    labels (all its entities when none is an item; its text when it has no entities);
    each label's perplexity is in ``details["entities"]``. Each distinct label is
    scored once."""

    name = ENTITY_PPL

    def __init__(self, model: str | Path, device: str = "auto", **options: Any) -> None:
        options["use_prompt"] = False
        super().__init__(model, device, **options)

    @staticmethod
    def labels_of(item: ScoringItem) -> list[str]:
        # Surface forms: a DBpedia identifier is scored as the words it stands for.
        items = [surface(e.label) for e in item.entities if e.value_type == "item"]
        labels = items or [surface(e.label) for e in item.entities] or [item.text]
        return list(dict.fromkeys(label for label in labels if label.strip()))

    def _label_scores(self, items: Sequence[ScoringItem]) -> dict[str, TokenScores]:
        labels = list(dict.fromkeys(label for item in items for label in self.labels_of(item)))
        return dict(zip(labels, self.score_texts(labels), strict=True))

    def sentence_scores(self, items: Sequence[ScoringItem]) -> list[MetricValue]:
        by_label = self._label_scores(items)
        values = []
        for item in items:
            entities = tuple(
                LabelPerplexity(label, by_label[label].perplexity, by_label[label].tokens)
                for label in self.labels_of(item)
            )
            ppls = [e.ppl for e in entities if e.ppl is not None]
            value = sum(ppls) / len(ppls) if ppls else None
            values.append(MetricValue(value, EntityPerplexityDetails(entities=entities)))
        return values

    def corpus_score(self, items: Sequence[ScoringItem]) -> MetricValue | None:
        """exp of the mean NLL over every token of every distinct label."""
        return _pooled([s for s in self._label_scores(items).values() if s.tokens])


class ServerLogprobPerplexity:
    """Perplexity of a server run's replies from the log-probabilities the server returned:
    ``exp(-mean(logprobs))`` over the reply's generated tokens (``item.token_logprobs``).

    METHODS §7 asks for the model's own distribution (temperature 1). A server may report
    log-probabilities after temperature or top-p instead (vLLM has a setting for it,
    ``--logprobs-mode``): serve with raw log-probabilities for values comparable with a
    local model's. An item without log-probabilities has no value (``details["reason"]``
    says why), never a guess."""

    name = PPL

    def __init__(self, server_model: str) -> None:
        self.server_model = server_model

    def signature(self) -> Signature:
        return Signature.of(
            self.name,
            "server-logprobs",
            "1",
            {"model": self.server_model, "source": "server-logprobs", "context": "prompt"},
        )

    def score(self, logprobs: Sequence[float] | None) -> TokenScores:
        values = list(logprobs or ())
        return TokenScores(-math.fsum(values), len(values))

    def sentence_scores(self, items: Sequence[ScoringItem]) -> list[MetricValue]:
        values = []
        for item in items:
            score = self.score(item.token_logprobs)
            if not score.tokens:
                values.append(
                    MetricValue(
                        None,
                        PerplexityDetails(
                            reason="the server returned no token log-probabilities with this reply",
                            tokens=0,
                            source="server logprobs",
                        ),
                    )
                )
                continue
            values.append(
                MetricValue(
                    score.perplexity,
                    PerplexityDetails(
                        tokens=score.tokens,
                        mean_nll=score.nll / score.tokens,
                        conditioned=True,
                        source="server logprobs",
                        model=self.server_model,
                    ),
                )
            )
        return values

    def corpus_score(self, items: Sequence[ScoringItem]) -> MetricValue | None:
        """exp of the mean NLL over every token of every reply that has log-probabilities."""
        return _pooled([s for s in (self.score(i.token_logprobs) for i in items) if s.tokens])

    def close(self) -> None:
        return None


def _pooled(scores: Sequence[TokenScores]) -> MetricValue | None:
    if not scores:
        return None
    total = TokenScores(sum(s.nll for s in scores), sum(s.tokens for s in scores))
    return MetricValue(total.perplexity, PerplexityDetails(n=len(scores), tokens=total.tokens))
