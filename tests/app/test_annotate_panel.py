"""The Annotate panel on a real session: annotator, queue, keyboard flow, undo,
corrections promoted to gold references, reference errors, agreement, remembered state."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtWidgets import QApplication, QInputDialog

from app.annotate import QUEUE_READ, AnnotateController
from app.gui import build_window
from core.annotation import aggregate_annotations, list_annotators, rating_of
from core.store import SessionStore
from core.store.models import UnitReference
from tests.fixtures.annotate_panel import activate, choose, settle
from tests.fixtures.report_session import ReportSession, build_report_session
from widgets.annotate import diff_html

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def built(tmp_path: Path) -> ReportSession:
    return build_report_session(tmp_path / "a.taillens", scores=False)


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def wired(qtbot, built: ReportSession, settings: QSettings):
    window, controller = build_window(settings)
    qtbot.addWidget(window)
    assert controller.open_session(built.path)
    settle(controller.annotate.panel)  # the annotators are a view read
    yield window, controller, controller.annotate, controller.annotate.panel
    controller.shutdown()


def wait_for_queue(panel) -> None:
    """The queue is built off the UI thread (a view read, app.session_io), after the
    annotators are read at session open: wait until it has arrived (bounded)."""
    settle(panel)
    assert not panel.findChild(AnnotateController).ctx.reads.pending(QUEUE_READ)


def queue_of(panel, model: str = "model-a", lang: str = "en", blind: bool = False) -> None:
    panel.blind_check.setChecked(blind)  # on by default; these tests read the session's order
    panel.model_combo.setCurrentIndex(panel.model_combo.findData(model))
    panel.lang_combo.setCurrentIndex(panel.lang_combo.findData(lang))
    panel.build_button.click()
    wait_for_queue(panel)


def test_choose_or_create_the_annotator(wired, monkeypatch) -> None:
    window, controller, annotate, panel = wired
    names = [panel.annotator_combo.itemText(i) for i in range(panel.annotator_combo.count())]
    assert names == ["Choose…", "ana", "ben", "cleo", "dora", "New annotator…"]
    assert "No annotator chosen" in panel.who_label.text()
    assert not panel.build_button.isEnabled()

    choose(panel, "ben")
    assert panel.who_label.text() == "Annotating as <b>ben</b>"
    assert annotate.annotator_id == controller.annotate.annotator_id
    # The filter offers what the session holds.
    combo = panel.model_combo
    assert [combo.itemData(i) for i in range(combo.count())] == [None, "model-a", "model-b"]
    assert panel.tier_combo.findData("long_tail_es") > 0

    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("  Zoë  Rossi ", True))
    panel.annotator_combo.activated.emit(panel.annotator_combo.findData("new"))
    settle(panel)
    assert panel.who_label.text() == "Annotating as <b>Zoë Rossi</b>"
    assert "Zoë Rossi" in [a.name for a in list_annotators(controller.store)]

    # A name already used is refused with a message; whoever was chosen stays.
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("ana", True))
    panel.annotator_combo.activated.emit(panel.annotator_combo.findData("new"))
    settle(panel)
    assert "already an annotator named 'ana'" in window.last_message.text()
    assert panel.who_label.text() == "Annotating as <b>Zoë Rossi</b>"


def test_keyboard_flow_saves_moves_on_and_undoes(qtbot, wired, built) -> None:
    window, controller, annotate, panel = wired
    choose(panel, "ana")
    queue_of(panel)
    # ana rated u1, u2, u3, u5, u6 of model-a's English texts: u4, u7, u8 are left.
    assert [item.unit_uid for item in annotate.queue.items] == ["u4", "u7", "u8"]
    assert "4 / 7" in panel.progress_label.text()  # her earlier ratings count
    assert "unit u4" in panel.meta_label.text() and "model-a" in panel.meta_label.text()
    assert panel.text_label.text() == "u4 en text by model-a."
    assert "country" in panel.triples_label.text() and "Italy" in panel.triples_label.text()
    assert panel.taxonomy_box.isHidden()  # a model output, not a reference

    ana, u4 = built.annotators["ana"], built.verbalisations[("model-a", "u4", "en")]
    qtbot.keyClick(panel, "4")
    qtbot.keyClick(panel, "y")
    assert panel.fluency() == 4 and panel.adequacy() == 0
    assert not panel.blame_box.isEnabled()
    assert rating_of(controller.store, ana, u4) is None  # nothing saved before Enter
    qtbot.keyClick(panel, Qt.Key.Key_Return)
    saved = rating_of(controller.store, ana, u4)
    assert (saved.fluency, saved.adequacy, saved.blame) == (4, 0, None)
    assert "5 / 7" in panel.progress_label.text()
    assert "unit u7" in panel.meta_label.text() and panel.fluency() is None

    qtbot.keyClick(panel, "n")
    assert panel.blame_box.isEnabled()
    qtbot.keyClick(panel, "s")
    assert panel.adequacy() == 2 and panel.blame_box.isEnabled()

    qtbot.keyClick(panel, Qt.Key.Key_Z, CTRL)
    assert rating_of(controller.store, ana, u4) is None
    assert "4 / 7" in panel.progress_label.text()
    assert "unit u4" in panel.meta_label.text()  # back on the undone item
    # The undone rating is back in the form, for editing; the message names the item
    # as the screen does.
    assert panel.fluency() == 4 and panel.adequacy() == 0
    assert "item 1 of 3" in panel.meta_label.text()
    assert "item 1 " in panel.message_label.text()


def test_undo_puts_the_rating_and_correction_back_for_editing(qtbot, wired, built) -> None:
    window, controller, annotate, panel = wired
    activate(qtbot, window)
    choose(panel, "ana")
    queue_of(panel)
    ana = built.annotators["ana"]
    qtbot.keyClick(panel, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)  # skip u4
    assert "item 2 of 3" in panel.meta_label.text()
    u7 = built.verbalisations[("model-a", "u7", "en")]
    qtbot.keyClick(panel, "3")
    qtbot.keyClick(panel, "n")
    panel.blame_checks["object"].setChecked(True)
    qtbot.keyClick(panel, "c")  # to the correction
    assert QApplication.focusWidget() is panel.correction_edit
    panel.correction_edit.setPlainText("u7 en text, corrected.")
    qtbot.keyClick(panel.correction_edit, Qt.Key.Key_Return, CTRL)
    assert rating_of(controller.store, ana, u7).corrected_text == "u7 en text, corrected."
    assert "item 3 of 3" in panel.meta_label.text()

    panel.undo_button.click()
    assert rating_of(controller.store, ana, u7) is None  # undone in the session…
    assert "item 2 of 3" in panel.meta_label.text()
    assert "item 2 " in panel.message_label.text()
    # …and back in the form, to edit and save again.
    assert (panel.fluency(), panel.adequacy()) == (3, 1)
    assert panel.blame_checks["object"].isChecked()
    assert panel.correction_edit.toPlainText() == "u7 en text, corrected."
    # Keys back to the panel (Esc) before rating: focus may still be in the correction box
    # after Ctrl+Enter (an Annotate defect of its own, not what this test checks).
    qtbot.keyClick(panel.correction_edit, Qt.Key.Key_Escape)
    qtbot.keyClick(panel, "2")
    qtbot.keyClick(panel, Qt.Key.Key_Return)
    saved = rating_of(controller.store, ana, u7)
    assert (saved.fluency, saved.corrected_text) == (2, "u7 en text, corrected.")


def test_keys_for_back_skip_blame_and_correction(qtbot, wired, built) -> None:
    window, controller, annotate, panel = wired
    choose(panel, "ana")
    queue_of(panel)
    alt = Qt.KeyboardModifier.AltModifier
    qtbot.keyClick(panel, Qt.Key.Key_Right, alt)
    assert "unit u7" in panel.meta_label.text()
    qtbot.keyClick(panel, Qt.Key.Key_Left, alt)
    assert "unit u4" in panel.meta_label.text()
    qtbot.keyClick(panel, "b")  # blame does not apply to an unrated adequacy: says so
    assert "No or Not sure" in panel.message_label.text()
    qtbot.keyClick(panel, "n")
    activate(qtbot, window)
    qtbot.keyClick(panel, "b")
    assert panel.blame_box.isAncestorOf(QApplication.focusWidget())
    qtbot.keyClick(panel, "c")
    editor = panel.correction_edit
    assert QApplication.focusWidget() is editor
    # In the correction box, letters are text; Esc gives the keys back to the panel.
    qtbot.keyClicks(editor, " now s")
    assert panel.adequacy() == 1
    assert editor.toPlainText().endswith(" now s")
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    qtbot.keyClick(panel, "s")
    assert panel.adequacy() == 2
    # Every key is named in the UI.
    tips = " ".join(
        b.toolTip()
        for b in (panel.back_button, panel.skip_button, panel.undo_button, panel.save_button)
    )
    for key in ("Alt+←", "Alt+→", "Ctrl+Z", "Enter"):
        assert key in tips
    assert "(B)" in panel.blame_box.title()


def test_choosing_no_does_not_move_the_correction_field(qtbot, wired) -> None:
    window, controller, annotate, panel = wired
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    window.raise_panel("annotate")
    choose(panel, "ana")
    queue_of(panel)

    def settled_position():
        # Layouts settle over a few event-loop passes: read until three agree.
        seen = []
        for _ in range(200):
            QApplication.processEvents()
            seen.append(panel.correction_edit.mapTo(panel, QPoint(0, 0)))
            if len(seen) >= 3 and seen[-1] == seen[-2] == seen[-3]:
                return seen[-1]
        raise AssertionError(f"layout never settled: {seen[-5:]}")

    before = settled_position()
    assert panel.blame_box.isVisible() and not panel.blame_box.isEnabled()
    blame_height = panel.blame_box.height()
    qtbot.keyClick(panel, "n")
    after = settled_position()
    assert panel.adequacy() == 1 and panel.blame_box.isEnabled()
    assert panel.blame_box.height() == blame_height
    assert before == after


def test_blame_and_validation_errors(qtbot, wired, built) -> None:
    window, controller, annotate, panel = wired
    choose(panel, "ana")
    queue_of(panel)
    ana, u4 = built.annotators["ana"], built.verbalisations[("model-a", "u4", "en")]
    qtbot.keyClick(panel, "2")
    qtbot.keyClick(panel, "n")
    panel.blame_checks["other"].setChecked(True)
    qtbot.keyClick(panel, Qt.Key.Key_Return)
    # Core refuses "other" without words: a message, no crash, nothing saved, same item.
    assert "needs a few words" in panel.message_label.text()
    assert rating_of(controller.store, ana, u4) is None and "unit u4" in panel.meta_label.text()

    qtbot.keyClicks(panel.blame_other, "wrong year")
    panel.blame_checks["subject"].setChecked(True)
    panel.blame_checks["object"].setChecked(True)
    qtbot.keyClick(panel, Qt.Key.Key_Return)
    saved = rating_of(controller.store, ana, u4)
    assert (saved.fluency, saved.adequacy) == (2, 1)
    assert (saved.blame, saved.blame_other) == ("subject+object+other", "wrong year")
    assert saved.checks is None  # checks untouched are not recorded


def test_typing_in_text_fields_is_not_a_shortcut(qtbot, wired, built) -> None:
    window, controller, annotate, panel = wired
    choose(panel, "ana")
    queue_of(panel)
    qtbot.keyClick(panel, "2")
    editor = panel.correction_edit
    editor.setPlainText("u4 en text by model-a.")
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(editor, " 5 y n")
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # a new line in the editor, not a save
    qtbot.keyClick(panel, "n")
    panel.blame_checks["other"].setChecked(True)
    qtbot.keyClicks(panel.blame_other, "34 y")
    assert panel.fluency() == 2 and panel.adequacy() == 1
    assert editor.toPlainText() == "u4 en text by model-a. 5 y n\n"
    assert "4 / 7" in panel.progress_label.text()
    assert "5 y n" in panel.diff_view.toHtml()
    assert panel.blame_other.text() == "34 y"
    # The checks are recorded once touched.
    panel.check_boxes["fluent_natural"].click()
    # Ctrl+Enter saves from the editor, with the correction.
    qtbot.keyClick(editor, Qt.Key.Key_Return, CTRL)
    saved = rating_of(
        controller.store, built.annotators["ana"], built.verbalisations[("model-a", "u4", "en")]
    )
    assert saved.fluency == 2 and saved.corrected_text == "u4 en text by model-a. 5 y n"
    assert saved.checks == {
        "fluent_natural": True,
        "all_and_only_information": False,
        "no_spelling_grammar_errors": False,
    }
    assert "5 / 7" in panel.progress_label.text()


def test_promote_a_correction_to_a_gold_reference(qtbot, wired, built) -> None:
    window, controller, annotate, panel = wired
    choose(panel, "ben")
    queue_of(panel)
    assert not panel.promote_button.isEnabled()  # nothing corrected yet
    item = annotate.queue[panel.index]
    panel.correction_edit.setPlainText("Entity 4 lies in Italy.")
    assert panel.promote_button.isEnabled()
    qtbot.keyClick(panel, "5")
    qtbot.keyClick(panel, "y")
    panel.promote_button.click()
    assert "Gold reference" in panel.message_label.text()
    with SessionStore.open(built.path) as store, store.unit_of_work() as db:
        ref = db.query(UnitReference).filter_by(text="Entity 4 lies in Italy.").one()
        assert (ref.quality, ref.unit_id, ref.lang) == ("gold", item.unit_id, "en")
        assert ref.created_by == built.annotators["ben"]
        assert ref.source_verbalisation_id == item.ref.id
        assert "correction by ben" in ref.provenance
    saved = rating_of(controller.store, built.annotators["ben"], item.ref)
    assert saved.fluency == 5 and saved.corrected_text == "Entity 4 lies in Italy."


def test_reference_errors_for_silver_texts(qtbot, wired, built) -> None:
    window, controller, annotate, panel = wired
    choose(panel, "cleo")
    panel.target_combo.setCurrentIndex(panel.target_combo.findText("silver references"))
    panel.lang_combo.setCurrentIndex(panel.lang_combo.findData("it"))
    panel.build_button.click()
    wait_for_queue(panel)
    assert len(annotate.queue) == 8 and "silver reference" in panel.meta_label.text()
    assert not panel.taxonomy_box.isHidden()
    assert "Entità" in panel.triples_label.text()  # the Italian triples
    panel.taxonomy_checks[("accuracy", "omission")].setChecked(True)
    panel.taxonomy_checks[("fluency", "spelling")].setChecked(True)
    first = annotate.queue[0].ref
    qtbot.keyClick(panel, "3")
    qtbot.keyClick(panel, Qt.Key.Key_Return)
    saved = rating_of(controller.store, built.annotators["cleo"], first)
    assert saved.error_taxonomy == {"accuracy": ["omission"], "fluency": ["spelling"]}


def test_agreement_tab_shows_alpha_and_golden_accuracy(qtbot, wired) -> None:
    window, controller, annotate, panel = wired
    panel.tabs.setCurrentIndex(1)
    table = panel.groups_table
    qtbot.waitUntil(lambda: table.rowCount() > 0, timeout=10_000)  # a view read
    labels = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert labels[0] == "all"
    assert {"category=City", "category=Person", "tier=head", "tier=long_tail"} <= set(labels)
    overall = aggregate_annotations(controller.store).overall
    assert table.item(0, 8).text() == f"{overall.alpha_fluency:.3f}"
    assert table.item(0, 9).text() == f"{overall.alpha_adequacy:.3f}"
    assert f"{overall.alpha_fluency:.3f}" in panel.agreement_note.text()
    assert panel.items_table.rowCount() == 5  # five rated items
    golden = {
        panel.golden_table.item(r, 0).text(): panel.golden_table.item(r, 2).text()
        for r in range(panel.golden_table.rowCount())
    }
    assert golden == {"ana": "1/1", "ben": "0/1"}  # u3 is golden with answer Yes


def test_annotator_and_queue_come_back_with_the_session(qtbot, built, settings) -> None:
    window, controller = build_window(settings)
    qtbot.addWidget(window)
    controller.open_session(built.path)
    panel = controller.annotate.panel
    choose(panel, "ana")
    queue_of(panel, lang="en")
    controller.shutdown()

    window2, controller2 = build_window(settings)
    qtbot.addWidget(window2)
    controller2.open_session(built.path)
    panel2 = controller2.annotate.panel
    wait_for_queue(panel2)
    assert panel2.who_label.text() == "Annotating as <b>ana</b>"
    assert len(controller2.annotate.queue) == 3 and "unit u4" in panel2.meta_label.text()
    assert panel2.lang_combo.currentData() == "en"
    controller2.shutdown()


def test_the_panel_hands_over_a_queue_filter_and_a_rating(wired) -> None:
    """Typed hand-offs: the filter and the form are core's own types."""
    from core.annotation import QueueFilter, Rating

    window, controller, annotate, panel = wired
    choose(panel, "ana")
    spec = panel.queue_filter()
    assert isinstance(spec, QueueFilter)
    panel.lang_combo.setCurrentIndex(panel.lang_combo.findData("en"))
    panel.golden_spin.setValue(20)
    spec = panel.queue_filter()
    assert spec.langs == ("en",) and spec.golden_rate == 0.2 and spec.target == "verbalisations"
    emitted = []
    panel.queue_requested.connect(emitted.append)
    panel.build_button.click()
    wait_for_queue(panel)
    assert emitted == [spec]
    panel.set_fluency(4)
    rating = panel.rating()
    assert isinstance(rating, Rating) and rating.fluency == 4 and rating.corrected_text is None


