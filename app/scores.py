"""Wiring of the Scores panel: reading scores through ``core.metrics.scoring``, scoring jobs.

The table is ``sentence_score_table`` (one row per verbalisation, one column per metric and
reference quality), filtered by run, language and tier; the summary is
``summary_by_group`` by model × language × tier; a selected text's detail comes from
``scores_of_verbalisation`` (ESA mentions and missing entities, hallucination spans,
BERTScore model and rescaling) and the unit's triples and references as the scoring job
reads them. "Score…" builds a ``ScoringRequest`` and runs ``score_job`` through the app's
job runner (progress and cancel in the panel and the status bar). The panel refreshes when
the session changes and when a job that adds texts or scores finishes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from core.errors import UserFacingError
from core.jobs import JobFailed, JobSucceeded, JobWasCancelled
from core.logs import get_logger
from core.metrics import ALL_METRICS, DESCRIPTIONS
from widgets.scores import (
    ModelChoice,
    ScoreChoices,
    ScoreTableRow,
    Span,
    TextDetail,
    format_value,
)

if TYPE_CHECKING:
    from app.controller import AppController
    from app.jobrunner import JobHandle
    from core.metrics.scoring import SentenceScoreRow, StoredScore
    from widgets.scores import ScoresPanel

log = get_logger("scores")

# Jobs after which the table may have changed: new texts, new scores, new references.
REFRESHING_KINDS = frozenset({"verbalise", "metrics.score", "import", "annotation"})
MBERT = "bert-base-multilingual-cased"
MINILM = "all-MiniLM-L6-v2"
QUALITY_ORDER = {"": 0, "gold": 1, "silver": 2}


def tier_of(tier: str | None) -> str | None:
    """TailNLG's ``top_head`` is the head (as the report and summary_by_group count it)."""
    return "head" if tier == "top_head" else tier


def column_order(column: str) -> tuple[int, int, str]:
    metric, _, quality = column.partition(":")
    position = ALL_METRICS.index(metric) if metric in ALL_METRICS else len(ALL_METRICS)
    return position, QUALITY_ORDER.get(quality, 3), column


