"""The verbalise job: a verbaliser over units × languages, saved batch by batch.

The job plans (the units selected, :mod:`core.verbalise.selection`; the run opened or
resumed and what it still lacks, :mod:`core.verbalise.run_records`), then works through
the batch loop (:mod:`core.verbalise.batch_loop`) and ends the run with its status.

Resume: running again with the same run skips the (unit, language) pairs that run already
verbalised. :func:`~core.verbalise.run_records.find_resumable_run` finds an unfinished
run made with the same model and parameters, which the CLI resumes by default; a run
whose owner process may still be alive is never taken over.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from core.changes import Topic
from core.jobs import Job, JobCancelled, JobContext
from core.store import SessionStorageError, SessionStore
from core.verbalise.base import Triples, Verbaliser, VerbaliseRequest
from core.verbalise.batch_loop import order_for_batching, verbalise_in_batches
from core.verbalise.outcome import VerbaliseError, VerbaliseSummary, kept_line
from core.verbalise.run_records import (
    done_pairs,
    open_run,
    run_owner,
    run_parameters,
    set_status,
)
from core.verbalise.selection import select_units, unit_triples
from core.vocab import LANGUAGES


def verbalise_job(
    store: SessionStore,
    verbaliser: Verbaliser,
    units: str | Sequence[int] = "all",
    langs: Sequence[str] = LANGUAGES,
    *,
    batch_size: int = 8,
    resume_run_id: int | None = None,
    resume: bool = True,
    close_when_done: bool = True,
) -> Job[VerbaliseSummary]:
    """A job that verbalises the selected units in ``langs`` with ``verbaliser``.

    Settings are checked here, before anything runs: unknown languages, a bad unit
    selection, a bad batch size. ``resume_run_id`` continues that run (it must have been
    made with the same model and parameters); otherwise, with ``resume``, the newest
    unfinished matching run is continued, and a new run is created when there is none.
    """
    langs = list(dict.fromkeys(langs))
    unknown = [lang for lang in langs if lang not in LANGUAGES]
    if not langs or unknown:
        raise VerbaliseError(f"languages must be among en, it, es; got {', '.join(langs)}")
    if batch_size < 1:
        raise VerbaliseError(f"batch size must be at least 1, got {batch_size}")
    unit_ids = select_units(store, units)
    if not unit_ids:
        raise VerbaliseError(f"no units match {units!r}")
    units_text = units if isinstance(units, str) else "ids:" + ",".join(map(str, unit_ids))
    work = _Work(store, verbaliser, unit_ids, langs, units_text, batch_size, resume_run_id, resume)
    work.close_when_done = close_when_done
    job: Job[VerbaliseSummary] = Job(
        f"Verbalise with {verbaliser.system_name}",
        work.run,
        kind="verbalise",
        params={
            "model": verbaliser.model_id,
            "kind": verbaliser.kind,
            "units": units_text,
            "langs": langs,
            "batch_size": batch_size,
            "resume_run_id": resume_run_id,
        },
        writes=frozenset({Topic.RUNS}),
        kept=lambda: kept_line(job.partial),
    )
    work.job = job
    return job


@dataclass
class _Work:
    """What one verbalise job does once it runs, off the UI thread."""

    store: SessionStore
    verbaliser: Verbaliser
    unit_ids: list[int]
    langs: list[str]
    units_text: str
    batch_size: int
    resume_run_id: int | None = None
    resume: bool = True
    close_when_done: bool = True
    job: Job[VerbaliseSummary] | None = None  # whose ``partial`` the summary is, once made

    def run(self, ctx: JobContext) -> VerbaliseSummary:
        verbaliser = self.verbaliser
        ctx.progress(0, None, "loading the model")
        # A local model says each stage of its load (tokenizer, weights, device).
        if hasattr(verbaliser, "on_stage"):
            verbaliser.on_stage = lambda words: ctx.progress(0, None, words)
        verbaliser.load()
        previous = verbaliser.should_stop
        verbaliser.should_stop = lambda: ctx.cancelled  # asked inside a batch, every step
        try:
            return self._run(ctx)
        finally:
            verbaliser.should_stop = previous
            if self.close_when_done:
                verbaliser.close()

    def _run(self, ctx: JobContext) -> VerbaliseSummary:
        store, verbaliser = self.store, self.verbaliser
        templates = {lang: verbaliser.templates[lang] for lang in self.langs}
        parameters = run_parameters(verbaliser, self.langs, self.batch_size, self.units_text)
        owner = run_owner()
        busy: list[tuple[int, str]] = []
        run_id, resumed = open_run(
            store,
            verbaliser,
            parameters,
            templates,
            owner,
            resume_run_id=self.resume_run_id,
            resume=self.resume,
            busy=busy,
        )
        summary = VerbaliseSummary(
            run_id=run_id,
            batch_size=self.batch_size,
            resumed=resumed,
            not_resumed=busy,
            placement=dict(parameters.get("placement") or {}),
        )
        if self.job is not None:
            self.job.partial = summary
        if busy:
            ctx.progress(0, None, f"run {busy[0][0]} is {busy[0][1]}: new run {run_id}")
        try:
            requests = self._plan(ctx, summary)
            verbalise_in_batches(ctx, store, verbaliser, run_id, requests, summary)
        except JobCancelled:
            set_status(store, run_id, "cancelled", owner)
            raise
        except BaseException:
            # Where the disk refuses this too, the run stays "running": resumable once
            # this process (its owner) ends.
            with contextlib.suppress(SessionStorageError):
                set_status(store, run_id, "failed", owner)
            raise
        set_status(store, run_id, "finished", owner)
        return summary

    def _plan(self, ctx: JobContext, summary: VerbaliseSummary) -> list[VerbaliseRequest]:
        """The requests still to make, in batching order; the pairs skipped are counted."""
        triples = unit_triples(self.store, self.unit_ids, self.langs)
        done = done_pairs(self.store, summary.run_id)
        pending = pending_requests(
            self.verbaliser, self.unit_ids, self.langs, triples, done, summary
        )
        ctx.progress(0, len(pending), "ordering prompts by length")
        return order_for_batching(self.verbaliser, pending)


def pending_requests(
    verbaliser: Verbaliser,
    unit_ids: Sequence[int],
    langs: Sequence[str],
    triples: dict[tuple[int, str], Triples],
    done: set[tuple[int, str]],
    summary: VerbaliseSummary,
) -> list[VerbaliseRequest]:
    """A request per (unit, language) with triples that the run does not hold yet, in
    unit then language order; those without triples and those done are counted into
    ``summary`` (``skipped_no_triples``, ``skipped_done``)."""
    pending: list[VerbaliseRequest] = []
    for unit_id in unit_ids:
        for lang in langs:
            key = (unit_id, lang)
            if key not in triples:
                summary.skipped_no_triples += 1
            elif key in done:
                summary.skipped_done += 1
            else:
                prompt = verbaliser.prompt_for(triples[key], lang)
                pending.append(VerbaliseRequest(key, lang, triples[key], prompt))
    return pending
