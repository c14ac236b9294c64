"""A small session for the correlation tests: WebNLG-like units, four systems' texts
scored with chrF++ and BLEU, and WebNLG 2020 human-evaluation files in their exact layout
(WebNLG/GenerationEval ``data/human_evaluation`` and ``data/correlation``)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from core.jobs import JobSucceeded, run_job
from core.metrics.scoring import ScoringRequest, score_job
from core.store import SessionStore
from core.store.models import DataUnit, ModelRun, UnitReference, Verbalisation

SYSTEMS = ("AmazonAI", "bt5", "NILC", "TGen")
SAMPLES = 8
CRITERIA = ("Correctness", "DataCoverage", "Fluency", "Relevance", "TextStructure")
REFERENCE = "Rome is the capital of Italy and lies on the river Tiber."


def build(path: Path, *, webnlg_ids: bool = True) -> dict[tuple[str, int], int]:
    """SAMPLES units (uids like WebNLG 2020's ``…-en:Id3``), one run per system with texts
    of graded quality; returns (system, sample id) -> verbalisation id."""
    rng = random.Random(3)
    words = REFERENCE.split()
    made = {}
    with SessionStore.create(path) as store, store.unit_of_work() as db:
        units = []
        for n in range(1, SAMPLES + 1):
            uid = (
                f"rdf-to-text-generation-test-data-with-refs-en:Id{n}"
                if webnlg_ids
                else (f"unit-{n}")
            )
            unit = DataUnit(uid=uid, shape="chain", size=1, origin="test")
            db.add(unit)
            db.flush()
            db.add(UnitReference(unit_id=unit.id, lang="en", text=REFERENCE, quality="gold"))
            units.append(unit.id)
        for s, system in enumerate(SYSTEMS):
            run = ModelRun(kind="external", model_id=system, system_name=system, status="finished")
            db.add(run)
            db.flush()
            for n, unit_id in enumerate(units, start=1):
                keep = max(1, len(words) - rng.randint(0, 3 + 2 * s))
                text = " ".join(words[:keep])
                v = Verbalisation(
                    run_id=run.id,
                    unit_id=unit_id,
                    lang="en",
                    candidate_index=0,
                    raw_output=text,
                    text=text,
                    parse_ok=True,
                )
                db.add(v)
                db.flush()
                made[(system, n)] = v.id
    with SessionStore.open(path) as store:
        outcome = run_job(score_job(store, ScoringRequest(metrics=("chrf++", "bleu"))))
        assert isinstance(outcome, JobSucceeded), outcome
    return made


def ratings_for(system: str, n: int) -> dict[str, dict[str, int]]:
    rng = random.Random(f"{system}-{n}")
    return {
        f"A{rng.randint(10**9, 10**10)}X": {c: rng.randint(0, 100) for c in CRITERIA}
        for _ in range(3)
    }


def write_release(
    folder: Path, systems: tuple[str, ...] = SYSTEMS, *, with_text: bool = False
) -> Path:
    """Files exactly as WebNLG/GenerationEval's data/human_evaluation (or, with_text,
    data/correlation): one ``human_eval_id_<SYSTEM>.json`` per system."""
    folder.mkdir(parents=True, exist_ok=True)
    for system in systems:
        data = {}
        for n in range(1, SAMPLES + 1):
            hits = ratings_for(system, n)
            if n == 2:
                next(iter(hits.values()))["feedback"] = "Specify units."
            data[str(n)] = {"text": "", "hits": hits} if with_text else hits
        (folder / f"human_eval_id_{system}.json").write_text(json.dumps(data), "utf-8")
    return folder


def zscores_for(system: str, n: int) -> dict[str, float]:
    rng = random.Random(f"z-{system}-{n}")
    return {c: round(rng.uniform(-2.0, 1.0), 6) for c in CRITERIA}


def write_challenge_layout(
    folder: Path,
    per_system: tuple[str, ...],
    all_teams: tuple[str, ...],
    *,
    empty: tuple[str, ...] = ("1124",),
) -> Path:
    """The WebNLG/challenge-2020 repository's published layout of the English human
    evaluation, ``evaluation/human-evaluation/results/en/``:

    * ``<SYSTEM>/primary.json``: per system, the object from sample id to raters' ratings
      (as ``Baseline-FORGE2020/primary.json``, whose ``"1124": {}`` is an entry with no
      ratings: ``empty`` puts such entries in each file);
    * ``english_humeval_data_all_teams.json``: a JSON list of records
      ``{"submission_id", "size", "sample_id", "domain", "category", "Correctness", …}``,
      the criteria being per-text means of per-rater z-scores.
    """
    root = folder / "evaluation" / "human-evaluation" / "results" / "en"
    root.mkdir(parents=True, exist_ok=True)
    for system in per_system:
        data: dict[str, object] = {str(n): ratings_for(system, n) for n in range(1, SAMPLES + 1)}
        for sample in empty:
            data[sample] = {}
        (root / system).mkdir()
        (root / system / "primary.json").write_text(json.dumps(data), "utf-8")
    records = [
        {
            "submission_id": system,
            "size": "1",
            "sample_id": str(n),
            "domain": "type1",
            "category": "Airport",
            **zscores_for(system, n),
        }
        for system in all_teams
        for n in range(1, SAMPLES + 1)
    ]
    if records:
        (root / "english_humeval_data_all_teams.json").write_text(
            json.dumps(records, indent=4), "utf-8"
        )
    return root
