"""The verbalise job: a verbaliser over units × languages, saved batch by batch.

* A ``model_runs`` row records the model, its fingerprint, every parameter, the prompt
  templates, the seed and the library versions (docs/CONVENTIONS.md).
* Each finished batch is written in its own transaction: a killed process keeps every
  batch it finished, and a cancel keeps them too. A cancel is checked between batches
  and, through the ``should_stop`` the job sets on the verbaliser, inside one (every
  decoding step of a local model): the batch it interrupts raises ``JobCancelled`` and
  nothing of it is written, so switching sessions need not wait for a whole batch.
* Resume: running again with the same run skips the (unit, language) pairs that run
  already verbalised. :func:`find_resumable_run` finds an unfinished run made with the
  same model and parameters, which the CLI resumes by default. A ``running`` run records
  its owner (process id, host, job token) in ``software["owner"]``: it is resumed only when
  that process is gone (a process killed mid-run), never while another job still writes it.
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

import contextlib
import os
import platform
import socket
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, case, func, or_, select
from sqlalchemy.orm import Session

from core import __version__
from core.changes import Topic
from core.errors import UserFacingError
from core.jobs import Job, JobCancelled, JobContext
from core.labels import plural
from core.local_models.loader import free_device_memory, is_out_of_memory, prompts_token_ids
from core.store import SessionStorageError, SessionStore
from core.store import models as m
from core.store.batching import in_chunks
from core.verbalise.base import (
    RequestFailure,
    Result,
    Triples,
    Verbaliser,
    VerbaliseRequest,
)
from core.vocab import LANGUAGES

MAIN = "main"
# Parameters that do not change what a run produces per unit, so a run may be resumed
# with other values (a smaller batch after an OOM, more units, a server asked for token
# log-probabilities or not: runs from before it was asked resume too; a server's limits:
# a run stopped by a timeout resumes with a longer one).
_NOT_IDENTITY = frozenset(
    {
        "batch_size",
        "units",
        "logprobs",
        "timeout_s",
        "max_retries",
        "max_response_bytes",
        "max_reply_chars",
        "placement",
    }
)
# Requests in a row without usable text (RequestFailure) after which a run stops: a server
# that answers every prompt with no choices is not worth asking ten thousand times.
MAX_FAILURE_STREAK = 20
# How many changed or failed texts ``model_runs.software["reply_notes"]["examples"]`` names.
_NOTE_EXAMPLES = 50


class VerbaliseError(UserFacingError):
    """Bad run settings, an unknown unit, or a run that cannot be resumed."""


class IncompleteRun(VerbaliseError):
    """The run went through every unit but some got no usable text (``summary.failed``):
    the run is marked failed, not finished, and resuming it asks for those again."""

    def __init__(self, message: str, summary: VerbaliseSummary) -> None:
        super().__init__(message)
        self.summary = summary


@dataclass
class VerbaliseSummary:
    """What a verbalise job did (also its ``partial`` when cancelled)."""

    run_id: int
    requests: int = 0  # (unit, language) pairs verbalised now
    units: int = 0  # distinct units among them
    texts: int = 0  # candidates written
    unparsable: int = 0
    skipped_done: int = 0  # pairs the run already held (resume)
    skipped_no_triples: int = 0  # pairs whose unit has no triples in that language
    tokens: int = 0
    generation_s: float = 0.0
    batch_size: int = 0  # the final batch size (smaller after an out-of-memory)
    oom_halvings: int = 0
    # Requests that got no usable text (RequestFailure: not written, asked again on resume)
    # and the first messages; texts a server's reply changed before they were stored
    # (Candidate.notes: cut at the length cap, lone surrogates replaced, usage unusable).
    failed: int = 0
    failures: list[str] = field(default_factory=list)
    truncated: int = 0
    replaced_surrogates: int = 0
    usage_unusable: int = 0
    warnings: list[str] = field(default_factory=list)  # the first usage notes, quoting
    resumed: bool = False
    # Matching unfinished runs not resumed because their owner may still run them: (id, why).
    not_resumed: list[tuple[int, str]] = field(default_factory=list)
    unit_ids: set[int] = field(default_factory=set, repr=False)
    # How a local model was placed on this machine (core.local_models.placement), as the run
    # records it.
    placement: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.generation_s if self.generation_s > 0 else 0.0


# --- which units ----------------------------------------------------------------------


def select_units(store: SessionStore, query: str | Sequence[int] = "all") -> list[int]:
    """Unit ids for ``all``, ``tier:X`` (tier or sub-tier), ``category:NAME`` or
    ``ids:1,2,3`` (or a list of ids), in id order."""
    with store.unit_of_work() as db:
        if not isinstance(query, str):
            wanted = sorted({int(i) for i in query})
            return _existing(db, wanted)
        text = query.strip()
        kind, _, value = text.partition(":")
        kind, value = kind.strip().lower(), value.strip()
        if kind == "all" and not value:
            return list(db.scalars(select(m.DataUnit.id).order_by(m.DataUnit.id)))
        if kind == "tier" and value:
            ids = list(
                db.scalars(
                    select(m.DataUnit.id)
                    .where(or_(m.DataUnit.tier == value, m.DataUnit.sub_tier == value))
                    .order_by(m.DataUnit.id)
                )
            )
            if not ids:
                # A unit takes its root's tier when built: none has this one (yet).
                present = sorted(
                    {
                        t
                        for pair in db.execute(select(m.DataUnit.tier, m.DataUnit.sub_tier)).all()
                        for t in pair
                        if t
                    }
                )
                held = (
                    f"the session's units have {', '.join(present)}"
                    if present
                    else "no unit has any tier"
                )
                raise VerbaliseError(
                    f"no unit has the tier {value!r} ({held}): a unit records its root "
                    "entity's tier when it is built; assign tiers with `taillens tiers "
                    "CATEGORY --session FILE` (or the Browser's lines), then build units"
                )
            return ids
        if kind == "category" and value:
            # Resolved in SQL: the unit's own category, else its imported one.
            return list(
                db.scalars(
                    select(m.DataUnit.id)
                    .outerjoin(m.Category, m.DataUnit.category_id == m.Category.id)
                    .where(unit_category_column() == value)
                    .order_by(m.DataUnit.id)
                )
            )
        if kind == "ids" and value:
            try:
                wanted = sorted({int(v) for v in value.split(",") if v.strip()})
            except ValueError:
                raise VerbaliseError(f"unit ids must be integers: {value!r}") from None
            return _existing(db, wanted)
    raise VerbaliseError(
        f"unknown unit selection {query!r}: use all, tier:NAME, category:NAME or ids:1,2,3"
    )


def imported_category(attributes: Any) -> str | None:
    """The category a TailNLG/WebNLG import recorded in a unit's ``attributes`` (the
    entry's ``category``, kept among the entry attributes), or None. A unit with no session
    category is selected and listed by this one."""
    if isinstance(attributes, dict):
        entry = attributes.get("entry")
        if isinstance(entry, dict):
            return entry.get("category")
        return attributes.get("category")
    return None


def unit_category_column() -> ColumnElement[Any]:
    """The category :func:`imported_category` gives a unit, as an SQL expression over
    ``data_units`` outer-joined to ``categories``: the session category, else the
    category an import recorded in the unit's attributes (NULL when neither)."""
    attributes = m.DataUnit.attributes
    imported = case(
        (
            func.json_type(attributes, "$.entry") == "object",
            func.json_extract(attributes, "$.entry.category"),
        ),
        (func.json_type(attributes) == "object", func.json_extract(attributes, "$.category")),
        else_=None,
    )
    return case(
        (func.coalesce(m.Category.name, "") != "", m.Category.name),
        (func.json_valid(attributes) == 1, imported),
        else_=None,
    )


