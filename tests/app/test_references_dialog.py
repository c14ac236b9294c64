"""File ▸ References pipeline…: Translate run from the dialog with a tiny random Marian
stores silver references with their provenance, through the window's job bar; the step's
line says what it did; quality estimation without unbabel-comet says so and stores
nothing; a form that cannot run says why and starts nothing; the choices come back."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from sqlalchemy import func, select

from app.gui import build_window
from core.desktop.dialog_memory import DialogMemory
from core.references.dialog_state import ReferencesState
from core.references.qe import comet_installed
from core.store import SessionStore
from core.store.models import ReferenceDerivation, UnitReference
from tests.fixtures.gold_reference_session import GOLD_EN, seed_session

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models


@pytest.fixture
def wired(qtbot, tmp_path: Path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window, controller = build_window(settings)
    qtbot.addWidget(window)
    session = seed_session(tmp_path / "refs.taillens", it_gold=1)
    assert controller.open_session(session)
    yield controller, session, settings
    controller.shutdown()


def _run(qtbot, refs, button) -> None:
    button.click()
    assert refs.handle is not None
    qtbot.waitUntil(lambda: refs.handle.done and not refs.state.running, timeout=120_000)


@pytest.mark.slow
def test_translate_from_the_dialog_stores_silver_references_with_provenance(
    qtbot, wired, tiny_marian: Path
) -> None:
    controller, session, settings = wired
    controller.window.action_references.trigger()
    refs = controller.references
    dialog = refs.dialog
    assert dialog is not None and dialog.isVisible()

    dialog.source_combo.setCurrentText("en")
    dialog.targets_edit.setText("it, es")
    dialog.translate_model_combo.setEditText(str(tiny_marian))
    dialog.translate_batch_spin.setValue(2)
    dialog.beams_spin.setValue(1)
    dialog.max_tokens_spin.setValue(8)
    assert refs.state.targets == "it, es" and refs.state.beams == 1
    assert not dialog.translate_server_edit.isVisibleTo(dialog)  # a folder, not a URL
    _run(qtbot, refs, dialog.translate_button)

    # u1 already has a gold Italian reference: 2 into Italian, 3 into Spanish.
    line = dialog.translate_status.text()
    assert "en→it 2 translated" in line and "en→es 3 translated" in line and "marian" in line
    with SessionStore.open_read_only(session) as store, store.snapshot() as db:
        rows = db.execute(
            select(
                ReferenceDerivation.source_reference_id,
                ReferenceDerivation.model,
                ReferenceDerivation.parameters,
                UnitReference.quality,
                UnitReference.lang,
                UnitReference.provenance,
            ).join(UnitReference, UnitReference.id == ReferenceDerivation.reference_id)
        ).all()
        sources = dict(
            db.execute(
                select(UnitReference.id, UnitReference.text).where(
                    UnitReference.lang == "en", UnitReference.quality == "gold"
                )
            ).all()
        )
    assert len(rows) == 5
    for source_id, model, parameters, quality, lang, provenance in rows:
        assert quality == "silver" and lang in ("it", "es")
        assert sources[source_id] in GOLD_EN
        assert model == str(tiny_marian.resolve()) and parameters["num_beams"] == 1
        assert parameters["max_new_tokens"] == 8
        assert f"reference {source_id}" in provenance

    # Run again: the same core job resumes, so nothing is translated twice.
    _run(qtbot, refs, dialog.translate_button)
    assert "en→it 0 translated (2 already were)" in dialog.translate_status.text()

    # The choices come back in a dialog opened later (DialogMemory, as the Score dialog).
    again = ReferencesState()
    again.restore(DialogMemory(settings, "references").load())
    assert again.targets == "it, es" and again.translate_model == str(tiny_marian)
    assert again.beams == 1 and again.translate_batch == 2


def test_a_form_that_cannot_run_says_why_and_qe_without_comet_says_so(qtbot, wired) -> None:
    controller, session, _settings = wired
    errors: list[str] = []
    controller.window.show_error = lambda title, message, details="": errors.append(message)
    dialog = controller.references.open_dialog()
    assert dialog is not None
    refs = controller.references

    dialog.targets_edit.setText("it")
    dialog.translate_model_combo.setEditText("")
    dialog.translate_button.click()
    assert refs.handle is None and errors and "translation model" in errors[-1]
    assert dialog.translate_status.text().startswith("Not run: ")

    dialog.translate_model_combo.setEditText("http://127.0.0.1:9/v1")
    assert dialog.translate_server_edit.isVisibleTo(dialog)  # a URL asks for its model

    if comet_installed():
        pytest.skip("unbabel-comet is installed here")
    assert "unbabel-comet is not installed" in dialog.qe_note.text()
    _run(qtbot, refs, dialog.qe_button)
    assert dialog.qe_status.text().startswith("Nothing scored: unbabel-comet is not installed")
    with SessionStore.open_read_only(session) as store, store.snapshot() as db:
        scored = db.scalar(
            select(func.count())
            .select_from(ReferenceDerivation)
            .where(ReferenceDerivation.qe_model.is_not(None))
        )
    assert scored == 0
