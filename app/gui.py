"""Start the GUI: application object, settings, main window, controller, session."""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn, cast

from app.appearance import apply_color_scheme, apply_theme, system_scheme_changed
from app.screenshot import offscreen_screen, save_screenshot, screenshot_target_ok
from core import APP_NAME
from core.desktop import paths
from core.desktop.logs import get_logger, setup_logging
from core.errors import UserFacingError

log = get_logger("gui")

SETTINGS_FILE = "TailLens.ini"
UI_SWITCH_INTERVAL_S = 0.001  # sys.setswitchinterval in the window's process (build_window)


class NoDisplayError(UserFacingError):
    pass


def _needs_offscreen(rendering_only: bool) -> bool:
    """A screenshot or a timing run needs no screen: render offscreen unless told otherwise."""
    return rendering_only and not os.environ.get("QT_QPA_PLATFORM")


def _check_display() -> None:
    if os.environ.get("QT_QPA_PLATFORM") or not sys.platform.startswith("linux"):
        return
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise NoDisplayError(
            "no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set). "
            "Run it in a desktop session, use 'taillens gui --screenshot out.png' to render "
            "offscreen, or use the command-line sub-commands (taillens --help)."
        )
    # Qt aborts the process (SIGABRT) on a display that is set but does not answer.
    from app.display import unreachable_display

    problem = unreachable_display()
    if problem is not None:
        raise NoDisplayError(
            f"{problem}. Start it in a running desktop session (or fix DISPLAY), use "
            "'taillens gui --screenshot out.png' to render offscreen, or use the "
            "command-line sub-commands (taillens --help)."
        )


def settings_path() -> Path:
    return paths.config_dir() / SETTINGS_FILE


def make_settings(path: Path | None = None):  # -> QSettings, typed lazily (light import)
    from PySide6.QtCore import QSettings

    return QSettings(str(path or settings_path()), QSettings.Format.IniFormat)


def scratch_settings(directory: Path):
    """Settings for a run that must leave the user's alone (``--screenshot``): a copy of
    them in ``directory``, so preferences apply but geometry, layout and recent files
    written during the run go to the copy."""
    import shutil

    copy = directory / SETTINGS_FILE
    if settings_path().is_file():
        shutil.copyfile(settings_path(), copy)
    return make_settings(copy)


def get_application():
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from resources import resource_path

    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setApplicationName(APP_NAME)
        app.setOrganizationName(APP_NAME)
        app.setWindowIcon(QIcon(str(resource_path("icons", "taillens.svg"))))
        apply_color_scheme(app)
        hints = app.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(lambda scheme: system_scheme_changed(app, scheme))
    return app


def load_theme(settings) -> str:
    """The theme chosen in Preferences (system, light or dark)."""
    from core.desktop.theme_choice import read_theme  # light: before the first paint

    return read_theme(settings)


def build_window(settings=None, hold_jobs: bool = False):
    """Main window and its controller, wired, with the saved layout restored.
    ``hold_jobs``: the jobs the panels start while they are built and the session is
    opened wait until ``controller.runner.release()``."""
    from widgets.main_window import MainWindow

    # Jobs run Python on worker threads, each keeping the GIL for up to the switch
    # interval at a time; with a few running, the UI thread waited a turn behind each
    # (benchmarks/ui_stall.py, the longest stall, median of 3 to 5 runs at load 3:
    # 104-127 ms at the default 5 ms, 70-100 ms at 1 ms). The window's process hands
    # the GIL round sooner; the command line keeps Python's default.
    sys.setswitchinterval(UI_SWITCH_INTERVAL_S)
    window = MainWindow(settings if settings is not None else make_settings())
    controller = wire_window(window, hold_jobs=hold_jobs)
    window.restore_layout()
    return window, controller


def build_shell(settings=None):
    """The main window's shell: menus, status bar and every dock (named, so the saved
    layout applies), each panel a placeholder. It imports Qt and the window's own light
    modules only, so it paints at once; :func:`wire_window` brings in the rest."""
    from widgets.main_window import MainWindow

    return MainWindow(settings if settings is not None else make_settings(), build_panels=False)


