"""File ▸ Annotation packs…: make a pack from the dialog, open it as the annotator would
(their name chosen, the guidelines offered), merge it back and see the progress."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog

from app.gui import build_window
from core.annotation import Rating, find_annotator, list_annotators, rating_of, save_rating
from core.annotation.packs.manifest import PackError
from core.store import SessionStore
from tests.fixtures.report_session import ReportSession, build_report_session
from widgets.annotation_packs import PackForm


@pytest.fixture
def built(tmp_path: Path) -> ReportSession:
    return build_report_session(tmp_path / "study.taillens", scores=False)


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)


def test_the_form_says_what_to_fix(qtbot) -> None:
    form = PackForm(["ana", "ben"])
    qtbot.addWidget(form)
    with pytest.raises(PackError, match="annotator's name"):
        form.request()
    form.annotator.setCurrentText("eve")
    with pytest.raises(PackError, match="where to save"):
        form.request()
    form.out.setText("/tmp/somewhere/eve")
    form.units.setText("3-1")
    with pytest.raises(PackError, match="backwards"):
        form.request()
    form.units.setText("1-2")
    form.langs["it"].setChecked(False)
    request = form.request()
    assert request.out.name == "eve.taillens" and request.units == (1, 2)
    assert request.langs == ("en", "es")
    form._accept()  # a valid form closes with its request
    assert form.result() == QDialog.DialogCode.Accepted and form.accepted_request == request


def test_pack_open_rate_merge_from_the_window(
    qtbot, built: ReportSession, settings: QSettings, tmp_path: Path
) -> None:
    window, controller = build_window(settings)
    qtbot.addWidget(window)
    assert controller.open_session(built.path)
    dialog = controller.packs.open()
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 3, timeout=10_000)  # ana, ben, cleo
    form = PackForm(["ana"], dialog)
    form.annotator.setCurrentText("eve")
    form.out.setText(str(tmp_path / "eve"))
    form.units.setText(str(built.units["u1"]))
    form.guidelines.setPlainText("Fluency 0-5; adequacy yes/no/not sure.")
    dialog.new_pack_requested.emit(form.request())
    pack = tmp_path / "eve.taillens"
    qtbot.waitUntil(lambda: "Wrote eve.taillens" in dialog.status.text(), timeout=20_000)
    assert pack.exists()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=10_000)
    controller.shutdown()

    # the annotator's machine: the pack opens with their name chosen
    window2, annotator_side = build_window(settings)
    qtbot.addWidget(window2)
    assert annotator_side.open_session(pack)
    panel = annotator_side.annotate.panel
    qtbot.waitUntil(lambda: panel.annotator_combo.currentText() == "eve", timeout=10_000)
    qtbot.waitUntil(
        lambda: window2.last_message is not None and "for eve" in window2.last_message.text(),
        timeout=10_000,
    )
    assert "guidelines are under Details" in window2.last_message.text()
    # Where eve works: Annotate's workspace, the queue of the pack's texts built.
    assert window2.workspaces.current == "annotate"
    qtbot.waitUntil(lambda: annotator_side.annotate.queue is not None, timeout=10_000)
    assert len(annotator_side.annotate.queue) > 0
    assert annotator_side.annotate.index == 0
    store = annotator_side.store
    assert store is not None
    eve = find_annotator(store, "eve")
    save_rating(store, eve.id, built.verbalisations[("model-b", "u1", "en")], Rating(4, 0))
    annotator_side.shutdown()

    window3, lead = build_window(settings)
    qtbot.addWidget(window3)
    assert lead.open_session(built.path)
    dialog3 = lead.packs.open()
    assert dialog3 is not None
    dialog3.merge_requested.emit([pack])
    qtbot.waitUntil(lambda: "1 added" in dialog3.status.text(), timeout=20_000)

    def eve_done() -> bool:
        rows = {dialog3.table.item(r, 0).text(): r for r in range(dialog3.table.rowCount())}
        return "eve" in rows and dialog3.table.item(rows["eve"], 3).text() == "1"

    qtbot.waitUntil(eve_done, timeout=10_000)
    lead.shutdown()
    with SessionStore.open_read_only(built.path) as store:
        assert find_annotator(store, "eve").ratings == 1


def test_a_refused_merge_offers_to_skip_the_changed_ratings(
    qtbot, built: ReportSession, settings: QSettings, tmp_path: Path
) -> None:
    """The refusal for texts changed since packing says so in the window and offers what
    --skip-changed does on the command line: the rest of the pack comes in."""
    from sqlalchemy import update

    from app.packs import SKIP_CHANGED
    from core.annotation.packs.make import PackRequest, make_pack
    from core.annotation.packs.manifest import pack_info
    from core.store.models import Verbalisation

    pack = tmp_path / "eve.taillens"
    changed = built.verbalisations[("model-a", "u1", "en")]
    kept = built.verbalisations[("model-b", "u1", "en")]
    with SessionStore.open(built.path) as store:
        make_pack(store, PackRequest("eve", pack, units=(built.units["u1"],), langs=("en",)))
    with SessionStore.open(pack) as opened:
        info = pack_info(opened)
        assert info is not None
        eve = find_annotator(opened, info.annotator)
        save_rating(opened, eve.id, changed, Rating(fluency=1, adequacy=1))
        save_rating(opened, eve.id, kept, Rating(fluency=4, adequacy=0))
    with SessionStore.open(built.path) as store, store.unit_of_work() as db:
        db.execute(update(Verbalisation).where(Verbalisation.id == changed).values(text="New."))

    window, controller = build_window(settings)
    qtbot.addWidget(window)
    assert controller.open_session(built.path)
    dialog = controller.packs.open()
    assert dialog is not None
    dialog.merge_requested.emit([pack])
    qtbot.waitUntil(lambda: "nothing was merged" in dialog.status.text(), timeout=20_000)
    bar = window.last_message
    assert bar is not None and "1 rated texts changed" in bar.text()
    assert "--skip-changed" not in bar.text()  # a window has no command-line options
    buttons = {button.text(): button for button in bar.action_buttons}
    assert list(buttons) == [SKIP_CHANGED]
    with SessionStore.open_read_only(built.path) as store:
        assert "eve" not in {a.name for a in list_annotators(store)}  # nothing came in

    buttons[SKIP_CHANGED].click()
    qtbot.waitUntil(lambda: "1 added" in dialog.status.text(), timeout=20_000)
    assert "1 skipped (text changed since packing)" in dialog.status.text()
    controller.shutdown()
    with SessionStore.open_read_only(built.path) as store:
        eve_here = find_annotator(store, "eve")
        assert eve_here.ratings == 1
        assert rating_of(store, eve_here.id, changed) is None
        held = rating_of(store, eve_here.id, kept)
        assert held is not None and held.fluency == 4
