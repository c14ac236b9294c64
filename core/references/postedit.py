"""Post-editing of translated references with an LLM (METHODS §11 step 4).

The prompt is TailNLG's Appendix F.1 (the xTower prompt), verbatim, bundled as
``resources/prompts/postedit_f1.txt`` (its first line is the paper's instruction; the
fields follow the paper's example). It receives the source, the translation, the
translation with its error spans marked ``<error severity="…">…</error>`` and the band.
Where no quality estimate exists (no QE model), the analysis is the unmarked translation
and the score line says ``not estimated``: every translation is post-edited, as TailNLG
post-edited all of them.

The reply is parsed into an explanation and a corrected translation
(:func:`parse_postedit`). Both versions are kept (``mt_text`` and ``postedit_text`` of the
derivation row); the reference's text becomes the correction, and ``kept`` says which
it is. A reply that cannot be parsed keeps the original translation, its raw text stored
and ``kept = 'mt'`` with ``postedit_text`` None (marked as unparsable).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core import heavy
from core.changes import Topic
from core.errors import UserFacingError
from core.jobs import Job, JobContext
from core.references.languages import language_name
from core.references.qe import ErrorSpan, annotate_spans
from core.references.translate import clean_text
from resources import resource_path

if TYPE_CHECKING:
    from core.local_models.loader import LoadedModel
    from core.store import SessionStore

PROMPT_FILE = ("prompts", "postedit_f1.txt")
NOT_ESTIMATED = "not estimated"
KEPT_MT, KEPT_POSTEDIT = "mt", "postedit"


class PostEditError(UserFacingError):
    """A post-editing request that cannot be honoured."""


def prompt_template() -> str:
    """The bundled F.1 prompt (instruction verbatim, then the example's fields)."""
    return resource_path(*PROMPT_FILE).read_text(encoding="utf-8")


def build_prompt(
    source: str,
    translation: str,
    source_lang: str,
    target_lang: str,
    *,
    band: str | None = None,
    spans: Sequence[ErrorSpan] = (),
    template: str | None = None,
) -> str:
    return (
        (template or prompt_template())
        .format(
            source_name=language_name(source_lang),
            target_name=language_name(target_lang),
            source=source,
            translation=translation,
            analysis=annotate_spans(translation, spans),
            band=band or NOT_ESTIMATED,
        )
        .rstrip("\n")
    )


@dataclass(frozen=True)
class PostEdit:
    explanation: str | None
    correction: str | None  # None: the reply could not be parsed

    @property
    def parsed(self) -> bool:
        return self.correction is not None


# "Translation correction:", "Corrected translation:", "**Correct translation**:",
# "Italian correction:", "Fully correct translation -" ... the last such label wins.
_CORRECTION = re.compile(
    r"(?im)^[ \t>*_#-]*(?:[A-Z][a-z]+\s+)?(?:translation\s+correction|"
    r"(?:fully\s+)?correct(?:ed)?\s+translation|correction)\s*[*_]*\s*[:\-–]\s*[*_]*"
)
_EXPLANATION = re.compile(r"(?im)^[ \t*_#-]*explanations?(?:\s+for\s+error\s*\d*)?\s*[*_]*\s*:\s*")
_QUOTES = "\"'“”«»`"


def parse_postedit(reply: str) -> PostEdit:
    """Explanation and corrected translation of an xTower-style reply. The correction is
    what follows the last correction label, up to the next blank line; quotes and
    markup around it are removed. Without such a label, or with nothing after it, the
    reply is unparsable (correction None)."""
    text = reply.replace("\r\n", "\n").strip()
    matches = list(_CORRECTION.finditer(text))
    if not matches:
        return PostEdit(_explanation(text) or None, None)
    last = matches[-1]
    after = text[last.end() :].strip()
    correction = after.split("\n\n", 1)[0].strip()
    correction = correction.strip("*_ \t").strip(_QUOTES).strip()
    correction = clean_text(correction)
    explanation = _explanation(text[: last.start()]) or None
    return PostEdit(explanation, correction or None)


def _explanation(text: str) -> str:
    return _EXPLANATION.sub("", text).strip()


# --- the editors ----------------------------------------------------------------------------


class Editor(Protocol):
    model: str

    def edit(self, prompts: Sequence[str]) -> list[str]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class EditParams:
    max_new_tokens: int = 512
    batch: int = 4
    device: str = "auto"
    dtype: str = "auto"


class LocalEditor:
    """A local causal LM (xTower, or any instruction model), greedy, the prompt wrapped
    in its chat template where it has one."""

    def __init__(
        self,
        model: str | Path,
        params: EditParams | None = None,
        *,
        loader: Callable[..., LoadedModel] | None = None,
    ) -> None:
        from core.local_models.loader import CAUSAL, ModelError, check_model_folder, resolve_model

        self.params = params or EditParams()
        self.path = resolve_model(model)
        if check_model_folder(self.path) != CAUSAL:
            raise ModelError(f"{self.path} is not a causal LM: post-editing needs one")
        self.model = str(self.path.resolve())
        self._loader = loader
        self._loaded: LoadedModel | None = None

    def _load(self) -> LoadedModel:
        if self._loaded is None:
            from core.local_models.loader import CAUSAL, load_model

            load = self._loader or load_model
            self._loaded = load(
                self.path, device=self.params.device, dtype=self.params.dtype, expected_type=CAUSAL
            )
            self._loaded.tokenizer.padding_side = "left"
        return self._loaded

    def edit(self, prompts: Sequence[str]) -> list[str]:
        with heavy.lock():
            import torch

        from core.local_models.loader import prompts_token_ids

        loaded = self._load()
        tokenizer, model = loaded.tokenizer, loaded.model
        ids = prompts_token_ids(tokenizer, prompts)
        batch = tokenizer.pad({"input_ids": ids}, padding=True, return_tensors="pt")
        batch = {k: v.to(model.device) for k, v in batch.items()}
        with torch.inference_mode():
            output = model.generate(
                **batch,
                do_sample=False,
                max_new_tokens=self.params.max_new_tokens,
                pad_token_id=tokenizer.pad_token_id,
            )
        generated = output[:, batch["input_ids"].shape[1] :]
        return [t.strip() for t in tokenizer.batch_decode(generated, skip_special_tokens=True)]

    def close(self) -> None:
        if self._loaded is not None:
            from core.local_models.loader import free_device_memory

            device, self._loaded = self._loaded.device, None
            free_device_memory(device)


class ServerEditor:
    """An OpenAI-compatible server (greedy-ish: the lowest temperature it accepts)."""

    def __init__(self, base_url: str, server_model: str | None = None, max_new_tokens: int = 512):
        from core.verbalise.base import GenerationParams
        from core.verbalise.openai import OpenAIVerbaliser

        params = GenerationParams(
            candidates=1, temperature=1e-6, top_p=1.0, max_new_tokens=max_new_tokens
        )
        self.client = OpenAIVerbaliser(base_url, server_model, params, logprobs=False)
        self.client.load()
        self.model = self.client.model_id

    def edit(self, prompts: Sequence[str]) -> list[str]:
        return [self.client.complete(p) for p in prompts]

    def close(self) -> None:
        self.client.close()


def make_editor(
    model: str, *, server_model: str | None = None, params: EditParams | None = None
) -> Editor:
    if model.startswith(("http://", "https://")):
        return ServerEditor(model, server_model, (params or EditParams()).max_new_tokens)
    return LocalEditor(model, params)


# --- the job --------------------------------------------------------------------------------


@dataclass
class PostEditSummary:
    model: str
    edited: int = 0  # correction kept
    unparsable: int = 0  # original kept
    skipped: int = 0  # already post-edited by this model
    elapsed_s: float = 0.0
    examples: list[dict[str, Any]] = field(default_factory=list)


def postedit_job(
    store: SessionStore, editor: Editor, *, batch: int = 4, redo: bool = False
) -> Job[PostEditSummary]:
    """Post-edit every translation not yet post-edited by ``editor.model``."""
    from sqlalchemy import select

    from core.store.models import ReferenceDerivation as D
    from core.store.models import UnitReference as R

    summary = PostEditSummary(editor.model)
    template = prompt_template()

    def run(ctx: JobContext) -> PostEditSummary:
        started = time.perf_counter()
        job.partial = summary
        with store.snapshot() as db:
            source = R.__table__.alias("source")
            rows = db.execute(
                select(
                    D.id,
                    D.source_lang,
                    D.lang,
                    source.c.text,
                    D.mt_text,
                    D.qe_band,
                    D.qe_spans,
                    D.postedit_model,
                )
                .join(source, source.c.id == D.source_reference_id)
                .order_by(D.id)
            ).all()
        pending = [r for r in rows if redo or r.postedit_model != editor.model]
        summary.skipped = len(rows) - len(pending)
        total = len(pending)
        try:
            for start in range(0, total, max(1, batch)):
                ctx.check_cancelled()
                chunk = pending[start : start + max(1, batch)]
                prompts = [
                    build_prompt(
                        r.text,
                        r.mt_text,
                        r.source_lang,
                        r.lang,
                        band=r.qe_band,
                        spans=[
                            ErrorSpan(s["text"], s["start"], s["end"], s["severity"])
                            for s in (r.qe_spans or {}).get("spans", [])
                        ],
                        template=template,
                    )
                    for r in chunk
                ]
                replies = editor.edit(prompts)
                with store.unit_of_work() as db:
                    for row, reply in zip(chunk, replies, strict=True):
                        apply_postedit(db, row.id, editor.model, reply)
                        if parse_postedit(reply).parsed:
                            summary.edited += 1
                        else:
                            summary.unparsable += 1
                ctx.progress(start + len(chunk), total, f"{start + len(chunk)} post-edited")
        finally:
            editor.close()
        summary.elapsed_s = time.perf_counter() - started
        return summary

    job: Job[PostEditSummary] = Job(
        title="Post-edit translations",
        run=run,
        kind="references-postedit",
        writes=frozenset({Topic.REFERENCES}),
        params={"model": editor.model, "redo": redo},
        kept=lambda: (
            f"{summary.edited + summary.unparsable} post-edits are kept; the same command resumes"
        ),
    )
    return job


def apply_postedit(db: Any, derivation_id: int, model: str, reply: str) -> str:
    """Store a reply on its derivation row and set the reference's text to the version
    kept; returns ``'postedit'`` or ``'mt'``."""
    from core.store.models import ReferenceDerivation as D
    from core.store.models import UnitReference as R

    derivation = db.get_one(D, derivation_id)
    edit = parse_postedit(reply)
    derivation.postedit_model = model
    derivation.postedit_raw = reply
    derivation.postedit_explanation = edit.explanation
    derivation.postedit_text = edit.correction
    derivation.kept = KEPT_POSTEDIT if edit.parsed else KEPT_MT
    reference = db.get_one(R, derivation.reference_id)
    reference.text = edit.correction if edit.correction is not None else derivation.mt_text
    return str(derivation.kept)
