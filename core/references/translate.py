"""Machine translation of references (METHODS §11 step 2; TailNLG §3.4).

Each gold reference in the source language is translated into every target language and
stored as a ``silver`` reference of the same unit, with a ``reference_derivations`` row
naming the source reference, the model (folder or server), its fingerprint and the
parameters. ``key`` (a hash of those) makes the job resumable: a source already
translated into a language under the same key is skipped.

Translators:

* :class:`LocalTranslator`: a local ``transformers`` model. Seq2seq families (Marian /
  OPUS-MT, NLLB, M2M100, MADLAD, any other seq2seq with a ``translate X to Y:`` prefix),
  or a causal LM given :data:`CAUSAL_PROMPT` (wrapped in its chat template where it has
  one). Language codes per family: :mod:`core.references.languages`.
* :class:`ServerTranslator`: an OpenAI-compatible server, through
  :class:`core.verbalise.openai.OpenAIVerbaliser`'s client, with the same prompt.

Which references are translated: the gold ones in the source language (TailNLG
translated its gold texts), of units that have no gold reference in the target language
(a person's text is not replaced by a machine's), optionally only some units.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core import heavy
from core.changes import Topic
from core.errors import UserFacingError
from core.jobs import Job, JobContext
from core.references.languages import (
    CAUSAL,
    M2M100,
    MADLAD,
    MARIAN,
    NLLB,
    SERVER,
    check_language,
    language_name,
    model_code,
)

if TYPE_CHECKING:
    from core.local_models.loader import LoadedModel
    from core.store import SessionStore

SEQ2SEQ_PREFIX = "seq2seq"  # any other seq2seq: a T5-style task prefix
CAUSAL_PROMPT = (
    "Translate the following {source_name} text into {target_name}. "
    "Answer with the translation only.\n\n{source_name}: {text}\n{target_name}:"
)


class TranslateError(UserFacingError):
    """A translation request that cannot be honoured; the message says why."""


@dataclass(frozen=True)
class TranslateParams:
    """What decides a translation's words (part of the resume key) and how it runs."""

    num_beams: int = 4
    max_new_tokens: int = 256
    batch: int = 16  # texts per generate call (not part of the key)
    device: str = "auto"  # not part of the key
    dtype: str = "auto"  # not part of the key
    temperature: float = 0.0  # servers only; 0 asks for greedy decoding

    def check(self) -> None:
        if not 1 <= self.num_beams <= 32:
            raise TranslateError(f"beams must be 1..32, not {self.num_beams}")
        if not 1 <= self.max_new_tokens <= 4096:
            raise TranslateError(f"max new tokens must be 1..4096, not {self.max_new_tokens}")
        if self.batch < 1:
            raise TranslateError(f"the batch must hold at least one text, not {self.batch}")

    def decoding(self) -> dict[str, Any]:
        return {"num_beams": self.num_beams, "max_new_tokens": self.max_new_tokens}


class Translator(Protocol):
    family: str
    model: str  # the folder (resolved) or "URL server-model"
    fingerprint: str | None

    def describe(self) -> dict[str, Any]: ...

    def translate(self, texts: Sequence[str], source: str, target: str) -> list[str]: ...

    def close(self) -> None: ...


