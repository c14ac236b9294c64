"""Corpus BLEU, chrF++ and TER read from what scoring stored: each sentence score keeps
sacrebleu's statistics, and a corpus score over any set of texts is their sum, equal to
sacrebleu's corpus_score on the same texts and references; the correlation's
system-corpus figures are made from them, never by scoring a text again."""

from __future__ import annotations

from pathlib import Path

import pytest
import sacrebleu
from sqlalchemy import text

from app.cli import main
from core.agreement.correlate import CorrelationRequest, correlate
from core.agreement.human import human_values
from core.agreement.judgments import import_webnlg_judgments
from core.jobs import JobSucceeded, run_job
from core.metrics import create_metric
from core.metrics.scoring import (
    ScoringRequest,
    corpus_scores,
    score_job,
    sentence_score_table,
    sentence_statistics,
)
from core.store import SessionStore
from tests.fixtures.correlation_session import REFERENCE, SAMPLES, SYSTEMS, build, write_release
from tests.shared_data import needs, require

WEBNLG2020 = ("webnlg2020", "en")
TEST_SET = "rdf-to-text-generation-test-data-with-refs-en.xml"
HUMAN = "webnlg:correctness"
SACRE = {"bleu": lambda: sacrebleu.BLEU(), "chrf++": lambda: sacrebleu.CHRF(word_order=2)}


def _texts_and_references(store: SessionStore, vids: list[int]) -> tuple[list[str], list[list]]:
    """The texts and their units' gold references, read with plain SQL, as streams."""
    with store.snapshot() as db:
        hyps, refs = [], []
        for vid in vids:
            unit_id, body = db.execute(
                text("SELECT unit_id, text FROM verbalisations WHERE id = :v"), {"v": vid}
            ).one()
            hyps.append(body or "")
            refs.append(
                list(
                    db.scalars(
                        text(
                            "SELECT text FROM unit_references WHERE unit_id = :u AND "
                            "lang = 'en' AND quality = 'gold' ORDER BY id"
                        ),
                        {"u": unit_id},
                    )
                )
            )
    depth = max(len(r) for r in refs)
    return hyps, [[r[k] if k < len(r) else None for r in refs] for k in range(depth)]


@needs(*WEBNLG2020)
def test_webnlg2020_subsets_from_stored_statistics_equal_sacrebleu(tmp_path: Path) -> None:
    """The WebNLG 2020 test set (up to five references an entry) and two systems'
    outputs, imported and scored through the app: for subsets of a run's texts (every
    third; the texts with several references; the empty outputs among them) the corpus
    score summed from the stored statistics is sacrebleu's, and so is each run's stored
    corpus row (made from the same statistics by the scoring job)."""
    data = require(*WEBNLG2020)
    session = str(tmp_path / "w.taillens")
    assert main(["import", "--session", session, "--quiet", str(data / TEST_SET)]) == 0
    for system in ("Baseline-FORGE2017", "bt5"):  # FORGE2017 has empty lines
        path = str(data / "submissions" / system / "primary.en")
        assert main(["import-outputs", "--session", session, "--system", system, path]) == 0
    with SessionStore.open(Path(session)) as store:
        with store.snapshot() as db:
            # 120 units from where the FORGE2017 empty outputs are, plus the first 60.
            units = list(db.scalars(text("SELECT id FROM data_units ORDER BY id")))
            empty = list(
                db.scalars(
                    text("SELECT unit_id FROM verbalisations WHERE text = '' ORDER BY unit_id")
                )
            )
        chosen = tuple(sorted(set(units[:60]) | set(empty[:4]) | set(units[900:956])))
        # TER's own test is on small texts (test_reference.py): sacrebleu's TER takes
        # about a second a text on these.
        request = ScoringRequest(metrics=("bleu", "chrf++"), unit_ids=chosen)
        outcome = run_job(score_job(store, request))
        assert isinstance(outcome, JobSucceeded), outcome
        rows = {(c.metric, c.run_id): c for c in corpus_scores(store)}
        for metric in ("bleu", "chrf++"):
            stored = sentence_statistics(store, metric, "gold")
            assert stored and all(s.statistics for s in stored.values())
            for run_id in (1, 2):
                vids = [
                    r.verbalisation_id
                    for r in sentence_score_table(store, run_ids=[run_id])
                    if r.verbalisation_id in stored
                ]
                hyps, streams = _texts_and_references(store, vids)
                assert len(streams) >= 3  # several references per entry
                assert "" in hyps or run_id == 2
                whole = SACRE[metric]().corpus_score(hyps, streams).score
                assert rows[(metric, run_id)].value == whole
                several = [i for i in range(len(vids)) if streams[1][i] is not None]
                for subset in (list(range(0, len(vids), 3)), several, several[:1]):
                    picked = [vids[i] for i in subset]
                    hyps_, streams_ = _texts_and_references(store, picked)
                    expected = SACRE[metric]().corpus_score(hyps_, streams_).score
                    value = create_metric(metric).corpus_from_statistics(  # type: ignore[attr-defined]
                        [stored[v].statistics for v in picked],
                        [stored[v].references for v in picked],
                    )
                    assert value.value == expected, (metric, run_id, len(subset))


