"""The Verbalise panel's Train dialog: ``train-verbaliser`` as a job, its progress and
outcome written into the dialog's :class:`core.verbalise.training_state.TrainState`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from core.errors import UserFacingError
from core.jobs import JobFailed, JobSucceeded
from core.verbalise.training_state import CANCELLED, DONE, FAILED, TrainState

if TYPE_CHECKING:
    from app.controller import AppController
    from app.jobrunner import JobHandle
    from app.verbalise import VerbaliseController
    from widgets.train_dialog import TrainDialog


class TrainController(QObject):
    """Opens the dialog from the Verbalise panel and runs the training it asks for."""

    def __init__(self, app: AppController, verbalise: VerbaliseController) -> None:
        super().__init__(verbalise)
        self.app, self.verbalise = app, verbalise
        self.state = TrainState()
        self.dialog: TrainDialog | None = None
        self.handle: JobHandle | None = None
        verbalise.panel.train_requested.connect(self.open_dialog)

    def open_dialog(self) -> TrainDialog | None:
        from widgets.train_dialog import TrainDialog

        if self.app.store is None:
            self.app.window.show_error("No session", "Open a session first.")
            return None
        if self.dialog is None:
            self.dialog = TrainDialog(self.state, self.verbalise.panel)
            self.dialog.start_requested.connect(self.start)
            self.dialog.cancel_requested.connect(self.cancel)
        trainable = [
            m.name if m.source == "hf-cache" else str(m.path) for m in self.verbalise.models
        ]
        self.dialog.set_models(
            [
                spec
                for spec, model in zip(trainable, self.verbalise.models, strict=True)
                if model.type in ("seq2seq", "causal")
            ]
        )
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def start(self) -> JobHandle | None:
        from core.verbalise.training import check_out, training_job

        store, state = self.app.store, self.state
        if store is None or state.problem:
            return None
        try:
            settings = state.settings()
            folder = check_out(state.out_path())
            job = training_job(
                store,
                state.out_path(),
                base=state.base.strip(),
                settings=settings,
                session_name=str(store.path),
            )
        except UserFacingError as error:
            self.app.window.show_error("Cannot train", str(error))
            return None
        state.started(folder.resume_step)
        handle = self.handle = self.app.run_job(job)
        handle.progressed.connect(lambda p: state.progressed(p.done, p.total, p.message))
        handle.finished.connect(self._finished)
        return handle

    def _finished(self, outcome: Any) -> None:
        if isinstance(outcome, JobSucceeded):
            self.state.finished(DONE, outcome.result)
            self.verbalise.rescan()  # the trained folder is in the model list now
        elif isinstance(outcome, JobFailed):
            self.state.finished(FAILED, error=outcome.message)
        else:
            self.state.finished(CANCELLED)

    def cancel(self) -> None:
        if self.handle is not None and not self.handle.done:
            self.state.cancelling()
            self.handle.cancel()
