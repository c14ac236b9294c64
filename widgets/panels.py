"""The dockable panels of the main window and what each will hold.

Each panel is described once here; the main window builds its docks, the View
menu and the default layout from this table. A panel's ``factory`` builds its widget
from its own module (e.g. ``widgets/browser.py``), imported when the window opens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget


@dataclass(frozen=True)
class PanelSpec:
    key: str
    title: str
    purpose: str
    area: Qt.DockWidgetArea
    shortcut: str
    factory: Callable[[PanelSpec], QWidget]

    @property
    def object_name(self) -> str:
        # Stable object names are what QMainWindow.saveState/restoreState key on.
        return f"dock-{self.key}"

    def build(self) -> QWidget:
        return self.factory(self)


def _browser(_spec: PanelSpec) -> QWidget:
    from widgets.browser import BrowserPanel

    return BrowserPanel()


def _units(_spec: PanelSpec) -> QWidget:
    from widgets.units.panel import UnitsPanel

    return UnitsPanel()


def _verbalise(_spec: PanelSpec) -> QWidget:
    from widgets.verbalise import VerbalisePanel

    return VerbalisePanel()


def _scores(_spec: PanelSpec) -> QWidget:
    from widgets.scores import ScoresPanel

    return ScoresPanel()


def _annotate(_spec: PanelSpec) -> QWidget:
    from widgets.annotate import AnnotatePanel

    return AnnotatePanel()


def _report(_spec: PanelSpec) -> QWidget:
    from widgets.report.panel import ReportPanel

    return ReportPanel()


LEFT = Qt.DockWidgetArea.LeftDockWidgetArea
RIGHT = Qt.DockWidgetArea.RightDockWidgetArea
BOTTOM = Qt.DockWidgetArea.BottomDockWidgetArea

PANELS: tuple[PanelSpec, ...] = (
    PanelSpec(
        "browser",
        "Browser",
        "Browse Wikidata by category, watch the distribution of statement counts build up "
        "live, and drag the Pareto cut-off and head–tail threshold that split head from "
        "long tail.",
        LEFT,
        "Ctrl+1",
        _browser,
    ),
    PanelSpec(
        "units",
        "Units",
        "Assemble data units of 1–7 triples (sibling, chain, mixed) from real claims in "
        "English, Italian and Spanish, edit them, import and export benchmark formats.",
        LEFT,
        "Ctrl+2",
        _units,
    ),
    PanelSpec(
        "verbalise",
        "Verbalise",
        "Verbalise units with local transformers models, the template verbaliser or an "
        "OpenAI-compatible server, with a live preview of the exact prompt.",
        RIGHT,
        "Ctrl+3",
        _verbalise,
    ),
    PanelSpec(
        "scores",
        "Scores",
        "Score verbalisations: BLEU, chrF++, ROUGE, BERTScore, perplexity, entity-based "
        "semantic adequacy and graph–text similarity.",
        RIGHT,
        "Ctrl+4",
        _scores,
    ),
    PanelSpec(
        "annotate",
        "Annotate",
        "Rate and correct verbalisations offline, keyboard first: fluency, adequacy, "
        "corrections promoted to gold references.",
        RIGHT,
        "Ctrl+5",
        _annotate,
    ),
    PanelSpec(
        "report",
        "Report",
        "Compare head and long tail, languages and models with proper statistics; export "
        "tables, plots and an HTML report.",
        RIGHT,
        "Ctrl+6",
        _report,
    ),
)


@dataclass(frozen=True)
class PanelCommand:
    """A panel's push button that is also a menu command (Actions menu), with a key:
    triggered, it brings the panel forward and presses the button (when it can be;
    ``widgets.commands`` makes the panel's QAction for it)."""

    panel: str
    name: str  # the command's name, unique in its panel
    button: str  # the panel's attribute holding the button
    text: str  # the menu item
    shortcut: str

    @property
    def key(self) -> str:
        return f"{self.panel}:{self.name}"


COMMANDS: tuple[PanelCommand, ...] = (
    PanelCommand("browser", "fetch", "fetch_button", "&Fetch category", "F5"),
    PanelCommand("browser", "demo", "demo_button", "Start with the &demo", ""),
    PanelCommand("units", "sample", "sample_button", "&Sample units…", "Ctrl+Shift+U"),
    PanelCommand("units", "search", "search_button", "Searc&h units…", ""),
    PanelCommand("verbalise", "run", "run_button", "&Verbalise (run)", "Ctrl+Shift+R"),
    PanelCommand("scores", "score", "score_button", "S&core…", "Ctrl+Shift+M"),
    PanelCommand("scores", "export_texts", "export_texts_button", "Export &texts…", ""),
    PanelCommand("annotate", "build_queue", "build_button", "Build the &annotation queue", ""),
    PanelCommand("report", "build", "build_button", "Build &report", "Ctrl+Shift+B"),
)
