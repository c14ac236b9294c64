"""Wiring of the Scores panel: reading scores a page at a time, scoring jobs.

The table is a page of texts from ``core.metrics.score_pages`` (one row per verbalisation,
one column per metric and reference quality), filtered by run, language, tier and a text
search and sorted by the table's sort, all in SQL; the next page comes when the table is
scrolled to its end. The count, the texts scored, each column's range (its colour scale)
and the summary (model × language × tier) are SQL aggregates over every text that passes
the filters. A selected text's detail comes from ``scores_of_verbalisation`` (ESA
mentions and missing entities, hallucination spans, BERTScore model and rescaling) and
the unit's triples and references as the scoring job reads them, with the human ratings
of the text. "Score…" builds a ``ScoringRequest`` and runs ``score_job`` through the
app's job runner (progress and cancel in the panel and the status bar). The panel
refreshes when another session opens and when texts, scores, references or units change
(``app.changes``: whoever wrote them); the selected text's detail follows new ratings and
references.

Nothing here reads the session on the UI thread for a refresh (ARCHITECTURE.md: the UI
thread never stalls over 100 ms): a refresh is a "Load scores" job that reads the
filters' choices and the corpus rows behind the notes (``read_overview``,
``corpus_scores``), then the first page with the figures and the summary
(``read_scores``), and hands plain rows to the panel; it never reads every text (on a
12,915-text session the reads take tens of ms). A newer refresh supersedes an older one
still running (its result is dropped). A filter change reads page 1 and the figures again
in a job (the choices are kept); a header click on a table that holds only some of its
rows reads page 1 in that order (the figures stay); a
header click on a table that holds every row sorts it in the model. The Score… dialog
reuses those runs and languages and finds the local models (a scan of the Hugging Face
cache) in a job too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from app.retrieval import RetrievalController
from core.changes import Topic
from core.errors import UserFacingError
from core.groups import head_tier
from core.jobs import Job, JobFailed, JobSucceeded, JobWasCancelled
from core.labels import plural
from core.logs import get_logger
from core.metrics.info import metric_info
from core.metrics.score_pages import (
    KEY_COLUMNS,
    PAGE_SIZE,
    ScoresFilter,
    ScoreSort,
    column_order,
    read_overview,
    read_page,
    read_row,
    read_scores,
)
from core.vocab import LANGUAGES, QUALITIES, short_model_name
from widgets.scores import (
    ModelChoice,
    ScoreChoices,
    ScoreTableRow,
    Span,
    TextDetail,
    format_value,
)

if TYPE_CHECKING:
    from app.context import PanelContext
    from app.jobrunner import JobHandle
    from core.metrics.meteor import WordNetStatus
    from core.metrics.scoring import (
        CorpusScore,
        GroupScore,
        ScoringRequest,
        SentenceScoreRow,
        StoredScore,
    )
    from core.models import ModelInfo
    from core.store import SessionStore
    from widgets.scores import ScoresPanel

log = get_logger("scores")

# What the table and summary show: texts, their scores, references and units (a unit's
# tier is its own, kept when the Browser's tiers move: Topic.TIERS changes nothing here).
TABLE_TOPICS = frozenset({Topic.RUNS, Topic.SCORES, Topic.REFERENCES, Topic.UNITS})
# What the selected text's detail shows besides: its ratings and its unit's references.
DETAIL_TOPICS = frozenset({Topic.ANNOTATIONS, Topic.REFERENCES, Topic.SCORES})
MBERT = "bert-base-multilingual-cased"
MINILM = "all-MiniLM-L6-v2"
# The panel's own read jobs (quiet, writing nothing).
MORE_KIND = "panel.load-more"
MODELS_KIND = "models.discover"
LOAD_TITLE = "Load scores"
READ_KEY = "scores.view"  # the panel's view read (app.session_io.ViewReads)
MORE_TITLE = "Load more scores"


# TailNLG's ``top_head`` is the head (as the report and summary_by_group count it).
tier_of = head_tier


@dataclass(frozen=True)
class ScoresData:
    """What a refresh reads once per session change: the filters' choices and the corpus
    rows that say which BERTScore model and encoder were used."""

    store: SessionStore  # the session read (a result for another session is dropped)
    stored: list[CorpusScore]
    runs: list[tuple[int, str, int]]  # (run id, model, texts), by run id
    langs: list[str]
    tiers: list[str]
    total: int  # every text in the session


def load_scores(store: SessionStore) -> ScoresData:
    """The choices and notes of a refresh (run in a job, never on the UI thread): SQL
    aggregates, not the texts."""
    from core.metrics.scoring import corpus_scores

    overview = read_overview(store)
    return ScoresData(
        store=store,
        stored=corpus_scores(store, metrics=["bertscore", "similarity"]),
        runs=overview.runs,
        langs=overview.langs,
        tiers=overview.tiers,
        total=overview.total,
    )


@dataclass(frozen=True)
class ScoresView:
    """What one refresh hands the panel: the first page and the figures, read off the UI
    thread."""

    data: ScoresData
    rows: list[SentenceScoreRow]  # the page's texts (the detail looks them up)
    table: list[ScoreTableRow]  # the same, as table rows, sorted by ``sorted_by``
    columns: list[str]
    ranges: dict[str, tuple[float, float]]  # each column's colour scale (every text's)
    scored: int  # texts that pass the filters with a score
    matching: int  # texts that pass the filters (``rows`` are the first of them)
    tips: dict[str, str]
    summary: list[ScoreTableRow]
    summary_columns: list[str]
    notes: tuple[str, str]
    chosen: ScoresFilter = ScoresFilter()  # the filters read (choices gone: "All")
    sorted_by: ScoreSort | None = None  # None: the session's order


class ScoresController(QObject):
    def __init__(self, ctx: PanelContext, panel: ScoresPanel) -> None:
        super().__init__(panel)
        self.ctx, self.panel = ctx, panel
        self.rows: list[SentenceScoreRow] = []  # the texts in the table (pages loaded)
        self.data: ScoresData | None = None  # the last read of the choices, for filters
        self.view: ScoresView | None = None  # the last refresh shown (its filter and sort)
        self.loading: JobHandle | None = None  # the newest refresh job, while it runs
        self.fetching: JobHandle | None = None  # the next page's job, while it runs
        self.models_handle: JobHandle | None = None  # the Score… dialog's model scan
        self.page_size = PAGE_SIZE
        self._generation = 0  # bumped by each refresh: older results are stale
        self._read_pending = False  # a read was asked for and has not been shown yet
        self.handle: JobHandle | None = None
        self._mbert_cached: bool | None = None
        self._model_notes: dict[str, str] = {}
        self.shown_text: int | None = None  # the verbalisation in the detail

        panel.filters_changed.connect(lambda _f: self.refresh(reload=False))
        panel.sort_changed.connect(lambda _s: self.refresh(reload=False))
        panel.more_requested.connect(self.fetch_more)
        panel.text_selected.connect(self.show_text)
        panel.score_dialog_requested.connect(self.open_dialog)
        panel.synonyms_requested.connect(self.open_synonyms)
        panel.score_requested.connect(self.score)
        panel.cancel_requested.connect(self.cancel)
        panel.export_texts_requested.connect(lambda path: self.export_texts(Path(path)))
        ctx.session_changed.connect(lambda _store: self.session_opened())
        # Failed and cancelled jobs too: a verbalise run keeps the texts it finished.
        ctx.changes.subscribe(TABLE_TOPICS, lambda _topics: self.refresh(), self)
        ctx.changes.subscribe(DETAIL_TOPICS, lambda _topics: self._detail_changed(), self)
        self.retrieval = RetrievalController(ctx, panel, lambda: self.rows, self)

    # -- session and refresh -------------------------------------------------------------
    def session_opened(self) -> None:
        self.data = None
        self.shown_text = None
        self.panel.show_detail(None)
        self.refresh()

    def refresh(self, *, reload: bool = True) -> JobHandle | None:
        """Table, summary, filters and notes: a view read (off the UI thread) reads the
        choices again (``reload``, else those last read are kept) and page 1 with the
        figures, and :meth:`_loaded` shows the result."""
        self._generation += 1
        self.loading = self.fetching = None
        store = self.ctx.store
        if store is None:
            self.rows, self.data, self.view, self._read_pending = [], None, None, False
            self.panel.set_filter_choices([], [], [])
            self.panel.show_rows([], [], {}, 0)
            self.panel.show_summary([], [], {})
            self.panel.show_notes("", "")
            return None
        # A filter change while a read is on its way waits for that read: it asks again.
        cached = self.data
        if reload or self._read_pending or cached is None or cached.store is not store:
            cached, self._read_pending = None, True
        # The filters and the table's sort: page 1 comes sorted as the table shows it.
        chosen, sort = self.panel.filters(), self.panel.sort_spec()

        def read(store: SessionStore) -> ScoresView:
            data = cached if cached is not None else load_scores(store)
            return self.build_view(data, chosen, sort)

        # The session rule's view read (app.session_io): a newer refresh supersedes this
        # one (cancelled, its result dropped), as does another session.
        handle = self.ctx.reads.request(READ_KEY, read, self._loaded, title=LOAD_TITLE)
        self.loading = handle
        if handle is not None:
            # A read that fails or is superseded leaves what is shown as it is.
            handle.finished.connect(lambda _o, h=handle: self._read_ended(h))
        return handle

    def _read_ended(self, handle: JobHandle) -> None:
        if self.loading is handle:
            self.loading = None

    def _loaded(self, view: ScoresView) -> None:
        self.loading = None
        self.show_view(view)

    def show_view(self, view: ScoresView) -> None:
        """Hand a refresh's plain rows to the panel (the only part on the UI thread)."""
        data = view.data
        self.data, self.view, self._read_pending = data, view, False
        self.rows = list(view.rows)
        self.panel.set_filter_choices(
            [(run_id, f"run {run_id}: {name} ({n:,})") for run_id, name, n in data.runs],
            data.langs,
            data.tiers,
        )
        self.panel.show_rows(
            view.table,
            view.columns,
            view.tips,
            data.total,
            ranges=view.ranges,
            scored=view.scored,
            sorted_by=view.sorted_by,
            matching=view.matching,
        )
        self.panel.show_notes(*view.notes)
        self.panel.show_summary(view.summary, view.summary_columns, view.tips)

    def build_view(
        self, data: ScoresData, chosen: ScoresFilter, sort: ScoreSort | None = None
    ) -> ScoresView:
        """Page 1 of the texts that pass ``chosen`` in ``sort``'s order, the figures of
        all of them and the summary, formatted for the panel (reads ``data.store``; runs
        in the job)."""
        # As the panel's combos do: a choice that no longer exists falls back to "All".
        chosen = replace(
            chosen,
            run_id=chosen.run_id if chosen.run_id in {r[0] for r in data.runs} else None,
            lang=chosen.lang if chosen.lang in data.langs else None,
            tier=chosen.tier if chosen.tier in data.tiers else None,
        )
        shown = self.view
        if shown is not None and shown.data is data and shown.chosen == chosen:
            # Only the sort changed (a header click): the figures and the summary stay.
            used = sort if sort is None or sort.column in (*KEY_COLUMNS, *shown.columns) else None
            rows = read_page(data.store, chosen, used, limit=self.page_size, columns=shown.columns)
            table = [self._table_row(r) for r in rows]
            return replace(shown, rows=rows, table=table, sorted_by=used)
        page = read_scores(data.store, chosen, sort, limit=self.page_size)
        tips = self._column_tips(page.columns, data.stored)
        summary, summary_columns = self._summary_rows(page.summary)
        return ScoresView(
            data=data,
            rows=page.rows,
            table=[self._table_row(r) for r in page.rows],
            columns=page.columns,
            ranges=page.ranges,
            scored=page.scored,
            matching=page.matching,
            tips=tips,
            summary=summary,
            summary_columns=summary_columns,
            notes=self._notes(data.stored),
            chosen=chosen,
            sorted_by=page.sorted_by,
        )

    def fetch_more(self, offset: int) -> JobHandle | None:
        """The next page of the table (scrolled to its end) in a job, in the order and
        under the filters of the rows shown; a refresh meanwhile drops it."""
        view, store = self.view, self.ctx.store
        if view is None or store is None or view.data.store is not store:
            return None
        if self.fetching is not None and not self.fetching.done:
            return self.fetching
        generation = self._generation
        chosen, sort, size, columns = view.chosen, view.sorted_by, self.page_size, view.columns
        handle = self.ctx.run_job(
            Job(
                MORE_TITLE,
                lambda _ctx: read_page(
                    store, chosen, sort, offset=offset, limit=size, columns=columns
                ),
                kind=MORE_KIND,
                params={"panel": "scores", "offset": offset},
                quiet=True,
            )
        )
        self.fetching = handle
        handle.finished.connect(
            lambda outcome, h=handle, g=generation, o=offset: self._more(h, g, o, outcome)
        )
        return handle

    def _more(self, handle: JobHandle, generation: int, offset: int, outcome: Any) -> None:
        if generation != self._generation or handle is not self.fetching:
            return  # the table was read again meanwhile
        self.fetching = None
        rows: list[SentenceScoreRow] = []
        if isinstance(outcome, JobSucceeded) and offset == len(self.rows):
            rows = outcome.result
        self.rows.extend(rows)
        self.panel.append_rows([self._table_row(r) for r in rows])

    @staticmethod
    def _table_row(row: SentenceScoreRow) -> ScoreTableRow:
        text = (row.text or "").replace("\n", " ")
        tier = row.sub_tier if row.sub_tier and row.sub_tier != row.tier else row.tier
        return ScoreTableRow(
            key=row.verbalisation_id,
            cells=(
                row.unit_uid,
                row.model,
                row.lang,
                row.candidate_index,
                tier or "",
                text if text else "(no parsed text)",
            ),
            scores=row.scores,
            tooltip=row.text or "",
        )

    def _summary_rows(self, groups: Sequence[GroupScore]) -> tuple[list[ScoreTableRow], list[str]]:
        by_group: dict[tuple[Any, ...], dict[str, Any]] = {}
        for g in groups:
            model, lang, tier = g.group
            column = f"{g.metric}:{g.quality}" if g.quality else g.metric
            entry = by_group.setdefault((model, lang, tier), {"scores": {}, "tips": {}, "n": 0})
            entry["scores"][column] = g.mean
            entry["n"] = max(entry["n"], g.n)
            median = format_value(column, g.median)
            entry["tips"][column] = (
                f"{column.replace(':', ' ')}: mean "
                f"{format_value(column, g.mean)}, median {median}, "
                f"{plural(g.n, 'text')}"
            )
        columns = sorted({c for e in by_group.values() for c in e["scores"]}, key=column_order)
        rows = [
            ScoreTableRow(
                key=key,
                cells=(key[0], key[1], key[2] or "", entry["n"]),
                scores=entry["scores"],
                score_tips=entry["tips"],
            )
            for key, entry in sorted(by_group.items(), key=lambda kv: tuple(str(k) for k in kv[0]))
        ]
        return rows, columns

    # -- notes: which models the scores come from ----------------------------------------
    def mbert_cached(self) -> bool:
        """Whether BERTScore's default model is in the local cache (checked once)."""
        if self._mbert_cached is None:
            from core.metrics.bertscore import default_model_cached

            self._mbert_cached = default_model_cached()
        return self._mbert_cached

    def bertscore_default_note(self) -> str:
        if self.mbert_cached():
            return (
                f"Default: {MBERT} (in the local cache), rescaled with bert_score's "
                "baseline for the text's language."
            )
        return (
            f"Default: {MBERT} is not in the local cache, so the packaged {MINILM} "
            "encoder is used and scores are NOT rescaled (raw F1, higher than and not "
            "comparable with published rescaled BERTScores)."
        )

    @staticmethod
    def _used(stored: Sequence[CorpusScore], metric: str, key: str) -> list[Any]:
        return sorted(
            {
                c.details.get(key)
                for c in stored
                if c.metric == metric and c.details.get(key) is not None
            },
            key=str,
        )

    def _bertscore_used(self, stored: Sequence[CorpusScore], *, short: bool = False) -> str | None:
        models = self._used(stored, "bertscore", "model")
        if not models:
            return None
        rescaled = self._used(stored, "bertscore", "rescaled")
        how = (
            "rescaled with bert_score's baseline"
            if rescaled == [True]
            else "NOT rescaled (raw F1)"
            if rescaled == [False]
            else "rescaled for some languages, raw for others"
        )
        if short:
            packaged = " (packaged)" if MINILM in models else ""
            return f"BERTScore: {', '.join(map(str, models))}{packaged}, {how}"
        why = (
            f" — the packaged encoder, as {MBERT} is not in the local cache"
            if MINILM in models
            else ""
        )
        return f"BERTScore: {', '.join(map(str, models))}{why}; {how}."

    def _similarity_used(self, stored: Sequence[CorpusScore]) -> str:
        encoders = self._used(stored, "similarity", "encoder")
        if not encoders:
            return f"the packaged {MINILM} by default"
        packaged = " (packaged)" if encoders == [MINILM] else ""
        return ", ".join(map(str, encoders)) + packaged

    def _notes(self, stored: Sequence[CorpusScore]) -> tuple[str, str]:
        """A short note line (the dock may be narrow) and its full tooltip."""
        used = self._bertscore_used(stored, short=True)
        if used is None:
            default = (
                f"{MBERT}, rescaled"
                if self.mbert_cached()
                else f"the packaged {MINILM}, NOT rescaled ({MBERT} is not cached)"
            )
            used = f"BERTScore not scored yet; would use {default}"
        short = f"<b>{used}.</b> Similarity encoder: {self._similarity_used(stored)}."
        full = (
            self._bertscore_used(stored) or self.bertscore_default_note()
        ) + f"\nGraph–text similarity encoder: {self._similarity_used(stored)}."
        return short, full

    def _column_tips(self, columns: Sequence[str], stored: Sequence[CorpusScore]) -> dict[str, str]:
        tips: dict[str, str] = {}
        for column in columns:
            metric, _, quality = column.partition(":")
            tip = metric_info(metric).description
            if quality:
                tip += f", against {quality} references of the same language"
            if metric == "bertscore":
                tip += "\n" + (self._bertscore_used(stored) or self.bertscore_default_note())
            if metric == "similarity":
                tip += f"\nencoder: {self._similarity_used(stored)}"
            tips[column] = tip
        return tips

    # -- one text ------------------------------------------------------------------------
    # -- the ESA synonym table (CLI twin: taillens synonyms) ------------------------------
    def open_synonyms(self) -> Any:
        if self.ctx.store is None:
            return None
        dialog = self.panel.open_synonym_dialog()
        dialog.add_requested.connect(lambda e, s, lang: self._synonyms(dialog, "add", e, s, lang))
        dialog.remove_requested.connect(lambda rows: self._synonyms(dialog, "remove", rows))
        dialog.import_requested.connect(lambda path: self._synonyms(dialog, "import", path))
        dialog.seed_requested.connect(lambda: self._synonyms(dialog, "seed"))
        self._synonyms(dialog, "first use")
        return dialog

    def _synonyms(self, dialog: Any, action: str, *args: Any) -> None:
        """One short transaction on the session's synonym table, then the table again."""
        from core import synonyms

        if self.ctx.store is None:
            return

        def apply(store: SessionStore) -> tuple[str, bool]:
            """(what to tell, whether the table changed): one short transaction."""
            if action == "add":
                entity, synonym, lang = args
                if synonyms.add_synonym(store, entity, synonym, lang):
                    return f"Added {synonym.strip()!r} as a synonym of {entity.strip()!r}.", True
                return f"{synonym.strip()!r} is already a synonym of {entity.strip()!r}.", True
            if action == "remove":
                removed = sum(synonyms.remove_synonym(store, e, s, lang) for e, s, lang in args[0])
                return f"Removed {removed} row{'s' if removed != 1 else ''}.", True
            if action == "import":
                read, added = synonyms.import_file(store, args[0])
                return f"{Path(args[0]).name}: {read:,} rows read, {added:,} added.", True
            if action == "seed":
                total, added = synonyms.seed(store)
                return f"Starter set: {added:,} of {total:,} rows added.", True
            added = synonyms.ensure_seeded(store)  # first use
            return "", bool(added)

        def show_rows() -> None:
            if self.ctx.store is not None:
                rows = synonyms.list_synonyms(self.ctx.store)
                dialog.show_rows([(r.entity, r.synonym, r.lang, r.source) for r in rows])

        def done(result: tuple[str, bool]) -> None:
            message, changed = result
            if action == "add":
                dialog.clear_fields()
            if message:
                dialog.show_message(message + " Score ESA again to use the table.")
            elif action == "first use" and changed:
                dialog.show_message(
                    "First use: the starter set's rows were added; remove what you do not want."
                )
            if changed:
                self.ctx.changes.announce({Topic.SYNONYMS})
            show_rows()

        def refused(error: UserFacingError) -> None:
            dialog.show_message(str(error), error=True)
            show_rows()

        landed = self.ctx.writer.write(
            "the synonym table" if action == "first use" else f"the synonym table ({action})",
            apply,
            on_done=done,
            on_error=refused,
        )
        if landed is None:
            dialog.show_message("The session is busy: the change is saved as soon as it is free.")
            show_rows()

    def _detail_changed(self) -> None:
        if self.shown_text is not None:
            self.show_text(self.shown_text)

    def show_text(self, verbalisation_id: int) -> None:
        from core.annotation import VERBALISATION, ItemRef, ratings_of_item
        from core.metrics.scoring import scores_of_verbalisation, unit_material

        store = self.ctx.store
        row = next((r for r in self.rows if r.verbalisation_id == verbalisation_id), None)
        if row is None and store is not None:
            row = read_row(store, verbalisation_id)  # not in a page loaded (a retrieval pick)
        if store is None or row is None:
            self.shown_text = None
            self.panel.show_detail(None)
            return
        self.shown_text = verbalisation_id
        scores = scores_of_verbalisation(store, verbalisation_id)
        ratings = ratings_of_item(store, ItemRef(VERBALISATION, verbalisation_id))
        material = unit_material(store, row.unit_id, row.lang)
        references = [
            (quality, text)
            for quality in QUALITIES
            for _id, text in material.references.get(quality, ())
        ]
        esa = next((s for s in scores if s.metric == "esa"), None)
        hallucination = next((s for s in scores if s.metric == "hallucination"), None)
        mentions = [
            Span(int(m["start"]), int(m["end"]), str(m.get("entity", "")), str(m.get("via", "")))
            for m in (esa.details.get("mentions", []) if esa else [])
        ]
        spans = [
            Span(int(s["start"]), int(s["end"]), str(s.get("text", "")))
            for s in (hallucination.details.get("spans", []) if hallucination else [])
        ]
        tier = row.sub_tier or row.tier or "no tier"
        self.panel.show_detail(
            TextDetail(
                title=f"{row.unit_uid} · {row.model} · {row.lang} · candidate "
                f"{row.candidate_index} · {tier}",
                text=row.text or "",
                lang=row.lang,
                mentions=mentions,
                missing=[str(m) for m in (esa.details.get("missing", []) if esa else [])],
                hallucinations=spans,
                esa_scored=esa is not None,
                hallucination_scored=hallucination is not None,
                triples=list(material.triples),
                references=references,
                scores=self._score_lines(scores) + self._rating_lines(ratings),
            )
        )

    @staticmethod
    def _rating_lines(ratings: Sequence[tuple[str, Any]]) -> list[tuple[str, str, str]]:
        """One detail line per human rating: fluency, adequacy, and who rated."""
        from core.annotation import ADEQUACY_LABELS

        lines = []
        for name, rating in ratings:
            parts = []
            if rating.fluency is not None:
                parts.append(f"fluency {rating.fluency}")
            if rating.adequacy is not None:
                parts.append(f"adequacy {ADEQUACY_LABELS.get(rating.adequacy, rating.adequacy)}")
            note = f"by {name}" + (" (golden answer)" if rating.is_golden else "")
            if rating.corrected_text:
                note += "; corrected"
            lines.append(("human rating", ", ".join(parts) or "(no score)", note))
        return lines

    @staticmethod
    def _score_lines(scores: Sequence[StoredScore]) -> list[tuple[str, str, str]]:
        lines = []
        for s in sorted(
            scores, key=lambda s: column_order(f"{s.metric}:{s.quality}" if s.quality else s.metric)
        ):
            column = f"{s.metric} {s.quality}" if s.quality else s.metric
            d = s.details
            note = ""
            if s.metric == "bertscore":
                note = f"{d.get('model', '?')}, " + (
                    "rescaled" if d.get("rescaled") else "NOT rescaled (raw F1)"
                )
            elif s.metric == "esa":
                note = f"{len(d.get('detected', []))} of {plural(d.get('entities', 0), 'entity')}"
            elif s.metric == "similarity":
                drop = d.get("inversion_drop")
                note = f"encoder {d.get('encoder', '?')}" + (
                    f"; inversion drop {drop:+.3f}" if isinstance(drop, (int, float)) else ""
                )
            elif s.metric in ("ppl", "entity_ppl") and d.get("model"):
                note = f"under {d['model']}"
            elif d.get("note"):
                note = str(d["note"])
            lines.append((column, format_value(s.metric, s.value), note))
        return lines

    # -- scoring -------------------------------------------------------------------------
    def choices(
        self,
        found: Sequence[ModelInfo],
        data: ScoresData | None = None,
        wordnet: WordNetStatus | None = None,
    ) -> ScoreChoices:
        """What the Score… dialog offers: the runs and languages last read (``data``, else
        the cached read), the models ``found`` on this machine and where METEOR's WordNet
        is (``wordnet``). Pure: no session read, no file-system scan (:meth:`find_choices`
        does those in a job)."""
        from core.models import CAUSAL

        data = data if data is not None else self.data
        runs = data.runs if data is not None else []
        langs = (data.langs if data is not None else []) or list(LANGUAGES)
        default_label = (
            f"default: {MBERT}"
            if self.mbert_cached()
            else f"default: packaged {MINILM} ({MBERT} not cached)"
        )
        encoders = [m for m in found if m.type != CAUSAL]
        return ScoreChoices(
            wordnet_found=wordnet is not None and wordnet.found,
            wordnet_note=wordnet.message() if wordnet is not None else "",
            runs=[
                (run_id, f"run {run_id}: {name} ({plural(n, 'text')})") for run_id, name, n in runs
            ],
            langs=langs,
            bertscore_models=[ModelChoice(default_label, None, self.bertscore_default_note())]
            + [
                ModelChoice(
                    m.name,
                    str(m.path),
                    f"{m.name}: "
                    + (
                        "rescaled with bert_score's baseline."
                        if short_model_name(m.name) == MBERT
                        else "rescaled only if bert_score ships a baseline "
                        "for it; otherwise raw F1, marked not rescaled."
                    ),
                )
                for m in encoders
            ],
            encoders=[
                ModelChoice(
                    f"default: packaged {MINILM}",
                    None,
                    f"The {MINILM} sentence encoder packaged with TailLens.",
                )
            ]
            + [
                ModelChoice(m.name, str(m.path), f"{m.name} (sentence-transformers)")
                for m in encoders
            ],
            ppl_models=[
                ModelChoice(
                    "each run's own model", None, "Perplexity under the model that wrote the text"
                )
            ]
            + [ModelChoice(m.name, str(m.path)) for m in found if m.type == CAUSAL],
        )

    def find_choices(self, store: SessionStore, data: ScoresData | None) -> ScoreChoices:
        """The dialog's choices with the local models found now (runs in a job: scanning
        the Hugging Face cache and checking for mBERT touch the file system). The runs
        come from the last refresh; only when none has finished yet are they read here."""
        from core.metrics.meteor import wordnet_status
        from core.models import discover_models

        try:
            found = discover_models()
        except OSError as error:  # an unreadable cache folder must not stop scoring
            log.warning("model discovery failed: %s", error)
            found = []
        if data is None or data.store is not store:
            data = load_scores(store)
        return self.choices(found, data, wordnet_status())

    def open_dialog(self) -> JobHandle | None:
        """Find the choices in a job; the dialog opens when they are there."""
        store = self.ctx.store
        if store is None:
            self.ctx.notify.show_error("No session", "Open a session to score.")
            return None
        if self.models_handle is not None and not self.models_handle.done:
            return self.models_handle  # a second click while the first scan runs
        data = self.data
        job = Job(
            "Find local models",
            lambda _ctx: self.find_choices(store, data),
            kind=MODELS_KIND,
            uses_session=data is None or data.store is not store,
            quiet=True,
        )
        handle = self.models_handle = self.ctx.run_job(job)
        handle.finished.connect(lambda outcome, h=handle: self._choices_found(h, store, outcome))
        return handle

    def _choices_found(self, handle: JobHandle, store: SessionStore, outcome: Any) -> None:
        if handle is not self.models_handle:
            return
        self.models_handle = None
        if isinstance(outcome, JobSucceeded) and store is self.ctx.store:
            self.panel.open_score_dialog(outcome.result)

    def score(self, request: ScoringRequest) -> JobHandle | None:
        """Run the scoring job for the dialog's ``request``; bad input is a message."""
        from core.metrics.scoring import score_job

        store = self.ctx.store
        if store is None:
            return None
        if self.handle is not None and not self.handle.done:
            self.ctx.notify.show_error(
                "Scoring already running", "Wait for it to finish or cancel it first."
            )
            return None
        try:
            if request.run_ids is not None and not request.run_ids:
                raise UserFacingError("choose at least one run to score")
            if request.langs is not None and not request.langs:
                raise UserFacingError("choose at least one language to score")
            job = score_job(store, request)
        except UserFacingError as error:
            self.ctx.notify.show_error("Cannot score", str(error))
            return None
        handle = self.ctx.run_job(job)
        self.handle = handle
        self.panel.job_started(f"Scoring {', '.join(job.params['metrics'])}")
        handle.progressed.connect(lambda p: self.panel.job_progress(p.done, p.total, p.message))
        handle.finished.connect(self._scored)
        return handle

    def export_texts(self, path: Path) -> JobHandle | None:
        """The per-text table of the session to ``path`` (.csv, .jsonl, .parquet), as a
        core job (core.formats.texts_table); a refused path or format is a message."""
        from core.formats.texts_table import export_texts_job
        from core.output_guard import check_output_target

        store = self.ctx.store
        if store is None:
            return None
        try:  # a session (the open one above all) is refused before any work
            check_output_target(path)
            job = export_texts_job(store, path)
        except UserFacingError as error:
            self.ctx.notify.show_error("Texts not exported", str(error))
            return None
        handle = self.ctx.run_job(job)
        handle.finished.connect(lambda outcome: self._texts_exported(path, outcome))
        return handle

    def _texts_exported(self, path: Path, outcome: Any) -> None:
        # On finished, after the runner's own "done in x s" line, so this one stays.
        if isinstance(outcome, JobSucceeded):
            message = f"{path.name}: {outcome.result.texts_line()}"
            self.ctx.notify.show_status(message, 15_000)

    def cancel(self) -> None:
        if self.handle is not None and not self.handle.done:
            self.handle.cancel()

    def _scored(self, outcome: Any) -> None:
        if isinstance(outcome, JobSucceeded):
            summary = outcome.result
            written = ", ".join(f"{k} {v:,}" for k, v in summary.rows_written.items())
            message = (
                f"Scored {plural(summary.texts, 'text')} in {outcome.elapsed_s:.1f} s"
                + (f" (rows: {written})" if written else "")
                + "."
                + "".join(f" Note: {n}." for n in summary.notes)
            )
        elif isinstance(outcome, JobWasCancelled):
            message = (
                "Scoring cancelled: each metric keeps either all its old scores or all "
                "its new ones."
            )
        elif isinstance(outcome, JobFailed):
            message = f"Scoring failed: {outcome.message}"
        else:
            message = ""
        self.panel.job_finished(message)