@pytest.mark.parametrize(
    ("remembered", "rebuilt"),
    [
        ({"langs": ["en"], "target": "verbalisations"}, True),  # as older versions wrote it
        ({"langs": ["en"], "golden_rate": "lots"}, False),  # hand-edited: ignored
        (["not", "a", "filter"], False),
    ],
)
def test_a_remembered_filter_is_read_back_or_ignored(
    qtbot, built, settings, remembered, rebuilt
) -> None:
    import hashlib
    import json

    key = "annotate/" + hashlib.sha1(str(built.path.resolve()).encode()).hexdigest()[:16]
    settings.setValue(key, json.dumps({"annotator": "ana", "filter": remembered}))
    window, controller = build_window(settings)
    qtbot.addWidget(window)
    controller.open_session(built.path)
    panel = controller.annotate.panel
    wait_for_queue(panel)
    assert panel.who_label.text() == "Annotating as <b>ana</b>"
    assert (controller.annotate.queue is not None) is rebuilt
    if rebuilt:
        assert panel.lang_combo.currentData() == "en"
    controller.shutdown()


def _cut_widgets(panel) -> list[str]:
    """Widgets of the Rate tab shown narrower than their text needs (or, for the fluency
    anchor, taller than the two lines kept for it)."""
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QAbstractButton, QGroupBox, QLabel, QScrollArea

    cut = []
    page = panel.tabs.widget(0)
    for widget in page.findChildren(QLabel) + page.findChildren(QAbstractButton):
        if not widget.isVisibleTo(page) or widget is panel.fluency_hint:
            continue
        if isinstance(widget, QLabel) and widget.wordWrap():
            continue
        # A set minimum width (the fluency buttons') lets the layout go below the size
        # hint: then the text and the style sheet's padding must fit.
        need = (
            widget.minimumSizeHint().width()
            if widget.minimumWidth() == 0
            else widget.fontMetrics().horizontalAdvance(widget.text()) + 10
        )
        if widget.width() < need:
            cut.append(widget.text())
    for box in page.findChildren(QGroupBox):
        if box.isVisibleTo(page) and box.width() < box.minimumSizeHint().width():
            cut.append(box.title())
    hint = panel.fluency_hint
    for value in range(6):
        panel.set_fluency(value)
        needed = hint.fontMetrics().boundingRect(
            QRect(0, 0, hint.width(), 10_000), Qt.TextFlag.TextWordWrap, hint.text()
        )
        if needed.height() > hint.height():
            cut.append(hint.text())
    scroll = next(a for a in page.findChildren(QScrollArea) if a.widget() is panel.item_area)
    if scroll.horizontalScrollBar().isVisible():
        cut.append("the item scrolls sideways")
    return cut