def resume_key(translator: Translator, params: TranslateParams) -> str:
    """The hash a translation is stored under: family, model, fingerprint, decoding and
    the translator's own description (prompt, server). Device and batch are left out:
    they change speed, not (beyond floating-point noise) the words."""
    payload = {
        "family": translator.family,
        "model": translator.model,
        "fingerprint": translator.fingerprint,
        "decoding": params.decoding(),
        "describe": translator.describe(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]


def _vocab_has(tokenizer: Any, token: str) -> bool:
    try:
        vocab = tokenizer.get_vocab()
    except (AttributeError, NotImplementedError):
        return False
    return token in vocab


def detect_family(config: dict[str, Any], tokenizer: Any | None, kind: str) -> str:
    """The translation family of a model from its config (and vocabulary)."""
    from core.local_models.loader import CAUSAL as CAUSAL_KIND

    if kind == CAUSAL_KIND:
        return CAUSAL
    model_type = str(config.get("model_type", ""))
    if model_type == "marian":
        return MARIAN
    if model_type in ("m2m_100", "nllb-moe"):
        name = type(tokenizer).__name__.lower() if tokenizer is not None else ""
        if "nllb" in name or (tokenizer is not None and _vocab_has(tokenizer, "eng_Latn")):
            return NLLB
        return M2M100
    if tokenizer is not None and _vocab_has(tokenizer, "<2it>") and _vocab_has(tokenizer, "<2en>"):
        return MADLAD
    return SEQ2SEQ_PREFIX


class LocalTranslator:
    """A local transformers model used as a translator (one batch per ``translate``)."""

    def __init__(
        self,
        model: str | Path,
        params: TranslateParams | None = None,
        *,
        loader: Callable[..., LoadedModel] | None = None,
    ) -> None:
        from core.local_models.loader import (
            check_model_folder,
            model_fingerprint,
            read_config,
            resolve_model,
        )

        self.params = params or TranslateParams()
        self.params.check()
        self.path = resolve_model(model)
        self.kind = check_model_folder(self.path)
        self.config = read_config(self.path)
        self.model = str(self.path.resolve())
        self.fingerprint: str | None = model_fingerprint(self.path)
        self._loader = loader
        self._loaded: LoadedModel | None = None
        self._has_token: dict[str, bool] = {}
        self.family = detect_family(self.config, None, self.kind)
        self.should_stop: Callable[[], bool] | None = None

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "model_type": self.config.get("model_type")}
        if self.family == CAUSAL:
            out["prompt"] = CAUSAL_PROMPT
        return out

    def load(self) -> LoadedModel:
        if self._loaded is None:
            from core.local_models.loader import load_model

            load = self._loader or load_model
            self._loaded = load(
                self.path, device=self.params.device, dtype=self.params.dtype, expected_type=None
            )
            # The vocabulary settles what the config alone cannot (NLLB vs M2M100, MADLAD).
            self.family = detect_family(self.config, self._loaded.tokenizer, self.kind)
            if self.family == CAUSAL:
                self._loaded.tokenizer.padding_side = "left"
        return self._loaded

    def close(self) -> None:
        if self._loaded is not None:
            from core.local_models.loader import free_device_memory

            device, self._loaded = self._loaded.device, None
            free_device_memory(device)

    def inputs(self, texts: Sequence[str], source: str, target: str) -> tuple[dict[str, Any], Any]:
        """The tensors and generate kwargs for ``texts`` (also what the benchmark calls
        ``generate`` with directly)."""
        loaded = self.load()
        tokenizer, model = loaded.tokenizer, loaded.model
        extra: dict[str, Any] = {}
        family = self.family
        if family == CAUSAL:
            from core.local_models.loader import prompts_token_ids

            prompts = [
                CAUSAL_PROMPT.format(
                    source_name=language_name(source), target_name=language_name(target), text=t
                )
                for t in texts
            ]
            ids = prompts_token_ids(tokenizer, prompts)
            batch = tokenizer.pad({"input_ids": ids}, padding=True, return_tensors="pt")
            extra["pad_token_id"] = tokenizer.pad_token_id
        else:
            sources = list(texts)
            if family in (NLLB, M2M100):
                tokenizer.src_lang = model_code(family, source)
                code = model_code(family, target)
                forced = (
                    tokenizer.get_lang_id(code)
                    if family == M2M100 and hasattr(tokenizer, "get_lang_id")
                    else tokenizer.convert_tokens_to_ids(code if family == NLLB else f"__{code}__")
                )
                extra["forced_bos_token_id"] = forced
            elif family == MADLAD:
                sources = [f"{model_code(family, target)} {t}" for t in texts]
            elif family == MARIAN:
                token = model_code(family, target)
                if token not in self._has_token:  # asked once per language, not per batch
                    self._has_token[token] = _vocab_has(tokenizer, token)
                if self._has_token[token]:  # a multi-target OPUS-MT model
                    sources = [f"{token} {t}" for t in texts]
            else:
                prefix = f"translate {language_name(source)} to {language_name(target)}: "
                sources = [prefix + t for t in texts]
            batch = tokenizer(sources, padding=True, truncation=True, return_tensors="pt")
        batch = {k: v.to(model.device) for k, v in batch.items()}
        kwargs = {
            **batch,
            **extra,
            "num_beams": self.params.num_beams,
            "max_new_tokens": self.params.max_new_tokens,
            "do_sample": False,
        }
        return kwargs, batch["input_ids"].shape[1]

    def translate(self, texts: Sequence[str], source: str, target: str) -> list[str]:
        if not texts:
            return []
        with heavy.lock():
            import torch

        loaded = self.load()
        kwargs, prompt_length = self.inputs(texts, source, target)
        with torch.inference_mode():
            output = loaded.model.generate(**kwargs)
        if self.family == CAUSAL:
            output = output[:, prompt_length:]
        decoded = loaded.tokenizer.batch_decode(output, skip_special_tokens=True)
        return [_first_line(d) if self.family == CAUSAL else clean_text(d) for d in decoded]


