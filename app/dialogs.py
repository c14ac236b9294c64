"""Every dialog of the window, by name, opened without blocking: for
``taillens gui --screenshot PNG --dialog NAME`` (the docs' pictures) and for the tests
that check each one fits a 1024 × 640 screen with its buttons visible.

Each opener builds the dialog the way its panel or menu does (the same class, the same
choices) and shows it non-modally; nothing is run when it closes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core.errors import UserFacingError

if TYPE_CHECKING:
    from app.controller import AppController


class UnknownDialogError(UserFacingError):
    pass


def _score(app: AppController) -> Any:
    from app.scores.dialog import score_choices
    from core.local_models.placement import accelerator_likely
    from core.metrics.meteor import wordnet_status

    # As the Score… button offers it (WordNet and a GPU looked for), without the scan
    # of the model folders that the button runs in a job.
    scores = app.scores
    choices = score_choices(
        [], scores.data, wordnet_status(), scores.model_notes, accelerator=accelerator_likely()
    )
    return scores.panel.open_score_dialog(choices)


def _import(app: AppController) -> Any:
    from widgets.import_dialog import ImportLanguageDialog

    return ImportLanguageDialog("webnlg_release_v3.0_en_train.xml", app.window)


def _sample(app: AppController) -> Any:
    from widgets.units import SampleDialog

    return SampleDialog(app.units.panel, app.units.panel.dialog_memory)


def _override(app: AppController) -> Any:
    from core.units.builder.render import RenderedTriple
    from widgets.units import OverrideDialog

    triple = RenderedTriple(0, "Paris", "country", "France", "Q90", "P17", "Q142")
    return OverrideDialog(triple, "en", app.units.panel)


def _preferences(app: AppController) -> Any:
    return app.preferences_controller.open()


def _export(app: AppController) -> Any:
    from widgets.plot_export import ExportDialog

    panel = app.report.panel
    return ExportDialog(panel, getattr(panel, "_last_export_options", None))


def _category(app: AppController) -> Any:
    from widgets.category_dialog import CategoryDialog

    return CategoryDialog(None, app.browser.panel)


def _synonyms(app: AppController) -> Any:
    return app.scores.open_synonyms() or app.scores.panel.open_synonym_dialog()


def _retrieval(app: AppController) -> Any:
    from widgets.retrieval_dialog import RetrievalDialog

    return app.scores.retrieval.open_dialog() or RetrievalDialog(app.scores.panel)


def _unit_search(app: AppController) -> Any:
    from widgets.unit_search import UnitSearchDialog

    return UnitSearchDialog(app.units.panel, category=app.browser.panel.category)


def _statistics(app: AppController) -> Any:
    """The session's statistics, computed here (small sessions: this is for pictures and
    tests; the menu runs the same job in the background)."""
    from core.jobs import JobSucceeded, run_job
    from core.report.dataset_stats import CHECKS, stats_job
    from widgets.dataset_stats import DatasetStatsDialog

    if app.store is not None:
        outcome = run_job(stats_job(app.store))
        if isinstance(outcome, JobSucceeded):
            stats, findings = outcome.result[0], outcome.result[1]
            return app.window.show_dataset_statistics(stats.tables(), findings, CHECKS, stats.units)
    return app.window.dataset_stats_dialog or DatasetStatsDialog(app.window)


def _shortcuts(app: AppController) -> Any:
    return app.window.show_shortcuts()


def _getting_started(app: AppController) -> Any:
    return app.window.show_getting_started()


def _about(app: AppController) -> Any:
    return app.window.about_box()


def _packs(app: AppController) -> Any:
    return app.packs.open()


def _pack(app: AppController) -> Any:
    from widgets.annotation_packs import PackForm

    return PackForm(["ana", "ben"], app.window)


def _models(app: AppController) -> Any:
    return app.models.open_dialog()


def _train(app: AppController) -> Any:
    return app.verbalise.train.open_dialog()


def _references(app: AppController) -> Any:
    return app.references.open_dialog()


def _golden(app: AppController) -> Any:
    from widgets.annotate.golden import GoldenAnswerDialog

    return GoldenAnswerDialog(4, None, app.annotate.panel, who="ana")


# name → (what it is, opener)
DIALOGS: dict[str, tuple[str, Callable[[AppController], Any]]] = {
    "score": ("Scores ▸ Score…", _score),
    "import": ("File ▸ Import… (language of unmarked texts)", _import),
    "sample": ("Units ▸ Sample…", _sample),
    "override": ("Units ▸ a triple's own words", _override),
    "preferences": ("File ▸ Preferences…", _preferences),
    "export": ("Export figure (Report, Browser)", _export),
    "category": ("Browser ▸ New category…", _category),
    "synonyms": ("Scores ▸ Synonyms…", _synonyms),
    "retrieval": ("Scores ▸ Find similar texts…", _retrieval),
    "search": ("Units ▸ Search…", _unit_search),
    "statistics": ("View ▸ Dataset statistics…", _statistics),
    "shortcuts": ("Help ▸ Keyboard shortcuts", _shortcuts),
    "guide": ("Help ▸ Getting started", _getting_started),
    "about": ("Help ▸ About TailLens", _about),
    "packs": ("File ▸ Annotation packs…", _packs),
    "pack": ("File ▸ Annotation packs… ▸ New pack…", _pack),
    "models": ("File ▸ Models…", _models),
    "train": ("Verbalise ▸ Model ▸ Train…", _train),
    "references": ("File ▸ References pipeline…", _references),
    "golden": ("Annotate ▸ Known answer…", _golden),
}


def check_dialog_name(name: str) -> str:
    if name not in DIALOGS:
        raise UnknownDialogError(f"no dialog {name!r} (dialogs: {', '.join(DIALOGS)})")
    return name


def open_dialog(app: AppController, name: str) -> Any:
    """Open dialog ``name`` (shown, not blocking) and return it."""
    dialog = DIALOGS[check_dialog_name(name)][1](app)
    if not dialog.isVisible():
        dialog.show()
    dialog.raise_()
    return dialog