@pytest.mark.parametrize("size", [(1366, 768), (1024, 640)])
def test_no_label_is_cut_on_a_laptop_screen(qtbot, wired, size) -> None:
    """The Rate tab with an item, docked at a laptop's window size and
    floated at the panel's own minimum width, shows every label whole."""
    window, controller, annotate, panel = wired
    choose(panel, "ana")
    panel.target_combo.setCurrentIndex(panel.target_combo.findText("all references"))
    panel.build_button.click()  # references: the error taxonomy shows too
    wait_for_queue(panel)
    assert panel.index is not None and panel.taxonomy_box.isVisible() is False
    window.resize(*size)
    window.show()
    dock = window.docks["annotate"]
    dock.show()
    dock.raise_()
    qtbot.waitExposed(window)
    for _ in range(3):
        qtbot.wait(20)
    assert panel.taxonomy_box.isVisible()
    assert _cut_widgets(panel) == []
    dock.setFloating(True)
    dock.resize(panel.minimumSizeHint().width(), size[1])
    qtbot.wait(20)
    assert panel.width() == panel.minimumSizeHint().width()
    assert _cut_widgets(panel) == []


def test_the_annotator_line_wraps_rather_than_widening_the_panel(wired) -> None:
    window, controller, annotate, panel = wired
    assert "No annotator chosen" in panel.who_label.text()
    whole = panel.who_label.fontMetrics().horizontalAdvance(
        "No annotator chosen — choose who you are"
    )
    needed = whole + panel.annotator_combo.minimumSizeHint().width()
    assert panel.minimumSizeHint().width() < needed


