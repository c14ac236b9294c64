"""The Verbalise panel's Train dialog: ``train-verbaliser`` as a job, its progress and
outcome written into the dialog's :class:`core.verbalise.training_state.TrainState`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject

from core.errors import UserFacingError
from core.jobs import JobFailed, JobSucceeded
from core.verbalise.training_state import CANCELLED, DONE, FAILED, TrainState

if TYPE_CHECKING:
    from app.context import PanelContext
    from app.jobrunner import JobHandle
    from widgets.train_dialog import TrainDialog
    from widgets.verbalise import VerbalisePanel


class ModelList(Protocol):
    """What the Train dialog needs of the Verbalise panel's controller: its panel, the
    models it lists, and a rescan once a training wrote a new one."""

    @property
    def panel(self) -> VerbalisePanel: ...

    @property
    def models(self) -> Sequence[Any]: ...

    def rescan(self) -> None: ...


class TrainController(QObject):
    """Opens the dialog from the Verbalise panel and runs the training it asks for."""

    def __init__(self, ctx: PanelContext, verbalise: ModelList) -> None:
        super().__init__(verbalise.panel)
        self.ctx, self.verbalise = ctx, verbalise
        self.state = TrainState()
        self.dialog: TrainDialog | None = None
        self.handle: JobHandle | None = None
        verbalise.panel.train_requested.connect(self.open_dialog)

    def open_dialog(self) -> TrainDialog | None:
        from widgets.train_dialog import TrainDialog

        if self.ctx.store is None:
            self.ctx.notify.show_error("No session", "Open a session first.")
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

    def start(self) -> None:
        """Check the form (cheap), read the references off the UI thread (the session
        rule), then start the training job."""
        from core.verbalise.training.data import load_examples
        from core.verbalise.training.launch import check_request

        store, state = self.ctx.store, self.state
        if store is None or state.problem:
            return
        try:
            settings = state.settings()
            folder = check_request(state.out_path(), state.base.strip(), settings)
        except UserFacingError as error:
            self.ctx.notify.show_error("Cannot train", str(error))
            return
        state.started(folder.resume_step)
        state.progressed(0, None, "Reading the session's references…")
        self.ctx.reads.request(
            "train-verbaliser",
            load_examples,
            lambda examples: self._train(examples, settings),
            on_error=self._refused,
            title="Read the references to train on",
        )

    def _refused(self, error: UserFacingError) -> None:
        self.state.finished(FAILED, error=str(error))
        self.ctx.notify.show_error("Cannot train", str(error))

    def _train(self, examples: Any, settings: Any) -> JobHandle | None:
        from core.verbalise.training.launch import training_job

        store, state = self.ctx.store, self.state
        try:
            job = training_job(
                store,
                state.out_path(),
                base=state.base.strip(),
                settings=settings,
                session_name=str(store.path) if store is not None else "",
                examples=examples,
            )
        except UserFacingError as error:
            self._refused(error)
            return None
        handle = self.handle = self.ctx.run_job(job)
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