class ScoresController(QObject):
    def __init__(self, app: AppController, panel: ScoresPanel) -> None:
        super().__init__(panel)
        self.app, self.panel = app, panel
        self.rows: list[SentenceScoreRow] = []
        self.handle: JobHandle | None = None
        self._mbert_cached: bool | None = None
        self._model_notes: dict[str, str] = {}

        panel.filters_changed.connect(lambda _f: self.refresh())
        panel.text_selected.connect(self.show_text)
        panel.score_dialog_requested.connect(self.open_dialog)
        panel.score_requested.connect(self.score)
        panel.cancel_requested.connect(self.cancel)
        app.session_changed.connect(lambda _store: self.session_opened())
        app.runner.job_finished.connect(self._on_job_finished)

    # -- session and refresh -------------------------------------------------------------
    def session_opened(self) -> None:
        self.panel.show_detail(None)
        self.refresh()

    def refresh(self) -> None:
        """Table, summary, filters and notes, read again from the session."""
        from core.metrics.scoring import corpus_scores, sentence_score_table, summary_by_group

        store = self.app.store
        if store is None:
            self.rows = []
            self.panel.set_filter_choices([], [], [])
            self.panel.show_rows([], [], {}, 0)
            self.panel.show_summary([], [], {})
            self.panel.show_notes("", "")
            return
        every = sentence_score_table(store)
        runs: dict[int, tuple[str, int]] = {}
        for row in every:
            name, n = runs.get(row.run_id, (row.model, 0))
            runs[row.run_id] = (name, n + 1)
        langs = sorted({r.lang for r in every})
        tiers = sorted({t for r in every if (t := tier_of(r.tier))})
        self.panel.set_filter_choices(
            [(run_id, f"run {run_id}: {name} ({n:,})") for run_id, (name, n) in runs.items()],
            langs, tiers)
        chosen = self.panel.filters()
        self.rows = [r for r in every if self._passes(r.run_id, r.lang, r.tier, chosen)]
        columns = sorted({c for r in self.rows for c in r.scores}, key=column_order)
        stored = corpus_scores(store, metrics=["bertscore", "similarity"])
        tips = self._column_tips(columns, stored)
        self.panel.show_rows([self._table_row(r) for r in self.rows], columns, tips, len(every))
        self.panel.show_notes(*self._notes(stored))
        run_ids = [chosen["run_id"]] if chosen["run_id"] is not None else None
        groups = summary_by_group(store, by=("model", "lang", "tier"), run_ids=run_ids)
        self._show_summary(groups, chosen, tips, columns)

    @staticmethod
    def _passes(run_id: int | None, lang: str | None, tier: str | None,
                chosen: dict[str, Any]) -> bool:
        return ((chosen["run_id"] is None or run_id == chosen["run_id"])
                and (chosen["lang"] is None or lang == chosen["lang"])
                and (chosen["tier"] is None or tier_of(tier) == chosen["tier"]))

    @staticmethod
    def _table_row(row: SentenceScoreRow) -> ScoreTableRow:
        text = (row.text or "").replace("\n", " ")
        tier = row.sub_tier if row.sub_tier and row.sub_tier != row.tier else row.tier
        return ScoreTableRow(
            key=row.verbalisation_id,
            cells=(row.unit_uid, row.model, row.lang, row.candidate_index, tier or "",
                   text if text else "(no parsed text)"),
            scores=row.scores, tooltip=row.text or "")

    def _show_summary(self, groups: Sequence[Any], chosen: dict[str, Any],
                      tips: dict[str, str], text_columns: Sequence[str]) -> None:
        by_group: dict[tuple[Any, ...], dict[str, Any]] = {}
        for g in groups:
            model, lang, tier = g.group
            if not self._passes(chosen["run_id"], lang, tier, chosen):
                continue
            column = f"{g.metric}:{g.quality}" if g.quality else g.metric
            entry = by_group.setdefault((model, lang, tier), {"scores": {}, "tips": {}, "n": 0})
            entry["scores"][column] = g.mean
            entry["n"] = max(entry["n"], g.n)
            median = format_value(column, g.median)
            entry["tips"][column] = (f"{column.replace(':', ' ')}: mean "
                                     f"{format_value(column, g.mean)}, median {median}, "
                                     f"{g.n:,} texts")
        columns = sorted({c for e in by_group.values() for c in e["scores"]}, key=column_order)
        rows = [ScoreTableRow(key=key, cells=(key[0], key[1], key[2] or "", entry["n"]),
                              scores=entry["scores"], score_tips=entry["tips"])
                for key, entry in sorted(by_group.items(),
                                         key=lambda kv: tuple(str(k) for k in kv[0]))]
        self.panel.show_summary(rows, columns, tips)

    # -- notes: which models the scores come from ----------------------------------------
    def mbert_cached(self) -> bool:
        """Whether BERTScore's default model is in the local cache (checked once)."""
        if self._mbert_cached is None:
            from core.metrics.bertscore import _HUB_IDS, cached_hub_model

            self._mbert_cached = any(cached_hub_model(i) is not None for i in _HUB_IDS)
        return self._mbert_cached

    def bertscore_default_note(self) -> str:
        if self.mbert_cached():
            return (f"Default: {MBERT} (in the local cache), rescaled with bert_score's "
                    "baseline for the text's language.")
        return (f"Default: {MBERT} is not in the local cache, so the packaged {MINILM} "
                "encoder is used and scores are NOT rescaled (raw F1, higher than and not "
                "comparable with published rescaled BERTScores).")

    @staticmethod
    def _used(stored: Sequence[Any], metric: str, key: str) -> list[Any]:
        return sorted({c.details.get(key) for c in stored
                       if c.metric == metric and c.details.get(key) is not None}, key=str)

    def _bertscore_used(self, stored: Sequence[Any], *, short: bool = False) -> str | None:
        models = self._used(stored, "bertscore", "model")
        if not models:
            return None
        rescaled = self._used(stored, "bertscore", "rescaled")
        how = ("rescaled with bert_score's baseline" if rescaled == [True] else
               "NOT rescaled (raw F1)" if rescaled == [False] else
               "rescaled for some languages, raw for others")
        if short:
            packaged = " (packaged)" if MINILM in models else ""
            return f"BERTScore: {', '.join(map(str, models))}{packaged}, {how}"
        why = (f" — the packaged encoder, as {MBERT} is not in the local cache"
               if MINILM in models else "")
        return f"BERTScore: {', '.join(map(str, models))}{why}; {how}."

    def _similarity_used(self, stored: Sequence[Any]) -> str:
        encoders = self._used(stored, "similarity", "encoder")
        if not encoders:
            return f"the packaged {MINILM} by default"
        packaged = " (packaged)" if encoders == [MINILM] else ""
        return ", ".join(map(str, encoders)) + packaged

    def _notes(self, stored: Sequence[Any]) -> tuple[str, str]:
        """A short note line (the dock may be narrow) and its full tooltip."""
        used = self._bertscore_used(stored, short=True)
        if used is None:
            default = (f"{MBERT}, rescaled" if self.mbert_cached() else
                       f"the packaged {MINILM}, NOT rescaled ({MBERT} is not cached)")
            used = f"BERTScore not scored yet; would use {default}"
        short = (f"<b>{used}.</b> Similarity encoder: {self._similarity_used(stored)}.")
        full = ((self._bertscore_used(stored) or self.bertscore_default_note())
                + f"\nGraph–text similarity encoder: {self._similarity_used(stored)}.")
        return short, full

    def _column_tips(self, columns: Sequence[str], stored: Sequence[Any]) -> dict[str, str]:
        tips: dict[str, str] = {}
        for column in columns:
            metric, _, quality = column.partition(":")
            tip = DESCRIPTIONS.get(metric, metric)
            if quality:
                tip += f", against {quality} references of the same language"
            if metric == "bertscore":
                tip += "\n" + (self._bertscore_used(stored) or self.bertscore_default_note())
            if metric == "similarity":
                tip += f"\nencoder: {self._similarity_used(stored)}"
            tips[column] = tip
        return tips

    # -- one text ------------------------------------------------------------------------
    def show_text(self, verbalisation_id: int) -> None:
        from core.metrics.scoring import scores_of_verbalisation, unit_material

        store = self.app.store
        row = next((r for r in self.rows if r.verbalisation_id == verbalisation_id), None)
        if store is None or row is None:
            self.panel.show_detail(None)
            return
        scores = scores_of_verbalisation(store, verbalisation_id)
        material = unit_material(store, row.unit_id, row.lang)
        references = [(quality, text) for quality in ("gold", "silver")
                      for _id, text in material.references.get(quality, ())]
        esa = next((s for s in scores if s.metric == "esa"), None)
        hallucination = next((s for s in scores if s.metric == "hallucination"), None)
        mentions = [Span(int(m["start"]), int(m["end"]), str(m.get("entity", "")),
                         str(m.get("via", "")))
                    for m in (esa.details.get("mentions", []) if esa else [])]
        spans = [Span(int(s["start"]), int(s["end"]), str(s.get("text", "")))
                 for s in (hallucination.details.get("spans", []) if hallucination else [])]
        tier = row.sub_tier or row.tier or "no tier"
        self.panel.show_detail(TextDetail(
            title=f"{row.unit_uid} · {row.model} · {row.lang} · candidate "
                  f"{row.candidate_index} · {tier}",
            text=row.text or "", lang=row.lang, mentions=mentions,
            missing=[str(m) for m in (esa.details.get("missing", []) if esa else [])],
            hallucinations=spans, esa_scored=esa is not None,
            hallucination_scored=hallucination is not None,
            triples=list(material.triples),
            references=references, scores=self._score_lines(scores)))

    @staticmethod
    def _score_lines(scores: Sequence[StoredScore]) -> list[tuple[str, str, str]]:
        lines = []
        for s in sorted(scores, key=lambda s: column_order(
                f"{s.metric}:{s.quality}" if s.quality else s.metric)):
            column = f"{s.metric} {s.quality}" if s.quality else s.metric
            d = s.details
            note = ""
            if s.metric == "bertscore":
                note = (f"{d.get('model', '?')}, "
                        + ("rescaled" if d.get("rescaled") else "NOT rescaled (raw F1)"))
            elif s.metric == "esa":
                note = f"{len(d.get('detected', []))} of {d.get('entities', 0)} entities"
            elif s.metric == "similarity":
                drop = d.get("inversion_drop")
                note = f"encoder {d.get('encoder', '?')}" + (
                    f"; inversion drop {drop:+.3f}" if isinstance(drop, (int, float)) else "")
            elif s.metric in ("ppl", "entity_ppl") and d.get("model"):
                note = f"under {d['model']}"
            elif d.get("note"):
                note = str(d["note"])
            lines.append((column, format_value(s.metric, s.value), note))
        return lines

    # -- scoring -------------------------------------------------------------------------
    def choices(self) -> ScoreChoices:
        """What the Score… dialog offers: runs and languages here, models on this machine."""
        from core.models import CAUSAL, discover_models

        runs: dict[int, tuple[str, int]] = {}
        for row in self.rows_unfiltered():
            name, n = runs.get(row.run_id, (row.model, 0))
            runs[row.run_id] = (name, n + 1)
        langs = sorted({r.lang for r in self.rows_unfiltered()}) or ["en", "it", "es"]
        try:
            found = discover_models()
        except OSError as error:  # an unreadable cache folder must not stop scoring
            log.warning("model discovery failed: %s", error)
            found = []
        default_label = (f"default: {MBERT}" if self.mbert_cached() else
                         f"default: packaged {MINILM} ({MBERT} not cached)")
        encoders = [m for m in found if m.type != CAUSAL]
        return ScoreChoices(
            runs=[(run_id, f"run {run_id}: {name} ({n:,} texts)")
                  for run_id, (name, n) in runs.items()],
            langs=langs,
            bertscore_models=[ModelChoice(default_label, None, self.bertscore_default_note())]
            + [ModelChoice(m.name, str(m.path),
                           f"{m.name}: " + ("rescaled with bert_score's baseline." if
                                            m.name.rsplit('/', 1)[-1] == MBERT else
                                            "rescaled only if bert_score ships a baseline "
                                            "for it; otherwise raw F1, marked not rescaled."))
               for m in encoders],
            encoders=[ModelChoice(f"default: packaged {MINILM}", None,
                                  f"The {MINILM} sentence encoder packaged with TailLens.")]
            + [ModelChoice(m.name, str(m.path), f"{m.name} (sentence-transformers)")
               for m in encoders],
            ppl_models=[ModelChoice("each run's own model", None,
                                    "Perplexity under the model that wrote the text")]
            + [ModelChoice(m.name, str(m.path)) for m in found if m.type == CAUSAL])

    def rows_unfiltered(self) -> list[SentenceScoreRow]:
        from core.metrics.scoring import sentence_score_table

        return sentence_score_table(self.app.store) if self.app.store is not None else []

    def open_dialog(self) -> None:
        if self.app.store is None:
            self.app.window.show_error("No session", "Open a session to score.")
            return
        self.panel.open_score_dialog(self.choices())

    def score(self, values: dict[str, Any]) -> JobHandle | None:
        """Run the scoring job for the dialog's ``values``; bad input is a message."""
        from core.metrics import MetricOptions
        from core.metrics.scoring import ScoringRequest, score_job

        store = self.app.store
        if store is None:
            return None
        if self.handle is not None and not self.handle.done:
            self.app.window.show_error("Scoring already running",
                                       "Wait for it to finish or cancel it first.")
            return None
        try:
            options = MetricOptions(
                bertscore_model=values.get("bertscore_model") or None,
                encoder=values.get("encoder") or None,
                ppl_model=values.get("ppl_model") or None,
                device=values.get("device") or "auto",
                esa_distance=float(values.get("esa_distance", 0.4)))
            run_ids, langs = values.get("run_ids"), values.get("langs")
            if run_ids is not None and not run_ids:
                raise UserFacingError("choose at least one run to score")
            if langs is not None and not langs:
                raise UserFacingError("choose at least one language to score")
            request = ScoringRequest(
                metrics=tuple(values.get("metrics") or ()),
                run_ids=tuple(run_ids) if run_ids is not None else None,
                langs=tuple(langs) if langs is not None else None,
                references=bool(values.get("references")), options=options)
            job = score_job(store, request)
        except UserFacingError as error:
            self.app.window.show_error("Cannot score", str(error))
            return None
        handle = self.app.run_job(job)
        self.handle = handle
        self.panel.job_started(f"Scoring {', '.join(job.params['metrics'])}")
        handle.progressed.connect(
            lambda p: self.panel.job_progress(p.done, p.total, p.message))
        handle.finished.connect(self._scored)
        return handle

    def cancel(self) -> None:
        if self.handle is not None and not self.handle.done:
            self.handle.cancel()

    def _scored(self, outcome: Any) -> None:
        if isinstance(outcome, JobSucceeded):
            summary = outcome.result
            written = ", ".join(f"{k} {v:,}" for k, v in summary.rows_written.items())
            message = (f"Scored {summary.texts:,} texts in {outcome.elapsed_s:.1f} s"
                       + (f" (rows: {written})" if written else "") + "."
                       + "".join(f" Note: {n}." for n in summary.notes))
        elif isinstance(outcome, JobWasCancelled):
            message = ("Scoring cancelled: each metric keeps either all its old scores or all "
                       "its new ones.")
        elif isinstance(outcome, JobFailed):
            message = f"Scoring failed: {outcome.message}"
        else:
            message = ""
        self.panel.job_finished(message)

    def _on_job_finished(self, handle: JobHandle) -> None:
        # Failed and cancelled jobs too: a verbalise run keeps the texts it finished.
        if handle.job.kind in REFRESHING_KINDS:
            self.refresh()