def _existing(db: Session, wanted: list[int]) -> list[int]:
    found = set()
    for chunk in in_chunks(wanted):
        found |= set(db.scalars(select(m.DataUnit.id).where(m.DataUnit.id.in_(chunk))))
    missing = [i for i in wanted if i not in found]
    if missing:
        shown = ", ".join(str(i) for i in missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise VerbaliseError(f"the session has no unit(s) {shown}")
    return wanted


def unit_triples(
    store: SessionStore, unit_ids: Sequence[int], langs: Sequence[str]
) -> dict[tuple[int, str], Triples]:
    """(unit id, lang) -> the unit's main triples in that language, overrides applied."""
    result: dict[tuple[int, str], list[tuple[int, tuple[str, str, str]]]] = {}
    ids = list(unit_ids)
    with store.snapshot() as db:  # a read: never waits for a writer
        for chunk in in_chunks(ids):
            rows = db.scalars(
                select(m.UnitTriple).where(
                    m.UnitTriple.unit_id.in_(chunk),
                    m.UnitTriple.tripleset == MAIN,
                    m.UnitTriple.lang.in_(list(langs)),
                )
            )
            for row in rows:
                # UnitTriple.shown(): the one override rule, shared with the scoring job.
                result.setdefault((row.unit_id, row.lang), []).append((row.position, row.shown()))
    return {key: tuple(t for _, t in sorted(rows)) for key, rows in result.items()}


# --- runs -----------------------------------------------------------------------------


def software_versions() -> dict[str, str]:
    versions = {"python": platform.python_version(), "taillens": __version__}
    for name in ("torch", "transformers", "tokenizers"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def run_parameters(
    verbaliser: Verbaliser, langs: Sequence[str], batch_size: int, units: str
) -> dict[str, Any]:
    """Everything a run is made with, as stored in ``model_runs.parameters``."""
    return {
        **verbaliser.params.as_dict(),
        **verbaliser.describe(),
        "batch_size": batch_size,
        "langs": list(langs),
        "units": units,
    }


def _identity(parameters: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (parameters or {}).items() if k not in _NOT_IDENTITY}


# --- who is running a run -------------------------------------------------------------


def run_owner() -> dict[str, Any]:
    """The owner recorded in ``software["owner"]`` of a run this job starts or resumes: the
    process and host (to tell whether it still lives) and a token for this one job (two jobs
    of one process, e.g. the GUI's, are told apart)."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "job": uuid.uuid4().hex}


def owner_state(owner: Any) -> str:
    """``none`` (no owner recorded: a run from before owners were kept), ``alive``,
    ``gone`` (its process has ended: killed, crashed) or ``unknown`` (another host, or a
    system where this cannot be checked).

    Same host: ``os.kill(pid, 0)`` says whether the pid exists. A pid can be reused by an
    unrelated process after the owner died; on Linux ``/proc/<pid>/cmdline`` must then
    mention python or taillens for the owner to count as alive (an empty one is a zombie or
    a kernel thread). This can take another Python program for the owner, which only makes
    resume more careful. Not checked on Windows, where ``os.kill`` would end the process.
    """
    if not isinstance(owner, dict) or not isinstance(owner.get("pid"), int):
        return "none"
    pid = int(owner["pid"])
    if owner.get("host") != socket.gethostname() or os.name == "nt":
        return "unknown"
    if pid == os.getpid():
        return "alive"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:
        pass  # it exists, under another user
    except OSError:
        return "unknown"
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().lower()
    except OSError:
        return "alive"  # no /proc (macOS): the pid exists, take it for the owner
    return "alive" if b"python" in cmdline or b"taillens" in cmdline else "gone"


def _busy_reason(status: str, owner: Any) -> str | None:
    """Why a run cannot be resumed now (its owner may still be running it), or None."""
    if status != "running":
        return None
    state = owner_state(owner)
    if state in ("none", "gone"):
        return None
    where = f"process {owner.get('pid')} on {owner.get('host')}"
    return f"still running in {where}" if state == "alive" else f"may still be running in {where}"


def find_resumable_run(
    store: SessionStore,
    verbaliser: Verbaliser,
    parameters: dict[str, Any],
    templates: dict[str, str],
    busy: list[tuple[int, str]] | None = None,
) -> int | None:
    """The newest unfinished run made with the same model, fingerprint, parameters,
    templates and seed (batch size and unit selection may differ), or None.

    A ``running`` run whose owner process may still be alive is skipped (two jobs writing
    one run collide on its rows); it is appended to ``busy`` as (run id, why)."""
    with store.unit_of_work() as db:
        runs = db.scalars(
            select(m.ModelRun)
            .where(
                m.ModelRun.kind == verbaliser.kind,
                m.ModelRun.model_id == verbaliser.model_id,
                m.ModelRun.status != "finished",
            )
            .order_by(m.ModelRun.id.desc())
        )
        for run in runs:
            if (
                run.model_fingerprint == verbaliser.fingerprint()
                and run.seed == verbaliser.params.seed
                and (run.prompt_templates or {}) == templates
                and _identity(run.parameters) == _identity(parameters)
            ):
                why = _busy_reason(run.status, (run.software or {}).get("owner"))
                if why is None:
                    return run.id
                if busy is not None:
                    busy.append((run.id, why))
    return None


def _check_resumable(
    run: m.ModelRun | None,
    run_id: int,
    verbaliser: Verbaliser,
    parameters: dict[str, Any],
    templates: dict[str, str],
) -> m.ModelRun:
    if run is None:
        raise VerbaliseError(f"the session has no run {run_id} to resume")
    owner = (run.software or {}).get("owner")
    if run.status == "running" and owner_state(owner) == "alive":
        # Another host's owner cannot be checked: naming the run says it is gone.
        raise VerbaliseError(
            f"run {run_id} is {_busy_reason(run.status, owner)}: wait for it to finish or "
            "stop it, or start a new run (--new-run)"
        )
    differences = []
    if run.kind != verbaliser.kind or run.model_fingerprint != verbaliser.fingerprint():
        differences.append(f"model ({run.model_id})")
    if run.seed != verbaliser.params.seed:
        differences.append(f"seed ({run.seed})")
    if (run.prompt_templates or {}) != templates:
        differences.append("prompt templates")
    old, new = _identity(run.parameters), _identity(parameters)
    # The device may change between sessions on different machines; the rest may not.
    changed = sorted(
        k
        for k in set(old) | set(new)
        if k not in ("device", "model_path") and old.get(k) != new.get(k)
    )
    if changed:
        differences.append("parameters " + ", ".join(changed))
    if differences:
        raise VerbaliseError(
            f"run {run_id} was made with a different "
            + "; ".join(differences)
            + ": start a new run instead"
        )
    return run


def _done_pairs(store: SessionStore, run_id: int) -> set[tuple[int, str]]:
    with store.unit_of_work() as db:
        return {
            (unit_id, lang)
            for unit_id, lang in db.execute(
                select(m.Verbalisation.unit_id, m.Verbalisation.lang)
                .where(m.Verbalisation.run_id == run_id)
                .distinct()
            )
        }


def _record_batch(store: SessionStore, run_id: int, size: int, backoffs: int) -> None:
    """The batch size a run settled on after out-of-memory back-offs, in its placement
    (``parameters["placement"]``: how the run used this machine)."""
    with store.unit_of_work() as db:
        run = db.get(m.ModelRun, run_id)
        if run is None:
            return
        parameters = dict(run.parameters or {})
        placed = dict(parameters.get("placement") or {})
        placed.update(batch_size=size, oom_backoffs=backoffs)
        parameters["placement"] = placed
        run.parameters = parameters


def _set_status(
    store: SessionStore, run_id: int, status: str, owner: dict[str, Any] | None = None
) -> None:
    """End a run with ``status`` and forget its owner. With ``owner``, only while the run
    is still this owner's: a job that lost its run to another (and then failed, e.g. on
    their shared rows) must not overwrite the status of a run that is still alive."""
    with store.unit_of_work() as db:
        run = db.get(m.ModelRun, run_id)
        if run is None:
            return
        software = dict(run.software or {})
        if owner is not None and software.get("owner") != owner:
            return
        software.pop("owner", None)
        run.software = software
        run.status = status
        run.finished_at = datetime.now(UTC) if status != "running" else None


# --- batching order -------------------------------------------------------------------


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


# --- the job --------------------------------------------------------------------------


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
    params = {
        "model": verbaliser.model_id,
        "kind": verbaliser.kind,
        "units": units_text,
        "langs": langs,
        "batch_size": batch_size,
        "resume_run_id": resume_run_id,
    }

    def run(ctx: JobContext) -> VerbaliseSummary:
        ctx.progress(0, None, "loading the model")
        # A local model says each stage of its load (tokenizer, weights, device).
        if hasattr(verbaliser, "on_stage"):
            verbaliser.on_stage = lambda words: ctx.progress(0, None, words)
        verbaliser.load()
        previous = verbaliser.should_stop
        verbaliser.should_stop = lambda: ctx.cancelled  # asked inside a batch, every step
        try:
            return _run(ctx)
        finally:
            verbaliser.should_stop = previous
            if close_when_done:
                verbaliser.close()

    def _run(ctx: JobContext) -> VerbaliseSummary:
        templates = {lang: verbaliser.templates[lang] for lang in langs}
        parameters = run_parameters(verbaliser, langs, batch_size, units_text)
        owner = run_owner()
        busy: list[tuple[int, str]] = []
        run_id, resumed = _open_run(templates, parameters, owner, busy)
        summary = VerbaliseSummary(
            run_id=run_id,
            batch_size=batch_size,
            resumed=resumed,
            not_resumed=busy,
            placement=dict(parameters.get("placement") or {}),
        )
        job.partial = summary
        if busy:
            ctx.progress(0, None, f"run {busy[0][0]} is {busy[0][1]}: new run {run_id}")
        try:
            _verbalise(ctx, summary, run_id)
        except JobCancelled:
            _set_status(store, run_id, "cancelled", owner)
            raise
        except BaseException:
            # Where the disk refuses this too, the run stays "running": resumable once
            # this process (its owner) ends.
            with contextlib.suppress(SessionStorageError):
                _set_status(store, run_id, "failed", owner)
            raise
        _set_status(store, run_id, "finished", owner)
        return summary

    def _open_run(
        templates: dict[str, str],
        parameters: dict[str, Any],
        owner: dict[str, Any],
        busy: list[tuple[int, str]],
    ) -> tuple[int, bool]:
        run_id = resume_run_id
        if run_id is None and resume:
            run_id = find_resumable_run(store, verbaliser, parameters, templates, busy)
        if run_id is not None:
            with store.unit_of_work() as db:
                run = _check_resumable(
                    db.get(m.ModelRun, run_id), run_id, verbaliser, parameters, templates
                )
                run.status, run.finished_at = "running", None
                run.software = {**(run.software or {}), "owner": owner}
            return run_id, True
        with store.unit_of_work() as db:
            run = m.ModelRun(
                kind=verbaliser.kind,
                model_id=verbaliser.model_id,
                model_fingerprint=verbaliser.fingerprint(),
                parameters=parameters,
                prompt_templates=templates,
                seed=verbaliser.params.seed,
                software={**software_versions(), "owner": owner},
                system_name=verbaliser.system_name,
                status="running",
            )
            db.add(run)
            db.flush()
            return run.id, False

    def _verbalise(ctx: JobContext, summary: VerbaliseSummary, run_id: int) -> None:
        triples = unit_triples(store, unit_ids, langs)
        done = _done_pairs(store, run_id)
        pending: list[tuple[int, str]] = []
        for unit_id in unit_ids:
            for lang in langs:
                if (unit_id, lang) not in triples:
                    summary.skipped_no_triples += 1
                elif (unit_id, lang) in done:
                    summary.skipped_done += 1
                else:
                    pending.append((unit_id, lang))
        total = len(pending)
        ctx.progress(0, total, "ordering prompts by length")
        ordered = order_for_batching(
            verbaliser,
            [
                VerbaliseRequest(
                    key, key[1], triples[key], verbaliser.prompt_for(triples[key], key[1])
                )
                for key in pending
            ],
        )
        size = batch_size
        position = 0
        streak = 0  # requests in a row that got no usable text
        ctx.progress(0, total, "starting")
        while position < total:
            ctx.check_cancelled()
            requests = ordered[position : position + size]
            started = time.perf_counter()
            try:
                # A cancel mid-batch raises JobCancelled here: the batch is not written,
                # the run is marked cancelled by _run, the batches before it stay.
                results = verbaliser.verbalise(requests)
            except JobCancelled:
                raise
            except Exception as exc:
                if not is_out_of_memory(exc):
                    raise
                device = str(verbaliser.describe().get("device", ""))
                free_device_memory(device)
                if size == 1:
                    raise VerbaliseError(
                        "out of memory on the device even with one unit per batch: use "
                        "fewer --candidates, a lower --max-new-tokens, --dtype bfloat16 or "
                        "float16, a smaller model, or another device"
                    ) from exc
                ctx.progress(
                    position, total, f"out of memory at batch {size}: going on with {size // 2}"
                )
                size = max(1, size // 2)
                summary.oom_halvings += 1
                summary.batch_size = size
                if summary.placement:
                    summary.placement.update(batch_size=size, oom_backoffs=summary.oom_halvings)
                _record_batch(store, run_id, size, summary.oom_halvings)
                continue
            summary.generation_s += time.perf_counter() - started
            if len(results) != len(requests):
                raise RuntimeError(
                    f"{verbaliser.kind} verbaliser returned {len(results)} "
                    f"results for {len(requests)} requests"
                )
            _write_batch(run_id, requests, results)
            for request, result in zip(requests, results, strict=True):
                if isinstance(result, RequestFailure):
                    summary.failed += 1
                    streak += 1
                    if len(summary.failures) < 5:
                        summary.failures.append(_failure_line(request, result))
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
            position += len(requests)
            ctx.progress(position, total, _progress_message(summary, position, total))
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

    def _write_batch(
        run_id: int, requests: list[VerbaliseRequest], results: Sequence[Result]
    ) -> None:
        with store.unit_of_work() as db:
            _note_replies(db, run_id, requests, results)
            for request, candidates in zip(requests, results, strict=True):
                if isinstance(candidates, RequestFailure):
                    continue  # nothing written: a resume asks again
                unit_id, lang = request.key
                # The prompt as sent (the user message, before any chat template), so
                # perplexity is scored given exactly this context even if the unit's
                # triples are edited later. A template run has no prompt: NULL.
                prompt = None if verbaliser.kind == "template" else request.prompt
                for index, candidate in enumerate(candidates):
                    db.add(
                        m.Verbalisation(
                            run_id=run_id,
                            unit_id=unit_id,
                            lang=lang,
                            candidate_index=index,
                            raw_output=candidate.raw,
                            text=candidate.text,
                            parse_ok=candidate.parse_ok,
                            prompt=prompt,
                            token_logprobs=candidate.token_logprobs,
                        )
                    )

    job: Job[VerbaliseSummary] = Job(
        f"Verbalise with {verbaliser.system_name}",
        run,
        kind="verbalise",
        params=params,
        writes=frozenset({Topic.RUNS}),
        kept=lambda: _kept(job.partial),
    )
    return job


def _failure_line(request: VerbaliseRequest, failure: RequestFailure) -> str:
    unit_id, lang = request.key
    return f"unit {unit_id} ({lang}): {failure.message}"


def _note_replies(
    db: Session, run_id: int, requests: Sequence[VerbaliseRequest], results: Sequence[Result]
) -> None:
    """Count, in ``model_runs.software["reply_notes"]`` and in the batch's transaction,
    the texts a reply changed before they were stored (``Candidate.notes``) and the
    requests that got no usable text, naming the first :data:`_NOTE_EXAMPLES` of them:
    shown with the run's settings (report, ``report --html``) and exported with it."""
    found: list[dict[str, Any]] = []
    counts = {"failed": 0, "truncated": 0, "replaced_surrogates": 0, "usage_unusable": 0}
    for request, result in zip(requests, results, strict=True):
        unit_id, lang = request.key
        if isinstance(result, RequestFailure):
            counts["failed"] += 1
            found.append({"unit_id": unit_id, "lang": lang, "failed": result.message})
            continue
        for index, candidate in enumerate(result):
            notes = candidate.notes or {}
            if not notes:
                continue
            counts["truncated"] += "truncated_from_chars" in notes
            counts["replaced_surrogates"] += "replaced_surrogates" in notes
            counts["usage_unusable"] += "usage" in notes
            found.append({"unit_id": unit_id, "lang": lang, "candidate": index, **notes})
    if not found:
        return
    run = db.get(m.ModelRun, run_id)
    if run is None:
        return
    software = dict(run.software or {})
    held = software.get("reply_notes")
    notes = dict(held) if isinstance(held, dict) else {}
    for key, value in counts.items():
        before = notes.get(key)
        notes[key] = (before if isinstance(before, int) else 0) + value
    examples = notes.get("examples")
    examples = list(examples) if isinstance(examples, list) else []
    notes["examples"] = (examples + found)[:_NOTE_EXAMPLES]
    software["reply_notes"] = notes
    run.software = software


def _kept(summary: VerbaliseSummary | None) -> str:
    """What a run that stopped has saved, and how to go on with it."""
    if summary is None:
        return "No run was started; the session is as it was."
    return (
        f"Run {summary.run_id} keeps the {plural(summary.texts, 'text')} of the batches "
        "saved before this one (and any from before); the same verbalise command "
        "resumes it, skipping what is done."
    )


def _progress_message(summary: VerbaliseSummary, done: int, total: int) -> str:
    parts = [plural(summary.units, "unit")]
    if summary.tokens:
        parts.append(f"{summary.tokens_per_s:,.0f} tokens/s")
    if done and summary.generation_s:
        left = summary.generation_s / done * (total - done)
        parts.append(f"{_duration(left)} left")
    return ", ".join(parts)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


__all__ = [
    "IncompleteRun",
    "VerbaliseError",
    "VerbaliseSummary",
    "find_resumable_run",
    "imported_category",
    "order_for_batching",
    "owner_state",
    "prompt_lengths",
    "run_owner",
    "run_parameters",
    "select_units",
    "software_versions",
    "unit_category_column",
    "unit_triples",
    "verbalise_job",
]