def test_diff_marks_insertions_and_deletions() -> None:
    html = diff_html("Rome is a city in Italy.", "Rome is the capital of Italy.")
    assert "line-through'>a city in </span>" in html
    assert "underline'>the capital of </span>" in html
    assert html.startswith("Rome is <span") and html.endswith("</span>Italy.")
    assert "&lt;b&gt;" in diff_html("x", "<b>")


def test_agreement_tab_can_weight_items_by_sampling_weight(qtbot, wired) -> None:
    from sqlalchemy import select

    from core.store.models import DataUnit

    window, controller, annotate, panel = wired
    with controller.store.unit_of_work() as db:
        for unit in db.scalars(select(DataUnit)):
            weight = 9.0 if unit.uid == "u5" else 1.0  # the worst-rated item weighs most
            unit.attributes = {**(unit.attributes or {}), "record": {"sampling_weight": weight}}
    panel.tabs.setCurrentIndex(1)
    annotate.refresh_agreement()
    plain = aggregate_annotations(controller.store).overall
    heavy = aggregate_annotations(controller.store, weighted=True).overall
    assert heavy.fluency_mean < plain.fluency_mean

    def mean_shown() -> str | None:  # the agreement is a view read, off the UI thread
        item = panel.groups_table.item(0, 4) if panel.groups_table.rowCount() else None
        return None if item is None else item.text()

    qtbot.waitUntil(lambda: mean_shown() == f"{plain.fluency_mean:.2f}", timeout=10_000)
    panel.weighted_check.setChecked(True)  # refreshes the tab
    qtbot.waitUntil(lambda: mean_shown() == f"{heavy.fluency_mean:.2f}", timeout=10_000)


