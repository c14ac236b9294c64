"""The scoring job: it scores a session's verbalisations (optionally only some runs,
languages, units) with the chosen metrics and writes ``scores`` rows as CONVENTIONS.md says:

* sentence rows: ``verbalisation_id``, ``run_id``, ``lang`` set; reference-based metrics
  once per reference quality (``details["quality"]`` gold / silver, never mixed);
* corpus rows per run × language (× quality): ``verbalisation_id`` NULL, ``details["n"]``;
  ESA corpus rows carry ESI@1, ESI@2 and the three ESA means in details;
* with ``references=True`` the unit's reference texts are scored too by the
  reference-free metrics (and perplexity under ``--ppl-model``): sentence rows with
  ``reference_id``, corpus rows with ``run_id`` NULL and ``details["texts"] = "references"``.

Every output counts, as in the WebNLG challenge's official scripts: an empty output (an
empty line of an imported file, a model that generated nothing) is scored as the empty
text, and so, by default, is a reply from which no answer could be parsed; their sentence
rows say ``details["output"]`` = ``empty`` / ``unparsed`` and each corpus row counts them
(``details["empty_outputs"]``, ``details["unparsed_outputs"]``). Leaving them out is an
explicit choice (``ScoringRequest.exclude_empty`` / ``exclude_unparsed``; the summary
notes say how many were left out).

Re-scoring replaces the previous rows of the same metric for the same texts and groups;
all of a metric's deletes and inserts are one transaction, so a cancel or failure leaves
each metric either fully old or fully new. Texts a metric cannot score (no reference of a
language: reference-based scores are then absent, not 0) are counted in the summary notes.

What is scored is read by :mod:`core.metrics.scoring.material`; the stored scores are
read back by :mod:`core.metrics.scoring.queries`.

Perplexity (METHODS §7: of the generated tokens, given the prompt) scores a
verbalisation's raw reply, marker and preamble included, also where no answer could be
parsed from it, after the prompt the verbalise job stored with it. Rows without a stored
prompt (made before schema 0003, or imported) get it rebuilt from the run's template and
today's triples; ``details["prompt"]`` says which ("stored", "rebuilt" or "none"). The
perplexity metrics load each causal model once, share it between ``ppl`` and
``entity_ppl``, score every group of that model, and free it before the next model loads.
A run made through an OpenAI-compatible server has no local model: without ``--ppl-model``
its ``ppl`` is computed from the token log-probabilities the server returned with each
reply (``details["source"] = "server logprobs"``), where it returned them.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from core.changes import Topic
from core.errors import UserFacingError
from core.heavy import ModelStackMissing
from core.jobs import Job, JobContext
from core.labels import duration_words
from core.metrics import (
    MODEL_METRICS,
    REFERENCE_BASED,
    Metric,
    create_metric,
    expand_metric_names,
)
from core.metrics.base import (
    ESA,
    HALLUCINATION,
    METEOR,
    PPL,
    MetricValue,
    ScoringItem,
)
from core.metrics.scoring.corpus_groups import (
    _corpus_of,
    _Group,
    _keeps_values,
    _kept,
    _LazyItems,
    corpus_row,
    sentence_rows,
)
from core.metrics.scoring.material import _all_unit_ids, _load_verbalisations, _UnitMaterial
from core.metrics.scoring.pool import SentencePool, score_chunk, workers_for
from core.metrics.scoring.queries import _run_text_counts
from core.metrics.scoring.request import (
    CorpusScore,
    ScoringRequest,
    ScoringSummary,
    _Run,
    _Text,
    unfinished_runs,
    validate_request,
)
from core.metrics.scoring.write import StagedScores, replaced_rows
from core.store.batching import in_chunks
from core.vocab import QUALITIES

if TYPE_CHECKING:
    from core.store import SessionStore

CHUNK = 64  # texts per sentence-scoring call: the cancel and progress granularity
ROW_BATCH = 1_000  # score rows held at a time before they are staged (see write.py)
# The "model" of a perplexity group scored from a server run's stored log-probabilities.
SERVER_LOGPROBS = "server log-probabilities"


class _Scorer:
    def __init__(
        self, store: SessionStore, request: ScoringRequest, runs: dict[int, _Run], ctx: JobContext
    ) -> None:
        self.store = store
        if {ESA, HALLUCINATION} & set(expand_metric_names(request.metrics)) and not (
            request.options.esa_synonyms
        ):
            # The session's synonym table (the ESA paper's dictionary) joins ESA's names.
            from dataclasses import replace

            from core.metrics.esa.synonyms import effective_rows

            rows = tuple(effective_rows(store))
            if rows:
                request = replace(request, options=replace(request.options, esa_synonyms=rows))
        self.request = request
        self.runs = runs
        self.ctx = ctx
        self.summary = ScoringSummary()
        self.metrics = expand_metric_names(request.metrics)
        self.texts, self.replies = _load_verbalisations(
            store, runs, request, self.summary, self.metrics
        )
        # Texts per run and language as loaded (see _run_texts).
        self._text_counts = _run_text_counts(store)
        unit_ids = sorted(
            {t.unit_id for t in (*self.texts, *self.replies)} | set(request.unit_ids or ())
        )
        if request.references and request.unit_ids is None:
            unit_ids = _all_unit_ids(store)
        # Only the languages scored: a unit's other languages' triples and references
        # are never looked at (references of every language when they are scored too).
        if request.references:
            langs = None if request.langs is None else set(request.langs)
        else:
            langs = {t.lang for t in (*self.texts, *self.replies)}
        self.material = _UnitMaterial(
            store, unit_ids, langs=langs, reference_texts=request.references
        )
        self.reference_texts = [
            t
            for t in self.material.reference_rows
            if request.references and (request.langs is None or t.lang in request.langs)
        ]
        self.summary.texts = len(self.texts) + len(self.reference_texts)
        if {ESA, HALLUCINATION} & set(self.metrics):
            count = len(request.options.esa_synonyms)
            self.summary.note(
                f"ESA looked for names, aliases and {count:,} synonym rows "
                "(taillens synonyms, Scores ▸ Synonyms…)"
            )
        self._metric_cache: dict[tuple[str, str | None], Metric] = {}
        self.pool = SentencePool(workers_for(request.workers))
        self._metric_total: dict[str, int] = {}
        self._metric_pace: dict[str, tuple[float, int]] = {}  # started, texts done
        # Group "models" that are a server run's stored log-probabilities -> served model.
        self._server_models: dict[str, str] = {}

    # items

    def _item(
        self, text: _Text, references: Sequence[str] = (), prompt: str | None = None
    ) -> ScoringItem:
        key = (text.unit_id, text.lang)
        return ScoringItem(
            text=text.text,
            lang=text.lang,
            references=tuple(references),
            triples=tuple(self.material.triples.get(key, ())),
            entities=self.material.entities.get(key, ()),
            prompt=prompt,
            key=text.verbalisation_id or text.reference_id,
            token_logprobs=text.token_logprobs,
        )

    def _prompt(self, text: _Text) -> tuple[str | None, str]:
        """The prompt a verbalisation was generated from, and where it came from:
        ``stored`` at generation; ``rebuilt`` from the run's template and today's triples
        for rows older than the stored prompts (an override edited since the run then
        gives a context the model never saw); ``none``."""
        if text.prompt is not None:
            return text.prompt, "stored"
        rebuilt = self._rebuilt_prompt(text)
        return rebuilt, ("none" if rebuilt is None else "rebuilt")

    def _rebuilt_prompt(self, text: _Text) -> str | None:
        if text.run_id is None:
            return None
        run = self.runs[text.run_id]
        template = run.templates.get(text.lang)
        if not template:
            return None
        try:
            from core.verbalise.prompts import render_prompt
        except ImportError:
            self.summary.note(
                "core.verbalise.prompts is missing: perplexity scored without prompts"
            )
            return None
        try:
            return render_prompt(
                template, self.material.triples.get((text.unit_id, text.lang), ()), text.lang
            )
        except ValueError as error:  # a stored template without its {triples} slot
            self.summary.note(f"run {run.id}: {error}; perplexity scored without the prompt")
            return None

    def _by_run_lang(self, texts: Sequence[_Text]) -> dict[tuple[int | None, str], list[_Text]]:
        groups: dict[tuple[int | None, str], list[_Text]] = defaultdict(list)
        for text in texts:
            groups[(text.run_id, text.lang)].append(text)
        return groups

    def groups_for(self, metric: str) -> list[_Group]:
        """The groups ``metric`` scores: per run and language (and reference quality for
        a reference-based metric), then the reference texts' own groups."""
        # ppl scores what the model generated (the raw reply); the rest the parsed text.
        by_run_lang = self._by_run_lang(self.replies if metric == PPL else self.texts)
        if metric in REFERENCE_BASED:
            return self._reference_based_groups(by_run_lang)
        if metric in MODEL_METRICS:
            groups = self._model_groups(metric, by_run_lang)
        else:
            groups = [
                _Group(run_id, lang, None, texts, _LazyItems(self._item, texts))
                for (run_id, lang), texts in by_run_lang.items()
            ]
        if self.reference_texts and (metric not in MODEL_METRICS or self.request.options.ppl_model):
            groups += self._reference_text_groups()
        return groups

    def _reference_based_groups(
        self, by_run_lang: dict[tuple[int | None, str], list[_Text]]
    ) -> list[_Group]:
        """A group per run, language and reference quality, of the texts that have a
        reference of that quality; the texts left without one are noted."""
        groups: list[_Group] = []
        references = self.material.references
        # A quality the language has no reference of at all (a dataset without silver
        # references) is not worth a note per run; a language with none is, once.
        present = {(lang, quality) for _unit, lang, quality in references}
        for (run_id, lang), texts in by_run_lang.items():
            if not any((lang, quality) in present for quality in QUALITIES):
                self.summary.note(
                    f"run {run_id}, {lang}: no text has a reference in {lang}; "
                    "reference-based scores are absent (not 0)"
                )
                continue
            for quality in QUALITIES:
                chosen = [t for t in texts if references.get((t.unit_id, lang, quality))]
                if len(chosen) < len(texts) and (lang, quality) in present:
                    self.summary.note(
                        f"run {run_id}, {lang}: {len(texts) - len(chosen):,} of "
                        f"{len(texts):,} texts have no {quality} reference; their "
                        f"{quality} reference-based scores are absent (not 0)"
                    )
                if not chosen:
                    continue
                items = _LazyItems(
                    self._item,
                    chosen,
                    [[ref for _, ref in references[(t.unit_id, lang, quality)]] for t in chosen],
                )
                groups.append(_Group(run_id, lang, quality, chosen, items))
        return groups

    def _model_groups(
        self, metric: str, by_run_lang: dict[tuple[int | None, str], list[_Text]]
    ) -> list[_Group]:
        """A group per run and language with the causal model that scores it (perplexity
        with each text's prompt); a run with no model is noted and left out."""
        groups: list[_Group] = []
        for (run_id, lang), texts in by_run_lang.items():
            run = self.runs[run_id] if run_id is not None else None
            model = self._causal_model(metric, run, run_id, texts)
            if model is None:
                continue
            if metric != PPL:  # entity_ppl scores labels alone: no prompt
                items = _LazyItems(self._item, texts)
                groups.append(_Group(run_id, lang, None, texts, items, model=str(model)))
                continue
            prompts = [self._prompt(t) for t in texts]
            rebuilt = sum(source == "rebuilt" for _, source in prompts)
            if rebuilt:
                self.summary.note(
                    f"ppl: run {run_id}, {lang}: {rebuilt:,} verbalisations have no stored "
                    "prompt (made before TailLens stored prompts); their prompt was "
                    "rebuilt from the run's template and the unit's current triples"
                )
            items = _LazyItems(self._item, texts, prompts=[prompt for prompt, _ in prompts])
            groups.append(
                _Group(
                    run_id,
                    lang,
                    None,
                    texts,
                    items,
                    model=str(model),
                    prompts=[source for _, source in prompts],
                )
            )
        return groups

    def _causal_model(
        self, metric: str, run: _Run | None, run_id: int | None, texts: Sequence[_Text]
    ) -> str | None:
        """The model that scores ``metric`` on a run's texts: --ppl-model, else the run's
        own causal model, else (ppl) the log-probabilities its server returned; None,
        with a note, when there is none."""
        model = self.request.options.ppl_model or (
            run.parameters.get("model_path") or run.model_id
            if run is not None and run.kind in ("causal",)
            else None
        )
        if (
            model is None
            and metric == PPL
            and run is not None
            and any(t.token_logprobs for t in texts)
        ):
            # A server run that returned log-probabilities: scored from them.
            model = f"{SERVER_LOGPROBS} of run {run.id}"
            self._server_models[model] = run.name
        if model is None:
            served = (
                " and its server returned no token log-probabilities"
                if metric == PPL and run is not None and run.kind == "openai"
                else ""
            )
            self.summary.note(
                f"{metric}: run {run_id} ({run.kind if run else '?'}) has no causal "
                f"model of its own{served}; choose one with --ppl-model"
            )
        return model

    def _reference_text_groups(self) -> list[_Group]:
        """The unit's reference texts, a group per language and quality."""
        by_lang_quality: dict[tuple[str, str | None], list[_Text]] = defaultdict(list)
        for text in self.reference_texts:
            by_lang_quality[(text.lang, text.quality)].append(text)
        return [
            _Group(
                None,
                ref_lang,
                ref_quality,
                texts,
                _LazyItems(self._item, texts),
                model=self.request.options.ppl_model,
            )
            for (ref_lang, ref_quality), texts in sorted(
                by_lang_quality.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")
            )
        ]

    def metric(self, name: str, model: str | None) -> Metric:
        key = (name, model if name in MODEL_METRICS else None)
        if key not in self._metric_cache and model in self._server_models:
            from core.metrics.perplexity import ServerLogprobPerplexity

            self._metric_cache[key] = ServerLogprobPerplexity(self._server_models[model])
        if key not in self._metric_cache:
            metric = create_metric(name, self.request.options, model=model)
            share = getattr(metric, "share_model", None)
            if share is not None:
                # ppl and entity_ppl of one model: one loaded copy between them.
                for (other_name, other_model), other in self._metric_cache.items():
                    if other_model == model and other_name in MODEL_METRICS:
                        share(other)
                        break
            self._metric_cache[key] = metric
        return self._metric_cache[key]

    def _close_model(self, model: str | None) -> None:
        """Free a perplexity model (every metric sharing it); None: every one."""
        for (name, key_model), metric in self._metric_cache.items():
            if name in MODEL_METRICS and (model is None or key_model == model):
                close = getattr(metric, "close", None)
                if close is not None:
                    close()

    # scoring

    def run(self) -> ScoringSummary:
        plans = [(name, self.groups_for(name)) for name in self.metrics]
        # Every metric is built before any text is scored, so a missing model (a run's
        # folder gone, a bad --ppl-model) fails before anything is written.
        # signature() resolves a named BERTScore model or encoder (not loading it).
        absent: set[str] = set()
        for name, groups in plans:
            for group in groups:
                try:
                    metric = self.metric(name, group.model)
                except ModelStackMissing as error:
                    # A model metric where the model stack is not installed (the bundle, a
                    # wheel without [models]): said once, the other metrics still run.
                    self.summary.note(str(error))
                    self.summary.absent[name] = str(error)
                    absent.add(name)
                    break
                metric.signature()
                # A metric that cannot run here (METEOR without WordNet) says why, and
                # writes nothing: scores it made elsewhere stay as they are.
                if getattr(metric, "absent_reason", ""):
                    self.summary.note(metric.absent_reason)  # type: ignore[attr-defined]
                    self.summary.absent[name] = metric.absent_reason  # type: ignore[attr-defined]
                    absent.add(name)
        plans = [(name, groups) for name, groups in plans if name not in absent]
        self._total = sum(len(g.items) for _, groups in plans for g in groups)
        self._metric_total = {name: sum(len(g.items) for g in groups) for name, groups in plans}
        self._done = 0
        self.ctx.progress(0, self._total, "preparing")
        model_plans = [(name, groups) for name, groups in plans if name in MODEL_METRICS]
        try:
            for slot, (name, groups) in enumerate(plans):
                if name not in MODEL_METRICS:
                    staged = StagedScores(self.store, slot, ROW_BATCH)
                    try:
                        corpus = [
                            self._score_group(name, g, i, staged) for i, g in enumerate(groups)
                        ]
                        self.ctx.check_cancelled()
                        self._commit(name, groups, staged, corpus)
                    finally:
                        staged.close()
                elif name == model_plans[0][0]:
                    # All perplexity metrics at the first one's turn, model by model.
                    self._score_by_model(model_plans, slot)
        finally:
            self._close_model(None)
            self.pool.close()
        return self.summary

    def _score_group(
        self, name: str, group: _Group, index: int, staged: StagedScores
    ) -> CorpusScore | None:
        """Score one group a chunk at a time, staging each chunk's sentence rows as it is
        scored, then its corpus row; the corpus figure for the summary. Only what the
        corpus figure is made from is kept of the sentence values (see _kept)."""
        self.ctx.check_cancelled()
        metric = self.metric(name, group.model)
        where = f"run {group.run_id}" if group.run_id is not None else "references"
        keep = _keeps_values(name, metric)
        kept: list[MetricValue] = []
        # sacrebleu's segment statistics from the sentence pass: the corpus score is
        # summed from them (no second pass over the texts).
        statistics: list[Any] | None = [] if hasattr(metric, "corpus_from_pass") else None
        self._metric_pace.setdefault(name, (time.monotonic(), 0))
        label = f"{name} · {where} · {group.lang}{f' · {group.quality}' if group.quality else ''}"
        start = 0
        chunks = in_chunks(group.items, CHUNK)
        if self.pool.wanted(name, self._metric_total.get(name, 0)):
            scored = self.pool.score(
                name, self.request.options, iter(chunks), self.ctx.check_cancelled
            )
        else:
            scored = self._in_process(metric, chunks)
        for chunk, values, chunk_statistics in scored:
            staged.add(index, sentence_rows(name, group, start, values, metric.signature()))
            if keep:
                kept.extend(_kept(v) for v in values)
            if statistics is not None:
                statistics.extend(chunk_statistics)
            start += len(chunk)
            self._done += len(chunk)
            self._progress(name, len(chunk), label)
        if statistics is not None:
            corpus: MetricValue | None = metric.corpus_from_pass(statistics)  # type: ignore[attr-defined]
        else:
            corpus = _corpus_of(name, metric, group.items, kept)
        if corpus is None:
            return None
        if name == METEOR and corpus.value is None and corpus.details.note:
            self.summary.note(f"meteor absent for {where}, {group.lang}: {corpus.details.note}")
        row, summary = corpus_row(
            name,
            group,
            corpus,
            metric.signature(),
            run=self.runs.get(group.run_id) if group.run_id is not None else None,
            subset=self.request.unit_ids is not None,
            run_texts=self._run_texts(group.run_id, group.lang)
            if group.run_id is not None
            else None,
        )
        staged.add(index, [row])
        return summary

    def _in_process(
        self, metric: Metric, chunks: Iterable[Sequence[ScoringItem]]
    ) -> Iterator[tuple[Sequence[ScoringItem], list[MetricValue], Any]]:
        for chunk in chunks:
            self.ctx.check_cancelled()
            values, statistics = score_chunk(metric, chunk)
            yield chunk, values, statistics

    def _progress(self, name: str, texts: int, label: str) -> None:
        """Progress, with the time the current metric has left at its pace so far."""
        now = time.monotonic()
        started, done = self._metric_pace.get(name, (now, 0))
        done += texts
        self._metric_pace[name] = (started, done)
        left = self._metric_total.get(name, 0) - done
        elapsed = now - started
        eta = ""
        if left > 0 and done and elapsed > 1:
            eta = f" · {duration_words(elapsed / done * left)} left for {name}"
        self.ctx.progress(self._done, self._total, label + eta)

    def _score_by_model(self, plans: list[tuple[str, list[_Group]]], first_slot: int) -> None:
        """Every perplexity group, one causal model at a time: the model is loaded once
        for all its groups of all the perplexity metrics, then freed before the next
        one loads (a 7B model and the next one need not fit together). Each metric's rows
        are staged as they are scored and committed at the end, one metric per
        transaction, in group order."""
        models = list(dict.fromkeys(g.model for _, groups in plans for g in groups))
        staged = {
            name: StagedScores(self.store, first_slot + i, ROW_BATCH)
            for i, (name, _) in enumerate(plans)
        }
        try:
            corpus: dict[tuple[str, int], CorpusScore | None] = {}
            for model in models:
                try:
                    for name, groups in plans:
                        for index, group in enumerate(groups):
                            if group.model == model:
                                corpus[(name, index)] = self._score_group(
                                    name, group, index, staged[name]
                                )
                finally:
                    self._close_model(model)
            for name, groups in plans:
                self.ctx.check_cancelled()
                in_order = [corpus[(name, i)] for i in range(len(groups))]
                self._commit(name, groups, staged[name], in_order)
        finally:
            for rows in staged.values():
                rows.close()

    def _run_texts(self, run_id: int, lang: str | None) -> int:
        return self._text_counts.get((run_id, lang or ""), 0)

    def _commit(
        self,
        name: str,
        groups: list[_Group],
        staged: StagedScores,
        corpus: Sequence[CorpusScore | None],
    ) -> None:
        """Replace the metric's old rows with the staged ones, in one transaction."""
        # The texts whose old rows go: every text asked for (a text that lost its last
        # reference loses its stale score), except for perplexity, where a run skipped for
        # want of a model keeps what an earlier --ppl-model gave it.
        covered = [t for g in groups for t in g.texts] if name in MODEL_METRICS else self.texts
        replaced = replaced_rows(
            name,
            sorted({t.verbalisation_id for t in covered if t.verbalisation_id is not None}),
            sorted({t.reference_id for g in groups for t in g.texts if t.reference_id is not None}),
            {(t.run_id, t.lang) for t in covered if t.run_id is not None},
            [(g.lang, g.quality) for g in groups if g.run_id is None],
        )
        self.summary.rows_written[name] = staged.commit(replaced)
        self.summary.corpus.extend(c for c in corpus if c is not None)


