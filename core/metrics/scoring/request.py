"""What a scoring job is asked for and what it reports: the request, the summary, the
runs to score (with those still being written) and the texts it loads."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.errors import UserFacingError
from core.metrics import DEFAULT_METRICS, MetricOptions, expand_metric_names
from core.metrics.signature import LegacySignature, Signature, read_signature
from core.vocab import run_name

if TYPE_CHECKING:
    from core.store import SessionStore

_QID = re.compile(r"\AQ[1-9][0-9]*\Z")


@dataclass(frozen=True)
class ScoringRequest:
    """What to score. ``None`` filters mean everything in the session."""

    metrics: tuple[str, ...] = DEFAULT_METRICS
    run_ids: tuple[int, ...] | None = None
    langs: tuple[str, ...] | None = None
    unit_ids: tuple[int, ...] | None = None
    references: bool = False
    options: MetricOptions = field(default_factory=MetricOptions)
    # Outputs with no text: scored as empty texts unless excluded (never silently dropped).
    exclude_empty: bool = False  # leave out empty outputs (and unparsed replies)
    exclude_unparsed: bool = False  # leave out only replies no answer was parsed from
    # A run still being written by a live process is skipped (scores describe finished
    # runs); with partial, it is scored as far as it got and its corpus rows say so.
    partial: bool = False
    # Worker processes for the official metrics' sentence pass (BLEU, chrF++, TER,
    # METEOR: core.metrics.scoring.pool); None: every usable core; 1: this process only.
    workers: int | None = None


@dataclass(frozen=True)
class CorpusScore:
    """One stored corpus row, as the summary table shows it."""

    metric: str
    run_id: int | None
    model: str
    lang: str | None
    quality: str | None
    value: float | None
    n: int
    signature: str | None  # its canonical text (or an old session's free-form text)
    details: dict[str, Any]

    @property
    def typed_signature(self) -> Signature | LegacySignature | None:
        """The signature as a typed value (an old session's free-form text as legacy)."""
        return read_signature(self.signature, self.metric) if self.signature else None


@dataclass
class ScoringSummary:
    texts: int = 0
    rows_written: dict[str, int] = field(default_factory=dict)
    corpus: list[CorpusScore] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Metrics asked for that cannot be computed here, and why (also among the notes).
    absent: dict[str, str] = field(default_factory=dict)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


# --- loading what is scored --------------------------------------------------------------


@dataclass(frozen=True)
class _Run:
    id: int
    kind: str
    model_id: str
    name: str
    parameters: dict[str, Any]
    templates: dict[str, Any]
    # Why the run is unfinished ("still running in process 12 on host"), or None.
    writing: str | None = None


@dataclass(frozen=True)
class _Text:
    """A text to score: a verbalisation (run set) or a reference (reference_id set)."""

    text: str
    lang: str
    unit_id: int
    verbalisation_id: int | None = None
    run_id: int | None = None
    reference_id: int | None = None
    quality: str | None = None  # of a reference text
    prompt: str | None = None  # the prompt stored with a verbalisation at generation
    parse_ok: bool = True  # False: a raw reply with no parsed answer
    output: str = "text"  # "text", or "empty" / "unparsed": scored as the empty text
    # The log-probabilities a server returned with the reply (a server run's ppl).
    token_logprobs: tuple[float, ...] | None = None


def _check_langs(langs: Sequence[str] | None) -> None:
    for lang in langs or ():
        if not re.fullmatch(r"[a-z]{2,3}", lang):
            raise UserFacingError(f"{lang!r} is not a language code (e.g. en, it, es)")


def _still_writing(status: str, software: Any) -> str | None:
    """Why a run is still being written (its owner process lives), or None."""
    from core.verbalise.run_records import owner_state

    if status != "running":
        return None
    owner = software.get("owner") if isinstance(software, dict) else None
    state = owner_state(owner)
    if state in ("none", "gone") or not isinstance(owner, dict):
        return None  # an old run without an owner, or one whose process has ended
    where = f"process {owner.get('pid')} on {owner.get('host')}"
    return (
        f"still being written by {where}"
        if state == "alive"
        else f"perhaps still being written by {where}"
    )


def load_runs(store: SessionStore, run_ids: Sequence[int] | None) -> dict[int, _Run]:
    """The runs to score; an id that is not in the session is a clear error."""
    from sqlalchemy import select

    from core.store.models import ModelRun

    with store.snapshot() as db:
        query = select(ModelRun).order_by(ModelRun.id)
        if run_ids is not None:
            query = query.where(ModelRun.id.in_(list(run_ids)))
        runs = {
            r.id: _Run(
                r.id,
                r.kind,
                r.model_id,
                run_name(r.system_name, r.model_id),
                dict(r.parameters or {}),
                dict(r.prompt_templates or {}),
                _still_writing(r.status, r.software),
            )
            for r in db.scalars(query)
        }
    if run_ids is not None:
        missing = sorted(set(run_ids) - set(runs))
        if missing:
            raise UserFacingError(
                f"no run {', '.join(map(str, missing))} in this session "
                f"(runs here: {', '.join(map(str, sorted(runs))) or 'none'}; "
                "see taillens score --session S --list-runs)"
            )
    return runs


def validate_request(store: SessionStore, request: ScoringRequest) -> dict[int, _Run]:
    """Refuse bad input before any work: unknown metrics, runs, languages."""
    expand_metric_names(request.metrics)
    _check_langs(request.langs)
    return load_runs(store, request.run_ids)


def unfinished_runs(
    runs: dict[int, _Run], request: ScoringRequest
) -> tuple[dict[int, _Run], list[str]]:
    """The runs to score and a note for each run still being written: without
    ``request.partial`` such a run is left out (scores describe finished runs); with it,
    it is kept and its corpus rows are marked partial."""
    notes = []
    kept = {}
    for run_id, run in runs.items():
        if run.writing is None:
            kept[run_id] = run
        elif request.partial:
            kept[run_id] = run
            notes.append(
                f"run {run_id} ({run.name}) is {run.writing}: scored partly, "
                "its corpus figures are marked partial; score again when it has "
                "finished"
            )
        else:
            notes.append(
                f"run {run_id} ({run.name}) is {run.writing}: not scored; score "
                "again when it has finished (or --partial to score what it has)"
            )
    return kept, notes
