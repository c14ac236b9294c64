"""Quality estimation of translated references (METHODS §11 step 3).

TailNLG scored each translation with xCOMET (``Unbabel/XCOMET-XL``): a sentence score in
0–1 and error spans with a severity (minor, major, critical). The score goes to the
post-editor as a band. The bands are xTower's: the xCOMET → xTower example linked from
the ``unbabel-comet`` README (Treviso et al., 2024, "xTower: A Multilingual LLM for
Explaining and Correcting Translation Errors") discretises a score as weak < 0.6 ≤
moderate < 0.8 ≤ good < 0.94 ≤ excellent < 0.98 ≤ best. TailNLG's prompt (Appendix F.1)
names four bands, weak, moderate, good, excellent, so "best" is folded into excellent
here (:data:`BANDS`).

The scorer is ``unbabel-comet`` where it is installed and the model folder is on this
machine (:class:`CometScorer`; never downloads): in this process, or in another
environment's Python (``--qe-python``; :mod:`core.references.comet_worker`), since
unbabel-comet pins libraries older than TailLens's model stack. Where neither is,
:func:`qe_status` says so and every translation goes on to post-editing with no band and
no spans.
A scorer is anything with ``name`` and ``score(triples) -> list[QEResult]``, so the tests
can give a stub (named as one) where the real package cannot load a model offline.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core import heavy
from core.changes import Topic
from core.errors import UserFacingError
from core.jobs import Job, JobContext

if TYPE_CHECKING:
    from core.store import SessionStore

# (band, lowest score in it), lowest first. xTower's thresholds (module docstring).
BANDS: tuple[tuple[str, float], ...] = (
    ("weak", 0.0),
    ("moderate", 0.6),
    ("good", 0.8),
    ("excellent", 0.94),
)
BAND_NAMES = tuple(name for name, _ in BANDS)
BELOW_GOOD = ("weak", "moderate")
SEVERITIES = ("minor", "major", "critical")
THRESHOLDS_SOURCE = (
    "xTower's discretisation (Treviso et al. 2024; the xCOMET → xTower example linked from "
    "the unbabel-comet README): weak < 0.6, moderate < 0.8, good < 0.94, excellent ≥ 0.94 "
    "(its 'best' ≥ 0.98 folded into excellent: TailNLG's F.1 names four bands)"
)


class QEError(UserFacingError):
    """A quality-estimation request that cannot be honoured."""


def band(score: float) -> str:
    """The band of an xCOMET score in [0, 1]."""
    if not 0.0 <= score <= 1.0:
        raise QEError(f"an xCOMET score lies in [0, 1], not {score}")
    name = BANDS[0][0]
    for candidate, lowest in BANDS:
        if score >= lowest:
            name = candidate
    return name


@dataclass(frozen=True)
class ErrorSpan:
    text: str
    start: int
    end: int
    severity: str  # minor | major | critical


@dataclass(frozen=True)
class QEResult:
    score: float
    spans: tuple[ErrorSpan, ...] = ()

    @property
    def band(self) -> str:
        return band(self.score)


@dataclass(frozen=True)
class QEInput:
    source: str
    translation: str
    reference: str | None = None


class Scorer(Protocol):
    name: str

    def score(self, items: Sequence[QEInput]) -> list[QEResult]: ...


def comet_installed() -> bool:
    try:
        return importlib.util.find_spec("comet") is not None
    except (ImportError, ValueError):
        return False


COMET_PINS = "transformers<5, huggingface-hub<1.0 and numpy<2"


def qe_status(model: str | None, python: str | None = None) -> str | None:
    """None when xCOMET can run with ``model`` (in this Python, or in ``python``: an
    interpreter of another environment that has unbabel-comet); else the sentence that
    says why not (and that every translation then goes to post-editing). ``python`` is
    checked as a file only: whether comet imports there is said when the worker starts."""
    tail = "; every translation goes to post-editing without a quality band"
    if python:
        interpreter = Path(python).expanduser()
        if not interpreter.is_file() or not os.access(interpreter, os.X_OK):
            return f"no quality estimation: {python} is not a Python interpreter{tail}"
    elif not comet_installed():
        return (
            "no quality estimation: unbabel-comet is not installed here. It needs "
            f"{COMET_PINS}: install it in an environment of its own and name that "
            f"environment's Python (the Python field; --qe-python){tail}"
        )
    if not model:
        return f"no quality estimation: no xCOMET checkpoint named (--qe-model){tail}"
    if not Path(model).expanduser().exists():
        return f"no quality estimation: no xCOMET checkpoint at {model}{tail}"
    return None


def spans_from_comet(metadata_spans: Sequence[dict[str, Any]]) -> tuple[ErrorSpan, ...]:
    """xCOMET's ``metadata.error_spans[i]`` (dicts with text, start, end, severity)."""
    out = []
    for span in metadata_spans:
        severity = str(span.get("severity", "minor")).lower()
        out.append(
            ErrorSpan(
                str(span.get("text", "")),
                int(span.get("start", 0)),
                int(span.get("end", 0)),
                severity if severity in SEVERITIES else "minor",
            )
        )
    return tuple(out)


