"""The Verbalise panel's Train dialog: a real training as a job, the model then listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.gui import build_window
from tests.fixtures.train_data import build_webnlg_model, build_webnlg_session
from tests.shared_data import ENRICHED_DEV, needs

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = [needs(*ENRICHED_DEV), pytest.mark.loads_models]


@pytest.fixture(scope="module")
def webnlg(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("webnlg-gui")
    session = build_webnlg_session(folder / "webnlg.taillens")
    return session, build_webnlg_model(session, folder / "tiny-t5")


@pytest.fixture
def wired(qtbot, tmp_path: Path, webnlg: tuple[Path, Path]):
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(webnlg[0])
    yield controller
    controller.shutdown()


@pytest.mark.slow
def test_train_from_the_dialog_then_the_model_is_in_verbalise(
    qtbot, wired, webnlg: tuple[Path, Path], tmp_path: Path
) -> None:
    controller = wired
    verbalise = controller.verbalise
    panel = verbalise.panel
    panel.model_form.train_button.click()
    train = verbalise.train
    dialog = train.dialog
    assert dialog is not None and dialog.isVisible()
    assert not dialog.start_button.isEnabled() and "start from" in dialog.problem_label.text()
    dialog.base_combo.setEditText(str(webnlg[1]))
    out = tmp_path / "trained"
    dialog.out_edit.setText(str(out))
    dialog.max_steps.setValue(4)
    dialog.eval_every.setValue(2)
    dialog.batch_size.setValue(8)
    dialog.num_beams.setValue(1)
    dialog.max_new_tokens.setValue(8)
    dialog.device.setCurrentText("cpu")
    assert train.state.max_steps == 4 and train.state.device == "cpu"
    assert dialog.sampling.currentData() == "wdv" and train.state.sampling == "wdv"
    dialog.sampling.setCurrentIndex(dialog.sampling.findData("all"))
    assert train.state.settings().sampling == "all"
    assert train.state.settings().max_new_tokens == 8
    assert dialog.start_button.isEnabled()
    dialog.start_button.click()
    assert train.state.phase == "running" and not dialog.out_edit.isEnabled()
    qtbot.waitUntil(lambda: train.handle is not None and train.handle.done, timeout=120_000)
    qtbot.waitUntil(lambda: train.state.phase == "done", timeout=10_000)
    assert "Trained 4 steps" in dialog.status_label.text()
    assert (out / "config.json").is_file()
    record = json.loads((out / "taillens-training.json").read_text(encoding="utf-8"))
    assert record["settings"]["sampling"] == "all"
    qtbot.waitUntil(
        lambda: any(m.path.resolve() == out.resolve() for m in verbalise.models), timeout=10_000
    )
    # Starting again into the finished folder is refused with a message, not a job.
    errors: list[str] = []
    controller.window.show_error = lambda title, message, details="": errors.append(message)
    train.start()
    assert errors and "already holds a model" in errors[0]
