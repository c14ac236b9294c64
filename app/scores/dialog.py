"""What the Score… dialog offers: the runs and languages, the local models found, where
METEOR's WordNet is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from app.scores.notes import MBERT, MINILM, ModelNotes
from app.scores.reads import ScoresData, load_scores
from core.desktop.logs import get_logger
from core.labels import plural
from core.vocab import LANGUAGES, short_model_name
from widgets.scores import (
    ModelChoice,
    ScoreChoices,
)

if TYPE_CHECKING:
    from core.local_models.loader import ModelInfo
    from core.metrics.meteor import WordNetStatus
    from core.store import SessionStore


log = get_logger("scores")
MODELS_KIND = "models.discover"


def score_choices(
    found: Sequence[ModelInfo],
    data: ScoresData | None,
    wordnet: WordNetStatus | None,
    notes: ModelNotes,
    *,
    accelerator: bool = True,
) -> ScoreChoices:
    """What the Score… dialog offers: the runs and languages last read (``data``), the
    models ``found`` on this machine and where METEOR's WordNet is (``wordnet``).
    Pure: no session read, no file-system scan (:func:`find_choices` does those in a job).
    ``accelerator``: whether a GPU is there (without one the slowest model metric is not
    ticked by default)."""
    from core.local_models.loader import CAUSAL
    from core.metrics import machine_defaults

    wordnet_found = wordnet is not None and wordnet.found
    checked, unticked = machine_defaults(
        wordnet_found=None if wordnet is None else wordnet.found, accelerator=accelerator
    )

    runs = data.runs if data is not None else []
    langs = (data.langs if data is not None else []) or list(LANGUAGES)
    default_label = (
        f"default: {MBERT}"
        if notes.mbert_cached()
        else f"default: packaged {MINILM} ({MBERT} not cached)"
    )
    encoders = [m for m in found if m.type != CAUSAL]
    return ScoreChoices(
        checked=checked,
        unticked=unticked,
        wordnet_found=wordnet_found,
        wordnet_note=wordnet.message() if wordnet is not None else "",
        runs=[(run_id, f"run {run_id}: {name} ({plural(n, 'text')})") for run_id, name, n in runs],
        langs=langs,
        bertscore_models=[ModelChoice(default_label, None, notes.bertscore_default_note())]
        + [
            ModelChoice(
                m.name,
                str(m.path),
                f"{m.name}: "
                + (
                    "rescaled with bert_score's baseline."
                    if short_model_name(m.name) == MBERT
                    else "rescaled only if bert_score ships a baseline "
                    "for it; otherwise raw F1, marked not rescaled."
                ),
            )
            for m in encoders
        ],
        encoders=[
            ModelChoice(
                f"default: packaged {MINILM}",
                None,
                f"The {MINILM} sentence encoder packaged with TailLens.",
            )
        ]
        + [ModelChoice(m.name, str(m.path), f"{m.name} (sentence-transformers)") for m in encoders],
        ppl_models=[
            ModelChoice(
                "each run's own model", None, "Perplexity under the model that wrote the text"
            )
        ]
        + [ModelChoice(m.name, str(m.path)) for m in found if m.type == CAUSAL],
    )


def find_choices(store: SessionStore, data: ScoresData | None, notes: ModelNotes) -> ScoreChoices:
    """The dialog's choices with the local models found now (runs in a job: scanning
    the Hugging Face cache and checking for mBERT touch the file system). The runs
    come from the last refresh; only when none has finished yet are they read here."""
    from core.local_models.loader import discover_models
    from core.local_models.placement import accelerator_likely
    from core.metrics.meteor import wordnet_status

    try:
        found = discover_models()
    except OSError as error:  # an unreadable cache folder must not stop scoring
        log.warning("model discovery failed: %s", error)
        found = []
    if data is None or data.store is not store:
        data = load_scores(store)
    return score_choices(found, data, wordnet_status(), notes, accelerator=accelerator_likely())