def wire_window(window, hold_jobs: bool = False):
    """Build the panels a shell left out (pyqtgraph, numpy, SQLAlchemy and the session
    store come in here) and their controllers; return the application controller."""
    from app.annotate import AnnotateController
    from app.browser import BrowserController
    from app.controller import AppController
    from app.likelihood import LikelihoodController
    from app.models import ModelsController
    from app.packs import PacksController
    from app.preferences import PreferencesController
    from app.references_pipeline import ReferencesController
    from app.report import ReportController
    from app.scores.controller import ScoresController
    from app.units import UnitsController
    from app.verbalise import VerbaliseController
    from app.window_state import CompareTicks, ReportOptionsMemory, TabMemory, UnitsViewMemory
    from core.desktop.dialog_memory import DialogMemory
    from widgets.annotate import AnnotatePanel
    from widgets.browser import BrowserPanel
    from widgets.report.panel import ReportPanel
    from widgets.scores import ScoresPanel
    from widgets.units.panel import UnitsPanel
    from widgets.verbalise import VerbalisePanel

    window.install_panels()
    panels = window.panels  # each built by its module (widgets/panels.py)
    # Dialogs reopen with the choices last accepted (kept in the window's settings).
    cast(ScoresPanel, panels["scores"]).dialog_memory = DialogMemory(window.settings, "score")
    cast(UnitsPanel, panels["units"]).dialog_memory = DialogMemory(window.settings, "sample")
    controller = AppController(window)
    if hold_jobs:
        controller.runner.hold()
    panels = window.panels  # each built by its module (widgets/panels.py)
    browser = cast(BrowserPanel, panels["browser"])
    # Each panel's controller gets the narrow context (app.context), not the controller.
    ctx = controller.panel_context(browser.state)
    controller.browser = BrowserController(ctx, browser)
    controller.likelihood = LikelihoodController(ctx, browser)
    controller.units = UnitsController(ctx, cast(UnitsPanel, panels["units"]))
    controller.verbalise = VerbaliseController(ctx, cast(VerbalisePanel, panels["verbalise"]))
    controller.scores = ScoresController(ctx, cast(ScoresPanel, panels["scores"]))
    controller.annotate = AnnotateController(ctx, cast(AnnotatePanel, panels["annotate"]))
    controller.report = ReportController(ctx, cast(ReportPanel, panels["report"]))
    controller.preferences_controller = PreferencesController(ctx, window)
    controller.packs = PacksController(ctx, window)
    controller.models = ModelsController(ctx, window)
    controller.references = ReferencesController(ctx, window)
    CompareTicks(ctx, browser)  # kept by the panel
    UnitsViewMemory(ctx, cast(UnitsPanel, panels["units"]))
    annotate = cast(AnnotatePanel, panels["annotate"])
    TabMemory(ctx.settings, annotate.tabs, "annotate/tab")
    report = cast(ReportPanel, panels["report"])
    ReportOptionsMemory(ctx.settings, report.state, report, "report/options")
    return controller


