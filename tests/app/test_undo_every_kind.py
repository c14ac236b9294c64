"""Each edit kind made through the real window, then Edit ▸ Undo (or Ctrl+Z) and Redo,
with the session read back after each step: an annotator added, a gold reference
written, a category saved from its dialog, the model_tail cut-off, a golden answer
(set and removed with Annotate's Known answer…, and undone after reopening), a new unit
saved, the units a
sample saved, a pack merged, and the tiers a fetch gives a category that is not shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QInputDialog
from sqlalchemy import func, select

from app.gui import build_window
from core.edits import history
from core.store import SessionStore
from tests.fixtures.annotate_panel import activate, choose, settle
from tests.fixtures.reads import settle_reads
from tests.fixtures.report_session import ReportSession, build_report_session

CTRL = Qt.KeyboardModifier.ControlModifier


def landed(qtbot, controller) -> None:
    """Every write and job asked for has landed and every view read arrived."""

    def quiet() -> bool:
        jobs = [h for h in controller.runner.active.values() if not h.job.quiet]
        return controller.writer.idle and not controller.undo.busy and not jobs

    qtbot.waitUntil(quiet, timeout=30_000)
    settle_reads(qtbot, controller)


@pytest.fixture
def window_on(qtbot, tmp_path: Path):
    """``open(path, create=False)``: the whole window on that session (shut down after)."""
    built: list = []

    def open_(path: Path, *, create: bool = False):
        window, controller = build_window(
            QSettings(str(tmp_path / f"s{len(built)}.ini"), QSettings.Format.IniFormat)
        )
        qtbot.addWidget(window)
        built.append(controller)
        assert controller.open_session(path, create=create)
        landed(qtbot, controller)
        return window, controller

    yield open_
    for controller in built:
        controller.shutdown()


def undo(qtbot, window, controller) -> None:
    assert window.action_undo.isEnabled()
    window.action_undo.trigger()
    landed(qtbot, controller)


def redo(qtbot, window, controller) -> None:
    assert window.action_redo.isEnabled()
    window.action_redo.trigger()
    landed(qtbot, controller)


@pytest.fixture
def report(tmp_path: Path) -> ReportSession:
    return build_report_session(tmp_path / "a.taillens", scores=False)


# -- Annotate ------------------------------------------------------------------------------


def test_an_annotator_added_in_annotate(qtbot, window_on, report, monkeypatch) -> None:
    from core.annotation import list_annotators

    window, controller = window_on(report.path)
    panel = controller.annotate.panel
    settle(panel)

    def names() -> set[str]:
        return {a.name for a in list_annotators(controller.store)}

    assert "zoe" not in names()
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("zoe", True))
    panel.annotator_combo.activated.emit(panel.annotator_combo.findData("new"))
    landed(qtbot, controller)
    assert "zoe" in names()
    assert "zoe" in window.action_undo.text()

    activate(qtbot, window)
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)  # the key, as a user presses it
    landed(qtbot, controller)
    assert "zoe" not in names()
    redo(qtbot, window, controller)
    assert "zoe" in names()
    assert [e.status for e in history(controller.store, kinds=["annotator"])] == ["redone"]


def test_a_gold_reference_written_in_annotate(qtbot, window_on, tmp_path) -> None:
    from core.store.models import UnitReference
    from tests.fixtures.gold_reference_session import seed_session

    window, controller = window_on(seed_session(tmp_path / "r.taillens"))
    panel, refs = controller.annotate.panel, controller.annotate.references
    activate(qtbot, window)
    choose(panel, "ann")
    view = refs.write_view
    panel.tabs.setCurrentWidget(view)
    view.lang_combo.setCurrentIndex(view.lang_combo.findData("it"))
    view.load_button.click()
    qtbot.waitUntil(lambda: view.unit_id is not None, timeout=10_000)
    qtbot.waitUntil(view.editor.hasFocus, timeout=5000)
    qtbot.keyClicks(view.editor, "Parigi sta in Francia.")
    qtbot.keyClick(view.editor, Qt.Key.Key_Return, CTRL)
    qtbot.waitUntil(lambda: "Saved as gold" in view.message.text(), timeout=10_000)
    landed(qtbot, controller)

    def written() -> int:
        with controller.store.snapshot() as db:
            return int(
                db.scalar(
                    select(func.count())
                    .select_from(UnitReference)
                    .where(
                        UnitReference.text == "Parigi sta in Francia.", UnitReference.lang == "it"
                    )
                )
                or 0
            )

    assert written() == 1
    assert window.action_undo.text().startswith("&Undo")
    undo(qtbot, window, controller)
    assert written() == 0
    redo(qtbot, window, controller)
    assert written() == 1


def test_a_golden_answer_is_undone_and_redone_after_reopening(qtbot, window_on, report) -> None:
    from core.annotation import ItemRef, golden_answers, set_golden_answer

    item = ItemRef("verbalisation", report.verbalisations[("model-a", "u2", "en")])
    with SessionStore.open(report.path) as store:
        before = golden_answers(store).get(item)
        set_golden_answer(store, report.annotators["dora"], item, fluency=4, adequacy=0)
    window, controller = window_on(report.path)
    assert "fluency 4" in window.action_undo.text()  # offered after reopening
    undo(qtbot, window, controller)
    assert golden_answers(controller.store).get(item) == before
    redo(qtbot, window, controller)
    assert golden_answers(controller.store)[item].fluency == 4


def test_a_golden_answer_set_and_removed_in_annotate(qtbot, window_on, report, monkeypatch) -> None:
    from core.annotation import NO, QueueFilter, golden_answers
    from widgets.annotate.golden import GoldenAnswerDialog

    window, controller = window_on(report.path)
    panel, annotate = controller.annotate.panel, controller.annotate
    choose(panel, "ben")
    panel.queue_requested.emit(QueueFilter(unrated_only=False, blind=False))
    qtbot.waitUntil(lambda: panel.index is not None, timeout=10_000)
    ref = annotate.queue[panel.index].ref
    before = golden_answers(controller.store).get(ref)
    assert before is None or (before.fluency, before.adequacy) != (2, NO)

    asked: list[tuple[object, object]] = []
    remove = [False]

    def answer(dialog: GoldenAnswerDialog) -> int:
        asked.append((dialog.fluency.currentData(), dialog.adequacy.currentData()))
        dialog.removing = remove[0]
        return GoldenAnswerDialog.DialogCode.Accepted

    monkeypatch.setattr(GoldenAnswerDialog, "exec", answer)
    panel.set_fluency(2)  # the form's rating is the answer the dialog offers
    panel.set_adequacy(NO)
    panel.golden_button.click()
    landed(qtbot, controller)
    assert asked == [(2, NO)]
    answer_now = golden_answers(controller.store)[ref]
    assert (answer_now.expert_id, answer_now.fluency, answer_now.adequacy) == (
        report.annotators["ben"],
        2,
        NO,
    )
    assert "known answer" in window.action_undo.text()

    undo(qtbot, window, controller)
    assert golden_answers(controller.store).get(ref) == before
    redo(qtbot, window, controller)
    assert golden_answers(controller.store)[ref] == answer_now

    remove[0] = True  # Remove known answer, then its undo
    panel.golden_button.click()
    landed(qtbot, controller)
    assert ref not in golden_answers(controller.store)
    undo(qtbot, window, controller)
    assert golden_answers(controller.store)[ref] == answer_now
    kinds = [(e.kind, e.source, e.status) for e in history(controller.store, kinds=["golden"])]
    assert kinds == [("golden", "gui", "redone"), ("golden", "gui", "undone")]


def test_a_pack_merge_is_one_undo(qtbot, window_on, report, tmp_path) -> None:
    from core.annotation import Rating, find_annotator, save_rating
    from core.annotation.packs.make import PackRequest, make_pack
    from core.annotation.packs.manifest import pack_info
    from core.store.models import Annotation, Verbalisation

    pack = tmp_path / "eve.taillens"
    with SessionStore.open(report.path) as store:
        make_pack(store, PackRequest(annotator="eve", out=pack, units=(report.units["u1"],)))
    with SessionStore.open(pack) as opened:
        info = pack_info(opened)
        assert info is not None
        eve = find_annotator(opened, info.annotator)
        with opened.snapshot() as db:
            texts = list(db.scalars(select(Verbalisation.id)))
        for vid in texts:
            save_rating(opened, eve.id, vid, Rating(fluency=4, adequacy=0))
    assert texts

    window, controller = window_on(report.path)

    def eves() -> int:
        who = find_annotator(controller.store, "eve")
        with controller.store.snapshot() as db:
            return int(
                db.scalar(
                    select(func.count())
                    .select_from(Annotation)
                    .where(Annotation.annotator_id == who.id)
                )
                or 0
            )

    dialog = controller.packs.open()
    assert dialog is not None
    dialog.merge_requested.emit([pack])
    qtbot.waitUntil(lambda: f"{len(texts)} added" in dialog.status.text(), timeout=20_000)
    landed(qtbot, controller)
    assert eves() == len(texts)
    assert window.action_undo.text().startswith("&Undo the merge of eve.taillens")
    assert [b.text() for b in window.last_message.action_buttons] == ["Undo"]

    undo(qtbot, window, controller)  # one undo: every rating the merge brought
    assert eves() == 0
    redo(qtbot, window, controller)
    assert eves() == len(texts)
    dialog.close()


# -- Browser and Likelihood ----------------------------------------------------------------


def test_a_category_saved_from_its_dialog(qtbot, window_on, tmp_path) -> None:
    from core.wikidata.category_store import session_categories
    from widgets.category_dialog import CategoryDialog

    window, controller = window_on(tmp_path / "c.taillens", create=True)
    panel = controller.browser.panel

    def fill_and_save() -> None:
        dialog = panel.findChildren(CategoryDialog)[-1]
        dialog.name_edit.setText("Harbour")
        dialog.class_edit.setText("Q283202")
        dialog.property_combo.setCurrentText("P31")
        dialog.pattern_edit.setPlainText("?item wdt:P31 wd:Q283202 .")
        dialog.accept()

    def names() -> set[str]:
        return {c.name for c in session_categories(controller.store)}

    QTimer.singleShot(0, fill_and_save)
    panel.new_category_button.click()  # the dialog runs until fill_and_save accepts it
    landed(qtbot, controller)
    assert "Harbour" in names()
    assert "Harbour" in window.action_undo.text()
    undo(qtbot, window, controller)
    assert "Harbour" not in names()
    redo(qtbot, window, controller)
    assert "Harbour" in names()


# Label log-likelihoods of the City members (as the Likelihood tab's scoring job leaves).
LOGLIK = [-2.0, -2.1, -2.2, -9.0, -3.0, -3.5, -4.0, -4.5, -5.0, -5.5]


def test_the_model_tail_cut_off_dragged_in_the_likelihood_tab(qtbot, window_on, tmp_path) -> None:
    from core.store.models import CategoryMember, Entity, EntityLikelihood
    from core.tiers.model_tail import load_cutoff
    from tests.fixtures.likelihood_session import seed_city_session

    path = seed_city_session(tmp_path / "cities.taillens")
    with SessionStore.open(path) as store, store.unit_of_work() as db:
        for entity, loglik in zip(db.query(Entity).order_by(Entity.qid).all(), LOGLIK, strict=True):
            db.add(
                EntityLikelihood(
                    entity_id=entity.id,
                    model="tiny",
                    model_fingerprint="f",
                    lang="en",
                    label=entity.qid,
                    label_loglik=loglik,
                    label_tokens=3,
                )
            )
    window, controller = window_on(path)
    browser, likelihood = controller.browser, controller.likelihood
    browser.panel.category_combo.setCurrentText("City")
    settle_reads(qtbot, controller)
    browser.panel.plots.tabs.setCurrentIndex(likelihood.tab_index)
    tab = likelihood.panel
    qtbot.waitUntil(lambda: tab.view is not None and tab.cutoff is not None, timeout=10_000)
    landed(qtbot, controller)
    before = load_cutoff(controller.store, "City")

    def model_tail() -> int:
        with controller.store.snapshot() as db:
            return int(
                db.scalar(
                    select(func.count())
                    .select_from(CategoryMember)
                    .where(CategoryMember.model_tier == "model_tail")
                )
                or 0
            )

    tails_before = model_tail()
    tab.line.setValue(-4.2)
    tab.line.sigPositionChangeFinished.emit(tab.line)  # the drag settles
    landed(qtbot, controller)
    assert load_cutoff(controller.store, "City").cutoff == pytest.approx(-4.2)
    assert model_tail() == 4  # -4.5, -5.0, -5.5 and -9.0
    assert "City" in window.action_undo.text()
    undo(qtbot, window, controller)
    assert load_cutoff(controller.store, "City") == before
    assert model_tail() == tails_before
    redo(qtbot, window, controller)
    assert load_cutoff(controller.store, "City").cutoff == pytest.approx(-4.2)
    assert model_tail() == 4


def test_the_tiers_a_fetch_gives_a_category_not_shown_are_on_the_stack(qtbot, tmp_path) -> None:
    from core.tiers.stored import load_member_tiers
    from tests.fixtures.demo import demo_ready
    from tests.fixtures.jobs import is_fetch

    window, controller = build_window(
        QSettings(str(tmp_path / "b.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    try:
        assert controller.new_session(tmp_path / "b.taillens")
        browser = controller.browser
        demo_ready(qtbot, browser)
        settle_reads(qtbot, controller)
        browser.panel.category_combo.setCurrentText("City")
        settle_reads(qtbot, controller)
        with qtbot.waitSignal(
            controller.runner.job_finished, timeout=30_000, check_params_cb=is_fetch
        ):
            browser.fetch("Food", 30)  # a Compare-with fetch: Food is not shown
        landed(qtbot, controller)
        tiered = load_member_tiers(controller.store, "Food")
        assert tiered and all(tier is not None for tier, _sub in tiered.values())
        assert window.action_undo.text().startswith("&Undo the tiers of Food")
        undo(qtbot, window, controller)
        assert all(
            tier is None for tier, _sub in load_member_tiers(controller.store, "Food").values()
        )
        redo(qtbot, window, controller)
        assert load_member_tiers(controller.store, "Food") == tiered
    finally:
        controller.shutdown()


# -- Units -----------------------------------------------------------------------------------


def test_a_new_unit_saved_in_units(qtbot, window_on, tmp_path) -> None:
    from core.units.builder.saved import count_units, list_units, load_draft
    from core.wikidata.cache import store_entity
    from tests.fixtures.rome_italy_details import DETAILS

    path = tmp_path / "u.taillens"
    with SessionStore.create(path) as store:
        for details in DETAILS.values():
            store_entity(store, details, "test")
    window, controller = window_on(path)
    units, panel = controller.units, controller.units.panel
    units.start("Q220")
    qtbot.waitUntil(lambda: units.focus in units.details, timeout=10_000)
    model = panel.candidates_model
    kept = [r for r in range(model.rowCount()) if model.item(r, 3).text() == ""]
    panel.claim_added.emit(kept[0])
    panel.claim_added.emit(kept[1])
    landed(qtbot, controller)
    draft = units.draft
    assert draft is not None and len(draft.claims) == 2
    panel.save_button.click()
    landed(qtbot, controller)
    (saved,) = list_units(controller.store)
    assert load_draft(controller.store) is None and units.draft is None
    assert window.action_undo.text() == f"&Undo unit {saved.id} saved (rooted at Q220)"

    undo(qtbot, window, controller)
    assert count_units(controller.store) == 0
    assert load_draft(controller.store) == draft  # the draft is back in the builder
    qtbot.waitUntil(lambda: units.draft == draft, timeout=10_000)
    assert panel.triples_model.rowCount() == 2
    redo(qtbot, window, controller)
    assert list_units(controller.store) == [saved]  # the same unit, under the same id
    assert load_draft(controller.store) is None
    qtbot.waitUntil(lambda: units.shown_unit == saved.id, timeout=10_000)
    (entry,) = history(controller.store, kinds=["unit"])
    assert (entry.source, entry.status, entry.unit_id) == ("gui", "redone", saved.id)


def test_the_units_a_sample_saved_are_one_undo(qtbot, window_on, tmp_path, monkeypatch) -> None:
    from PySide6.QtWidgets import QDialog, QPushButton

    from core.units.builder.saved import count_units, list_units
    from tests.fixtures.sampling_session import sampling_session
    from widgets.units.dialogs import SampleDialog

    path = tmp_path / "s.taillens"
    sampling_session(path).close()
    window, controller = window_on(path)
    controller.browser.show_category("City")
    qtbot.waitUntil(lambda: controller.browser.state.category == "City", timeout=10_000)
    landed(qtbot, controller)

    def accept(dialog: SampleDialog) -> int:
        dialog.shape.setCurrentText("sibling")
        dialog.size_spin.setValue(1)
        dialog.per_entity.setValue(2)
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(SampleDialog, "exec", accept)
    panel = controller.units.panel
    button = next(b for b in panel.findChildren(QPushButton) if b.text() == "Sample units…")
    button.click()
    qtbot.waitUntil(lambda: count_units(controller.store) == 4, timeout=30_000)
    landed(qtbot, controller)
    sampled = list_units(controller.store)
    qtbot.waitUntil(lambda: window.action_undo.isEnabled(), timeout=10_000)
    assert window.action_undo.text() == "&Undo 4 units sampled from City"

    undo(qtbot, window, controller)
    assert count_units(controller.store) == 0
    qtbot.waitUntil(lambda: panel.units_model.rowCount() == 0, timeout=10_000)
    redo(qtbot, window, controller)
    assert list_units(controller.store) == sampled  # the same units, under the same ids
    qtbot.waitUntil(lambda: panel.units_model.rowCount() == 4, timeout=10_000)
    (entry,) = history(controller.store, kinds=["unit"])
    assert (entry.source, entry.status) == ("gui", "redone")