def test_after_ctrl_enter_from_the_correction_the_next_key_rates(qtbot, wired, built) -> None:
    window, controller, annotate, panel = wired
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    window.raise_panel("annotate")
    choose(panel, "ana")
    queue_of(panel)
    qtbot.keyClick(panel, "3")
    qtbot.keyClick(panel, "y")
    qtbot.keyClick(panel, "c")
    editor = panel.correction_edit
    assert QApplication.focusWidget() is editor
    editor.setPlainText("u4 en text, corrected.")
    qtbot.keyClick(editor, Qt.Key.Key_Return, CTRL)
    ana = built.annotators["ana"]
    u4 = built.verbalisations[("model-a", "u4", "en")]
    assert rating_of(controller.store, ana, u4).corrected_text == "u4 en text, corrected."
    assert "unit u7" in panel.meta_label.text()
    # The keyboard is back on the item: the next key, sent where the focus is, rates it.
    focus = QApplication.focusWidget()
    assert focus is not editor and panel.isAncestorOf(focus) or focus is panel
    qtbot.keyClick(focus, "4")
    assert panel.fluency() == 4
    assert editor.toPlainText() == "u7 en text by model-a."


def test_back_on_the_first_item_stays_there(qtbot, wired) -> None:
    window, controller, annotate, panel = wired
    choose(panel, "ana")
    queue_of(panel)
    alt = Qt.KeyboardModifier.AltModifier
    assert "item 1 of 3" in panel.meta_label.text()
    qtbot.keyClick(panel, Qt.Key.Key_Left, alt)
    assert "item 1 of 3" in panel.meta_label.text()  # not the last one
    assert "first item" in panel.message_label.text()
    panel.back_button.click()
    assert "item 1 of 3" in panel.meta_label.text()
    for _ in range(2):
        panel.skip_button.click()
    assert "item 3 of 3" in panel.meta_label.text()
    panel.skip_button.click()
    assert "item 3 of 3" in panel.meta_label.text() and "last item" in panel.message_label.text()