def install_excepthook(window) -> None:
    """Errors that escape a slot go to the error log panel and the log file; one written
    for the user (a :class:`UserFacingError`, e.g. a rating saved on a full disk) is shown
    as its message, not as a bug."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        if isinstance(error, UserFacingError):
            log.warning("%s", error)
            try:
                window.show_job_failure("The last action", str(error), "")
            except Exception:  # never let the hook itself raise
                previous(kind, error, tb)
            return
        details = "".join(traceback.format_exception(kind, error, tb))
        log.error("unexpected error\n%s", details)
        try:
            window.show_job_failure("Unexpected error", str(error) or kind.__name__, details)
        except Exception:  # never let the hook itself raise
            previous(kind, error, tb)

    sys.excepthook = hook


class _FirstPaintWatcher:
    """Calls ``callback`` once, when the window is first painted."""

    def __init__(self, window, callback) -> None:
        from PySide6.QtCore import QEvent, QObject

        class Filter(QObject):
            def eventFilter(self, obj, event):
                if event.type() == QEvent.Type.Paint and not watcher.fired:
                    watcher.fired = True
                    callback()
                return False

        watcher = self
        self.fired = False
        self.filter = Filter(window)
        window.installEventFilter(self.filter)


# Modules the first paint must not wait for (tests/app/test_first_paint.py holds it):
# ``--report-first-paint`` names those already imported when the window first paints.
HEAVY_AT_FIRST_PAINT = (
    "sqlalchemy",
    "pyqtgraph",
    "numpy",
    "core.store",
    "core.wikidata.records",
    "scipy",
    "torch",
    "transformers",
)


def heavy_modules_loaded() -> list[str]:
    return [
        name
        for name in HEAVY_AT_FIRST_PAINT
        if any(m == name or m.startswith(name + ".") for m in list(sys.modules))
    ]


@dataclass(frozen=True)
class LaunchOptions:
    """What ``taillens gui`` was asked for (see :func:`launch`)."""

    session: Path | None = None
    screenshot: Path | None = None
    size: tuple[int, int] = (1280, 800)
    report_first_paint: bool = False
    report_idle: bool = False
    show_panels: tuple[str, ...] = ()
    wait_for_jobs_s: float = 0.0
    force: bool = False
    dialog: str | None = None
    theme: str | None = None

    @property
    def rendering_only(self) -> bool:
        """A screenshot or a timing run: nobody sits at the window."""
        return self.screenshot is not None or self.report_first_paint


def launch(
    session: Path | None = None,
    screenshot: Path | None = None,
    size: tuple[int, int] = (1280, 800),
    report_first_paint: bool = False,
    report_idle: bool = False,
    show_panels: tuple[str, ...] = (),
    wait_for_jobs_s: float = 0.0,
    force: bool = False,
    dialog: str | None = None,
    theme: str | None = None,
) -> int:
    """Open the window. It paints first, as a shell (menus, status bar, docks holding
    placeholders: Qt and the window's light modules only); then, in the event loop, the
    panels and controllers are built in it (:func:`wire_window`), the session is opened
    (the status bar says "Opening session…" meanwhile) and the start-up jobs, held until
    then, start.

    ``--screenshot`` renders offscreen on a screen of ``size`` (the window fills it, a
    ``dialog`` is fitted to it as on a real screen of that size); ``theme`` (system,
    light, dark) replaces the preference for this run."""
    options = LaunchOptions(
        session=session,
        screenshot=screenshot,
        size=size,
        report_first_paint=report_first_paint or report_idle,
        report_idle=report_idle,
        show_panels=show_panels,
        wait_for_jobs_s=wait_for_jobs_s,
        force=force,
        dialog=dialog,
        theme=theme,
    )
    return _Launch(options).run()


class _Launch:
    """One run of the window, step by step: the platform and settings, the shell, the
    panels asked to be in front, then (in the event loop, after the first paint) the
    wiring, the session, and what a screenshot or timing run does once it is open."""

    def __init__(self, options: LaunchOptions) -> None:
        self.options = options
        self.status = 0  # the exit status when not 0 (a session or screenshot refused)
        self.controllers: list[object] = []  # the application controller, once wired
        self.scratch: Any = None  # a rendering-only run's own settings folder

    def run(self) -> int:
        options = self.options
        self._prepare_platform()
        self.app = get_application()
        self.window = self._build_shell()
        if options.screenshot is not None and not screenshot_target_ok(
            options.screenshot, options.force
        ):
            return 2  # refused before the window shows; again once the session is open
        if options.rendering_only:
            self.window.resize(*options.size)
        if not self._show_panels():
            return 2  # before the panels and the session: nothing to shut down
        exit_code = self._show_and_wait()
        self.window.settings.sync()  # written now: end_process skips QSettings' destructor
        if self.scratch is not None:
            self.scratch.cleanup()
        if self.status:
            return self.status
        if options.screenshot is not None and not options.screenshot.exists():
            print(f"taillens: could not write screenshot {options.screenshot}", file=sys.stderr)
            return 1
        return exit_code

    # -- before the window shows -----------------------------------------------------------
    def _prepare_platform(self) -> None:
        """Offscreen for a rendering-only run (on a screen of the asked size for a
        screenshot), the display checked, the log set up."""
        options = self.options
        if options.rendering_only:
            import tempfile

            self.scratch = tempfile.TemporaryDirectory(prefix="taillens-settings-")
        if _needs_offscreen(options.rendering_only):
            os.environ["QT_QPA_PLATFORM"] = "offscreen"
        if options.screenshot is not None and self.scratch is not None:
            offscreen_screen(Path(self.scratch.name), options.size)
        _check_display()
        setup_logging()

    def _build_shell(self):
        if self.scratch is not None:
            window = build_shell(scratch_settings(Path(self.scratch.name)))
            window.interactive = False  # nobody to ask: a session in use opens read-only
        else:
            window = build_shell()
        window.restore_layout()  # the docks exist, by name: the saved layout applies
        apply_theme(self.app, self.options.theme or load_theme(window.settings))
        install_excepthook(window)
        window.show_opening_session()
        return window

    def _show_panels(self) -> bool:
        """The panels asked to be in front (``--show``); False for an unknown one."""
        for key in self.options.show_panels:
            dock = self.window.docks.get(key)
            if dock is None:
                panels = ", ".join(self.window.docks)
                print(f"taillens: no panel {key!r} (panels: {panels})", file=sys.stderr)
                return False
            dock.show()
            dock.raise_()
        return True

    def _show_and_wait(self) -> int:
        from PySide6.QtCore import QTimer

        options, window = self.options, self.window
        if not options.rendering_only:
            window.place_on_screen()  # a real screen: filled on a first start, never overflowed
        watcher = _FirstPaintWatcher(window, self._on_first_paint)
        QTimer.singleShot(3000, self._wire)
        window.show()
        if options.rendering_only:
            # Again once shown: before show() the docks' minimum heights can still add up
            # (they are tabified when the layout is applied) and stretch the window past
            # the size asked.
            window.resize(*options.size)
        exit_code = self.app.exec()
        del watcher
        return exit_code

    # -- in the event loop -------------------------------------------------------------------
    def _on_first_paint(self) -> None:
        from PySide6.QtCore import QTimer

        if self.options.report_first_paint:
            print(f"first_paint_wall_time={time.time():.6f}", flush=True)
            print(f"first_paint_heavy_modules={','.join(heavy_modules_loaded())}", flush=True)
        QTimer.singleShot(0, self._wire)  # after this paint has reached the screen

    def _wire(self) -> None:
        # Once: after the first paint, or after 3 s should no paint come (a platform
        # that never exposes the window).
        if self.controllers:
            return
        controller = wire_window(self.window, hold_jobs=True)
        self.controllers.append(controller)
        self.app.aboutToQuit.connect(controller.shutdown)
        # In the same turn of the event loop: the panels take their first size (the
        # Browser splits itself by its controls' height) with the session's contents in.
        self._open_session(controller)

    def _open_session(self, controller) -> None:
        options = self.options
        if options.session is not None:
            if not controller.open_session(options.session):
                if controller.open_cancelled:
                    # "Cancel" in the session-in-use question: this window was opened
                    # for that session only; an empty window would be left behind.
                    self.app.quit()
                    return
                self.status = 2
        elif not controller.open_session(paths.default_session_path(), create=True):
            self.status = 2
        if options.report_first_paint:
            print(f"ready_wall_time={time.time():.6f}", flush=True)
            print(f"ready_heavy_modules={','.join(heavy_modules_loaded())}", flush=True)
            if not options.report_idle:
                self.app.quit()
                return
        controller.runner.release()  # the start-up jobs, held until the session is open
        if options.report_idle:
            self._report_when_idle(controller)
        if options.screenshot is not None:
            self._take_screenshot(controller, options.screenshot)

    def _report_when_idle(self, controller) -> None:
        """For benchmarks/window_idle.py: the first moment from which no job, view read
        or write ran for IDLE_HOLD_S (start-up timers can start one after a short
        pause), with the process's memory then and at its peak."""
        from PySide6.QtCore import QTimer

        since: list[float] = []

        def busy() -> bool:
            return (
                bool(controller.runner.active)
                or controller.browser.start_up_pending
                or controller.reads.pending()
                or not controller.writer.idle
            )

        def poll() -> None:
            now = time.time()
            if busy():
                since.clear()
            elif not since:
                since.append(now)
            elif now - since[0] >= IDLE_HOLD_S:
                print(f"idle_wall_time={since[0]:.6f}", flush=True)
                for key, value in process_memory_mb().items():
                    print(f"{key}={value}", flush=True)
                self.app.quit()
                return
            QTimer.singleShot(20, poll)

        poll()

    def _take_screenshot(self, controller, target: Path) -> None:
        from PySide6.QtCore import QTimer

        options, window, app = self.options, self.window, self.app
        if not screenshot_target_ok(target, options.force):  # now the session is open
            self.status = 2
            app.quit()
            return
        # Let pending layout and paint events settle (and, when asked, the jobs that
        # start-up runs, such as loading the demo data) before the grab.
        deadline = time.monotonic() + options.wait_for_jobs_s

        def grab_when_idle() -> None:
            busy = bool(controller.runner.active) or controller.browser.start_up_pending
            if busy and time.monotonic() < deadline:
                QTimer.singleShot(100, grab_when_idle)
            elif options.dialog is not None:
                from app.dialogs import open_dialog

                shown = open_dialog(controller, options.dialog)
                QTimer.singleShot(
                    500,
                    lambda: save_screenshot(window, target, app, force=options.force, dialog=shown),
                )
            else:
                QTimer.singleShot(
                    50, lambda: save_screenshot(window, target, app, force=options.force)
                )

        QTimer.singleShot(50 if not options.wait_for_jobs_s else 1500, grab_when_idle)


IDLE_HOLD_S = 1.0  # --report-idle: this long without work counts as idle


def process_memory_mb() -> dict[str, int]:
    """This process's resident memory now and at its peak, in MB (Linux: /proc; elsewhere
    the peak from getrusage)."""
    status = Path("/proc/self/status")
    if status.is_file():
        fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        return {
            "rss_mb": int(fields["VmRSS"].split()[0]) // 1024,
            "peak_rss_mb": int(fields["VmHWM"].split()[0]) // 1024,
        }
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"peak_rss_mb": peak // (1024 * 1024 if sys.platform == "darwin" else 1024)}


def end_process(status: int) -> NoReturn:
    """End the GUI process once ``launch`` has returned: by then the session is closed
    (``AppController.shutdown``: pending saves written, jobs stopped), the settings are
    synced, and here the logs and output streams are flushed. What is left is Python's
    own teardown: destroying every Qt object one by one and collecting the whole heap
    (about 3 s, most of the old quit time), which has nothing to save, so it is skipped."""
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