def _checkpoint_file(checkpoint: str | Path) -> Path:
    path = Path(checkpoint).expanduser()
    return path / "checkpoints" / "model.ckpt" if path.is_dir() else path


class CometScorer:
    """xCOMET through ``unbabel-comet``: ``load_from_checkpoint`` of a local ``.ckpt``
    (``checkpoints/model.ckpt`` inside a downloaded model folder), in this process, or,
    with ``python``, in a worker process of that interpreter (:mod:`comet_worker`), for
    an unbabel-comet installed in an environment of its own."""

    def __init__(
        self,
        checkpoint: str | Path,
        *,
        batch: int = 8,
        gpus: int = 0,
        python: str | None = None,
        timeout_s: float = 900.0,
    ) -> None:
        problem = qe_status(str(checkpoint), python)
        if problem is not None:
            raise QEError(problem)
        self.path = _checkpoint_file(checkpoint)
        self.name = str(self.path)
        self.batch, self.gpus = batch, gpus
        self._model: Any = None
        self._worker = CometWorker(python, self.path, batch, gpus, timeout_s) if python else None

    def score(self, items: Sequence[QEInput]) -> list[QEResult]:
        data = [
            {"src": i.source, "mt": i.translation, **({"ref": i.reference} if i.reference else {})}
            for i in items
        ]
        if self._worker is not None:
            scores, spans = self._worker.score(data)
        else:
            if self._model is None:
                with heavy.lock():
                    from comet import load_from_checkpoint  # type: ignore[import-not-found,unused-ignore]

                # As in the worker: the checkpoint is on disk, and its encoder's tokenizer
                # must come from the cache, never from a download with no deadline of ours.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                self._model = load_from_checkpoint(str(self.path))
            output = self._model.predict(
                data, batch_size=self.batch, gpus=self.gpus, progress_bar=False
            )
            scores = list(output.scores)
            spans = getattr(getattr(output, "metadata", None), "error_spans", None) or [
                [] for _ in items
            ]
        if len(scores) != len(items) or len(spans) != len(items):
            raise QEError(
                f"xCOMET gave {len(scores)} scores and {len(spans)} span lists for "
                f"{len(items)} translations"
            )
        return [
            QEResult(min(1.0, max(0.0, float(s))), spans_from_comet(sp))
            for s, sp in zip(scores, spans, strict=True)
        ]

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()


# A batch's reply is a few kilobytes (scores and spans); a line longer than this is a
# broken or hostile worker, read no further.
MAX_REPLY_CHARS = 16 * 2**20
TOO_LONG = "\0too long\0"


