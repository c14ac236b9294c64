"""The batch loop of a verbalise job, and the order it takes requests in.

* Each finished batch is written in its own transaction (:func:`core.verbalise.run_records.
  write_batch`): a killed process keeps every batch it finished, and a cancel keeps them
  too. A cancel is checked between batches and, through the ``should_stop`` the job sets
  on the verbaliser, inside one (every decoding step of a local model): the batch it
  interrupts raises ``JobCancelled`` and nothing of it is written.
* A CUDA out-of-memory error halves the batch and retries; at batch size 1 the job
  fails with a message that says what to change.
* Length-aware batching: a local model's pending requests are ordered by prompt length in
  tokens, longest first (:func:`order_for_batching`), before they are cut into batches. A
  batch is left-padded to its longest prompt and padding costs attention at every decoding
  step, so batching prompts of like length saves that; longest first makes an out-of-memory
  show up in the first batch rather than hours in. Rows are keyed by (unit, language), so
  the order they are written in does not matter.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from core.jobs import JobCancelled, JobContext
from core.local_models.loader import free_device_memory, is_out_of_memory, prompts_token_ids
from core.store import SessionStore
from core.verbalise.base import RequestFailure, Result, Verbaliser, VerbaliseRequest
from core.verbalise.outcome import (
    IncompleteRun,
    VerbaliseError,
    VerbaliseSummary,
    progress_message,
)
from core.verbalise.run_records import record_batch, write_batch

# Requests in a row without usable text (RequestFailure) after which a run stops: a server
# that answers every prompt with no choices is not worth asking ten thousand times.
MAX_FAILURE_STREAK = 20


def prompt_lengths(verbaliser: Verbaliser, prompts: Sequence[str]) -> list[int] | None:
    """Each prompt's length in tokens exactly as the loaded local model is fed it, or None
    where batching order does not matter (template and server verbalisers, or a local one
    not loaded yet).

    Causal models read :func:`core.local_models.loader.prompts_token_ids` (chat template
    applied), which
    is what ``CausalVerbaliser.verbalise`` pads; seq2seq models read the tokenizer's plain
    encoding of the linearised graph, as ``Seq2SeqVerbaliser.verbalise`` does."""
    loaded = getattr(verbaliser, "loaded", None)
    tokenizer = getattr(loaded, "tokenizer", None)
    if tokenizer is None:
        return None
    if verbaliser.kind == "causal":
        return [len(ids) for ids in prompts_token_ids(tokenizer, prompts)]
    if verbaliser.kind == "seq2seq":
        return [len(tokenizer(prompt)["input_ids"]) for prompt in prompts]
    return None


def order_for_batching(
    verbaliser: Verbaliser, requests: Sequence[VerbaliseRequest]
) -> list[VerbaliseRequest]:
    """``requests`` in the order the job batches them: for a loaded local model, by prompt
    length in tokens, longest first (ties keep their given order: the sort is stable);
    for the others as given (a server batches on its own; a template has no padding).

    Longest first so the batch that needs the most memory runs first: an out-of-memory
    halves the batch at once rather than hours into a run."""
    lengths = prompt_lengths(verbaliser, [r.prompt for r in requests])
    if lengths is None:
        return list(requests)
    order = sorted(range(len(requests)), key=lambda i: -lengths[i])
    return [requests[i] for i in order]


def verbalise_in_batches(
    ctx: JobContext,
    store: SessionStore,
    verbaliser: Verbaliser,
    run_id: int,
    requests: Sequence[VerbaliseRequest],
    summary: VerbaliseSummary,
) -> None:
    """Verbalise ``requests`` in batches of ``summary.batch_size`` (halved after an
    out-of-memory), writing each batch as it finishes and counting it into ``summary``.
    Raises :class:`VerbaliseError` after :data:`MAX_FAILURE_STREAK` requests in a row got
    no usable text, and :class:`IncompleteRun` at the end when any got none."""
    total = len(requests)
    size = summary.batch_size
    position = 0
    streak = 0  # requests in a row that got no usable text
    ctx.progress(0, total, "starting")
    while position < total:
        ctx.check_cancelled()
        batch = list(requests[position : position + size])
        started = time.perf_counter()
        try:
            # A cancel mid-batch raises JobCancelled here: the batch is not written, the
            # job marks the run cancelled, the batches before it stay.
            results = verbaliser.verbalise(batch)
        except JobCancelled:
            raise
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            size = _halve(ctx, store, verbaliser, run_id, summary, exc, position, total)
            continue
        summary.generation_s += time.perf_counter() - started
        if len(results) != len(batch):
            raise RuntimeError(
                f"{verbaliser.kind} verbaliser returned {len(results)} "
                f"results for {len(batch)} requests"
            )
        write_batch(store, verbaliser, run_id, batch, results)
        streak = _tally(summary, batch, results, streak)
        position += len(batch)
        ctx.progress(position, total, progress_message(summary, position, total))
        if streak >= MAX_FAILURE_STREAK:
            raise VerbaliseError(
                f"the last {streak} requests got no usable text from {verbaliser.model_id}"
                f" ({summary.failures[-1]}); stopped. Run {run_id} is kept unfinished: "
                "run the same command again to resume it once the server answers"
            )
    if summary.failed:
        shown = "; ".join(summary.failures[:2])
        raise IncompleteRun(
            f"{summary.failed} of {summary.failed + summary.requests} unit-languages got "
            f"no usable text (first: {shown}). Run {run_id} is kept unfinished (failed): "
            "run the same command again to ask for those again",
            summary,
        )


def _halve(
    ctx: JobContext,
    store: SessionStore,
    verbaliser: Verbaliser,
    run_id: int,
    summary: VerbaliseSummary,
    error: Exception,
    position: int,
    total: int,
) -> int:
    """The batch size after an out-of-memory at ``summary.batch_size``: half of it, the
    device's cache freed and the run's placement told; at 1 the job fails saying what to
    change."""
    size = summary.batch_size
    free_device_memory(str(verbaliser.describe().get("device", "")))
    if size == 1:
        raise VerbaliseError(
            "out of memory on the device even with one unit per batch: use "
            "fewer --candidates, a lower --max-new-tokens, --dtype bfloat16 or "
            "float16, a smaller model, or another device"
        ) from error
    ctx.progress(position, total, f"out of memory at batch {size}: going on with {size // 2}")
    size = max(1, size // 2)
    summary.oom_halvings += 1
    summary.batch_size = size
    if summary.placement:
        summary.placement.update(batch_size=size, oom_backoffs=summary.oom_halvings)
    record_batch(store, run_id, size, summary.oom_halvings)
    return size


def _tally(
    summary: VerbaliseSummary,
    requests: Sequence[VerbaliseRequest],
    results: Sequence[Result],
    streak: int,
) -> int:
    """Count a written batch into ``summary``; returns the failure streak after it."""
    for request, result in zip(requests, results, strict=True):
        if isinstance(result, RequestFailure):
            summary.failed += 1
            streak += 1
            if len(summary.failures) < 5:
                unit_id, lang = request.key
                summary.failures.append(f"unit {unit_id} ({lang}): {result.message}")
            continue
        streak = 0
        summary.requests += 1
        summary.unit_ids.add(request.key[0])
        summary.texts += len(result)
        summary.unparsable += sum(not c.parse_ok for c in result)
        summary.tokens += sum(c.tokens for c in result)
        for candidate in result:
            notes = candidate.notes or {}
            summary.truncated += "truncated_from_chars" in notes
            summary.replaced_surrogates += "replaced_surrogates" in notes
            summary.usage_unusable += "usage" in notes
            if "usage" in notes and len(summary.warnings) < 3:
                summary.warnings.append(f"unit {request.key[0]}: {notes['usage']}")
    summary.units = len(summary.unit_ids)
    return streak
