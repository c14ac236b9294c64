"""What the Models dialog shows (Qt-free): the models on this machine, the model asked
for with its size on the hub, a pull's progress, and one line saying what happened.

``app/models.py`` writes it from its jobs (``core.local_models.hub``); ``widgets/models_dialog.py``
renders it and emits the user's requests. Tests drive it without a window.
"""

from __future__ import annotations

from typing import Any

from core.local_models.hub import LocalModel, PullPlan, PullResult
from core.local_models.loader import human_size
from core.state import Field, State

IDLE, PLANNING, PULLING, REMOVING = "", "planning", "pulling", "removing"


class ModelsState(State):
    models: Field[tuple[LocalModel, ...]] = Field(())
    repo_id: Field[str] = Field("")
    revision: Field[str] = Field("")
    plan: Field[PullPlan | None] = Field(None)
    busy: Field[str] = Field(IDLE)
    progress: Field[tuple[float, float | None, str] | None] = Field(None)
    message: Field[str] = Field("")
    failed: Field[bool] = Field(False)

    def ask(self, repo_id: str, revision: str = "") -> None:
        """The user named a model: what was known about another one is dropped."""
        repo_id, revision = repo_id.strip(), revision.strip()
        with self.batch():
            if (repo_id, revision) != (self.repo_id, self.revision):
                self.plan = None
            self.repo_id, self.revision = repo_id, revision

    def started(self, busy: str, words: str) -> None:
        self.update(busy=busy, progress=None, message=words, failed=False)

    def planned(self, plan: PullPlan) -> None:
        self.update(busy=IDLE, plan=plan, message=plan.describe(), failed=False)

    def progressed(self, done: float, total: float | None, words: str) -> None:
        self.progress = (done, total, words)

    def pulled(self, result: PullResult, models: tuple[LocalModel, ...]) -> None:
        speed = f" at {human_size(int(result.bytes_per_s))}/s" if result.downloaded_bytes else ""
        resumed = result.resumed_bytes
        resumed_words = f" (resumed from {human_size(resumed)})" if resumed else ""
        self.update(
            busy=IDLE,
            models=models,
            plan=None,
            message=f"Pulled {result.repo_id}: {human_size(result.downloaded_bytes)}"
            f"{speed}{resumed_words}",
            failed=False,
        )

    def ended(self, message: str, *, failed: bool, **values: Any) -> None:
        """A job that failed or was cancelled, or a remove that finished."""
        self.update(busy=IDLE, message=message, failed=failed, **values)

    @property
    def can_pull(self) -> bool:
        return self.busy == IDLE and "/" in self.repo_id