def _first_line(text: str) -> str:
    """A causal model's answer: its first non-empty line (models run on)."""
    for line in text.strip().splitlines():
        if line.strip():
            return clean_text(line)
    return ""


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")


def clean_text(text: str) -> str:
    """A translation as stored: control characters (which no sentence holds, and XML 1.0
    cannot carry) removed, whitespace runs made one space."""
    return " ".join(_CONTROL.sub("", text).split())


class ServerTranslator:
    """An OpenAI-compatible server as a translator, through the verbaliser's client."""

    family = SERVER

    def __init__(
        self,
        base_url: str,
        server_model: str | None = None,
        params: TranslateParams | None = None,
        **client: Any,
    ) -> None:
        from core.verbalise.base import GenerationParams
        from core.verbalise.openai import OpenAIVerbaliser

        self.params = params or TranslateParams()
        self.params.check()
        generation = GenerationParams(
            candidates=1,
            temperature=max(self.params.temperature, 1e-6),
            top_p=1.0,
            max_new_tokens=self.params.max_new_tokens,
        )
        self.client = OpenAIVerbaliser(base_url, server_model, generation, logprobs=False, **client)
        self.client.load()
        self.model = self.client.model_id
        self.fingerprint = self.client.fingerprint()

    def describe(self) -> dict[str, Any]:
        return {"prompt": CAUSAL_PROMPT, "temperature": self.params.temperature}

    def translate(self, texts: Sequence[str], source: str, target: str) -> list[str]:
        out = []
        for text in texts:
            prompt = CAUSAL_PROMPT.format(
                source_name=language_name(source), target_name=language_name(target), text=text
            )
            out.append(_first_line(self.client.complete(prompt)))
        return out

    def close(self) -> None:
        self.client.close()


def make_translator(
    model: str, params: TranslateParams | None = None, *, server_model: str | None = None
) -> Translator:
    """A server for an ``http(s)://`` URL, else a local model folder or cached hub id."""
    if model.startswith(("http://", "https://")):
        return ServerTranslator(model, server_model, params)
    return LocalTranslator(model, params)


# --- what to translate, and storing it ---------------------------------------------------


@dataclass(frozen=True)
class SourceText:
    reference_id: int
    unit_id: int
    text: str


def pending_sources(
    store: SessionStore,
    source: str,
    target: str,
    key: str,
    units: Sequence[str] | None = None,
) -> tuple[list[SourceText], int]:
    """Gold references in ``source`` to translate into ``target``, and how many were
    skipped as already translated under ``key``. Units with a gold reference in
    ``target`` are left out."""
    from sqlalchemy import select

    from core.store.models import DataUnit, ReferenceDerivation, UnitReference

    with store.snapshot() as db:
        query = (
            select(UnitReference.id, UnitReference.unit_id, UnitReference.text)
            .where(UnitReference.lang == source, UnitReference.quality == "gold")
            .order_by(UnitReference.unit_id, UnitReference.id)
        )
        if units is not None:
            query = query.join(DataUnit, DataUnit.id == UnitReference.unit_id).where(
                DataUnit.uid.in_(list(units))
            )
        rows = db.execute(query).all()
        gold_in_target = set(
            db.scalars(
                select(UnitReference.unit_id).where(
                    UnitReference.lang == target, UnitReference.quality == "gold"
                )
            )
        )
        done = set(
            db.scalars(
                select(ReferenceDerivation.source_reference_id).where(
                    ReferenceDerivation.lang == target, ReferenceDerivation.key == key
                )
            )
        )
    candidates = [
        SourceText(r.id, r.unit_id, r.text) for r in rows if r.unit_id not in gold_in_target
    ]
    pending = [c for c in candidates if c.reference_id not in done]
    return pending, len(candidates) - len(pending)


def store_translations(
    store: SessionStore,
    translator: Translator,
    params: TranslateParams,
    key: str,
    source: str,
    target: str,
    rows: Sequence[tuple[SourceText, str]],
) -> list[int]:
    """One transaction: a silver reference and its derivation row per translation."""
    from core.store.models import ReferenceDerivation, UnitReference

    name = Path(translator.model).name if translator.family != SERVER else translator.model
    # Asked once per batch, not per text; one flush for the batch's references (one
    # multi-row INSERT), then their derivations: a flush per text cost a round trip each.
    parameters = {"family": translator.family, **params.decoding(), **translator.describe()}
    with store.unit_of_work() as db:
        references = [
            UnitReference(
                unit_id=src.unit_id,
                lang=target,
                text=text,
                quality="silver",
                provenance=(
                    f"machine translation {source}→{target} of reference {src.reference_id} "
                    f"by {name} ({translator.family}, beams {params.num_beams})"
                ),
            )
            for src, text in rows
        ]
        db.add_all(references)
        db.flush()
        db.add_all(
            ReferenceDerivation(
                reference_id=reference.id,
                source_reference_id=src.reference_id,
                source_lang=source,
                lang=target,
                step="translate",
                model=translator.model,
                model_fingerprint=translator.fingerprint,
                parameters=dict(parameters),
                key=key,
                mt_text=text,
                kept="mt",
            )
            for reference, (src, text) in zip(references, rows, strict=True)
        )
        return [int(reference.id) for reference in references]


