"""Nothing on the UI thread waits for SQLite's write lock (the session rule, app.session_io).

Another process holds ``BEGIN IMMEDIATE`` on the session (an uncommitted row, as in
test_readers_never_wait) while the test clicks through every panel: a category picked
in the Browser, a tier setting, a stored unit's words, a rating, the Verbalise settings,
Scores, Report, the dataset statistics (a job, so a job-history row). Before the session
writer, each write froze the window for the busy timeout and then dropped the action.
The assertions time nothing and do not depend on the machine's load: no statement on
the UI thread could wait for the lock (each write there ran with a busy timeout of 0, or
went to the writer's thread). How long the window stalls meanwhile is the figure of
benchmarks/ui_stall.py. When the lock is released, every queued write lands, in order.

The views' reads of the session are not on the UI thread either (app.session_io.ViewReads):
no SQL statement is run on the UI thread from the readers named in ``OFF_THE_UI_THREAD``
(the Browser table, the Verbalise and Report run lists and prompt preview, the annotation
queue, annotators and filter options, the Units panel's draft, list, its later pages and
stored unit, the Synonyms table), from the session's opening to the end of the clicks.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt

from app.gui import build_window
from core.store import SessionStore
from tests.fixtures.report_session import ReportSession, build_report_session
from tests.fixtures.write_lock_holder import HOLDER, ROOT

BUSY_TIMEOUT_S = 2.0  # the writer thread's wait before it says the session is busy
WRITES = ("BEGIN IMMEDIATE", "BEGIN EXCLUSIVE", "INSERT", "UPDATE", "DELETE", "REPLACE")


class UiThreadWrites:
    """Every statement on the UI thread that could wait for the write lock: a write, or
    a BEGIN that takes the lock, outside ``store.without_waiting()`` (busy timeout 0)."""

    def __init__(self, engine) -> None:
        from sqlalchemy import event

        self.seen: list[str] = []
        event.listen(engine, "before_cursor_execute", self._check)

    def _check(self, _conn, _cursor, statement: str, *_args) -> None:
        from core.store.engine import NO_WAIT

        if threading.current_thread() is not threading.main_thread() or NO_WAIT.get():
            return
        if statement.lstrip().upper().startswith(WRITES):
            self.seen.append(statement.split("\n")[0][:80])


# The panels' session reads that run off the UI thread (module stem . function).
OFF_THE_UI_THREAD = {
    "browser.BrowserController._columns",
    "browser.BrowserController.show_category",
    "browser.BrowserController.open_session_category",
    "browser.BrowserController.show_overlay",
    "verbalise.VerbaliseController.refresh_runs",
    "verbalise.VerbaliseController.show_outputs",
    "verbalise.VerbaliseController.update_preview",
    "report.ReportController.refresh_available",
    "report.ReportController.build",
    "report.ReportController.build_when_shown",
    "annotate.AnnotateController.build_queue",
    "annotate.AnnotateController.session_opened",
    "annotate.AnnotateController.choose_annotator",
    "annotate.AnnotateController._texts_changed",
    "annotate.AnnotateController._remember",
    "units.UnitsController.session_opened",
    "units.UnitsController.refresh_units",
    "units.UnitsController.show_unit",
    "units.UnitsController.more_units",
    "scores.synonyms._synonyms.<locals>.show_rows",
}


class UiThreadReads:
    """Which of the ``app`` controllers' functions read the session on the UI thread:
    each statement there (but a write tried without waiting) counts for every function
    of ``app/`` on the stack, named by its module under ``app`` (``units.…``,
    ``scores.synonyms.…``; every engine: the session's is made as it opens)."""

    def __init__(self) -> None:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        self.by: Counter[str] = Counter()
        self._app = ROOT / "app"
        event.listen(Engine, "before_cursor_execute", self._check)

    def stop(self) -> None:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        event.remove(Engine, "before_cursor_execute", self._check)

    def _check(self, *_args) -> None:
        from core.store.engine import NO_WAIT

        # A write the session writer tries at once (busy timeout 0) is not a view read.
        if threading.current_thread() is not threading.main_thread() or NO_WAIT.get():
            return
        frame = sys._getframe(1)
        while frame is not None:
            path = Path(frame.f_code.co_filename)
            if self._app in path.parents:
                module = ".".join(path.relative_to(self._app).with_suffix("").parts)
                self.by[f"{module}.{frame.f_code.co_qualname}"] += 1
            frame = frame.f_back


def drive(qtbot, steps, pause_ms: int = 40) -> None:
    """Run each step from the event loop, ``pause_ms`` apart (as clicks arrive)."""
    for step in steps:
        step()
        qtbot.wait(pause_ms)


def message(window) -> str:
    bar = window.last_message
    return "" if bar is None else f"{bar.title_label.text()} {bar.text()}"


@pytest.fixture
def ui_reads():
    """The UI thread's reads, from before the session opens (the panels' first reads)."""
    reads = UiThreadReads()
    yield reads
    reads.stop()  # a listener on every engine: never left behind for the next test


@pytest.fixture
def built(tmp_path: Path) -> ReportSession:
    from core.store.models import Category, CategoryMember, Entity

    built = build_report_session(tmp_path / "s.taillens")
    with SessionStore.open(built.path) as store, store.unit_of_work() as db:
        city = db.query(Category).filter_by(name="City").one()
        for entity in db.query(Entity):  # members, so that tiers can be saved
            db.add(CategoryMember(category_id=city.id, entity_id=entity.id))
    return built


def test_no_panel_waits_for_a_write_lock_held_by_another_process(
    qtbot, built: ReportSession, tmp_path: Path, ui_reads: UiThreadReads
) -> None:
    from core.annotation import rating_of
    from core.tiers.stored import load_member_tiers, load_tier_settings
    from core.units.builder.saved import list_units, load_unit
    from core.wikidata.category_store import LAST_CATEGORY_KEY

    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    controller.busy_timeout_s = BUSY_TIMEOUT_S  # the writer's thread says "waiting" then
    # The session's own cache as the Browser's source (no demo data to load).
    combo = controller.browser.panel.source_combo
    combo.setCurrentIndex(combo.findData("cache"))
    assert controller.open_session(built.path)
    ui_writes = UiThreadWrites(controller.store.engine)
    browser, annotate, units = controller.browser, controller.annotate, controller.units
    qtbot.waitUntil(
        lambda: not browser.start_up_pending and not controller.runner.active, timeout=30_000
    )
    apanel = annotate.panel
    qtbot.waitUntil(lambda: not controller.reads.pending(), timeout=30_000)  # the annotators
    apanel.annotator_combo.setCurrentIndex(apanel.annotator_combo.findText("ana"))
    apanel.annotator_combo.activated.emit(apanel.annotator_combo.currentIndex())
    qtbot.waitUntil(lambda: not controller.reads.pending(), timeout=30_000)  # the options
    apanel.model_combo.setCurrentIndex(apanel.model_combo.findData("model-a"))
    apanel.lang_combo.setCurrentIndex(apanel.lang_combo.findData("en"))
    apanel.blind_check.setChecked(False)  # the session's order (blind shuffles it)
    apanel.build_button.click()
    qtbot.waitUntil(lambda: not controller.reads.pending(), timeout=30_000)
    assert [item.unit_uid for item in annotate.queue.items] == ["u4", "u7", "u8"]
    unit_id, *_, other_unit = (u.id for u in list_units(controller.store))
    bpanel = browser.panel

    def select(name: str):
        return lambda: bpanel.category_combo.setCurrentText(name)

    def panels():
        return [lambda key=key: window.raise_panel(key) for key in window.panel_actions]

    def tiers():
        bpanel.split_combo.setCurrentIndex(1)  # head–tail threshold
        bpanel.fraction_spin.setValue(0.3)
        # Saved once the lines stop moving (before another category is picked: an edit
        # then is the Browser state's flush on switch).
        qtbot.waitUntil(lambda: not browser._save_timer.isActive(), timeout=5_000)

    def rate():
        apanel.setFocus()
        qtbot.keyClick(apanel, "4")
        qtbot.keyClick(apanel, "y")
        qtbot.keyClick(apanel, Qt.Key.Key_Return)

    def unit_words():
        units.show_unit(unit_id)
        units.override("en", 0, "subject", "Words written under a lock")

    synonyms: list = []  # the Synonyms dialog, closed once the lock is gone

    steps = [
        *panels(),
        select("Person"),
        select("City"),
        tiers,
        unit_words,
        rate,
        controller.verbalise.save_settings,
        controller.verbalise.refresh_runs,
        lambda: controller.verbalise.select_unit(other_unit),  # its preview: a read
        apanel.build_button.click,  # the annotation queue again
        lambda: controller.scores.refresh(),
        lambda: synonyms.append(controller.scores.open_synonyms()),  # its table: a read
        lambda: annotate.choose_annotator(-1),  # the annotators again (ana stays)
        lambda: controller.report.build(),
        controller.show_dataset_statistics,
        select("Person"),  # the category last viewed, once the lock is gone
        *panels(),
    ]
    # Warm up (modules imported, panels laid out) on the free session: the same clicks.
    drive(qtbot, [*panels(), select("Person"), select("City")])
    qtbot.waitUntil(lambda: controller.writer.idle and not controller.runner.active, timeout=30_000)
    preview = controller.verbalise.panel.preview
    first_preview = preview.toPlainText()  # the session's first unit

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(built.path)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdin is not None and holder.stdout is not None
        assert holder.stdout.readline().strip() == "holding"
        drive(qtbot, steps)
        # The tier save's debounce fires; the writer's thread finds the lock still held
        # after its busy timeout and says what waits.
        qtbot.waitUntil(lambda: "Session busy" in message(window), timeout=10_000)
        # The unit previewed under the lock: its triples were read all the same.
        qtbot.waitUntil(lambda: preview.toPlainText() not in ("", first_preview), timeout=10_000)
        assert "Input (the triples" in preview.toPlainText()
        assert controller.writer.queued, "nothing waited: was the lock held?"
        # Nothing on the UI thread could wait for the lock: every write it started was
        # tried without waiting (busy timeout 0) or handed to the writer's thread...
        assert ui_writes.seen == []
    finally:
        if holder.stdin is not None:
            holder.stdin.write("\n")
            holder.stdin.flush()
        holder.wait(30)
    assert holder.returncode == 0

    # The lock is free: every write asked for lands, in order, none dropped.
    qtbot.waitUntil(lambda: controller.writer.idle and not controller.runner.active, timeout=30_000)
    qtbot.waitUntil(lambda: not controller.reads.pending(), timeout=30_000)
    # The panels' reads of the session ran off the UI thread, and their results arrived.
    assert not set(ui_reads.by) & OFF_THE_UI_THREAD, sorted(set(ui_reads.by) & OFF_THE_UI_THREAD)
    assert synonyms[0].rows()  # its first use's starter set, landed once the lock went
    assert "Unit <b>" in units.panel.title.text() and unit_id == units.shown_unit
    synonyms[0].close()
    assert browser.state.category == "Person" and browser.state.table is not None
    assert controller.verbalise.panel.results.runs_model.rowCount() > 0
    assert [item.unit_uid for item in annotate.queue.items] == ["u4", "u7", "u8"]
    store = controller.store
    assert store.get_meta(LAST_CATEGORY_KEY) == "Person"
    assert load_tier_settings(store, "City").fraction == 0.3
    assert any(tier == "head" for tier, _sub in load_member_tiers(store, "City").values())
    assert load_unit(store, unit_id).triples["en"][0].subject_override == (
        "Words written under a lock"
    )
    ana, u4 = built.annotators["ana"], built.verbalisations[("model-a", "u4", "en")]
    saved = rating_of(store, ana, u4)
    assert saved is not None and (saved.fluency, saved.adequacy) == (4, 0)
    assert store.get_meta("verbalise:settings") is not None
    # The job history rows of the jobs started under the lock (the writer's too).
    kinds = {(h["kind"], h["status"]) for h in store.job_history()}
    assert {("stats", "done"), ("report", "done")} <= kinds
    controller.shutdown()
