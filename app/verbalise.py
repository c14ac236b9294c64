"""Wiring of the Verbalise panel: the models found, the prompt preview, runs as jobs.

The controller reads the panel's settings, builds a verbaliser with
``core.verbalise.open_verbaliser`` (cheap: a missing or broken model folder raises its
``ModelError`` here, before any run row exists) and runs ``core.verbalise.job.
verbalise_job`` through ``PanelContext.run_job`` (app.context), off the UI thread. The exact
prompt of a causal model needs its tokenizer (chat template): the first preview loads it
as a job, later previews reuse it. Settings, edited templates included, are kept in the
session meta, so a session reopens with the choices it was verbalised with.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer

from core.changes import Topic
from core.desktop.logs import get_logger
from core.errors import UserFacingError
from core.jobs import Job, JobContext, JobFailed, JobOutcome, JobSucceeded, JobWasCancelled
from core.vocab import LANGUAGE_NAMES
from widgets.theme import TONES

# The light variant; the panel shows it in the theme's (widgets.theme.recoloured).
ERROR = TONES["error"][0]

if TYPE_CHECKING:
    from app.context import PanelContext
    from app.jobrunner import JobHandle
    from core.local_models.loader import ModelInfo
    from core.store import SessionStore
    from core.verbalise import GenerationParams, Verbaliser
    from core.verbalise.base import Triples
    from core.verbalise.outcome import VerbaliseSummary
    from core.verbalise.runs import RunOverview, UnitSummary
    from widgets.verbalise import VerbalisePanel

log = get_logger("verbalise")
SETTINGS_META_KEY = "verbalise:settings"
# The panel's view reads (app.session_io.ViewReads keys): a newer one supersedes.
RUNS_READ = "verbalise.runs"
OUTPUTS_READ = "verbalise.outputs"
PREVIEW_READ = "verbalise.preview"  # the previewed unit's triples
_KIND_NOTES = {
    "template": "The template verbaliser reads no prompt: the templates apply to causal "
    "models and servers.",
    "seq2seq": "Seq2seq models read a task prefix and the <H> <R> <T> linearisation, not "
    "this template.",
}


class VerbaliseController(QObject):
    def __init__(self, ctx: PanelContext, panel: VerbalisePanel) -> None:
        from core.verbalise.prompts import DEFAULT_PRESET, PRESETS, default_templates
        from core.verbalise.runs import UNIT_PICKER_PAGE

        super().__init__(panel)
        self.ctx, self.panel = ctx, panel
        self.handle: JobHandle | None = None  # the run in progress
        self.summary: VerbaliseSummary | None = None  # the last run's
        self.unit_id: int | None = None  # the unit previewed and shown
        self.shown_run: int | None = None
        # The previewed unit's triples, by (unit, language), as last read.
        self._triples: dict[tuple[int, str], Triples | None] = {}
        self.page_size = UNIT_PICKER_PAGE  # units the picker reads at a time
        self._models_listed = False
        self.models: list[ModelInfo] = []  # the models listed
        # Built verbalisers for the preview, by (spec, device, dtype, server): a causal
        # one keeps its tokenizer, loaded once off the UI thread.
        self._preview_cache: dict[tuple[str, ...], Verbaliser] = {}
        self._tokenizer_ready: set[tuple[str, ...]] = set()
        self._tokenizer_jobs: dict[tuple[str, ...], JobHandle] = {}
        # A causal model's tokenizer (seconds, and hundreds of MB) loads for the preview
        # only once someone looks: the panel in view, or a model folder just added.
        self._preview_asked = False
        self.dock = ctx.dock("verbalise")
        if self.dock is not None:
            self.dock.visibilityChanged.connect(self._on_visibility)
        self._save_timer = QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(800)
        self._save_timer.timeout.connect(self.save_settings)

        panel.set_presets(
            {name: (label, default_templates(preset=name)) for name, label in PRESETS.items()},
            DEFAULT_PRESET,
        )
        panel.model_changed.connect(self.model_changed)
        panel.add_folder_requested.connect(self.add_folder)
        panel.rescan_requested.connect(self.rescan)
        from app.train import TrainController

        self.train = TrainController(ctx, self)  # the Train dialog (train-verbaliser)
        panel.template_edited.connect(lambda _lang: self.update_preview())
        panel.preview_requested.connect(self.update_preview)
        panel.settings_changed.connect(self._save_timer.start)
        panel.run_requested.connect(self.run)
        panel.cancel_requested.connect(self.cancel)
        panel.run_selected.connect(self.show_run)
        panel.results.scope_changed.connect(self.show_outputs)
        panel.unit_chosen.connect(self.select_unit)
        panel.unit_search_changed.connect(self.search_units)
        panel.more_units_requested.connect(self.more_units)
        ctx.unit_chosen.connect(self.select_unit)  # a saved unit picked in the Units panel
        ctx.session_changed.connect(lambda _store: self.session_opened())
        # Imports, sampling and saved units add units; imports and runs add texts.
        ctx.changes.subscribe({Topic.UNITS}, lambda _topics: self.refresh_units(), self)
        ctx.changes.subscribe({Topic.RUNS}, lambda _topics: self.refresh_runs(), self)
        ctx.undo.undone.connect(self._settings_moved)
        ctx.undo.redone.connect(self._settings_moved)

    # -- session ---------------------------------------------------------------------------
    def session_opened(self) -> None:
        self._save_timer.stop()
        self.summary, self.unit_id, self.shown_run = None, None, None
        store = self.ctx.store
        if store is None:
            return
        if not self._models_listed:
            self.refresh_models()
        self._triples.clear()
        units = self.refresh_units()
        saved = _load_settings(store)
        self.panel.apply_settings(saved)
        self.select_unit(units[0].id if units else None)
        self.refresh_runs()
        self.model_changed()
        wanted = saved.get("model")
        if wanted and wanted != self.panel.model_spec():
            self.panel.show_error(
                f"The model this session last used ({wanted}) is not found "
                "here any more: the template verbaliser is chosen. Add its "
                "folder on the Model tab."
            )

    def flush_pending(self) -> None:
        """Save now what the debounce timer would save shortly (at quit)."""
        if self._save_timer.isActive():
            self._save_timer.stop()
            self.save_settings()

    def save_settings(self) -> None:
        """Keep the panel's settings in the session: an edit on the session's undo stack."""
        from core.edits.settings import SettingEdit

        settings = json.dumps(self.panel.settings())
        self.ctx.undo.apply(
            SettingEdit(SETTINGS_META_KEY, settings, words="the Verbalise settings"),
            panel="verbalise",
            what="the Verbalise settings",
            # A session that cannot take them must not lose the UI.
            on_error=lambda error: log.warning("verbalise settings not saved: %s", error),
        )

    def _settings_moved(self, entry: Any) -> None:
        """An undo or redo of the Verbalise settings landed: the panel shows them (and
        showing them saves nothing)."""
        if entry.kind != "setting" or entry.target.get("key") != SETTINGS_META_KEY:
            return
        state = entry.before if entry.status == "undone" else entry.after
        try:
            data = json.loads(state or "{}")
        except ValueError:
            data = {}
        self.panel.apply_settings(data if isinstance(data, dict) else {})
        self._save_timer.stop()
        self.model_changed()

    # -- models ----------------------------------------------------------------------------
    def refresh_models(self) -> None:
        """List the models in the Hugging Face cache and the configured folders."""
        from core.local_models.loader import CAUSAL, SEQ2SEQ, discover_models, human_size

        try:
            found = [m for m in discover_models() if m.type in (CAUSAL, SEQ2SEQ)]
        except OSError as error:
            self.panel.show_error(f"Could not look for models: {error}")
            found = []
        self._models_listed = True
        self.models = found
        rows = []
        for model in found:
            where = "Hugging Face cache" if model.source == "hf-cache" else "model folder"
            # A cached model is named by its hub id, which other machines share.
            spec = model.name if model.source == "hf-cache" else str(model.path)
            rows.append(
                (
                    f"{model.name} · {model.type} · {human_size(model.size_bytes)}",
                    spec,
                    model.type,
                    f"{model.path}\n({where})",
                )
            )
        self.panel.show_models(rows)

    def rescan(self) -> None:
        self._preview_cache.clear()
        self._tokenizer_ready.clear()
        self.refresh_models()
        self.model_changed()

    def _on_visibility(self, visible: bool) -> None:
        if visible:
            self._preview_asked = True  # seen once: the preview is wanted from now on
            QTimer.singleShot(0, self, self.update_preview)

    def _preview_in_view(self) -> bool:
        return self._preview_asked or self.ctx.in_view("verbalise")

    def add_folder(self, folder: str) -> None:
        """Remember ``folder`` as a place with models, list what it holds, pick the first."""
        self._preview_asked = True
        from core.local_models.loader import (
            MODEL_DIRS_ENV,
            ModelError,
            check_model_folder,
            configured_model_folders,
            save_model_folders,
        )

        path = Path(folder).expanduser()
        from_env = {
            Path(p).expanduser() for p in os.environ.get(MODEL_DIRS_ENV, "").split(os.pathsep) if p
        }
        kept = [f for f in configured_model_folders() if f not in from_env]
        try:
            save_model_folders([*kept, path])
        except OSError as error:
            self.panel.show_error(f"Could not remember the folder {path}: {error}")
            return
        self.refresh_models()
        for index in range(self.panel.model_combo.count()):
            data = self.panel.model_combo.itemData(index)
            spec = data["spec"] if isinstance(data, dict) else ""
            if spec == str(path) or Path(spec).parent == path:
                self.panel.model_combo.setCurrentIndex(index)  # -> model_changed
                return
        try:
            check_model_folder(path)
            message = f"No text generation model found in {path}."
        except ModelError as error:
            message = f"No usable model in {path}: {error}"
        self.panel.show_error(message)

    def model_changed(self) -> None:
        """A new model, server, device or dtype: check it at once and redo the preview."""
        kind = self.panel.model_kind()
        self.panel.set_templates_editable(kind in ("causal", "openai"), _KIND_NOTES.get(kind, ""))
        self.panel.show_error(None)
        try:
            verbaliser = self._preview_verbaliser()
        except (UserFacingError, ValueError) as error:
            self.panel.show_error(str(error))
            self.panel.show_model_info("")
        else:
            self.panel.show_model_info(verbaliser.summary(self.models))
        self.update_preview()

    def _key(self, settings: dict[str, Any]) -> tuple[str, ...]:
        return (
            settings["model"],
            settings["device"],
            settings["dtype"],
            settings["server_url"],
            settings["server_model"],
        )

    def _preview_verbaliser(self) -> Verbaliser:
        """The verbaliser the preview uses (cached: building checks and fingerprints the
        folder; default parameters, the panel's templates are set on it per preview)."""
        settings = self.panel.settings()
        key = self._key(settings)
        if key not in self._preview_cache:
            self._preview_cache[key] = self._open(settings, params=None, templates=None)
        return self._preview_cache[key]

    def _open(
        self,
        settings: dict[str, Any],
        params: GenerationParams | None,
        templates: Mapping[str, str] | None,
    ) -> Verbaliser:
        from core.verbalise import open_verbaliser
        from widgets.verbalise import SERVER

        spec = settings["model"]
        if spec == SERVER:
            url = settings["server_url"]
            if not url:
                raise UserFacingError(
                    "Type the server's URL on the Model tab, e.g. http://localhost:8000/v1"
                )
            if not url.startswith(("http://", "https://")):
                raise UserFacingError(f"{url!r} is not an http(s) URL")
            return open_verbaliser(
                url,
                params,
                templates,
                server_model=settings["server_model"] or None,
                prompt_preset=settings["prompt_preset"],
            )
        return open_verbaliser(
            spec,
            params,
            templates,
            device=settings["device"],
            dtype=settings["dtype"],
            prompt_preset=settings["prompt_preset"],
            task_prefix=settings["seq2seq_prefix"] or None,
        )

    # -- units and preview -----------------------------------------------------------------
    def refresh_units(self) -> tuple[UnitSummary, ...]:
        """The session's unit count, tiers and categories (SQL COUNT and GROUP BY) and the
        first page of the units the picker's search matches: a large session is never
        read whole; the picker asks for more pages as it scrolls (``more_units``)."""
        from core.verbalise.runs import count_matching_units, unit_groups

        store = self.ctx.store
        if store is None:
            return ()
        self._triples.clear()  # units changed: their triples are read again
        tiers, categories = unit_groups(store)
        self.panel.show_unit_groups(count_matching_units(store), tiers, categories)
        page = self.search_units(self.panel.unit_search())
        if self.unit_id is not None:
            self.panel.show_selected_unit(self._unit(self.unit_id))
        return page

    def search_units(self, text: str) -> tuple[UnitSummary, ...]:
        """The first page of the units whose id, category or tier contains ``text``."""
        from core.verbalise.runs import UnitFilter, count_matching_units, units_page

        store = self.ctx.store
        if store is None:
            return ()
        where = UnitFilter(text=text)
        page = units_page(store, where, limit=self.page_size)
        self.panel.show_unit_page(page, count_matching_units(store, where))
        return page

    def more_units(self, text: str, after_id: int | None) -> None:
        """The next page of the search's units, after the last one the picker holds."""
        from core.verbalise.runs import UnitFilter, units_page

        store = self.ctx.store
        if store is not None:
            page = units_page(store, UnitFilter(text=text), after_id=after_id, limit=self.page_size)
            self.panel.show_unit_page(page, 0, more=True)

    def _unit(self, unit_id: int | None) -> UnitSummary | None:
        from core.verbalise.runs import unit_summary

        store = self.ctx.store
        if store is None or unit_id is None:
            return None
        return unit_summary(store, unit_id)

    def select_unit(self, unit_id: int | None) -> None:
        """The unit to preview and whose outputs to show (the Units panel's selection)."""
        if unit_id != self.unit_id:
            self._triples.clear()
        self.unit_id = unit_id
        self.panel.show_selected_unit(self._unit(unit_id))
        self.update_preview()
        self.show_outputs()

    def update_preview(self) -> None:
        """The exact input the chosen verbaliser gives the model for the unit, now."""
        from core.verbalise.selection import unit_triples

        store, unit_id, lang = self.ctx.store, self.unit_id, self.panel.preview_lang()
        if store is None or unit_id is None:
            self.ctx.reads.drop(PREVIEW_READ)
            self.panel.show_preview("", "No unit to preview: the session holds no units yet.")
            return
        if (unit_id, lang) not in self._triples:
            # The unit's triples are a view read (off the UI thread); the preview follows
            # when they arrive, and edits of the template then redo it at once.
            self.ctx.reads.request(
                PREVIEW_READ,
                lambda store: unit_triples(store, [unit_id], [lang]).get((unit_id, lang)),
                lambda triples: self._triples_read(unit_id, lang, triples),
            )
            return
        triples = self._triples[(unit_id, lang)]
        if not triples:
            self.panel.show_preview(
                "",
                f"This unit has no triples in {LANGUAGE_NAMES[lang]}: "
                "a run skips it in that language.",
            )
            return
        try:
            verbaliser = self._preview_verbaliser()
            settings = self.panel.settings()
            # The edited prompt, checked ({triples} once) as a run would.
            verbaliser.use_prompt(
                self.panel.edited_templates(),
                self.panel.prompt_preset(),
                settings["seq2seq_prefix"] or None,
            )
            key = self._key(settings)
            preview = verbaliser.preview(triples, lang, exact=key in self._tokenizer_ready)
        except (UserFacingError, ValueError) as error:  # ModelError, PromptError
            self.panel.show_preview("", str(error), error=True)
            return
        if preview.needs_tokenizer:
            if self._preview_in_view():
                self._load_tokenizer(key, verbaliser, triples, lang)
            else:
                note = "The model's chat template is applied once this panel is in view."
                preview = replace(preview, note=note)
        if preview.warning:
            self.panel.show_preview(preview.text, preview.warning, error=True)
        else:
            self.panel.show_preview(preview.text, preview.note)

    def _triples_read(self, unit_id: int, lang: str, triples: Triples | None) -> None:
        if unit_id != self.unit_id:
            return  # another unit is previewed now
        self._triples[(unit_id, lang)] = triples
        if lang == self.panel.preview_lang():
            self.update_preview()

    def _load_tokenizer(
        self, key: tuple[str, ...], verbaliser: Verbaliser, triples: Triples, lang: str
    ) -> None:
        if key in self._tokenizer_jobs:
            return

        def load(ctx: JobContext) -> str:
            ctx.progress(0, None, "loading the tokenizer")
            return verbaliser.preview(triples, lang, exact=True).text

        handle = self.ctx.run_job(
            Job(
                "Load the tokenizer for the prompt preview",
                load,
                kind="verbalise.preview",
                uses_session=False,
                disposable=True,
            )
        )
        self._tokenizer_jobs[key] = handle

        def done(outcome: JobOutcome[str]) -> None:
            self._tokenizer_jobs.pop(key, None)
            if isinstance(outcome, JobSucceeded):
                self._tokenizer_ready.add(key)
                self.update_preview()
            elif isinstance(outcome, JobFailed):
                self.panel.show_preview("", outcome.message, error=True)

        handle.finished.connect(done)

    # -- runs ------------------------------------------------------------------------------
    def run(self) -> JobHandle | None:
        """Start a run with the panel's settings; nothing starts when they are wrong."""
        from core.verbalise import GenerationParams
        from core.verbalise.job import verbalise_job

        store = self.ctx.store
        if store is None or (self.handle is not None and not self.handle.done):
            return None
        settings = self.panel.settings()
        self.panel.show_error(None)
        try:
            if not settings["langs"]:
                raise UserFacingError("Tick at least one language on the Units tab.")
            params = GenerationParams(
                candidates=settings["candidates"],
                temperature=settings["temperature"],
                top_p=settings["top_p"],
                max_new_tokens=settings["max_new_tokens"],
                seed=settings["seed"],
                num_beams=settings["num_beams"],
            )
            params.check()
            kind = self.panel.model_kind()
            templates = settings["templates"] if kind in ("causal", "openai") else None
            verbaliser = self._open(settings, params, templates)
            job = verbalise_job(
                store,
                verbaliser,
                self._units(settings),
                settings["langs"],
                batch_size=settings["batch_size"],
                resume=settings["resume"],
            )
        except (UserFacingError, ValueError) as error:  # ModelError, PromptError, ...
            self.panel.show_error(str(error))
            self.ctx.notify.show_status(f"Not run: {error}", 10_000)
            return None
        self.save_settings()
        handle = self.ctx.run_job(job)
        self.handle = handle
        self.panel.set_running(True, job.title)
        handle.progressed.connect(lambda p: self.panel.show_progress(p.done, p.total, p.message))
        handle.finished.connect(lambda outcome, h=handle: self._finished(h, outcome))
        return handle

    def cancel(self) -> None:
        if self.handle is not None and not self.handle.done:
            self.handle.cancel()
            self.panel.progress_label.setText("Cancelling after the batch in progress…")

    def _units(self, settings: dict[str, Any]) -> str | list[int]:
        scope = settings["scope"]
        if scope == "selected":
            if self.unit_id is None:
                raise UserFacingError(
                    "No unit is selected: pick one in the Units panel or on the Prompt tab."
                )
            return [self.unit_id]
        if scope in ("tier", "category"):
            value = settings[scope]
            if not value:
                raise UserFacingError(f"Choose a {scope} on the Units tab.")
            return f"{scope}:{value}"
        return "all"

    def _finished(self, handle: JobHandle, outcome: JobOutcome[VerbaliseSummary]) -> None:
        self.handle = None
        summary = (
            getattr(outcome, "result", None)
            or getattr(outcome, "partial", None)
            or handle.job.partial
        )
        if isinstance(outcome, JobSucceeded):
            status = "finished"
        elif isinstance(outcome, JobWasCancelled):
            status = "cancelled"
        else:
            status = "failed"
            self.panel.show_error(f"The run failed: {getattr(outcome, 'message', outcome)}")
        from core.verbalise.run_text import summary_html, summary_line

        self.summary = summary
        self.panel.show_finished(
            status, summary_html(summary, status, error_colour=ERROR), summary_line(summary, status)
        )
        self.refresh_runs(select=summary.run_id if summary is not None else None)

    def refresh_runs(self, select: int | None = None) -> None:
        """The session's runs, read off the UI thread (a view read; the newest wins), then
        the run ``select`` (else the one shown, else the newest) and its outputs."""
        from core.verbalise.runs import list_runs

        if self.ctx.store is None:
            return
        self.ctx.reads.request(RUNS_READ, list_runs, lambda runs: self._runs_read(runs, select))

    def _runs_read(self, runs: Sequence[RunOverview], select: int | None) -> None:
        ids = [run.id for run in runs]
        if select not in ids:
            select = self.shown_run if self.shown_run in ids else (ids[0] if ids else None)
        self.shown_run = select
        self.panel.show_runs(runs, select)
        if self.summary is None:  # no run finished in this window since the session opened
            self.panel.show_runs_note(len(runs))
        self.show_outputs()

    def show_run(self, run_id: int) -> None:
        if run_id != self.shown_run:
            self.shown_run = run_id
            self.show_outputs()

    def show_outputs(self) -> None:
        """What the selected run wrote, read off the UI thread: the selected unit's texts
        when it has some (and the scope asks for them), else the run's texts, browsable
        without a unit."""
        store, run_id, unit_id = self.ctx.store, self.shown_run, self.unit_id
        if store is None or run_id is None:
            self.ctx.reads.drop(OUTPUTS_READ)  # an older run's outputs are not shown
            self.panel.show_outputs("Outputs appear here after a run.", [])
            return
        from core.verbalise.run_text import read_outputs

        wanted = unit_id if self.panel.results.scope() == "unit" else None
        self.ctx.reads.request(
            OUTPUTS_READ,
            lambda store: read_outputs(store, run_id, wanted, error_colour=ERROR),
            lambda shown: self.panel.show_outputs(*shown),
        )


# --- session queries (read-only) ------------------------------------------------------------


def _load_settings(store: SessionStore) -> dict[str, Any]:
    from core.io.bounded import stored_json

    data = stored_json(store.get_meta(SETTINGS_META_KEY), {})
    return data if isinstance(data, dict) else {}
