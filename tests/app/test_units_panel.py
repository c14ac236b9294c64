"""Building a unit in the GUI from the demo data: start, pick, follow, override, save."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.gui import build_window
from core.store import SessionStore
from core.units.builder.saved import list_units, load_draft
from core.units.sampler import SampleRequest
from tests.fixtures.demo import demo_ready
from tests.fixtures.jobs import is_fetch
from tests.fixtures.reads import settle_reads


@pytest.fixture
def wired(qtbot, tmp_path: Path):
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.new_session(tmp_path / "u.taillens")
    browser = controller.browser
    demo_ready(qtbot, browser)
    panel = browser.panel
    panel.category_combo.setCurrentText("City")
    panel.limit_spin.setValue(50)
    with qtbot.waitSignal(controller.runner.job_finished, timeout=30_000, check_params_cb=is_fetch):
        panel.fetch_button.click()
    # The fetched members' tiers are saved on the session writer's thread; edits made
    # while that is queued would land after it (the tests read them back at once).
    qtbot.waitUntil(
        lambda: not browser._save_timer.isActive() and controller.writer.idle, timeout=30_000
    )
    yield window, controller
    controller.shutdown()


def landed(qtbot, controller) -> None:
    """The session writer has applied every edit asked for (at once, unless a job was
    writing at that moment: then on its thread, a moment later)."""
    qtbot.waitUntil(lambda: controller.writer.idle, timeout=10_000)


def kept_rows(units_panel) -> list[int]:
    model = units_panel.candidates_model
    return [r for r in range(model.rowCount()) if model.item(r, 3).text() == ""]


def test_build_a_unit_and_save_it(qtbot, wired, tmp_path: Path) -> None:
    window, controller = wired
    browser, units = controller.browser, controller.units
    browser.panel.table.selectRow(0)
    qtbot.waitUntil(lambda: browser.panel.inspector.details is not None, timeout=30_000)
    browser.panel.inspector.start_unit.click()
    qtbot.waitUntil(
        lambda: units.draft is not None and units.focus in units.details, timeout=30_000
    )
    panel = units.panel
    assert panel.candidates_model.rowCount() > 0
    assert "claims kept" in panel.counts_label.text()
    assert not panel.save_button.isEnabled()  # empty unit

    first = kept_rows(panel)[0]
    panel.claim_added.emit(first)
    assert len(units.draft.claims) == 1
    assert "sibling" in panel.structure_label.text() and panel.save_button.isEnabled()
    # The draft is in the session already: a crash now would lose nothing.
    assert load_draft(controller.store) == units.draft

    second = next(r for r in kept_rows(panel) if r != first)
    panel.claim_added.emit(second)
    assert len(units.draft.claims) == 2
    assert panel.triples_model.rowCount() == 2 and panel.triples_model.columnCount() == 3

    units.override("it", 0, "subject", "Città di prova")
    assert "Città di prova" in panel.triples_model.item(0, 1).text()
    units.move(0, 1)
    assert "Città di prova" in panel.triples_model.item(1, 1).text()  # the override follows

    units.save()
    landed(qtbot, controller)
    unit_id = units.shown_unit
    assert unit_id is not None and units.draft is None
    assert load_draft(controller.store) is None
    saved = list_units(controller.store)
    assert len(saved) == 1 and saved[0].size == 2 and saved[0].category == "City"
    assert saved[0].triples["it"][1].subject_override == "Città di prova"
    qtbot.waitUntil(lambda: panel.units_model.rowCount() == 1, timeout=10_000)  # a view read


def test_a_draft_survives_a_restart(qtbot, wired, tmp_path: Path) -> None:
    window, controller = wired
    units = controller.units
    qid = controller.browser.panel.model.columns.qids[0]
    units.start(qid)
    qtbot.waitUntil(lambda: units.focus in units.details, timeout=30_000)
    units.add_claim(kept_rows(units.panel)[0])
    path = controller.store.path
    controller.open_session(tmp_path / "other.taillens", create=True)
    settle_reads(qtbot, controller)
    assert units.draft is None
    controller.open_session(path)
    settle_reads(qtbot, controller)  # the draft is read off the UI thread
    assert units.draft is not None and len(units.draft.claims) == 1
    with SessionStore.open(path) as store:
        assert load_draft(store) == units.draft


def test_rule_switches_qid_entry_and_sampling(qtbot, wired) -> None:
    window, controller = wired
    units, panel = controller.units, controller.units.panel
    panel.qid_edit.setText("Q1'}")
    panel.qid_edit.returnPressed.emit()
    assert units.draft is None and "not a Wikidata item id" in window.last_message.text()

    qid = controller.browser.panel.model.columns.qids[0]
    panel.qid_edit.setText(qid.lower())
    panel.qid_edit.returnPressed.emit()
    qtbot.waitUntil(lambda: units.focus in units.details, timeout=30_000)
    kept_before = len(kept_rows(panel))
    panel.rule_checks["drop_ontology_properties"].setChecked(False)  # P31 may now enter
    assert units.draft.filters.drop_ontology_properties is False
    assert len(kept_rows(panel)) > kept_before

    panel.sample_requested.emit(
        SampleRequest(
            shapes=("sibling",),
            sizes=(2,),
            seed=3,
            limit_entities=10,
            filters=panel.filter_settings(),
        )
    )
    # Waits for the sample's own message: another job (the fetch's tier save) may end first.
    qtbot.waitUntil(
        lambda: "units built from 10 entities" in window.last_message.text(), timeout=60_000
    )
    qtbot.waitUntil(lambda: panel.units_model.rowCount() >= 5, timeout=10_000)
    assert {panel.units_model.item(r, 1).text() for r in range(panel.units_model.rowCount())} == {
        "sibling"
    }


def test_sample_dialog_offers_parallel_units(qtbot) -> None:
    from widgets.units import SampleDialog

    dialog = SampleDialog()
    qtbot.addWidget(dialog)
    assert dialog.request().parallel is False
    dialog.parallel.setChecked(True)
    assert dialog.request().parallel is True


def test_several_claims_in_one_action_and_overrides_across_the_unit(qtbot, wired) -> None:
    from PySide6.QtCore import QItemSelectionModel

    from core.units.builder.render import kept_labels
    from core.vocab import LANGUAGES

    window, controller = wired
    units, panel = controller.units, controller.units.panel
    qid = controller.browser.panel.model.columns.qids[0]
    units.start(qid)
    qtbot.waitUntil(lambda: units.focus in units.details, timeout=30_000)
    rows = kept_rows(panel)[:3]
    assert len(rows) == 3
    selection = panel.candidates_view.selectionModel()
    for row in rows:
        selection.select(
            panel.candidates_model.index(row, 0),
            QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
        )
    add = next(b for b in panel.findChildren(type(panel.save_button)) if b.text() == "Add to unit")
    add.click()
    assert len(units.draft.claims) == 3 and panel.triples_model.rowCount() == 3
    assert all(c.subject_qid == qid for c in units.draft.claims)

    # The root is the subject of all three: one override names it in every triple (es only).
    panel.override_requested.emit("es", 1, "subject", "Ciudad de prueba", False)
    es = LANGUAGES.index("es")
    assert all("Ciudad de prueba" in panel.triples_model.item(r, es).text() for r in range(3))
    assert not any("Ciudad de prueba" in panel.triples_model.item(r, 0).text() for r in range(3))
    assert kept_labels(controller.store) == {}
    # Kept for the session: a new unit of the same root uses the words at once.
    panel.override_requested.emit("es", 0, "subject", "Ciudad guardada", True)
    landed(qtbot, controller)
    assert kept_labels(controller.store) == {"es": {qid: "Ciudad guardada"}}
    units.save()
    landed(qtbot, controller)
    assert units.draft is None and units.shown_unit is not None
    units.start(qid)
    qtbot.waitUntil(lambda: units.focus in units.details, timeout=30_000)
    units.add_claims(kept_rows(panel)[:1])
    assert "Ciudad guardada" in panel.triples_model.item(0, es).text()
    # Adding what is already in the unit says so and changes nothing.
    before = units.draft
    units.add_claims(
        [
            r
            for r in range(panel.candidates_model.rowCount())
            if panel.candidates_model.item(r, 3).text() == "in the unit"
        ]
    )
    assert units.draft == before


def test_the_sample_button_asks_with_the_dialogs_settings_and_the_panels_filters(
    qtbot, monkeypatch
) -> None:
    from PySide6.QtWidgets import QDialog, QPushButton

    from widgets.units import SampleDialog, UnitsPanel

    panel = UnitsPanel()
    qtbot.addWidget(panel)
    panel.rule_checks["drop_deprecated"].setChecked(False)

    def accept(dialog: SampleDialog) -> int:
        dialog.shape.setCurrentText("chain")
        dialog.size_spin.setValue(3)
        dialog.tier.setCurrentIndex(dialog.tier.findData("long_tail"))
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(SampleDialog, "exec", accept)
    button = next(b for b in panel.findChildren(QPushButton) if b.text() == "Sample units…")
    with qtbot.waitSignal(panel.sample_requested) as emitted:
        button.click()
    [request] = emitted.args
    assert isinstance(request, SampleRequest)
    assert (request.shapes, request.sizes, request.tiers) == (("chain",), (3,), ("long_tail",))
    assert request.filters == panel.filter_settings() and not request.filters.drop_deprecated


def test_unit_list_columns_show_their_values_on_one_line(qtbot) -> None:
    from core.labels import tier_label
    from widgets.units import UNIT_COLUMNS, UnitsPanel

    panel = UnitsPanel()
    qtbot.addWidget(panel)
    view = panel.units_view
    assert not view.wordWrap()
    tier = UNIT_COLUMNS.index("tier")
    widest = max(
        view.fontMetrics().horizontalAdvance(tier_label(code))
        for code in ("head", "torso", "long_tail", "long_tail_en", "long_tail_it", "long_tail_es")
    )
    assert view.columnWidth(tier) > widest
    # The claim-filter menu's button is at least as wide as its text and arrow.
    button = panel.rules_button
    button.adjustSize()
    assert button.width() > button.fontMetrics().horizontalAdvance("Claim filters") + 8


def test_draft_changes_are_undone_and_redone_from_the_edit_menu(qtbot, wired) -> None:
    window, controller = wired
    units, panel = controller.units, controller.units.panel
    units.start(controller.browser.panel.model.columns.qids[0])
    qtbot.waitUntil(lambda: units.focus in units.details, timeout=30_000)
    first, second = kept_rows(panel)[:2]
    panel.claim_added.emit(first)
    landed(qtbot, controller)
    panel.claim_added.emit(second)
    landed(qtbot, controller)
    two = units.draft
    assert len(two.claims) == 2
    assert window.action_undo.text().endswith("(2 triples)")

    window.action_undo.trigger()
    qtbot.waitUntil(lambda: units.draft is not None and len(units.draft.claims) == 1)
    assert load_draft(controller.store).claims == two.claims[:1]
    assert panel.triples_model.rowCount() == 1
    window.action_redo.trigger()
    qtbot.waitUntil(lambda: units.draft is not None and len(units.draft.claims) == 2)
    assert units.draft == two and load_draft(controller.store) == two
