"""A verbalise run's row in ``model_runs`` and its ``verbalisations``: what a run is made
with (its identity, which decides what may resume it), who runs it now, opening a new
or resumed run, writing each batch's texts in one transaction, and ending it.

A ``model_runs`` row records the model, its fingerprint, every parameter, the prompt
templates, the seed and the library versions (docs/CONVENTIONS.md). A ``running`` run
records its owner (process id, host, job token) in ``software["owner"]``: it is resumed
only when that process is gone (a process killed mid-run), never while another job still
writes it.
"""

from __future__ import annotations

import os
import platform
import socket
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core import __version__
from core.io.liveness import owner_alive
from core.store import SessionStore
from core.store import models as m
from core.verbalise.base import RequestFailure, Result, Verbaliser, VerbaliseRequest
from core.verbalise.outcome import VerbaliseError

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
# How many changed or failed texts ``model_runs.software["reply_notes"]["examples"]`` names.
_NOTE_EXAMPLES = 50


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
    system where this cannot be checked): :func:`core.io.liveness.owner_alive`'s rule."""
    if not isinstance(owner, dict) or not isinstance(owner.get("pid"), int):
        return "none"
    return owner_alive(int(owner["pid"]), str(owner.get("host")))


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


def done_pairs(store: SessionStore, run_id: int) -> set[tuple[int, str]]:
    with store.unit_of_work() as db:
        return {
            (unit_id, lang)
            for unit_id, lang in db.execute(
                select(m.Verbalisation.unit_id, m.Verbalisation.lang)
                .where(m.Verbalisation.run_id == run_id)
                .distinct()
            )
        }


def record_batch(store: SessionStore, run_id: int, size: int, backoffs: int) -> None:
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


def set_status(
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


def open_run(
    store: SessionStore,
    verbaliser: Verbaliser,
    parameters: dict[str, Any],
    templates: dict[str, str],
    owner: dict[str, Any],
    *,
    resume_run_id: int | None,
    resume: bool,
    busy: list[tuple[int, str]],
) -> tuple[int, bool]:
    """(run id, resumed): run ``resume_run_id`` (checked: same model and parameters, no
    live owner), else with ``resume`` the newest matching unfinished run (those a live
    owner holds are appended to ``busy``), else a new run; it is ``owner``'s from now."""
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


def write_batch(
    store: SessionStore,
    verbaliser: Verbaliser,
    run_id: int,
    requests: Sequence[VerbaliseRequest],
    results: Sequence[Result],
) -> None:
    """A batch's candidates, and its reply notes, in one transaction: a killed process
    keeps every batch it finished. A request that got no text writes nothing (a resume
    asks for it again)."""
    with store.unit_of_work() as db:
        _note_replies(db, run_id, requests, results)
        for request, candidates in zip(requests, results, strict=True):
            if isinstance(candidates, RequestFailure):
                continue
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
