"""What every verbaliser shares: requests, candidates, parameters, the protocol.

A verbaliser turns :class:`VerbaliseRequest` s (one unit in one language: its triples
and the prompt built from them) into candidates. It is built cheaply (file checks, no
weights), so a broken model is reported before a run starts; ``load()`` does the heavy
part and is called by the job, off the UI thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from core.local_models.loader import ModelInfo

Triples = tuple[tuple[str, str, str], ...]
# Asked by a verbaliser while it works: True once the run was cancelled.
ShouldStop = Callable[[], bool]


@dataclass(frozen=True)
class GenerationParams:
    """Generation settings (METHODS §6 defaults). Stored whole in ``model_runs.parameters``."""

    candidates: int = 3
    temperature: float = 0.7
    top_p: float = 0.9
    max_new_tokens: int = 256
    seed: int = 0
    num_beams: int = 3  # seq2seq only: beam search width

    def check(self) -> None:
        from core.errors import UserFacingError

        if not 1 <= self.candidates <= 32:
            raise UserFacingError(f"candidates must be 1..32, got {self.candidates}")
        if not 0.0 < self.temperature <= 5.0:
            raise UserFacingError(f"temperature must be in (0, 5], got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise UserFacingError(f"top-p must be in (0, 1], got {self.top_p}")
        if not 1 <= self.max_new_tokens <= 8192:
            raise UserFacingError(f"max new tokens must be 1..8192, got {self.max_new_tokens}")
        if self.num_beams < 1:
            raise UserFacingError(f"beams must be at least 1, got {self.num_beams}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class VerbaliseRequest:
    """One unit in one language. ``key`` is the caller's (unit id, lang), carried through."""

    key: Any
    lang: str
    triples: Triples
    prompt: str


@dataclass(frozen=True)
class Candidate:
    """One output: the raw reply (always kept), the parsed text, and whether parsing worked."""

    raw: str
    text: str | None
    parse_ok: bool
    tokens: int = 0  # generated tokens, for the tokens-per-second figure
    # Per-token log-probabilities of the reply where a server returned them:
    # {"tokens": [...], "logprobs": [...]} (stored in verbalisations.token_logprobs).
    token_logprobs: dict[str, list[Any]] | None = None
    # What was done to a server's reply before it was stored, where anything was:
    # {"truncated_from_chars": N} (longer than the cap on stored text), {"replaced_surrogates":
    # N} (lone UTF-16 surrogates made U+FFFD), {"usage": "..."} (a usage field that was not a
    # count). The job counts them and records them with the run (model_runs.software).
    notes: dict[str, Any] | None = None


@dataclass(frozen=True)
class RequestFailure:
    """A request a verbaliser got no usable text for (a server answered no choices, or a
    choice whose content is not text); ``message`` quotes what came. The job writes
    nothing for it, so resuming the run asks again; it counts it and does not mark the run
    finished."""

    message: str


@dataclass(frozen=True)
class Preview:
    """What the Verbalise panel shows for one unit before a run (:meth:`Verbaliser.preview`)."""

    text: str  # the model's input (and, for the template verbaliser, its sentence)
    note: str  # what the text is, in a line
    warning: str | None = None  # shown as an error instead of the note (a prompt too long)
    # The exact input waits for a tokenizer (seconds to load): the caller loads it off the
    # UI thread with ``preview(..., exact=True)``; ``text`` is the prompt before it.
    needs_tokenizer: bool = False


# What a verbaliser gives for one request: its candidates, or why it has none.
Result = list[Candidate] | RequestFailure


@runtime_checkable
class Verbaliser(Protocol):
    kind: str  # "causal" | "seq2seq" | "template" | "openai"

    @property
    def model_id(self) -> str:
        """What the user named."""
        ...

    @property
    def system_name(self) -> str:
        """A display name."""
        ...

    params: GenerationParams

    @property
    def templates(self) -> Mapping[str, str]:
        """lang -> prompt template, as used."""
        ...

    # Set by the verbalise job for the length of a run (None: never stop). An attribute,
    # not an argument of verbalise(), so it reaches the model through any wrapper of it.
    should_stop: ShouldStop | None

    def fingerprint(self) -> str | None:
        """Identity of the weights (None where there are none to hash)."""
        ...

    def describe(self) -> dict[str, Any]:
        """Parameters beyond :class:`GenerationParams` (model path, device, dtype, ...)."""
        ...

    def prompt_for(self, triples: Sequence[tuple[str, str, str]], lang: str) -> str:
        """The exact input the model is given for these triples (the panel previews it)."""
        ...

    def use_prompt(
        self, templates: Mapping[str, str] | None, preset: str, task_prefix: str | None
    ) -> None:
        """Use the panel's edited prompt from now on, checked as a run checks it (a bad
        template raises ``PromptError``): each verbaliser takes what it reads, the
        templates and preset (causal, server), the task prefix (seq2seq) or nothing
        (template)."""
        ...

    def preview(self, triples: Triples, lang: str, *, exact: bool) -> Preview:
        """The panel's preview for one unit. ``exact``: the input may be computed with the
        model's tokenizer (loaded, seconds, where it is not yet: off the UI thread); without
        it a verbaliser that needs one says so (``Preview.needs_tokenizer``)."""
        ...

    def summary(self, models: Sequence[ModelInfo]) -> str:
        """One line on what this verbaliser is, for the panel's model form; a local model's
        size is taken from ``models`` (the models listed) where it is among them."""
        ...

    def load(self) -> None:
        """Do the heavy part (load weights, reach the server); idempotent."""
        ...

    def verbalise(self, requests: Sequence[VerbaliseRequest]) -> Sequence[Result]:
        """Candidates for each request, in order (``params.candidates`` each, or fewer for
        deterministic verbalisers), or a :class:`RequestFailure` for a request that got no
        usable text (a server's reply to that one request). May raise an out-of-memory
        error: the job halves.

        ``self.should_stop`` is polled while the batch is worked on (local models: every
        decoding step; a server: between HTTP requests), so a cancel does not wait for a
        whole batch of a large model. Once it says True the verbaliser raises
        :class:`core.jobs.JobCancelled` and returns nothing: candidates cut short by a
        cancel must never be taken for complete ones. A verbaliser that finishes the
        batch before looking (the template one: it is instant) returns it whole."""
        ...

    def close(self) -> None: ...
