"""Start the GUI: application object, settings, main window, controller, session."""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from pathlib import Path
from types import TracebackType
from typing import NoReturn, cast

from app.appearance import apply_color_scheme, apply_theme, system_scheme_changed
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
    from core.desktop.theme import read_theme  # light: before the first paint

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
    from widgets.units import UnitsPanel
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
    scratch = None
    report_first_paint = report_first_paint or report_idle
    if screenshot is not None or report_first_paint:
        import tempfile

        scratch = tempfile.TemporaryDirectory(prefix="taillens-settings-")
    if _needs_offscreen(screenshot is not None or report_first_paint):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    if screenshot is not None and scratch is not None:
        _offscreen_screen(Path(scratch.name), size)
    _check_display()
    setup_logging()
    app = get_application()
    from PySide6.QtCore import QTimer

    if scratch is not None:
        window = build_shell(scratch_settings(Path(scratch.name)))
        window.interactive = False  # nobody to ask: a session in use opens read-only
    else:
        window = build_shell()
    window.restore_layout()  # the docks exist, by name: the saved layout applies to the shell
    apply_theme(app, theme or load_theme(window.settings))
    install_excepthook(window)
    window.show_opening_session()

    if screenshot is not None and not _screenshot_target_ok(screenshot, force):
        return 2  # refused before the window shows; again once the session is open
    if screenshot is not None or report_first_paint:
        window.resize(*size)
    for key in show_panels:
        dock = window.docks.get(key)
        if dock is None:
            print(
                f"taillens: no panel {key!r} (panels: {', '.join(window.docks)})", file=sys.stderr
            )
            return 2  # before the panels and the session: nothing to shut down
        dock.show()
        dock.raise_()

    status = 0
    controllers: list[object] = []  # the application controller, once wired

    def wire() -> None:
        # Once: after the first paint, or after 3 s should no paint come (a platform
        # that never exposes the window).
        if controllers:
            return
        controller = wire_window(window, hold_jobs=True)
        controllers.append(controller)
        app.aboutToQuit.connect(controller.shutdown)
        # In the same turn of the event loop: the panels take their first size (the
        # Browser splits itself by its controls' height) with the session's contents in.
        open_session(controller)

    def open_session(controller) -> None:
        nonlocal status
        if session is not None:
            if not controller.open_session(session):
                if controller.open_cancelled:
                    # "Cancel" in the session-in-use question: this window was opened
                    # for that session only; an empty window would be left behind.
                    app.quit()
                    return
                status = 2
        elif not controller.open_session(paths.default_session_path(), create=True):
            status = 2
        if report_first_paint:
            print(f"ready_wall_time={time.time():.6f}", flush=True)
            print(f"ready_heavy_modules={','.join(heavy_modules_loaded())}", flush=True)
            if not report_idle:
                app.quit()
                return
        controller.runner.release()  # the start-up jobs, held until the session is open
        if report_idle:
            report_when_idle(controller)
        if screenshot is not None:
            take_screenshot(controller, screenshot)

    def report_when_idle(controller) -> None:
        # For benchmarks/window_idle.py: the first moment from which no job, view read or
        # write ran for IDLE_HOLD_S (start-up timers can start one after a short pause),
        # with the process's memory then and at its peak.
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
                app.quit()
                return
            QTimer.singleShot(20, poll)

        poll()

    def take_screenshot(controller, target: Path) -> None:
        nonlocal status
        if not _screenshot_target_ok(target, force):  # now the session is open
            status = 2
            app.quit()
            return
        # Let pending layout and paint events settle (and, when asked, the jobs that
        # start-up runs, such as loading the demo data) before the grab.
        deadline = time.monotonic() + wait_for_jobs_s

        def grab_when_idle() -> None:
            busy = bool(controller.runner.active) or controller.browser.start_up_pending
            if busy and time.monotonic() < deadline:
                QTimer.singleShot(100, grab_when_idle)
            elif dialog is not None:
                from app.dialogs import open_dialog

                shown = open_dialog(controller, dialog)
                QTimer.singleShot(
                    500, lambda: _save_screenshot(window, target, app, force=force, dialog=shown)
                )
            else:
                QTimer.singleShot(50, lambda: _save_screenshot(window, target, app, force=force))

        QTimer.singleShot(50 if not wait_for_jobs_s else 1500, grab_when_idle)

    def on_first_paint() -> None:
        if report_first_paint:
            print(f"first_paint_wall_time={time.time():.6f}", flush=True)
            print(f"first_paint_heavy_modules={','.join(heavy_modules_loaded())}", flush=True)
        QTimer.singleShot(0, wire)  # after this paint has reached the screen

    if screenshot is None and not report_first_paint:
        window.place_on_screen()  # a real screen: filled on a first start, never overflowed
    watcher = _FirstPaintWatcher(window, on_first_paint)
    QTimer.singleShot(3000, wire)
    window.show()
    if screenshot is not None or report_first_paint:
        # Again once shown: before show() the docks' minimum heights can still add up (they
        # are tabified when the layout is applied) and stretch the window past the size asked.
        window.resize(*size)
    exit_code = app.exec()
    del watcher
    window.settings.sync()  # written now: end_process skips QSettings' destructor
    if scratch is not None:
        scratch.cleanup()
    if status:
        return status
    if screenshot is not None and not screenshot.exists():
        print(f"taillens: could not write screenshot {screenshot}", file=sys.stderr)
        return 1
    return exit_code


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


