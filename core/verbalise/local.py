"""Verbalisers over local ``transformers`` models: causal LMs and seq2seq (T5-style).

Causal LMs follow METHODS §6: the unit's prompt as a user turn in the model's chat
template (plain text when the model has none), N candidates per unit from ONE
``generate`` call (``num_return_sequences``), sampling at the run's temperature and
top-p, units batched with LEFT padding so every prompt ends where generation starts.
Top-k is switched off so the sampling distribution is exactly temperature + top-p,
whatever a model's ``generation_config.json`` suggests.

Seq2seq models get the task prefix and the ``<H> <R> <T>`` linearisation, and beam
search (3 beams by default; candidates are the best beams).

The torch generator is seeded with the run's seed before each batch, so a run
repeated with the same batch size gives the same texts.

Cancel: with a ``should_stop`` callable (set by the job), ``generate`` gets a stopping
criterion that asks it once per decoding step and ends every sequence once it says True,
so a cancel takes effect within one step rather than after a whole batch (minutes for a
large model). The cut-short output is then discarded and :class:`core.jobs.JobCancelled`
raised: the job writes nothing for that batch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from core import heavy
from core.jobs import JobCancelled
from core.local_models.loader import (
    CAUSAL,
    SEQ2SEQ,
    LoadedModel,
    ModelError,
    check_model_folder,
    load_model,
    load_tokenizer,
    model_fingerprint,
    prompt_token_ids,
    prompts_token_ids,
    resolve_model,
)
from core.verbalise.base import Candidate, GenerationParams, ShouldStop, VerbaliseRequest
from core.verbalise.prompts import (
    DEFAULT_PRESET,
    check_preset,
    parse_reply,
    render_prompt,
    seq2seq_input,
    seq2seq_prefix,
    templates_for,
)
from core.vocab import LANGUAGES, short_model_name


class _LocalVerbaliser:
    expected_type = CAUSAL

    def __init__(
        self,
        model: str | Path,
        params: GenerationParams | None = None,
        templates: Mapping[str, str] | None = None,
        *,
        device: str = "auto",
        dtype: str = "auto",
        quantize: str = "auto",
        prompt_preset: str = DEFAULT_PRESET,
        task_prefix: str | None = None,
    ) -> None:
        self.prompt_preset = check_preset(prompt_preset)
        self.task_prefix = task_prefix  # seq2seq only; None: the bundled (WDV's) prefix
        self.params = params or GenerationParams()
        self.params.check()
        # Cheap checks first: a broken folder fails here, before a run row exists.
        self.path = resolve_model(model)
        found = check_model_folder(self.path)
        if found != self.expected_type:
            raise ModelError(f"{self.path} is a {found} model; use it as a {found} verbaliser")
        self._fingerprint = model_fingerprint(self.path)
        self.model_id = str(model)
        self.system_name = _display_name(str(model), self.path)
        self.requested_device, self.requested_dtype = device, dtype
        self.requested_quantize = quantize  # core.local_models.placement: auto, none, 8bit, 4bit
        self.loaded: LoadedModel | None = None
        self.should_stop: ShouldStop | None = None  # the job's cancel, asked every step
        # Told each stage of loading the model (the job's progress line), if set.
        self.on_stage: Callable[[str], None] | None = None
        self._tokenizer: Any = None
        self.templates = self._templates(templates)

    def _templates(self, overrides: Mapping[str, str] | None) -> dict[str, str]:
        return templates_for(LANGUAGES, overrides, self.prompt_preset)

    def set_templates(
        self, overrides: Mapping[str, str] | None, prompt_preset: str | None = None
    ) -> None:
        """Use the preset's bundled templates with ``overrides`` (lang -> template) from now
        on (``prompt_preset`` None: keep the preset).

        The panel's live preview edits templates on a verbaliser it keeps (building one
        again would fingerprint the weights again). A bad template raises ``PromptError``
        and leaves the templates in use unchanged."""
        preset = self.prompt_preset if prompt_preset is None else check_preset(prompt_preset)
        previous, self.prompt_preset = self.prompt_preset, preset
        try:
            self.templates = self._templates(overrides)
        except Exception:
            self.prompt_preset = previous
            raise

    def fingerprint(self) -> str:
        return self._fingerprint

    def load(self) -> None:
        if self.loaded is None:
            self.loaded = load_model(
                self.path,
                device=self.requested_device,
                dtype=self.requested_dtype,
                expected_type=self.expected_type,
                quantize=self.requested_quantize,
                on_stage=self.on_stage,
            )
            self._after_load(self.loaded)

    def _after_load(self, loaded: LoadedModel) -> None:
        return None

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {"model_path": str(self.path), "prompt_preset": self.prompt_preset}
        if self.loaded is not None:
            info.update(device=self.loaded.device, dtype=self.loaded.dtype)
            if self.loaded.placement is not None:
                # How this machine ran it (not part of the run's identity: a run resumes
                # on other hardware); the batch size it settles on is added by the job.
                info["placement"] = self.loaded.placement.as_dict()
        else:
            info.update(device=self.requested_device, dtype=self.requested_dtype)
        return info

    def close(self) -> None:
        if self.loaded is not None:
            from core.local_models.loader import free_device_memory

            device = self.loaded.device
            self.loaded = None
            free_device_memory(device)

    def _ready(self) -> LoadedModel:
        self.load()
        assert self.loaded is not None
        return self.loaded

    def _generate(self, model: Any, **kwargs: Any) -> Any:
        """The one place generation happens (tests wrap it to inject failures)."""
        with heavy.lock():
            import torch

        with torch.inference_mode():
            return model.generate(**kwargs)

    def _generate_unless_cancelled(self, model: Any, **kwargs: Any) -> Any:
        """``_generate`` that a cancel (``self.should_stop``) stops within one decoding
        step; raises :class:`JobCancelled` (and drops the cut-short output) when it did."""
        should_stop = self.should_stop
        if should_stop is None:
            return self._generate(model, **kwargs)
        if should_stop():
            raise JobCancelled()
        with heavy.lock():
            from transformers import StoppingCriteriaList

        stop = _stop_on_cancel(should_stop)
        output = self._generate(model, **kwargs, stopping_criteria=StoppingCriteriaList([stop]))
        if stop.fired:
            raise JobCancelled()
        return output


def _display_name(model_id: str, path: Path) -> str:
    parts = model_id.split("/")
    if len(parts) == 2 and not Path(model_id).expanduser().exists():
        return short_model_name(model_id)  # an HF id: org/name -> name
    return path.name if "snapshots" not in path.parts else path.parent.parent.name


class CausalVerbaliser(_LocalVerbaliser):
    """Any ``transformers`` causal LM from a local folder or the hub cache."""

    kind = "causal"
    expected_type = CAUSAL

    def _after_load(self, loaded: LoadedModel) -> None:
        loaded.tokenizer.padding_side = "left"

    def prompt_for(self, triples: Sequence[tuple[str, str, str]], lang: str) -> str:
        return render_prompt(self.templates[lang], triples, lang)

    def exact_prompt(self, triples: Sequence[tuple[str, str, str]], lang: str) -> str:
        """The text the model reads for these triples, chat template applied (the panel's
        live preview; loads only the tokenizer when the model is not loaded)."""
        if self.loaded is not None:
            tokenizer = self.loaded.tokenizer
        else:
            if self._tokenizer is None:
                self._tokenizer = load_tokenizer(self.path)
            tokenizer = self._tokenizer
        ids = prompt_token_ids(tokenizer, self.prompt_for(triples, lang))
        return str(tokenizer.decode(ids))

    def context_warning(self, triples: Sequence[tuple[str, str, str]], lang: str) -> str | None:
        """A line when this unit's prompt and ``max_new_tokens`` exceed the model's context
        (its config.json), said in the window before a run; None when it fits."""
        from core.local_models.loader import context_length, context_warning

        tokenizer = self.loaded.tokenizer if self.loaded is not None else self._tokenizer
        if tokenizer is None:
            self._tokenizer = tokenizer = load_tokenizer(self.path)
        ids = prompt_token_ids(tokenizer, self.prompt_for(triples, lang))
        return context_warning(len(ids), self.params.max_new_tokens, context_length(self.path))

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        if self.loaded is not None:
            info["chat_template"] = self.loaded.has_chat_template
        info["top_k"] = 0  # switched off: sampling is temperature + top-p only
        return info

    def verbalise(self, requests: Sequence[VerbaliseRequest]) -> list[list[Candidate]]:
        with heavy.lock():
            import torch

        if not requests:
            return []
        loaded = self._ready()
        tokenizer, model = loaded.tokenizer, loaded.model
        ids = prompts_token_ids(tokenizer, [r.prompt for r in requests])
        batch = tokenizer.pad({"input_ids": ids}, padding=True, return_tensors="pt")
        batch = {k: v.to(model.device) for k, v in batch.items()}
        n = self.params.candidates
        torch.manual_seed(self.params.seed)
        output = self._generate_unless_cancelled(
            model,
            **batch,
            do_sample=True,
            temperature=self.params.temperature,
            top_p=self.params.top_p,
            top_k=0,
            max_new_tokens=self.params.max_new_tokens,
            num_return_sequences=n,
            pad_token_id=tokenizer.pad_token_id,
        )
        generated = output[:, batch["input_ids"].shape[1] :].cpu()

        def candidate(raw: str, tokens: int) -> Candidate:
            parsed = parse_reply(raw)
            return Candidate(raw, parsed.text, parsed.ok, tokens)

        return _candidates(generated, len(requests), n, model, tokenizer, candidate)


class Seq2SeqVerbaliser(_LocalVerbaliser):
    """A T5-style graph-to-text model: task prefix, ``<H> <R> <T>`` input, beam search."""

    kind = "seq2seq"
    expected_type = SEQ2SEQ

    def _templates(self, overrides: Mapping[str, str] | None) -> dict[str, str]:
        # A seq2seq "template" is its task prefix; {triples} is not used.
        prefixes = {lang: seq2seq_prefix(lang, self.task_prefix) for lang in LANGUAGES}
        prefixes.update(overrides or {})
        return prefixes

    def set_task_prefix(self, prefix: str | None) -> None:
        """Use ``prefix`` (None: the bundled one, WDV's) from now on (the panel's preview)."""
        self.task_prefix = prefix
        self.templates = self._templates(None)

    def prompt_for(self, triples: Sequence[tuple[str, str, str]], lang: str) -> str:
        # The templates are the prefixes, their {language} already filled in.
        return seq2seq_input(triples, lang, self.templates.get(lang, ""))

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        del info["prompt_preset"]  # no chat prompt: the task prefix is the setting
        info["task_prefix"] = (
            self.task_prefix if self.task_prefix is not None else seq2seq_prefix("en")
        )
        info["num_beams"] = max(self.params.num_beams, self.params.candidates)
        return info

    def verbalise(self, requests: Sequence[VerbaliseRequest]) -> list[list[Candidate]]:
        with heavy.lock():
            import torch

        if not requests:
            return []
        loaded = self._ready()
        tokenizer, model = loaded.tokenizer, loaded.model
        batch = tokenizer([r.prompt for r in requests], padding=True, return_tensors="pt")
        batch = {k: v.to(model.device) for k, v in batch.items() if k != "token_type_ids"}
        n = self.params.candidates
        torch.manual_seed(self.params.seed)
        output = self._generate_unless_cancelled(
            model,
            **batch,
            do_sample=False,
            num_beams=max(self.params.num_beams, n),
            num_return_sequences=n,
            max_new_tokens=self.params.max_new_tokens,
        ).cpu()
        return _candidates(
            output,
            len(requests),
            n,
            model,
            tokenizer,
            lambda text, tokens: Candidate(text, text or None, bool(text), tokens),
        )


def _stop_on_cancel(should_stop: ShouldStop) -> Any:
    """A ``transformers`` stopping criterion that ends every sequence once ``should_stop``
    says True (asked once per decoding step until then); ``fired`` records that it did.

    Ending all sequences ends the loop of sampling and of beam search alike (both stop
    when every running sequence hit a criterion), with no exception thrown through
    ``generate``. Built here because ``transformers`` is imported lazily."""
    with heavy.lock():
        import torch
        from transformers import StoppingCriteria

    class StopOnCancel(StoppingCriteria):
        def __init__(self) -> None:
            self.fired = False

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            if not self.fired and should_stop():
                self.fired = True
            return torch.full(
                (input_ids.shape[0],), self.fired, dtype=torch.bool, device=input_ids.device
            )

    return StopOnCancel()


def _candidates(
    rows: Any,
    requests: int,
    n: int,
    model: Any,
    tokenizer: Any,
    make: Callable[[str, int], Candidate],
) -> list[list[Candidate]]:
    """``n`` decoded candidates per request from ``generate``'s output rows (request i
    owns rows i*n .. i*n+n-1), each cut at its first EOS; ``make(text, tokens)``."""
    eos = _eos_ids(model, tokenizer)
    results: list[list[Candidate]] = []
    for i in range(requests):
        candidates = []
        for row in rows[i * n : (i + 1) * n].tolist():
            tokens = _until_eos(row, eos, tokenizer.pad_token_id)
            text = tokenizer.decode(tokens, skip_special_tokens=True).strip()
            candidates.append(make(text, len(tokens)))
        results.append(candidates)
    return results


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    configured = getattr(model.generation_config, "eos_token_id", None)
    if isinstance(configured, int):
        ids.add(configured)
    elif configured:
        ids.update(int(i) for i in configured)
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    return ids


def _until_eos(row: list[int], eos: set[int], pad: int | None) -> list[int]:
    """The generated tokens up to and including the first EOS, without padding."""
    kept = []
    for token in row:
        if token in eos:
            kept.append(token)
            break
        if token == pad and pad not in eos:
            continue  # seq2seq decoder start / padding after a finished beam
        kept.append(token)
    return kept