def score_job(store: SessionStore, request: ScoringRequest) -> Job[ScoringSummary]:
    """A job scoring the session's texts; bad input is refused here, before the job runs."""
    runs = validate_request(store, request)
    if not runs and not request.references:
        raise UserFacingError(
            "the session has no model runs to score (verbalise units or import outputs first)"
        )
    runs, notes = unfinished_runs(runs, request)
    if not runs and not request.references:
        raise UserFacingError("nothing to score: " + "; ".join(notes))
    metrics = expand_metric_names(request.metrics)

    def run(ctx: JobContext) -> ScoringSummary:
        scorer = _Scorer(store, request, runs, ctx)
        job.partial = scorer.summary
        summary = scorer.run()
        for note in notes:
            summary.note(note)
        return summary

    def kept() -> str:
        saved = sorted(job.partial.rows_written) if job.partial is not None else []
        rest = (
            "every metric not saved keeps the scores it had before (each metric is written "
            "in one transaction); score again to finish."
        )
        if not saved:
            return rest[0].upper() + rest[1:]
        return f"The scores of {', '.join(saved)} were saved; {rest}"

    job: Job[ScoringSummary] = Job(
        title="Scoring",
        run=run,
        kind="metrics.score",
        params={
            "metrics": list(metrics),
            "runs": sorted(runs),
            "langs": list(request.langs) if request.langs else None,
            "units": len(request.unit_ids) if request.unit_ids else None,
            "references": request.references,
        },
        writes=frozenset({Topic.SCORES}),
        kept=kept,
    )
    return job