@dataclass
class TranslateSummary:
    model: str
    family: str
    source: str
    targets: list[str]
    translated: dict[str, int] = field(default_factory=dict)  # "en→it": texts
    skipped: dict[str, int] = field(default_factory=dict)  # already translated (resume)
    elapsed_s: float = 0.0
    load_s: float = 0.0

    @property
    def total_translated(self) -> int:
        return sum(self.translated.values())

    @property
    def seconds_per_text(self) -> float | None:
        n = self.total_translated
        return (self.elapsed_s - self.load_s) / n if n else None

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "seconds_per_text": self.seconds_per_text}


def translate_job(
    store: SessionStore,
    translator: Translator,
    source: str,
    targets: Sequence[str],
    params: TranslateParams | None = None,
    *,
    units: Sequence[str] | None = None,
) -> Job[TranslateSummary]:
    """Translate the gold ``source`` references into each of ``targets``, batch by batch,
    each batch in its own transaction (a cancel keeps the finished batches; the same
    command resumes)."""
    params = params or TranslateParams()
    params.check()
    source = check_language(source)
    targets = [check_language(t) for t in targets]
    if source in targets:
        raise TranslateError(f"the source language {source} is also a target")
    summary = TranslateSummary(translator.model, translator.family, source, list(targets))

    def run(ctx: JobContext) -> TranslateSummary:
        started = time.perf_counter()
        job.partial = summary
        key = resume_key(translator, params)
        plan = _plan(store, summary, key, units)
        total = sum(len(p) for _, p in plan)
        done = 0
        ctx.progress(
            0, total, f"{total} texts to translate, {sum(summary.skipped.values())} done before"
        )
        try:
            for target, pending in plan:
                pair = f"{source}→{target}"
                summary.translated.setdefault(pair, 0)
                for start in range(0, len(pending), params.batch):
                    ctx.check_cancelled()
                    chunk = pending[start : start + params.batch]
                    _translate_batch(store, translator, params, key, target, chunk, summary)
                    done += len(chunk)
                    summary.elapsed_s = time.perf_counter() - started
                    ctx.progress(done, total, f"{pair}: {summary.translated[pair]} translated")
        finally:
            translator.close()
        summary.elapsed_s = time.perf_counter() - started
        return summary

    job: Job[TranslateSummary] = Job(
        title=f"Translate references {source}→{','.join(targets)}",
        run=run,
        kind="references-translate",
        writes=frozenset({Topic.REFERENCES}),
        params={
            "model": translator.model,
            "family": translator.family,
            "source": source,
            "targets": list(targets),
            **params.decoding(),
            "units": len(units or []),
        },
        kept=lambda: f"{summary.total_translated} translations are kept; the same command resumes",
    )
    return job


def _plan(
    store: SessionStore, summary: TranslateSummary, key: str, units: Sequence[str] | None
) -> list[tuple[str, list[SourceText]]]:
    """Per target, the source references still to translate (those done before are
    counted in ``summary.skipped``)."""
    plan = []
    source = summary.source
    for target in summary.targets:
        pending, skipped = pending_sources(store, source, target, key, units)
        summary.skipped[f"{source}→{target}"] = skipped
        # Texts of similar length share a batch (less padding for every beam); the
        # order does not matter to resuming, which asks per text what is left.
        plan.append((target, sorted(pending, key=lambda c: len(c.text))))
    return plan


def _translate_batch(
    store: SessionStore,
    translator: Translator,
    params: TranslateParams,
    key: str,
    target: str,
    chunk: list[SourceText],
    summary: TranslateSummary,
) -> None:
    """Translate and store one batch, in its own transaction; a local model is loaded
    before the first one (its load time is kept apart from the texts' time)."""
    source = summary.source
    if isinstance(translator, LocalTranslator) and translator._loaded is None:
        loading = time.perf_counter()
        translator.load()
        summary.load_s = time.perf_counter() - loading
        summary.family = translator.family
    texts = translator.translate([c.text for c in chunk], source, target)
    store_translations(
        store, translator, params, key, source, target, list(zip(chunk, texts, strict=True))
    )
    summary.translated[f"{source}→{target}"] += len(chunk)
