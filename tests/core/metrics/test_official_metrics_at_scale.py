"""The official metrics at a challenge's scale, on WebNLG 2020 as published: the corpus
scores are summed from the sentence pass's own segment statistics (sacrebleu's TER no
longer recomputes every segment for the corpus figure), the sentence pass may run in
worker processes, and every number equals what sacrebleu and nltk give on the same texts,
several references per text."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest
import sacrebleu
from sqlalchemy import select

from app.cli import main
from core.jobs import JobSucceeded, run_job
from core.metrics import MetricOptions
from core.metrics.base import ScoringItem
from core.metrics.meteor import Meteor, load_wordnet
from core.metrics.reference import Bleu, ChrF, Ter
from core.metrics.scoring import ScoringRequest, score_job
from core.metrics.scoring import job as job_module
from core.metrics.scoring import pool as pool_module
from core.store import SessionStore
from core.store.models import Score
from tests import shared_data
from tests.fixtures.tiny_wordnet import write_tiny_wordnet

pytestmark = shared_data.needs(*shared_data.WEBNLG2020_EN)
# The first entries of the test set (1 to 5 references each); TER, sacrebleu's slowest
# by far, on fewer.
ENTRIES = {"bleu": 120, "chrf++": 120, "ter": 30}


def _published(entries: int, system: str = "bt5") -> tuple[list[str], list[list[str]]]:
    """A system's outputs and each entry's references, in test-set order."""
    root = ET.parse(shared_data.require(*shared_data.WEBNLG2020_TEST)).getroot()
    references = [[lex.text or "" for lex in entry.iter("lex")] for entry in root.iter("entry")][
        :entries
    ]
    output = shared_data.require(*shared_data.WEBNLG2020_SUBMISSIONS, system, "primary.en")
    texts = output.read_text(encoding="utf-8").split("\n")[:entries]
    return texts, references


@pytest.mark.parametrize(
    ("name", "ours", "theirs"),
    [
        ("bleu", Bleu(), lambda sentence: sacrebleu.BLEU(effective_order=sentence)),
        ("chrf++", ChrF(), lambda _sentence: sacrebleu.CHRF(word_order=2)),
        ("ter", Ter(), lambda _sentence: sacrebleu.TER()),
    ],
    ids=["bleu", "chrf++", "ter"],
)
def test_sentence_and_corpus_scores_equal_sacrebleus_from_one_pass(name, ours, theirs) -> None:
    texts, references = _published(ENTRIES[name])
    assert {len(refs) for refs in references} >= {1, 2, 3}  # several references per text
    items = [ScoringItem(t, "en", tuple(r)) for t, r in zip(texts, references, strict=True)]
    items.append(ScoringItem("A text with no reference.", "en", ()))
    values, statistics = ours.sentence_scores_with_statistics(items)
    sentence = theirs(True)
    for item, value in zip(items[:-1], values, strict=False):
        assert value.value == sentence.sentence_score(item.text, list(item.references)).score
    assert values[-1].value is None and statistics[-1] is None
    corpus = ours.corpus_from_pass(statistics)
    depth = max(len(r) for r in references)
    streams = [[r[k] if k < len(r) else None for r in references] for k in range(depth)]
    assert corpus.value == theirs(False).corpus_score(texts, streams).score
    assert corpus.details["n"] == ENTRIES[name] and corpus.details["without_reference"] == 1
    # The old second pass gives the very same number.
    assert corpus.value == ours.corpus_score(items).value


def test_meteor_equals_nltks_on_the_published_texts(tmp_path: Path) -> None:
    from core import heavy

    heavy.import_nltk()  # as the metric imports it: without scikit-learn (core/heavy.py)
    from nltk.translate.meteor_score import meteor_score

    folder = write_tiny_wordnet(tmp_path / "wordnet")
    texts, references = _published(40)
    metric = Meteor(folder)
    items = [ScoringItem(t, "en", tuple(r)) for t, r in zip(texts, references, strict=True)]
    values = metric.sentence_scores(items)
    reader = load_wordnet(folder)
    tokens = metric._tokens
    for item, value in zip(items, values, strict=True):
        expected = meteor_score(
            [tokens(r) for r in item.references], tokens(item.text), wordnet=reader
        )
        assert value.value == expected * 100


def _session(path: Path, systems: tuple[str, ...]) -> SessionStore:
    assert (
        main(
            [
                "import",
                str(shared_data.require(*shared_data.WEBNLG2020_TEST)),
                "--session",
                str(path),
            ]
        )
        == 0
    )
    for system in systems:
        output = shared_data.require(*shared_data.WEBNLG2020_SUBMISSIONS, system, "primary.en")
        assert (
            main(["import-outputs", str(output), "--system", system, "--session", str(path)]) == 0
        )
    return SessionStore.open(path)


def _stored(store: SessionStore) -> list[tuple]:
    with store.unit_of_work() as db:
        return sorted(
            (s.metric, s.level, s.run_id, s.verbalisation_id or 0, s.value, s.signature)
            for s in db.scalars(select(Score))
        )


def test_worker_processes_store_the_very_rows_one_process_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two systems over the first 20 units; the pool is asked for from 30 texts on.
    monkeypatch.setattr(pool_module, "MIN_TEXTS", 30)
    # The time left is said once a metric has run for more than a second; 40 texts of TER
    # take less than that, so the job's clock moves 2 s per reading here.
    ticks = iter(range(0, 1_000_000, 2))
    monkeypatch.setattr(job_module, "time", SimpleNamespace(monotonic=lambda: next(ticks)))
    stored = []
    messages: list[str] = []
    for workers in (1, 2):
        store = _session(tmp_path / f"w{workers}.taillens", ("bt5", "TGen"))
        with store.unit_of_work() as db:
            from core.store.models import DataUnit

            units = tuple(db.scalars(select(DataUnit.id).order_by(DataUnit.id).limit(20)))
        request = ScoringRequest(
            metrics=("bleu", "chrf++", "ter"),
            unit_ids=units,
            options=MetricOptions(),
            workers=workers,
        )
        job = score_job(store, request)
        outcome = run_job(job, on_progress=lambda p: messages.append(p.message))
        assert isinstance(outcome, JobSucceeded), outcome
        stored.append(_stored(store))
        store.close()
    assert stored[0] == stored[1]
    assert len([row for row in stored[0] if row[1] == "sentence"]) == 3 * 2 * 20
    assert any(" left for ter" in m for m in messages)
