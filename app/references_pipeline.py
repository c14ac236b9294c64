"""File ▸ References pipeline…: the dialog's controller. Each step's Run builds the same
job ``taillens references translate|qe|postedit`` runs (``core.references``) from the
dialog's :class:`core.references.dialog_state.ReferencesState` and runs it through the
window's job bar (off the UI thread, with progress and cancel); the outcome becomes the
step's line. The form's choices are remembered with a
:class:`core.desktop.dialog_memory.DialogMemory` when a step is run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from core.desktop.dialog_memory import DialogMemory
from core.errors import UserFacingError
from core.jobs import Job, JobContext, JobFailed, JobSucceeded
from core.references.dialog_state import (
    POSTEDIT,
    QE,
    STEP_NAMES,
    TRANSLATE,
    ReferencesState,
    cancelled_line,
    postedit_line,
    qe_line,
    translated_line,
)

if TYPE_CHECKING:
    from app.context import PanelContext
    from app.jobrunner import JobHandle
    from core.store import SessionStore
    from widgets.main_window import MainWindow
    from widgets.references_dialog import ReferencesDialog


def _model_spec(model: Any) -> str:
    return str(model.name if model.source == "hf-cache" else model.path)


class ReferencesController(QObject):
    """Opens the dialog (File ▸ References pipeline…) and runs the step it asks for."""

    def __init__(self, ctx: PanelContext, window: MainWindow) -> None:
        super().__init__(window)
        self.ctx, self.window = ctx, window
        self.memory = DialogMemory(ctx.settings, "references")
        self.state = ReferencesState()
        self.state.restore(self.memory.load())
        self.dialog: ReferencesDialog | None = None
        self.handle: JobHandle | None = None
        window.references_requested.connect(self.open_dialog)

    def open_dialog(self) -> ReferencesDialog | None:
        from widgets.references_dialog import ReferencesDialog

        if self.ctx.store is None:
            self.ctx.notify.show_error("No session", "Open a session to make references.")
            return None
        if self.dialog is None:
            self.dialog = ReferencesDialog(self.state, self.window)
            self.dialog.run_requested.connect(self.run)
            self.dialog.cancel_requested.connect(self.cancel)
        self._list_models()
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def _list_models(self) -> None:
        """The models on this machine, listed off the UI thread, offered in the combos."""
        from core.local_models.hub import list_models

        def run(_ctx: JobContext) -> tuple[Any, ...]:
            return tuple(list_models())

        job = Job("List models", run, kind="models-list", uses_session=False, quiet=True)

        def listed(outcome: Any) -> None:
            if isinstance(outcome, JobSucceeded) and self.dialog is not None:
                models = outcome.result
                self.dialog.set_models(
                    [_model_spec(m) for m in models if m.type in ("seq2seq", "causal")],
                    [_model_spec(m) for m in models if m.type == "causal"],
                )

        self.ctx.run_job(job).finished.connect(listed)

    # -- the steps --------------------------------------------------------------------------
    def run(self, step: str) -> JobHandle | None:
        """Build ``step``'s job as the CLI does and run it; a form that cannot run says why
        on the step's line (and in the message bar), and nothing starts."""
        store, state = self.ctx.store, self.state
        if store is None or state.running or (self.handle is not None and not self.handle.done):
            return None
        self.memory.save(state.choices())
        try:
            job, describe = self._job(step, store)
        except UserFacingError as error:
            state.refused(step, str(error))
            self.ctx.notify.show_error(f"Cannot run {STEP_NAMES[step].lower()}", str(error))
            return None
        state.started(step, f"{STEP_NAMES[step]}: starting…")
        handle = self.handle = self.ctx.run_job(job)
        handle.progressed.connect(lambda p: state.progressed(p.done, p.total, p.message))
        handle.finished.connect(lambda outcome: self._finished(step, outcome, describe))
        return handle

    def _job(self, step: str, store: SessionStore) -> tuple[Job[Any], Any]:
        state = self.state
        if step == TRANSLATE:
            from core.references.translate import make_translator, translate_job

            t = state.translate_request()
            translator = make_translator(t.model, t.params, server_model=t.server_model)
            return (
                translate_job(store, translator, t.source, t.targets, t.params),
                translated_line,
            )
        if step == QE:
            from core.references.qe import CometScorer, qe_job

            q = state.qe_request()
            scorer = (
                None
                if q.note or q.checkpoint is None
                else CometScorer(q.checkpoint, batch=q.batch, python=q.python)
            )
            return qe_job(store, scorer, batch=q.batch, note=q.note), qe_line
        if step == POSTEDIT:
            from core.references.postedit import make_editor, postedit_job

            e = state.postedit_request()
            editor = make_editor(e.model, server_model=e.server_model, params=e.params)
            return postedit_job(store, editor, batch=e.batch), postedit_line
        raise ValueError(f"no step {step!r}")

    def _finished(self, step: str, outcome: Any, describe: Any) -> None:
        if isinstance(outcome, JobSucceeded):
            self.state.finished(step, describe(outcome.result))
        elif isinstance(outcome, JobFailed):
            self.state.finished(step, f"Failed: {outcome.message}")
        else:
            self.state.finished(step, cancelled_line(step))

    def cancel(self) -> None:
        if self.handle is not None and not self.handle.done:
            self.handle.cancel()