class CometWorker:
    """A ``python -I comet_worker.py`` process: started on the first batch, fed a batch a
    line, answered a line each (see :mod:`core.references.comet_worker`). Every wait has
    a deadline; a worker that dies, hangs or answers nonsense ends the job with a
    :class:`QEError` that quotes it, and nothing of that batch is stored."""

    def __init__(
        self, python: str, checkpoint: Path, batch: int, gpus: int, timeout_s: float
    ) -> None:
        self.python, self.checkpoint = str(Path(python).expanduser()), checkpoint
        self.batch, self.gpus, self.timeout_s = batch, gpus, timeout_s
        self._process: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: list[str] = []

    def _start(self) -> None:
        script = Path(__file__).with_name("comet_worker.py")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env.setdefault("HF_HUB_OFFLINE", "1")  # a checkpoint on disk, never a download
        try:
            process = subprocess.Popen(
                [self.python, "-I", str(script)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                env=env,
            )
        except OSError as exc:
            raise QEError(f"cannot start {self.python}: {exc.strerror or exc}") from exc
        self._process = process
        threading.Thread(target=self._pump, args=(process.stdout, self._lines), daemon=True).start()
        threading.Thread(target=self._drain, args=(process.stderr,), daemon=True).start()
        ready = self._ask(
            {"checkpoint": str(self.checkpoint), "batch": self.batch, "gpus": self.gpus},
            "loading the model",
        )
        if ready.get("ready") is not True:
            raise self._fail(f"unexpected first reply {str(ready)[:200]}")

    @staticmethod
    def _pump(stream: Any, lines: queue.Queue[str | None]) -> None:
        while True:
            line = stream.readline(MAX_REPLY_CHARS + 1)
            if not line:
                break
            if len(line) > MAX_REPLY_CHARS:  # a reply has no business being this long
                lines.put(TOO_LONG)
                break
            lines.put(line)
        lines.put(None)

    def _drain(self, stream: Any) -> None:
        """Keep the last 20 lines the worker wrote to stderr (each cut at 2,000
        characters: its words for a failure, not a flood held in memory)."""
        while line := stream.readline(2000):
            self._stderr = [*self._stderr[-19:], line.rstrip()]

    def _fail(self, what: str) -> QEError:
        self.close()
        said = next((line for line in reversed(self._stderr) if line.strip()), "")
        return QEError(
            f"the xCOMET worker ({self.python}) {what}" + (f"; it said: {said}" if said else "")
        )

    def _ask(self, message: dict[str, Any], doing: str) -> dict[str, Any]:
        process = self._process
        assert process is not None and process.stdin is not None
        try:
            process.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
            process.stdin.flush()
        except OSError as exc:
            raise self._fail(f"stopped before {doing} ({exc.strerror or exc})") from exc
        try:
            line = self._lines.get(timeout=self.timeout_s)
        except queue.Empty:
            raise self._fail(f"gave no answer in {self.timeout_s:.0f} s while {doing}") from None
        if line is None:
            process.wait(timeout=5)
            raise self._fail(f"ended (exit {process.returncode}) while {doing}")
        if line is TOO_LONG:
            raise self._fail(f"answered a line over {MAX_REPLY_CHARS:,} characters while {doing}")
        from core.io.bounded import BoundedTextError, loads_json

        try:
            reply = loads_json(line, name="its reply")
        except BoundedTextError as exc:
            raise self._fail(f"answered something that is not JSON: {exc}") from None
        if not isinstance(reply, dict):
            raise self._fail(f"answered {line[:120]!r}")
        if "error" in reply:
            raise self._fail(f"failed while {doing}: {reply['error']}")
        return reply

    def score(self, items: list[dict[str, str]]) -> tuple[list[Any], list[Any]]:
        if self._process is None:
            self._start()
        reply = self._ask({"items": items}, f"scoring {len(items)} translations")
        scores, spans = reply.get("scores"), reply.get("spans")
        if not isinstance(scores, list) or not isinstance(spans, list):
            raise self._fail(f"answered without scores and spans: {str(reply)[:200]}")
        try:
            numbers = [float(s) for s in scores]
        except (TypeError, ValueError):
            raise self._fail(f"gave scores that are not numbers: {str(scores)[:200]}") from None
        if any(n != n for n in numbers):  # NaN
            raise self._fail("gave a score that is not a number (NaN)")
        return numbers, [s if isinstance(s, list) else [] for s in spans]

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()


def annotate_spans(translation: str, spans: Sequence[ErrorSpan]) -> str:
    """The translation with ``<error severity="…">…</error>`` around each span (the
    "Translation quality analysis" of Appendix F.1, in its example's markup)."""
    out, last = [], 0
    for span in sorted(spans, key=lambda s: s.start):
        start, end = max(span.start, last), min(span.end, len(translation))
        if start >= end:
            continue
        out.append(translation[last:start])
        out.append(f'<error severity="{span.severity}">{translation[start:end]}</error>')
        last = end
    out.append(translation[last:])
    return "".join(out)


# --- the job --------------------------------------------------------------------------------


@dataclass
class QESummary:
    scorer: str | None
    scored: int = 0
    skipped: int = 0  # already scored by this scorer
    bands: dict[str, int] = field(default_factory=dict)
    note: str | None = None  # why nothing was scored


def qe_job(
    store: SessionStore, scorer: Scorer | None, *, batch: int = 8, note: str | None = None
) -> Job[QESummary]:
    """Score every translation not yet scored by ``scorer``; with no scorer, a job that
    stores nothing and says why (``note``)."""
    from sqlalchemy import func, or_, select

    from core.store.models import ReferenceDerivation as D
    from core.store.models import UnitReference as R

    summary = QESummary(scorer.name if scorer else None, note=note)

    def run(ctx: JobContext) -> QESummary:
        job.partial = summary
        if scorer is None:
            return summary
        try:
            return _score(ctx)
        finally:
            close = getattr(scorer, "close", None)
            if close is not None:
                close()  # a worker process ends with the job, however it ends

    def _score(ctx: JobContext) -> QESummary:
        assert scorer is not None
        with store.snapshot() as db:
            source = R.__table__.alias("source")
            rows = db.execute(
                select(D.id, source.c.text, D.mt_text)
                .join(source, source.c.id == D.source_reference_id)
                .where(or_(D.qe_model.is_(None), D.qe_model != scorer.name))
                .order_by(D.id)
            ).all()
            summary.skipped = int(
                db.scalar(select(func.count()).select_from(D).where(D.qe_model == scorer.name)) or 0
            )
        total = len(rows)
        for start in range(0, total, batch):
            ctx.check_cancelled()
            chunk = rows[start : start + batch]
            results = scorer.score([QEInput(r[1], r[2]) for r in chunk])
            with store.unit_of_work() as db:
                for row, result in zip(chunk, results, strict=True):
                    derivation = db.get_one(D, row[0])
                    derivation.qe_score = result.score
                    derivation.qe_band = result.band
                    derivation.qe_spans = {
                        "spans": [
                            {"text": s.text, "start": s.start, "end": s.end, "severity": s.severity}
                            for s in result.spans
                        ]
                    }
                    derivation.qe_model = scorer.name
                    summary.bands[result.band] = summary.bands.get(result.band, 0) + 1
            summary.scored += len(chunk)
            ctx.progress(summary.scored, total, f"{summary.scored} translations scored")
        return summary

    job: Job[QESummary] = Job(
        title="Estimate translation quality",
        run=run,
        kind="references-qe",
        writes=frozenset({Topic.REFERENCES}),
        params={"scorer": summary.scorer},
    )
    return job