def test_progress_counts_stored_ratings_after_a_restart(qtbot, built, settings) -> None:
    window, controller = build_window(settings)
    qtbot.addWidget(window)
    controller.open_session(built.path)
    panel = controller.annotate.panel
    choose(panel, "ana")
    queue_of(panel)
    assert "4 / 7" in panel.progress_label.text()
    qtbot.keyClick(panel, "4")
    qtbot.keyClick(panel, "y")
    qtbot.keyClick(panel, Qt.Key.Key_Return)
    assert "5 / 7" in panel.progress_label.text()
    controller.shutdown()

    window2, controller2 = build_window(settings)  # the next start, on the same session
    qtbot.addWidget(window2)
    controller2.open_session(built.path)
    panel2 = controller2.annotate.panel
    wait_for_queue(panel2)
    assert [i.unit_uid for i in controller2.annotate.queue.items] == ["u7", "u8"]
    assert "5 / 7" in panel2.progress_label.text()  # not 0 / 2
    controller2.shutdown()


def test_the_queue_says_so_when_its_end_is_past_and_when_it_is_done(qtbot, wired) -> None:
    window, controller, annotate, panel = wired
    choose(panel, "ana")
    queue_of(panel)  # u4, u7, u8 left for ana
    assert annotate.index == 0
    annotate.show(1)  # u4 skipped
    qtbot.keyClick(panel, "4")
    qtbot.keyClick(panel, "y")
    qtbot.keyClick(panel, Qt.Key.Key_Return)  # u7 rated: on to u8
    assert annotate.index == 2
    qtbot.keyClick(panel, "3")
    qtbot.keyClick(panel, "y")
    qtbot.keyClick(panel, Qt.Key.Key_Return)  # u8, the last: back to the skipped u4
    assert annotate.index == 0
    assert (
        "End of the queue: 1 text you skipped is still unrated; back to item 1."
        in panel.message_label.text()
    )
    qtbot.keyClick(panel, "5")
    qtbot.keyClick(panel, "y")
    qtbot.keyClick(panel, Qt.Key.Key_Return)
    assert annotate.index is None  # every text rated: the queue says it is done
    assert panel.text_label.text().startswith("Done: you have rated all 3 texts")


def test_a_pack_opens_as_its_annotator_with_the_queue_built(
    qtbot, built, settings, tmp_path
) -> None:
    """Opening an annotation pack for the first time: Annotate in front, the pack's
    annotator chosen, its texts queued (blind as the pack was made), the first shown."""
    from core.annotation.packs.make import PackRequest, make_pack

    pack = tmp_path / "eve.taillens"
    with SessionStore.open(built.path) as store:
        make_pack(store, PackRequest(annotator="eve", out=pack, blind=False))
    window, controller = build_window(settings)
    qtbot.addWidget(window)
    try:
        assert controller.open_session(pack)
        panel = controller.annotate.panel
        qtbot.waitUntil(lambda: controller.annotate.queue is not None, timeout=20_000)
        settle(panel)
        assert panel.annotator_combo.currentText() == "eve"
        assert not panel.blind_check.isChecked()  # the pack was not made blind
        assert len(controller.annotate.queue) > 0 and controller.annotate.index == 0
        assert "item 1 of" in panel.meta_label.text()
        assert window.last_message is not None and "the queue is built" in (
            window.last_message.text()
        )
        assert not window.docks["annotate"].isHidden()
    finally:
        controller.shutdown()