@pytest.fixture
def judged(tmp_path: Path):
    """The correlation session (four systems scored with chrF++ and BLEU) with the
    WebNLG ratings imported."""
    path = tmp_path / "s.taillens"
    made = build(path)
    with SessionStore.open(path) as store:
        import_webnlg_judgments(store, [write_release(tmp_path / "release")])
    store = SessionStore.open(path)
    yield store, made
    store.close()


def _expected_pearson(store: SessionStore, made: dict) -> float:
    table = {r.verbalisation_id: r for r in sentence_score_table(store)}
    human = human_values(store)[HUMAN]
    samples = range(1, SAMPLES + 1)
    corpus = [
        sacrebleu.corpus_bleu(
            [table[made[(s, n)]].text for n in samples], [[REFERENCE] * SAMPLES]
        ).score
        for s in SYSTEMS
    ]
    means = [sum(human[made[(s, n)]] for n in samples) / SAMPLES for s in SYSTEMS]
    from scipy import stats  # not at collection, where every worker would hold it

    return float(stats.pearsonr(corpus, means)[0])


def test_system_corpus_scores_are_read_not_recomputed(judged, monkeypatch) -> None:
    """With the statistics stored, the system-corpus correlation scores no text again
    (sacrebleu's statistics extraction is not called) and equals sacrebleu's."""
    store, made = judged
    expected = _expected_pearson(store, made)

    def refuse(*_args, **_kwargs):
        raise AssertionError("a text was scored again")

    monkeypatch.setattr(sacrebleu.metrics.base.Metric, "_extract_corpus_statistics", refuse)
    request = CorrelationRequest(metrics=("bleu:gold",), humans=(HUMAN,), levels=("system",))
    result = correlate(store, request)
    rows = {r.level: r for r in result.rows}
    assert rows["system-corpus"].pearson == pytest.approx(expected, abs=1e-12)
    assert not any("computed again" in n for n in result.notes), result.notes


def test_scores_stored_without_statistics_are_scored_again_with_a_note(judged) -> None:
    """A session scored before the statistics were stored: the corpus scores come from
    the texts as before, the same figures, and a note says how to have them read."""
    store, made = judged
    expected = _expected_pearson(store, made)
    with store.unit_of_work() as db:
        db.execute(
            text(
                "UPDATE scores SET details = json_remove(details, '$.statistics') "
                "WHERE metric = 'bleu' AND level = 'sentence'"
            )
        )
    request = CorrelationRequest(metrics=("bleu:gold",), humans=(HUMAN,), levels=("system",))
    result = correlate(store, request)
    rows = {r.level: r for r in result.rows}
    assert rows["system-corpus"].pearson == pytest.approx(expected, abs=1e-12)
    note = next(n for n in result.notes if "computed again" in n)
    assert "bleu:gold" in note and "taillens score --metrics bleu" in note, note
