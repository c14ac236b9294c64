"""Verbalisers (METHODS §6) and the verbalise job.

Four verbalisers share prompts, candidates and parameters: :class:`CausalVerbaliser`
and :class:`Seq2SeqVerbaliser` over local ``transformers`` models,
:class:`TemplateVerbaliser` (no weights, the default) and :class:`OpenAIVerbaliser`
for an OpenAI-compatible server. :func:`open_verbaliser` picks one from what the user
typed: ``template``, an ``http(s)://`` URL, a model folder or a hub id in the cache.

Nothing here imports torch at module level; the GUI may import this package at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from core.verbalise.base import (
    Candidate,
    GenerationParams,
    RequestFailure,
    Verbaliser,
    VerbaliseRequest,
)
from core.verbalise.prompts import (
    ANSWER_MARKERS,
    DEFAULT_PRESET,
    DEFAULT_SEQ2SEQ_PREFIX,
    PRESETS,
    ParsedReply,
    default_template,
    default_templates,
    linearise_graph,
    parse_reply,
    render_prompt,
)


def open_verbaliser(
    spec: str | Path,
    params: GenerationParams | None = None,
    templates: Mapping[str, str] | None = None,
    *,
    device: str = "auto",
    dtype: str = "auto",
    quantize: str = "auto",
    server_model: str | None = None,
    prompt_preset: str = DEFAULT_PRESET,
    task_prefix: str | None = None,
    **server_options: object,
) -> Verbaliser:
    """The verbaliser for ``spec``: ``template``, a server URL, or a model folder / hub id.

    ``prompt_preset`` picks the bundled prompts (:data:`PRESETS`: TailNLG's Appendix H by
    default) that ``templates`` edit; ``task_prefix`` is a seq2seq model's task prefix
    (None: WDV's ``translate from Graph to Text: ``). Both are recorded with the run.
    ``device``, ``dtype`` and ``quantize`` (auto, none, 8bit, 4bit) go to
    :func:`core.local_models.placement.plan_placement` when the model loads.

    Cheap: checks the model folder (a missing or broken one raises a ``ModelError``
    with the reason) but loads no weights; the job calls ``load()``."""
    text = str(spec).strip()
    if text.lower() == "template":
        from core.verbalise.template import TemplateVerbaliser

        return TemplateVerbaliser(params)
    if text.startswith(("http://", "https://")):
        from core.verbalise.openai import OpenAIVerbaliser

        return OpenAIVerbaliser(
            text,
            server_model,
            params,
            templates,
            prompt_preset=prompt_preset,
            **server_options,  # type: ignore[arg-type]
        )
    from core.heavy import require_model_stack
    from core.local_models.loader import SEQ2SEQ, check_model_folder, resolve_model
    from core.verbalise.local import CausalVerbaliser, Seq2SeqVerbaliser

    require_model_stack("a local model", "torch", "transformers")
    kind = check_model_folder(resolve_model(text))
    cls = Seq2SeqVerbaliser if kind == SEQ2SEQ else CausalVerbaliser
    return cls(
        text,
        params,
        templates,
        device=device,
        dtype=dtype,
        quantize=quantize,
        prompt_preset=prompt_preset,
        task_prefix=task_prefix,
    )


__all__ = [
    "ANSWER_MARKERS",
    "DEFAULT_PRESET",
    "DEFAULT_SEQ2SEQ_PREFIX",
    "PRESETS",
    "Candidate",
    "GenerationParams",
    "ParsedReply",
    "RequestFailure",
    "VerbaliseRequest",
    "Verbaliser",
    "default_template",
    "default_templates",
    "linearise_graph",
    "open_verbaliser",
    "parse_reply",
    "render_prompt",
]
