"""What the References pipeline dialog decides, without Qt (``taillens references
translate|qe|postedit`` in the GUI).

:class:`ReferencesState` holds the form (languages, the translation model, the xCOMET
checkpoint, the post-editing model, batch and beams), which step runs, its progress and,
per step, one line saying what its last run did. The dialog
(``widgets/references_dialog.py``) renders it and writes the user's edits into it; the
controller (``app/references_pipeline.py``) builds the same jobs the CLI runs from
:meth:`translate_request`, :meth:`qe_request` and :meth:`postedit_request`, and writes
their progress and outcome back. :meth:`choices` and :meth:`restore` are what
:class:`core.desktop.dialog_memory.DialogMemory` keeps between openings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.labels import plural
from core.references.languages import TRANSLATION_LANGUAGES, check_language, parse_languages
from core.references.postedit import EditParams, PostEditError, PostEditSummary
from core.references.qe import QESummary, qe_status
from core.references.translate import TranslateError, TranslateParams, TranslateSummary
from core.state import Field, State

TRANSLATE, QE, POSTEDIT = "translate", "qe", "postedit"
STEPS = (TRANSLATE, QE, POSTEDIT)
STEP_NAMES = {TRANSLATE: "Translation", QE: "Quality estimation", POSTEDIT: "Post-editing"}
_T = TranslateParams()
_E = EditParams()
# The form's fields a DialogMemory keeps (what the run did is not a choice).
CHOICES = (
    "source",
    "targets",
    "translate_model",
    "translate_server_model",
    "translate_batch",
    "beams",
    "max_new_tokens",
    "qe_model",
    "qe_python",
    "qe_batch",
    "edit_model",
    "edit_server_model",
    "edit_batch",
)


def translation_languages() -> tuple[str, ...]:
    """The languages a translation model can be asked for (the source combo's list)."""
    return tuple(TRANSLATION_LANGUAGES)


def is_server(model: str) -> bool:
    return model.strip().startswith(("http://", "https://"))


@dataclass(frozen=True)
class TranslateRequest:
    model: str
    server_model: str | None
    source: str
    targets: list[str]
    params: TranslateParams


@dataclass(frozen=True)
class QERequest:
    checkpoint: str | None
    batch: int
    note: str | None  # why nothing will be scored (qe_status), None when xCOMET can run
    python: str | None = None  # another environment's Python with unbabel-comet


@dataclass(frozen=True)
class EditRequest:
    model: str
    server_model: str | None
    batch: int
    params: EditParams


class ReferencesState(State):
    source = Field("en")
    targets = Field("")  # comma-separated, e.g. "it,es"
    translate_model = Field("")  # a folder, a cached hub id or a server URL
    translate_server_model = Field("")  # with a server URL: the model it should use
    translate_batch = Field(_T.batch)
    beams = Field(_T.num_beams)
    max_new_tokens = Field(_T.max_new_tokens)
    qe_model = Field("")  # an xCOMET folder or .ckpt
    qe_python = Field("")  # the Python of an environment with unbabel-comet ("" = this one)
    qe_batch = Field(8)
    edit_model = Field("")
    edit_server_model = Field("")
    edit_batch = Field(_E.batch)

    running = Field("")  # the step running now ("" when none)
    done = Field(0.0)
    total = Field(0.0)
    progress_line = Field("")
    # per step: what its last run did (or why it could not start)
    translate_message = Field("")
    qe_message = Field("")
    postedit_message = Field("")

    # -- remembered choices ---------------------------------------------------------------
    def choices(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in CHOICES}

    def restore(self, values: dict[str, Any]) -> None:
        """The choices a DialogMemory kept; a value of the wrong kind is skipped."""
        kept = {}
        for name in CHOICES:
            value = values.get(name)
            default = getattr(type(self), name).default
            if isinstance(value, type(default)) and not isinstance(value, bool):
                kept[name] = value
        self.update(**kept)

    # -- what each step runs --------------------------------------------------------------
    def translate_request(self) -> TranslateRequest:
        """What Translate runs; a :class:`core.errors.UserFacingError` says what is wrong."""
        model = self.translate_model.strip()
        if not model:
            raise TranslateError("choose the translation model (a folder, hub id or server URL)")
        params = TranslateParams(
            num_beams=int(self.beams),
            max_new_tokens=int(self.max_new_tokens),
            batch=int(self.translate_batch),
            device="auto",
        )
        params.check()
        source = check_language(self.source)
        targets = parse_languages(self.targets)
        if source in targets:
            raise TranslateError(f"the source language {source} is also a target")
        server_model = self.translate_server_model.strip() if is_server(model) else ""
        return TranslateRequest(model, server_model or None, source, targets, params)

    def qe_request(self) -> QERequest:
        checkpoint = self.qe_model.strip() or None
        python = self.qe_python.strip() or None
        return QERequest(checkpoint, int(self.qe_batch), qe_status(checkpoint, python), python)

    def postedit_request(self) -> EditRequest:
        model = self.edit_model.strip()
        if not model:
            raise PostEditError("choose the post-editing model (a causal LM folder or server URL)")
        batch = int(self.edit_batch)
        server_model = self.edit_server_model.strip() if is_server(model) else ""
        return EditRequest(model, server_model or None, batch, EditParams(batch=batch))

    def qe_note(self) -> str:
        """Why Estimate quality will store nothing ("" when xCOMET can run)."""
        return qe_status(self.qe_model.strip() or None, self.qe_python.strip() or None) or ""

    # -- a run's course -------------------------------------------------------------------
    def started(self, step: str, line: str) -> None:
        self.update(running=step, done=0.0, total=0.0, progress_line=line)

    def progressed(self, done: float, total: float | None, line: str) -> None:
        self.update(done=float(done), total=float(total or 0), progress_line=line)

    def finished(self, step: str, line: str) -> None:
        self.update(running="", done=0.0, total=0.0, progress_line="", **{f"{step}_message": line})

    def refused(self, step: str, why: str) -> None:
        self.update(**{f"{step}_message": f"Not run: {why}"})


# -- what a run did, in one line -------------------------------------------------------------
def translated_line(summary: TranslateSummary) -> str:
    pairs = summary.translated or {f"{summary.source}→{t}": 0 for t in summary.targets}
    counts = ", ".join(
        f"{pair} {count} translated ({summary.skipped.get(pair, 0)} already were)"
        for pair, count in pairs.items()
    )
    per = summary.seconds_per_text
    speed = "" if per is None else f", {per * 1000:.0f} ms per text"
    return f"{counts}; {summary.family} model {summary.model}{speed}"


def qe_line(summary: QESummary) -> str:
    if summary.note:  # the form shows the whole note above; the line says what happened
        why = summary.note.split(";")[0].removeprefix("no quality estimation: ")
        return f"Nothing scored: {why}"
    bands = ", ".join(f"{k} {v}" for k, v in sorted(summary.bands.items())) or "none"
    return (
        f"{plural(summary.scored, 'translation')} scored ({bands}), {summary.skipped} already were"
    )


def postedit_line(summary: PostEditSummary) -> str:
    return (
        f"{summary.edited} post-edited (correction kept), {summary.unparsable} unparsable "
        f"(original kept), {summary.skipped} already were; model {summary.model}"
    )


def cancelled_line(step: str) -> str:
    return f"{STEP_NAMES[step]} cancelled: what was finished is kept; Run again resumes it"
