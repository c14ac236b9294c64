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
machine (:class:`CometScorer`; never downloads). Where neither is, :func:`qe_status`
says so and every translation goes on to post-editing with no band and no spans.
A scorer is anything with ``name`` and ``score(triples) -> list[QEResult]``, so the tests
can give a stub (named as one) where the real package cannot load a model offline.
"""

from __future__ import annotations

import importlib.util
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


def qe_status(model: str | None) -> str | None:
    """None when xCOMET can run with ``model``; else the sentence that says why not
    (and that every translation then goes to post-editing)."""
    tail = "; every translation goes to post-editing without a quality band"
    if not comet_installed():
        return (
            "no quality estimation: unbabel-comet is not installed "
            f"(pip install unbabel-comet){tail}"
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


class CometScorer:
    """xCOMET through ``unbabel-comet``: ``load_from_checkpoint`` of a local ``.ckpt``
    (``checkpoints/model.ckpt`` inside a downloaded model folder)."""

    def __init__(self, checkpoint: str | Path, *, batch: int = 8, gpus: int = 0) -> None:
        problem = qe_status(str(checkpoint))
        if problem is not None:
            raise QEError(problem)
        path = Path(checkpoint).expanduser()
        if path.is_dir():
            path = path / "checkpoints" / "model.ckpt"
        self.path = path
        self.name = str(path)
        self.batch, self.gpus = batch, gpus
        self._model: Any = None

    def score(self, items: Sequence[QEInput]) -> list[QEResult]:
        if self._model is None:
            with heavy.lock():
                from comet import load_from_checkpoint  # type: ignore[import-not-found,unused-ignore]

            self._model = load_from_checkpoint(str(self.path))
        data = [
            {"src": i.source, "mt": i.translation, **({"ref": i.reference} if i.reference else {})}
            for i in items
        ]
        output = self._model.predict(
            data, batch_size=self.batch, gpus=self.gpus, progress_bar=False
        )
        spans = getattr(getattr(output, "metadata", None), "error_spans", None) or [[]] * len(items)
        return [
            QEResult(min(1.0, max(0.0, float(s))), spans_from_comet(sp))
            for s, sp in zip(output.scores, spans, strict=True)
        ]


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
