"""The Models dialog's controller: lists the models here, reads a model's size on the hub
and pulls or removes one, each as a core job off the UI thread (``core.local_models.hub``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from core.jobs import Job, JobContext, JobFailed, JobSucceeded
from core.local_models.catalog_state import PLANNING, PULLING, REMOVING, ModelsState
from widgets.models_dialog import ModelsDialog

if TYPE_CHECKING:
    from app.context import PanelContext
    from app.jobrunner import JobHandle
    from widgets.main_window import MainWindow


class ModelsController(QObject):
    """Opens the dialog (File ▸ Models…) and runs what it asks for."""

    def __init__(self, ctx: PanelContext, window: MainWindow) -> None:
        super().__init__(window)
        self.ctx, self.window = ctx, window
        self.state = ModelsState()
        self.dialog: ModelsDialog | None = None
        self.handle: JobHandle | None = None
        window.models_requested.connect(self.open_dialog)

    def open_dialog(self) -> ModelsDialog:
        if self.dialog is None:
            self.dialog = ModelsDialog(self.state, self.window)
            self.dialog.check_requested.connect(self.check)
            self.dialog.pull_requested.connect(self.pull)
            self.dialog.cancel_requested.connect(self.cancel)
            self.dialog.remove_requested.connect(self.remove)
            self.dialog.refresh_requested.connect(self.refresh)
        self.refresh()
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def _start(self, job: Job[Any], done: Any, what: str) -> JobHandle | None:
        if self.handle is not None and not self.handle.done:
            return None  # the dialog's buttons are off while one runs
        handle = self.handle = self.ctx.run_job(job)
        state = self.state
        handle.progressed.connect(lambda p: state.progressed(p.done, p.total, p.message))
        handle.finished.connect(lambda outcome: self._finished(outcome, done, what))
        return handle

    def _finished(self, outcome: Any, done: Any, what: str) -> None:
        if isinstance(outcome, JobSucceeded):
            done(outcome.result)
        elif isinstance(outcome, JobFailed):
            self.state.ended(outcome.message, failed=True)
        else:
            self.state.ended(
                f"{what} cancelled; what arrived is kept: Pull again resumes it", failed=False
            )

    def refresh(self) -> JobHandle | None:
        from core.local_models.hub import list_models

        def run(_ctx: JobContext) -> tuple[Any, ...]:
            return tuple(list_models())

        job = Job("List models", run, kind="models-list", uses_session=False, quiet=True)
        handle = self.ctx.run_job(job)  # its own lane: never behind a pull

        def listed(outcome: Any) -> None:
            if isinstance(outcome, JobSucceeded):
                self.state.update(models=outcome.result)

        handle.finished.connect(listed)
        return handle

    def check(self) -> JobHandle | None:
        """The model's files and size on the hub, and the free disk: nothing downloaded."""
        from core.local_models.hub import plan_pull

        repo, revision = self.state.repo_id, self.state.revision or None

        def run(_ctx: JobContext) -> Any:
            return plan_pull(repo, revision)

        self.state.started(PLANNING, f"Reading {repo} on the hub…")
        job = Job(f"Size of {repo}", run, kind="models-plan", uses_session=False, quiet=True)
        return self._start(job, self.state.planned, "Reading")

    def pull(self) -> JobHandle | None:
        from core.local_models.hub import check_disk, list_models, pull, pull_job

        state = self.state
        repo, revision, plan = state.repo_id, state.revision or None, state.plan
        if plan is None:
            job = pull_job(repo, revision)
        else:  # the size was read: pull exactly that commit

            def run(ctx: JobContext) -> Any:
                check_disk(plan)
                return pull(plan, ctx)

            job = Job(f"Pull {repo}", run, kind="models-pull", uses_session=False)
        job.params = {"repo_id": repo, "revision": revision}
        state.started(PULLING, f"Pulling {repo}…")

        def done(result: Any) -> None:
            state.pulled(result, tuple(list_models()))

        return self._start(job, done, "Pull")

    def cancel(self) -> None:
        if self.handle is not None and not self.handle.done:
            self.handle.cancel()

    def remove(self, repo_id: str) -> JobHandle | None:
        from core.local_models.hub import list_models, remove_model
        from core.local_models.loader import human_size

        def run(_ctx: JobContext) -> tuple[int, tuple[Any, ...]]:
            return remove_model(repo_id), tuple(list_models())

        def done(result: tuple[int, tuple[Any, ...]]) -> None:
            freed, models = result
            self.state.ended(
                f"Removed {repo_id}: {human_size(freed)} freed", failed=False, models=models
            )

        self.state.started(REMOVING, f"Removing {repo_id}…")
        job = Job(f"Remove {repo_id}", run, kind="models-remove", uses_session=False)
        return self._start(job, done, "Remove")
