"""What a verbalise job tells its caller: its errors and its summary (also the partial one
of a cancelled run), and the lines that describe them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.errors import UserFacingError
from core.labels import plural


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
    # How a local model was placed on this machine (core.local_models.placement), as the
    # run records it.
    placement: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.generation_s if self.generation_s > 0 else 0.0


def kept_line(summary: VerbaliseSummary | None) -> str:
    """What a run that stopped has saved, and how to go on with it."""
    if summary is None:
        return "No run was started; the session is as it was."
    return (
        f"Run {summary.run_id} keeps the {plural(summary.texts, 'text')} of the batches "
        "saved before this one (and any from before); the same verbalise command "
        "resumes it, skipping what is done."
    )


def progress_message(summary: VerbaliseSummary, done: int, total: int) -> str:
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
