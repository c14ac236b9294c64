"""The Edit menu over the session's undo stack (app/edits.py), driven in the window:
tier changes in the Browser and ratings in Annotate are undone and redone, an undone
correction comes back on redo, undo after reopening, undo refused after another change,
the panel of the change raised, the message with Undo, and the History view."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt

from app.gui import build_window
from core.annotation import Rating, rating_of, save_rating
from core.edits import history
from core.store import SessionStore
from core.tiers.stored import load_tier_settings
from tests.fixtures import browser_window
from tests.fixtures.annotate_panel import activate, choose, settle
from tests.fixtures.jobs import is_fetch
from tests.fixtures.reads import settle_reads
from tests.fixtures.report_session import ReportSession, build_report_session

wired = browser_window.wired  # registers the fixture here
CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def landed(qtbot, controller) -> None:
    """Every write asked for has landed and every view read arrived."""
    qtbot.waitUntil(lambda: controller.writer.idle and not controller.undo.busy, timeout=20_000)
    settle_reads(qtbot, controller)


def test_a_tier_change_is_undone_and_redone_from_the_edit_menu(qtbot, wired) -> None:
    window, controller, browser = wired
    panel = browser.panel
    panel.category_combo.setCurrentText("Food")
    settle_reads(qtbot, controller)
    panel.limit_spin.setValue(200)
    with qtbot.waitSignal(controller.runner.job_finished, timeout=30_000, check_params_cb=is_fetch):
        panel.fetch_button.click()
    settle_reads(qtbot, controller)
    landed(qtbot, controller)
    first = controller.store.get_meta("tiers:Food")  # None: never saved

    panel.split_combo.setCurrentIndex(1)  # head–tail threshold
    panel.fraction_spin.setValue(0.3)
    qtbot.waitUntil(
        lambda: load_tier_settings(controller.store, "Food").fraction == 0.3, timeout=10_000
    )
    landed(qtbot, controller)
    assert window.action_undo.isEnabled()
    assert window.action_undo.text().startswith("&Undo the tiers of Food")
    assert not window.action_redo.isEnabled()
    # The change was announced, with an Undo button in the message.
    assert window.last_message.text().startswith("Saved: the tiers of Food")
    assert [b.text() for b in window.last_message.action_buttons] == ["Undo"]

    # Undo until the settings are those from before the change (a drag may save twice).
    while controller.store.get_meta("tiers:Food") != first:
        assert window.action_undo.isEnabled()
        window.action_undo.trigger()
        landed(qtbot, controller)
    shown = load_tier_settings(controller.store, "Food", controller.preferences.tier_settings())
    assert panel.split_combo.currentData() == shown.split_by == "pareto"  # the panel too
    assert window.action_redo.isEnabled()
    assert window.action_redo.text().startswith("&Redo the tiers of Food")
    undone = [e for e in history(controller.store, kinds=["tiers"]) if e.status == "undone"]
    assert undone and all(e.source == "gui" for e in undone)

    while window.action_redo.isEnabled():
        window.action_redo.trigger()
        landed(qtbot, controller)
    assert load_tier_settings(controller.store, "Food").fraction == 0.3
    assert panel.split_combo.currentData() == "head_tail"
    assert panel.fraction_spin.value() == 0.3


# -- Annotate --------------------------------------------------------------------------


@pytest.fixture
def built(tmp_path: Path) -> ReportSession:
    return build_report_session(tmp_path / "a.taillens", scores=False)


@pytest.fixture
def annotate(qtbot, built: ReportSession, tmp_path: Path):
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(built.path)
    settle(controller.annotate.panel)
    yield window, controller, controller.annotate.panel
    controller.shutdown()


def rate_u4_with_a_correction(qtbot, controller, panel) -> None:
    choose(panel, "ana")
    panel.blind_check.setChecked(False)
    panel.model_combo.setCurrentIndex(panel.model_combo.findData("model-a"))
    panel.lang_combo.setCurrentIndex(panel.lang_combo.findData("en"))
    panel.build_button.click()
    settle(panel)
    assert "unit u4" in panel.meta_label.text()
    qtbot.keyClick(panel, "2")
    qtbot.keyClick(panel, "n")
    panel.blame_checks["object"].setChecked(True)
    panel.correction_edit.setPlainText("u4, corrected.")
    qtbot.keyClick(panel.correction_edit, Qt.Key.Key_Return, CTRL)
    landed(qtbot, controller)


def test_an_undone_correction_comes_back_on_redo(qtbot, annotate, built) -> None:
    window, controller, panel = annotate
    activate(qtbot, window)
    rate_u4_with_a_correction(qtbot, controller, panel)
    ana, u4 = built.annotators["ana"], built.verbalisations[("model-a", "u4", "en")]
    assert rating_of(controller.store, ana, u4).corrected_text == "u4, corrected."
    assert window.action_undo.text() == "&Undo ana's rating of verbalisation " + (
        f"{u4} (fluency 2, adequacy 1, a correction)"
    )

    qtbot.keyClick(panel, Qt.Key.Key_Escape)
    qtbot.keyClick(panel, Qt.Key.Key_Z, CTRL)
    landed(qtbot, controller)
    assert rating_of(controller.store, ana, u4) is None
    assert panel.correction_edit.toPlainText() == "u4, corrected."  # back in the form
    assert "4 / 7" in panel.progress_label.text()

    # Ctrl+Shift+Z is redo (it once undid another rating): the rating and its
    # correction are in the session again, and nothing else was undone.
    rated_before = {
        r.item
        for r in [rating_of(controller.store, ana, v) for v in built.verbalisations.values()]
        if r is not None
    }
    qtbot.keyClick(panel, Qt.Key.Key_Z, CTRL | SHIFT)
    landed(qtbot, controller)
    back = rating_of(controller.store, ana, u4)
    assert back is not None and back.corrected_text == "u4, corrected." and back.fluency == 2
    rated_after = {
        r.item
        for r in [rating_of(controller.store, ana, v) for v in built.verbalisations.values()]
        if r is not None
    }
    assert rated_after == rated_before | {back.item}
    assert "5 / 7" in panel.progress_label.text()
    assert not window.action_redo.isEnabled()


def test_undo_is_refused_after_another_change_and_raises_the_panel(
    qtbot, annotate, built, monkeypatch
) -> None:
    window, controller, panel = annotate
    rate_u4_with_a_correction(qtbot, controller, panel)
    ana, u4 = built.annotators["ana"], built.verbalisations[("model-a", "u4", "en")]

    # Undo from another panel raises Annotate, where the rating was made.
    raised: list[str] = []
    monkeypatch.setattr(window, "raise_panel", raised.append)
    window.action_undo.trigger()
    landed(qtbot, controller)
    assert raised == ["annotate"]
    window.action_redo.trigger()
    landed(qtbot, controller)

    # Another window (another store on the same file) changes the rating.
    with SessionStore.open(built.path) as other:
        save_rating(other, ana, u4, Rating(fluency=5), source="another window")
    window.action_undo.trigger()
    landed(qtbot, controller)
    assert "another change overwrote it" in window.last_message.text()
    assert rating_of(controller.store, ana, u4).fluency == 5  # nothing reverted
    assert not window.action_undo.isEnabled()


def test_the_latest_edits_can_be_undone_after_reopening(qtbot, built, tmp_path) -> None:
    ana, u4 = built.annotators["ana"], built.verbalisations[("model-a", "u4", "en")]
    with SessionStore.open(built.path) as store:
        save_rating(store, ana, u4, Rating(fluency=1, corrected_text="Earlier."))
    window, controller = build_window(
        QSettings(str(tmp_path / "r.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    try:
        assert controller.open_session(built.path)
        landed(qtbot, controller)
        assert window.action_undo.isEnabled()
        assert "ana's rating of verbalisation" in window.action_undo.text()
        window.action_undo.trigger()
        landed(qtbot, controller)
        assert rating_of(controller.store, ana, u4) is None

        # The History view lists it, filtered by kind and annotator.
        dialog = controller.history.open()
        settle_reads(qtbot, controller)
        assert dialog.table.rowCount() == 1
        assert dialog.table.item(0, 5).text() == "undone"
        dialog.kind_combo.setCurrentIndex(dialog.kind_combo.findData("tiers"))
        settle_reads(qtbot, controller)
        assert dialog.table.rowCount() == 0
        dialog.kind_combo.setCurrentIndex(0)
        dialog.annotator_edit.setText("ana")
        dialog.ask()
        settle_reads(qtbot, controller)
        assert dialog.table.rowCount() == 1 and dialog.table.item(0, 2).text() == "ana"
        dialog.close()
    finally:
        controller.shutdown()


def test_a_synonym_added_in_the_dialog_is_undone_from_the_edit_menu(qtbot, tmp_path) -> None:
    from core.metrics.esa import synonyms
    from tests.fixtures.scoring_session import build_session

    path = tmp_path / "s.taillens"
    build_session(path)
    window, controller = build_window(
        QSettings(str(tmp_path / "e.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    try:
        assert controller.open_session(path)
        panel = controller.scores.panel
        panel.synonyms_button.click()
        dialog = panel.synonym_dialog
        landed(qtbot, controller)
        starter = len(dialog.rows())
        dialog.entity_edit.setText("Rome")
        dialog.synonym_edit.setText("the Eternal City")
        dialog.add_button.click()
        landed(qtbot, controller)
        assert window.action_undo.text() == "&Undo the synonym 'the Eternal City' of 'Rome' added"
        window.action_undo.trigger()
        landed(qtbot, controller)
        assert ("Rome", "the Eternal City", "") not in synonyms.synonym_rows(controller.store)
        assert len(dialog.rows()) == starter  # the dialog shows the table as it is now
        window.action_redo.trigger()
        landed(qtbot, controller)
        assert ("Rome", "the Eternal City", "", "user") in dialog.rows()
        dialog.close()
    finally:
        controller.shutdown()


def test_words_for_a_stored_unit_are_undone_from_the_edit_menu(qtbot, tmp_path) -> None:
    from core.units.builder.draft import UnitDraft
    from core.units.builder.render import render_unit
    from core.units.builder.saved import load_unit, save_unit
    from core.vocab import LANGUAGES
    from tests.fixtures.rome_italy_details import DETAILS, ITALY_CURRENCY, ROME_COUNTRY

    path = tmp_path / "u.taillens"
    with SessionStore.create(path) as store:
        draft = UnitDraft("Q220").add(ROME_COUNTRY).add(ITALY_CURRENCY)
        unit_id = save_unit(store, draft, render_unit(draft, DETAILS), source="test")
    window, controller = build_window(
        QSettings(str(tmp_path / "u.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    try:
        assert controller.open_session(path)
        landed(qtbot, controller)
        units, panel = controller.units, controller.units.panel
        units.show_unit(unit_id)
        landed(qtbot, controller)
        es = LANGUAGES.index("es")
        panel.override_requested.emit("es", 0, "object", "Italia", False)
        landed(qtbot, controller)
        assert "Italia" in panel.triples_model.item(0, es).text()
        assert window.action_undo.text().startswith(
            f"&Undo the words for the object of triple 1 of unit {unit_id}"
        )

        window.action_undo.trigger()
        landed(qtbot, controller)
        assert load_unit(controller.store, unit_id).triples["es"][0].object_override is None
        qtbot.waitUntil(lambda: "Italia" not in panel.triples_model.item(0, es).text())
        window.action_redo.trigger()
        landed(qtbot, controller)
        qtbot.waitUntil(lambda: "Italia" in panel.triples_model.item(0, es).text())
        assert [e.source for e in history(controller.store, unit_id=unit_id)] == ["gui"]
    finally:
        controller.shutdown()


def test_every_registered_dialog_takes_the_windows_undo_and_redo(qtbot, tmp_path) -> None:
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtWidgets import QApplication

    from app.dialogs import DIALOGS, open_dialog
    from app.gui import build_window
    from widgets.dialogs import FittedDialog

    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(tmp_path / "d.taillens", create=True)
    qtbot.waitUntil(lambda: not controller.reads.pending(), timeout=20_000)
    missing = []
    for name in DIALOGS:
        dialog = open_dialog(controller, name)
        if dialog.window() is window or not isinstance(dialog, FittedDialog):
            dialog.close()
            continue  # inside the window (its shortcuts), or a message box (About)
        # Ctrl+Z and Ctrl+Shift+Z / Ctrl+Y in the dialog's own window reach the stack.
        if not {window.action_undo, window.action_redo} <= set(dialog.actions()):
            missing.append(name)
        dialog.close()
    assert missing == []

    # And the key itself: Ctrl+Z pressed in the synonym dialog's own window reaches the
    # window's Undo (enabled here by hand: the test needs no edit to route the key).
    window.show()
    qtbot.waitExposed(window)
    pressed: list[bool] = []
    window.action_undo.setEnabled(True)
    window.action_undo.triggered.connect(lambda *_a: pressed.append(True))
    dialog = open_dialog(controller, "synonyms")
    dialog.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dialog, timeout=5_000)
    qtbot.keyClick(dialog, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert pressed == [True]
    dialog.close()
    controller.shutdown()
