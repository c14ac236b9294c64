"""File ▸ Models…: the dialog lists the models here, reads a model's size on the hub,
pulls it with progress (cancel, then resume), refuses a gated one in one line, removes
one; against the local hub of tests/fixtures/hub_server.py."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from app.gui import build_window
from core.local_models.catalog_state import IDLE
from tests.fixtures.hub_server import REPO, FakeHub


def test_the_models_dialog_pulls_cancels_resumes_refuses_and_removes(
    qtbot, fake_hub: FakeHub, tmp_path: Path, monkeypatch
) -> None:
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    failures: list[str] = []
    monkeypatch.setattr(
        window, "show_job_failure", lambda title, message, details="": failures.append(message)
    )
    try:
        window.action_models.trigger()
        models = controller.models
        dialog, state = models.dialog, models.state
        assert dialog is not None and dialog.isVisible()
        assert not dialog.pull_button.isEnabled()

        qtbot.keyClicks(dialog.repo_edit, REPO)
        assert state.repo_id == REPO and dialog.pull_button.isEnabled()
        dialog.check_button.click()
        qtbot.waitUntil(lambda: state.plan is not None, timeout=30_000)
        assert "7 files" in dialog.message_label.text()
        assert "to download" in dialog.message_label.text()

        # Pull slowly, cancel once bytes arrive: what arrived is kept.
        fake_hub.delay_s = 0.02
        dialog.pull_button.click()
        assert dialog.cancel_button.isEnabled() and not dialog.repo_edit.isEnabled()
        qtbot.waitUntil(
            lambda: state.progress is not None and state.progress[0] > 300_000, timeout=30_000
        )
        assert "/s, " in state.progress[2]
        assert dialog.progress_bar.isVisible() and " left" in dialog.progress_label.text()
        dialog.cancel_button.click()
        qtbot.waitUntil(lambda: state.busy == IDLE, timeout=30_000)
        assert "cancelled" in dialog.message_label.text()

        fake_hub.delay_s = 0.0
        dialog.pull_button.click()
        qtbot.waitUntil(lambda: state.busy == IDLE, timeout=60_000)
        assert dialog.message_label.text().startswith(f"Pulled {REPO}")
        assert "resumed from" in dialog.message_label.text()
        assert [m.name for m in state.models] == [REPO]
        assert dialog.table.item(0, 1).text() == "causal"
        assert dialog.table.item(0, 3).text() == "en, it, es"

        # A gated model: one line, in the dialog and in the window's message.
        dialog.repo_edit.clear()
        qtbot.keyClicks(dialog.repo_edit, "org/gated")
        dialog.pull_button.click()
        qtbot.waitUntil(lambda: state.busy == IDLE, timeout=30_000)
        assert state.failed and "org/gated is gated" in dialog.message_label.text()
        assert "HF_TOKEN" in dialog.message_label.text() and failures

        # Remove the pulled one (the user confirms).
        dialog.table.selectRow(0)
        assert dialog.remove_button.isEnabled()
        monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
        dialog.remove_button.click()
        qtbot.waitUntil(lambda: state.busy == IDLE and not state.models, timeout=30_000)
        assert "freed" in dialog.message_label.text() and dialog.table.rowCount() == 0
    finally:
        controller.shutdown()
