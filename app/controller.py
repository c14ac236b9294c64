"""Wiring between the main window, the session store and the job runner.

The controller owns the open :class:`core.store.SessionStore` and answers the
window's requests (new, open, save as). Failures become messages in the window;
they never close it and never touch the file that could not be opened.

It also owns the one change notification (:class:`app.changes.SessionChanges`): when a
job ends, the topics it declared in ``Job.writes`` are announced there, and every panel
reloads what it shows of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from app.changes import SessionChanges
from app.context import PanelContext, WindowNotify
from app.edits import HistoryView, SessionUndo, message_with_undo
from app.jobrunner import JobHandle, QtJobRunner
from app.session_io import SessionWriter, ViewReads
from core.changes import EVERYTHING
from core.desktop.logs import get_logger
from core.errors import UserFacingError
from core.jobs import Job, JobFailed, JobSucceeded, JobWasCancelled
from core.store import SessionError, SessionStore
from widgets.main_window import MainWindow

if TYPE_CHECKING:
    from app.annotate import AnnotateController
    from app.browser import BrowserController
    from app.likelihood import LikelihoodController
    from app.models import ModelsController
    from app.packs import PacksController
    from app.preferences import PreferencesController
    from app.references_pipeline import ReferencesController
    from app.report import ReportController
    from app.scores.controller import ScoresController
    from app.units import UnitsController
    from app.verbalise import VerbaliseController
    from core.changes import Topics
    from core.desktop.preferences import Preferences
    from core.formats.report import ExportReport, ImportReport
    from core.io.session_lock import SessionLock
    from core.jobs import JobOutcome
    from core.wikidata.browser_state import BrowserState

log = get_logger("controller")

WRITER_FLUSH_S = 5.0  # how long quitting waits for writes queued behind a lock


class AppController(QObject):
    session_changed = Signal(object)  # SessionStore | None
    # The session is about to close (another opens, or the app quits): panels write
    # what they still hold for it (the Browser's pending tier save) before it does.
    session_closing = Signal(object)  # SessionStore
    # A read of the session skipped damaged rows (core.store.integrity); emitted from the
    # reading thread, shown on the UI thread.
    damaged_rows_skipped = Signal(str)
    # The panel controllers, set by app.gui.build_window.
    browser: BrowserController
    units: UnitsController
    verbalise: VerbaliseController
    scores: ScoresController
    annotate: AnnotateController
    report: ReportController
    likelihood: LikelihoodController
    preferences_controller: PreferencesController
    packs: PacksController
    models: ModelsController
    references: ReferencesController
    # What every panel's controller is given instead of this object (app.context).
    context: PanelContext
    # How long a write on a worker thread (a job, the session writer) waits for a lock
    # held elsewhere before it is told so; nothing on the UI thread waits for it at all.
    busy_timeout_s = 5.0

    def __init__(self, window: MainWindow, runner: QtJobRunner | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.runner = runner or QtJobRunner(parent=self)
        self.store: SessionStore | None = None
        self.session_lock: SessionLock | None = None  # this window's hold on the session
        self.open_cancelled = False  # the last open_session was cancelled by the user
        # What jobs and edits wrote: panels subscribe to the topics they show.
        self.changes = SessionChanges(self)
        self.changes.subscribe(EVERYTHING, lambda _topics: self.refresh(), self)
        # The session rule (app.session_io): view reads off the UI thread, newest wins;
        # every write the UI starts goes through one writer that never waits on the UI
        # thread for SQLite's lock.
        self.reads = ViewReads(self.runner, lambda: self.store, self)
        self.writer = SessionWriter(self.changes, lambda: self.store, self)
        self.writer.waiting.connect(self._write_waits)
        self.writer.caught_up.connect(
            lambda what: window.statusBar().showMessage(f"Saved: {what}", 10_000)
        )
        self.writer.failed.connect(
            lambda what, message, details: window.show_error("Not saved", message, details)
        )
        self.damaged_rows_skipped.connect(
            lambda notice: self.window.show_error("Damaged rows skipped", notice)
        )
        # The open session's undo stack (app.edits): every edit a panel makes goes
        # through it and the writer; the Edit menu shows what it would undo or redo.
        self.undo = SessionUndo(
            self.writer,
            self.reads,
            lambda: self.store,
            raise_panel=lambda key: window.raise_panel(key) if key in window.docks else None,
            show_error=lambda title, message: window.show_error(title, message),
            announce=message_with_undo(window),
            parent=self,
        )
        self.undo.changed.connect(self._show_undo_state)
        window.undo_requested.connect(lambda: self.undo.undo())
        window.redo_requested.connect(lambda: self.undo.redo())
        self.session_changed.connect(self.undo.reset)
        self.history = HistoryView(self.undo, self.reads, lambda: self.store, window, self)
        window.history_requested.connect(self.history.open)

        window.new_session_requested.connect(lambda path: self.new_session(Path(path)))
        window.open_requested.connect(lambda path: self.open_session(Path(path)))
        window.save_copy_requested.connect(
            lambda path, switch: self.save_copy(Path(path), switch=switch)
        )
        window.job_status.cancel_requested.connect(self.runner.cancel)
        self.runner.job_started.connect(self._on_job_started)
        self.runner.job_finished.connect(self._on_job_finished)
        from core.formats import EXPORT_FORMATS, IMPORT_FORMATS

        window.set_transfer_formats(
            [(name, f.description, f.file_filter) for name, f in IMPORT_FORMATS.items()],
            [(name, f.description, f.file_filter) for name, f in EXPORT_FORMATS.items()],
        )
        window.import_requested.connect(lambda path, fmt: self.import_file(Path(path), fmt))
        window.import_options_requested.connect(
            lambda path, fmt, lang: self.import_file(Path(path), fmt, lang=lang or None)
        )
        window.dataset_stats_requested.connect(self.show_dataset_statistics)
        window.export_requested.connect(lambda path, fmt: self.export_file(Path(path), fmt))

    def panel_context(self, browser_state: BrowserState) -> PanelContext:
        """The narrow context the panels' controllers share (app.context), made once the
        panels exist (the Browser's state is shared through it)."""
        ctx = PanelContext(
            store=lambda: self.store,
            reads=self.reads,
            writer=self.writer,
            changes=self.changes,
            run_job=self.run_job,
            notify=WindowNotify(self.window),
            settings=self.window.settings,
            docks=self.window.docks.get,
            browser_state=browser_state,
            show_task=self.window.show_task,
            parent=self,
        )
        ctx.undo = self.undo
        self.session_changed.connect(ctx.session_changed)
        self.session_closing.connect(ctx.session_closing)
        self.context = ctx
        return ctx

    def _show_undo_state(self) -> None:
        undo = self.undo
        self.window.set_undo_state(
            undo.can_undo(), undo.undo_text(), undo.can_redo(), undo.redo_text()
        )

    @property
    def preferences(self) -> Preferences | None:
        """The preferences in force (app.preferences sets them on the context)."""
        context = getattr(self, "context", None)
        return None if context is None else context.preferences

    # -- sessions ----------------------------------------------------------------------
    def open_session(self, path: Path, *, create: bool = False) -> bool:
        """Open ``path`` (creating it if asked); on failure keep the current session.
        A session another TailLens window has open (its lock file, core.io.session_lock)
        is opened read-only, anyway, or not, as the user chooses."""
        from core.io.session_lock import SessionInUseError, SessionLock

        lock: SessionLock | None = None
        read_only = False
        self.open_cancelled = False
        try:
            lock = SessionLock.acquire(path)
        except SessionInUseError as busy:
            choice = self.window.ask_session_in_use(path.name, busy.holder.describe())
            if choice == "cancel":
                self.open_cancelled = True  # the user's choice, not a failure
                return False
            read_only = choice == "read_only"
        try:
            timeout = self.busy_timeout_s
            store = (
                SessionStore.open_read_only(path, busy_timeout_s=timeout)
                if read_only
                else SessionStore.open(path, create=create, busy_timeout_s=timeout)
            )
        except SessionError as error:
            if lock is not None:
                lock.release()
            log.warning("could not open %s: %s", path, error)
            self.window.show_error("Cannot open session", str(error))
            return False
        self._switch_to(store, lock)
        if store.migrated_from is not None:
            self.window.statusBar().showMessage(
                f"Session upgraded from schema {store.migrated_from} to "
                f"{store.schema_revision}; the old file was kept as {store.backup_path}",
                15_000,
            )
        return True

    def new_session(self, path: Path) -> bool:
        from core.io.session_lock import SessionInUseError, SessionLock

        try:
            lock: SessionLock | None = SessionLock.acquire(path)
        except SessionInUseError:
            lock = None  # the file exists (create refuses it below)
        try:
            store = SessionStore.create(path, busy_timeout_s=self.busy_timeout_s)
        except SessionError as error:
            if lock is not None:
                lock.release()
            self.window.show_error("Cannot create session", str(error))
            return False
        self._switch_to(store, lock)
        return True

    def save_copy(self, destination: Path, *, switch: bool) -> bool:
        """Write a consistent copy of the session; with ``switch``, continue in the copy."""
        if self.store is None:
            return False
        try:
            self.store.copy_to(destination, overwrite=True)
        except (UserFacingError, OSError) as error:
            self.window.show_error("Cannot save a copy", str(error))
            return False
        if switch:
            return self.open_session(destination)
        self.window.statusBar().showMessage(f"Copy saved as {destination}", 10_000)
        return True

    def _write_waits(self, what: str) -> None:
        self.window.show_message(
            "Session busy",
            f"The session is being written by another program or a long job, so {what} "
            "waits: it is kept and saved as soon as the session is free (the status bar "
            "says when).",
        )

    def refresh(self) -> None:
        info = self.store.info() if self.store is not None else None
        self.window.show_session(info)
        if self.store is not None and self.store.read_only:
            self.window.setWindowTitle(f"{self.window.windowTitle()} (read-only)")

    def _switch_to(self, store: SessionStore, lock: SessionLock | None = None) -> None:
        if self.store is not None:
            self.session_closing.emit(self.store)
        holding = [h for h in self.runner.active.values() if h.job.uses_session]
        if holding:
            # These jobs hold the old session; let them stop before it closes under them.
            for handle in holding:
                handle.cancel()
            if not self.runner.wait_for(holding, timeout_s=10):
                log.warning("a job still runs on %s after cancel", self.store)
        if self.store is not None:
            # Its queued writes still land (or are given up with a message); then it closes.
            self.writer.retire(self.store)
        if self.session_lock is not None:
            self.session_lock.release()
        self.store, self.session_lock = store, lock
        store.integrity.listeners.append(self.damaged_rows_skipped.emit)
        self.refresh()
        self.session_changed.emit(store)

    # -- import and export ------------------------------------------------------------------
    def import_file(
        self, path: Path, format_name: str, lang: str | None = None
    ) -> JobHandle | None:
        """Import ``path`` (a file, or a folder of WebNLG XML) into the session as a job;
        its summary is shown when done. ``format_name`` "auto" detects the format;
        ``lang`` is the language of WebNLG texts that carry none."""
        from core.changes import IMPORT_WRITES
        from core.formats import IMPORT_FORMATS, FormatError, detect_format
        from core.formats.common import IMPORT_KEPT
        from core.formats.webnlg.importer import check_import_path, file_language

        store = self.store
        if store is None:
            self.window.show_error("No session", "Open or create a session to import into.")
            return None
        options: dict[str, Any] = {}
        try:
            if format_name == "auto":
                format_name = detect_format(path)
            if format_name in ("webnlg", "tailnlg"):
                check_import_path(path)
                if lang:
                    file_language("", lang)
                    options["lang"] = lang
        except FormatError as error:
            self.window.show_error("Cannot import", str(error))
            return None
        entry = IMPORT_FORMATS[format_name]
        job = Job(
            f"Import {path.name}",
            lambda ctx: entry.function(store, path, ctx=ctx, **options),
            kind="import",
            params={"file": str(path), "format": format_name, **options},
            writes=IMPORT_WRITES,
            kept=lambda: IMPORT_KEPT,
        )
        handle = self.run_job(job)
        handle.succeeded.connect(lambda outcome: self._show_import_report(path, outcome.result))
        return handle

    def _show_import_report(self, path: Path, report: ImportReport) -> None:
        files = getattr(report, "files", [])
        warnings = getattr(report, "warnings", [])
        details = "\n".join(
            [f"{e.where}: {e.reason}" for e in report.errors]
            + [f"{e.where} (imported): {e.reason}" for e in warnings]
            + (["", "Files:"] + [f.line() for f in files] if files else [])
        )
        text = f"{path.name}: {report.summary_line()}."
        if report.errors:
            text += " The entries listed under Details were skipped; the rest was imported."
        if warnings:
            text += f" {len(warnings)} imported entries look wrong (warnings under Details)."
        rules = {f"{f.language.lang} ({f.language.rule})" for f in files if f.unmarked}
        if len(rules) == 1:
            text += f" Texts without a language were taken as {rules.pop()}."
        self.window.show_message("Import finished", text, details)

    def show_dataset_statistics(self) -> JobHandle | None:
        """Compute the session's dataset statistics and checks in a job, then show them."""
        from core.report.dataset_stats import CHECKS, stats_job

        store = self.store
        if store is None:
            self.window.show_error("No session", "Open a session to see its statistics.")
            return None
        handle = self.run_job(stats_job(store))
        handle.succeeded.connect(
            lambda outcome: self.window.show_dataset_statistics(
                outcome.result[0].tables(), outcome.result[1], CHECKS, outcome.result[0].units
            )
        )
        return handle

    def export_file(self, path: Path, format_name: str) -> JobHandle | None:
        """Export the session to ``path`` as a job; its summary line goes to the status
        bar, and units the format could not hold are listed in a message."""
        from core.errors import UserFacingError
        from core.formats import EXPORT_FORMATS
        from core.io.output_guard import check_output_target

        store = self.store
        if store is None:
            return None
        try:
            # The open session, or any other, is never replaced from the GUI: the
            # message says so before any work (atomic_output checks again as it writes).
            check_output_target(path)
        except UserFacingError as error:
            self.window.show_error("Cannot export", str(error))
            return None
        entry = EXPORT_FORMATS[format_name]
        job = Job(
            f"Export {path.name}",
            lambda ctx: entry.function(store, path, ctx=ctx),
            kind="export",
            params={"file": str(path), "format": format_name},
        )
        handle = self.run_job(job)
        # On finished, not succeeded: the runner's own "done in x s" line comes between
        # the two and would replace the summary at once.
        handle.finished.connect(lambda outcome: self._show_export_report(path, outcome))
        return handle

    def _show_export_report(self, path: Path, outcome: JobOutcome[ExportReport]) -> None:
        if not isinstance(outcome, JobSucceeded):
            return
        report = outcome.result
        text = f"Exported to {path.name}: {report.summary_line()}"
        self.window.statusBar().showMessage(text, 15_000)
        details = "\n".join(f"{e.where}: {e.reason}" for e in report.skipped)
        skipped = ". The units listed under Details were not exported." if details else ""
        self.window.show_written("Export finished", f"{text}{skipped}", path, details)

    # -- jobs --------------------------------------------------------------------------
    def run_job(self, job: Job[Any]) -> JobHandle:
        return self.runner.submit(job)

    def _on_job_started(self, handle: JobHandle) -> None:
        handle.store_at_start = self.store
        if handle.job.quiet:
            return
        self.window.job_status.job_started(handle.id, handle.title)
        handle.progressed.connect(
            lambda progress, job_id=handle.id: self.window.job_status.job_progress(job_id, progress)
        )
        if self.store is not None:
            self._record_job_start(handle)

    def _on_job_finished(self, handle: JobHandle) -> None:
        outcome = handle.outcome
        if isinstance(outcome, JobFailed):  # quiet or not: a failure is always reported
            details = outcome.traceback
            if isinstance(outcome.error, UserFacingError):
                details = ""  # the message already says all a user needs
            self.window.show_job_failure(handle.title, outcome.message, details)
        written = handle.job.writes if handle.job.uses_session else frozenset()
        if handle.job.quiet:
            # Housekeeping is not shown nor recorded; what it wrote is still announced.
            self._announce_job(handle, written)
            return
        self.window.job_status.job_finished(handle.id)
        if isinstance(outcome, JobWasCancelled):
            self.window.statusBar().showMessage(f"{handle.title}: cancelled", 10_000)
        elif isinstance(outcome, JobSucceeded):
            self.window.statusBar().showMessage(
                f"{handle.title}: done in {outcome.elapsed_s:.1f} s", 10_000
            )
        if handle.store_at_start is not None and handle.store_at_start is self.store:
            self._record_job_end(handle, outcome)
        if not self._announce_job(handle, written):
            self.refresh()  # the job history (an announcement refreshes it with the counts)

    def _announce_job(self, handle: JobHandle, written: Topics) -> bool:
        """Tell the panels what the job wrote: done, cancelled or failed alike (a job
        commits as it goes, and keeps what it committed before it stopped). Nothing
        when the session it wrote to is no longer the open one."""
        if written and self.store is not None and handle.store_at_start is self.store:
            self.changes.announce(written)
            return True
        return False

    def _record_job_start(self, handle: JobHandle) -> None:
        """A job_history row, through the writer (set on the handle where it lands)."""
        job = handle.job

        def start(store: SessionStore) -> None:
            handle.history_id = store.record_job_start(job.kind, handle.title, job.params)

        # The history is a convenience: a locked session must not stop the job, and a
        # row that waits for the lock is not worth a message.
        self.writer.write(
            f"the start of {handle.title!r} in the job history",
            start,
            on_error=self._history_not_written,
            tell=False,
        )

    def _record_job_end(self, handle: JobHandle, outcome: JobOutcome[Any] | None) -> None:
        if isinstance(outcome, JobSucceeded):
            status, error = "done", None
        elif isinstance(outcome, JobWasCancelled):
            status, error = "cancelled", None
        else:
            status, error = "failed", getattr(outcome, "message", None)

        def end(store: SessionStore) -> None:
            # After start() in the writer's order: its row id is known by now.
            if handle.history_id is not None:
                store.record_job_end(handle.history_id, status, error)

        self.writer.write(
            f"the end of {handle.title!r} in the job history",
            end,
            on_error=self._history_not_written,
            tell=False,
        )

    @staticmethod
    def _history_not_written(error: UserFacingError) -> None:
        log.warning("job history not written: %s", error)

    # -- shutdown ------------------------------------------------------------------------
    def shutdown(self) -> None:
        """At quit: pending saves handed to the writer and written, jobs cancelled, the
        session closed. Only jobs whose work would be lost or left half-done are waited
        for: not a disposable one (``Job.disposable``: a demo snapshot still loading held
        the quit for 10 s)."""
        verbalise = getattr(self, "verbalise", None)  # absent where no panels were built
        if verbalise is not None:
            verbalise.flush_pending()
        if self.store is not None:
            self.session_closing.emit(self.store)
        self.runner.cancel_all()
        waited = [h for h in self.runner.active.values() if not h.job.disposable]
        if not self.runner.wait_for(waited, timeout_s=10):
            log.warning("a job did not stop within 10 s of cancel at shutdown")
        if not self.writer.idle:
            self.window.statusBar().showMessage("Saving the last changes…")
            lost = self.writer.flush(WRITER_FLUSH_S)
            for what in lost:
                log.warning(
                    "not saved at quit (the session stayed locked for %.0f s): %s",
                    WRITER_FLUSH_S,
                    what,
                )
        if self.store is not None:
            self.store.close()
            self.store = None
        if self.session_lock is not None:
            self.session_lock.release()
            self.session_lock = None
        # The job workers and the writer's thread end once their work is done, so a
        # closed window leaves no thread; no wait here: a disposable job still running
        # must not hold the quit.
        self.runner.stop(timeout_s=0)
        self.writer.stop(timeout_s=0)