def _screenshot_target_ok(target: Path, force: bool) -> bool:
    """Whether the screenshot may be written there; if not, says why on stderr."""
    from core.errors import UserFacingError
    from core.io.output_guard import check_output_target

    try:  # the open session, or another, is no place for a PNG
        check_output_target(target, force=force)
    except UserFacingError as error:
        print(f"taillens: {error}", file=sys.stderr)
        return False
    return True


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


def _offscreen_screen(directory: Path, size: tuple[int, int]) -> None:
    """Qt's offscreen platform with one screen of ``size`` (its default is 800 × 800), so
    the window and its dialogs are laid out as on a real screen of that size. A
    configuration the caller gave (``offscreen:configfile=…``) is kept."""
    import json

    if os.environ.get("QT_QPA_PLATFORM") != "offscreen":
        return
    width, height = size
    config = directory / "screen.json"
    screen = {"name": "screen", "x": 0, "y": 0, "width": width, "height": height}
    screen.update({"logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1})
    config.write_text(json.dumps({"windowFrameMargins": False, "screens": [screen]}))
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"


def _composed(window, dialog):
    """The window's picture with ``dialog`` drawn over it where it stands (a frameless
    offscreen dialog gets a thin border)."""
    from PySide6.QtGui import QColor, QPainter, QPen

    picture = window.grab()
    if dialog is None or not dialog.isVisible():
        return picture
    dialog_picture = dialog.grab()
    origin = dialog.geometry().topLeft() - window.geometry().topLeft()
    painter = QPainter(picture)
    painter.fillRect(
        origin.x() + 4, origin.y() + 4, dialog.width(), dialog.height(), QColor(0, 0, 0, 60)
    )
    painter.drawPixmap(origin, dialog_picture)
    painter.setPen(QPen(QColor("#777777"), 1))
    painter.drawRect(origin.x(), origin.y(), dialog.width() - 1, dialog.height() - 1)
    painter.end()
    return picture


def _save_screenshot(window, target: Path, app, *, force: bool = False, dialog=None) -> None:
    """The window (and ``dialog`` over it) as PNG, written like every export
    (core.formats.common.atomic_output: a temporary file moved into place, never over a
    session)."""
    from PySide6.QtCore import QBuffer, QIODevice

    from core.errors import UserFacingError
    from core.formats.common import atomic_output

    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    try:
        if not _composed(window, dialog).save(buffer, "PNG"):
            log.error("could not render the screenshot for %s", target)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(target, binary=True, force=force) as handle:
            handle.write(bytes(buffer.data().data()))
    except (UserFacingError, OSError) as error:
        log.error("could not save screenshot to %s: %s", target, error)
    finally:
        app.quit()
