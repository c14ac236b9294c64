"""The WebNLG challenge's offline metrics: every output counted as the official scripts
count it (empty outputs are empty texts), TER with its signature, METEOR with a local
WordNet folder or a plain reason why it is absent."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import sacrebleu
from sqlalchemy import select

from core.formats.outputs import import_outputs
from core.jobs import JobSucceeded, run_job
from core.metrics import MetricOptions
from core.metrics.base import ScoringItem
from core.metrics.meteor import DEBIAN_FOLDER, Meteor, load_wordnet, wordnet_status
from core.metrics.scoring import ScoringRequest, corpus_scores, score_job
from core.store import SessionStore
from core.store.models import DataUnit, Score, UnitReference, Verbalisation
from tests.fixtures.tiny_wordnet import write_tiny_wordnet

_TEXT = (
    "the city of Rome is in Italy and it was founded long ago by people who lived on "
    "seven hills near a river called Tiber while the empire grew large"
)
WORDS = _TEXT.split()
UNITS = 40
EMPTY = 15


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))).capitalize() + "."


@pytest.fixture
def webnlg_like(tmp_path: Path) -> tuple[SessionStore, list[str], list[list[str]], int]:
    """40 units with 1-3 English gold references; a system file with 15 empty lines."""
    rng = random.Random(7)
    references: list[list[str]] = []
    with SessionStore.create(tmp_path / "s.taillens") as store, store.unit_of_work() as db:
        for i in range(UNITS):
            unit = DataUnit(uid=f"u{i}", shape="chain", size=1, origin="test")
            db.add(unit)
            db.flush()
            refs = [_sentence(rng) for _ in range(rng.randint(1, 3))]
            references.append(refs)
            db.add_all(
                UnitReference(unit_id=unit.id, lang="en", text=r, quality="gold") for r in refs
            )
    empty_at = set(rng.sample(range(UNITS), EMPTY))
    lines = ["" if i in empty_at else _sentence(rng) for i in range(UNITS)]
    (tmp_path / "system.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = SessionStore.open(tmp_path / "s.taillens")
    run_id = import_outputs(store, tmp_path / "system.txt", system="sys").run_id
    yield store, lines, references, run_id
    store.close()


def _streams(references: list[list[str]]) -> list[list[str | None]]:
    depth = max(len(r) for r in references)
    return [[r[k] if k < len(r) else None for r in references] for k in range(depth)]


def _score(store: SessionStore, **request: object) -> object:
    outcome = run_job(score_job(store, ScoringRequest(**request)))  # type: ignore[arg-type]
    assert isinstance(outcome, JobSucceeded), outcome
    return outcome.result


def test_empty_outputs_score_as_sacrebleu_scores_the_same_file(webnlg_like) -> None:
    store, lines, references, run_id = webnlg_like
    summary = _score(store, metrics=("bleu", "chrf++", "ter"))
    corpus = {c.metric: c for c in corpus_scores(store, run_ids=[run_id])}
    streams = _streams(references)
    expected = {
        "bleu": sacrebleu.metrics.BLEU().corpus_score(lines, streams).score,
        "chrf++": sacrebleu.metrics.CHRF(word_order=2).corpus_score(lines, streams).score,
        "ter": sacrebleu.metrics.TER().corpus_score(lines, streams).score,
    }
    assert {m: corpus[m].value for m in expected} == pytest.approx(expected, abs=1e-9)
    for metric in expected:
        assert corpus[metric].n == UNITS
        assert corpus[metric].details["empty_outputs"] == EMPTY
    assert corpus["ter"].signature.startswith("metric:ter|nrefs:var|case:lc|tok:tercom")
    assert any(f"{EMPTY} empty outputs were scored as empty texts" in n for n in summary.notes)
    # The empty texts have sentence rows, marked, and they score badly.
    with store.unit_of_work() as db:
        empty = db.execute(
            select(Score.metric, Score.value, Score.details)
            .join(Verbalisation, Verbalisation.id == Score.verbalisation_id)
            .where(Verbalisation.text.is_(None))
        ).all()
    assert len(empty) == 3 * EMPTY
    assert all(d["output"] == "empty" for _, _, d in empty)
    assert {v for m, v, _ in empty if m != "ter"} == {0.0}
    # TER: every word of the closest reference is an edit (divided by the mean length).
    assert all(v > 40 for m, v, _ in empty if m == "ter")


def test_excluding_empty_outputs_is_explicit_and_counted(webnlg_like) -> None:
    store, lines, references, run_id = webnlg_like
    summary = _score(store, metrics=("chrf++", "bleu"), exclude_empty=True)
    kept = [i for i, line in enumerate(lines) if line]
    streams = _streams([references[i] for i in kept])
    hyps = [lines[i] for i in kept]
    corpus = {c.metric: c for c in corpus_scores(store, run_ids=[run_id])}
    assert corpus["chrf++"].value == pytest.approx(
        sacrebleu.metrics.CHRF(word_order=2).corpus_score(hyps, streams).score, abs=1e-9
    )
    assert corpus["bleu"].value == pytest.approx(
        sacrebleu.metrics.BLEU().corpus_score(hyps, streams).score, abs=1e-9
    )
    assert corpus["chrf++"].n == UNITS - EMPTY
    assert any(f"{EMPTY} empty outputs were LEFT OUT" in n for n in summary.notes)
    # Counting them again (the default) lowers the score: they were not free.
    _score(store, metrics=("chrf++",))
    counted = {c.metric: c for c in corpus_scores(store, run_ids=[run_id])}["chrf++"]
    assert counted.value < corpus["chrf++"].value and counted.n == UNITS


def test_unparsed_replies_count_as_empty_texts_unless_excluded(webnlg_like) -> None:
    store, lines, references, run_id = webnlg_like
    with store.unit_of_work() as db:
        first = db.scalars(
            select(Verbalisation)
            .where(Verbalisation.run_id == run_id, Verbalisation.text.is_not(None))
            .order_by(Verbalisation.id)
        ).first()
        first.text, first.parse_ok = None, False  # a reply with no answer marker
        first.raw_output = "I cannot answer that."
    summary = _score(store, metrics=("chrf++",))
    corpus = corpus_scores(store, run_ids=[run_id])[0]
    assert corpus.n == UNITS and corpus.details["unparsed_outputs"] == 1
    assert any(
        "1 replies from which no answer was parsed were scored as empty" in n for n in summary.notes
    )
    summary = _score(store, metrics=("chrf++",), exclude_unparsed=True)
    corpus = corpus_scores(store, run_ids=[run_id])[0]
    assert corpus.n == UNITS - 1 and corpus.details["empty_outputs"] == EMPTY
    assert any("were LEFT OUT" in n and "no answer was parsed" in n for n in summary.notes)


# --- METEOR -------------------------------------------------------------------------------


def test_meteor_with_a_real_wordnet_folder_matches_synonyms(tmp_path: Path) -> None:
    from core import heavy

    heavy.import_nltk()  # as the metric imports it: without scikit-learn (core/heavy.py)
    from nltk.translate.meteor_score import meteor_score

    folder = write_tiny_wordnet(tmp_path / "wordnet")
    status = wordnet_status(folder)
    assert status.found and status.source == "setting"
    metric = Meteor(folder)
    assert metric.signature()["wordnet"] == "3.0" and not metric.absent_reason
    items = [
        ScoringItem("The car is here.", "en", ("the auto is here .",)),
        ScoringItem("The bus is here.", "en", ("the auto is here .",)),
        ScoringItem("", "en", ("the auto is here .",)),
        ScoringItem("La macchina è qui.", "it", ("L'auto è qui.",)),
    ]
    values = metric.sentence_scores(items)
    reader = load_wordnet(folder)
    expected = (
        meteor_score(
            [["the", "auto", "is", "here", "."]], ["the", "car", "is", "here", "."], wordnet=reader
        )
        * 100
    )
    assert values[0].value == pytest.approx(expected)
    assert values[0].value > values[1].value  # car ~ auto through WordNet; bus is not
    assert values[2].value == 0.0  # an empty output scores badly
    assert values[3].value is None and "English-only" in values[3].details["note"]
    corpus = metric.corpus_from_sentences(items, values)
    assert corpus.value == pytest.approx((values[0].value + values[1].value) / 3)
    assert corpus.details["n"] == 3


@pytest.mark.skipif(
    not (DEBIAN_FOLDER / "index.noun").is_file(),
    reason="Debian's wordnet-base is not installed here",
)
def test_meteor_reads_debians_wordnet_base_without_lexnames() -> None:
    metric = Meteor(DEBIAN_FOLDER)
    assert metric.signature()["wordnet"] == "3.0"
    good, bad = metric.sentence_scores(
        [
            ScoringItem("The car is here.", "en", ("The auto is here.",)),
            ScoringItem("The tree is here.", "en", ("The auto is here.",)),
        ]
    )
    assert good.value > bad.value


def test_without_wordnet_meteor_is_absent_and_says_why(
    webnlg_like, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _lines, _refs, run_id = webnlg_like
    missing = tmp_path / "no-wordnet"
    status = wordnet_status(missing)
    assert not status.found and "does not exist" in status.message()
    not_wordnet = tmp_path / "empty"
    not_wordnet.mkdir()
    assert "is not a WordNet folder (no index.noun" in wordnet_status(not_wordnet).message()
    # Nothing configured and nothing installed: where it looked, and what to do.
    monkeypatch.delenv("TAILLENS_WORDNET", raising=False)
    monkeypatch.setattr("core.metrics.meteor.DEBIAN_FOLDER", tmp_path / "none")
    monkeypatch.setattr("core.metrics.meteor._nltk_data_folders", lambda: [])
    status = wordnet_status()
    assert not status.found and "no WordNet database folder was found" in status.message()
    assert "apt-get install wordnet-base" in status.message()

    summary = _score(
        store, metrics=("meteor", "chrf++"), options=MetricOptions(wordnet=str(missing))
    )
    assert any("METEOR is absent" in n and str(missing) in n for n in summary.notes)
    assert "meteor" not in summary.rows_written
    with store.unit_of_work() as db:
        assert not db.scalars(select(Score).where(Score.metric == "meteor")).all()
    assert {c.metric for c in corpus_scores(store, run_ids=[run_id])} == {"chrf++"}


def test_the_scoring_job_stores_meteor_with_its_signature(webnlg_like, tmp_path: Path) -> None:
    store, lines, _refs, run_id = webnlg_like
    folder = write_tiny_wordnet(tmp_path / "wordnet")
    _score(store, metrics=("meteor",), options=MetricOptions(wordnet=str(folder)))
    corpus = corpus_scores(store, run_ids=[run_id])[0]
    assert corpus.metric == "meteor" and corpus.n == UNITS
    assert corpus.details["empty_outputs"] == EMPTY
    assert "match:exact+porter+wordnet" in corpus.signature
    with store.unit_of_work() as db:
        values = db.scalars(
            select(Score.value).where(Score.metric == "meteor", Score.level == "sentence")
        ).all()
    assert len(values) == UNITS and values.count(0.0) >= EMPTY
    assert corpus.value == pytest.approx(sum(values) / len(values))


def test_without_the_model_stack_the_default_set_scores_the_rest_and_says_why(
    webnlg_like, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bundle and a wheel without [models]: BERTScore, similarity, perplexity and local
    models say in one line that they need the full install; the default set still scores
    every metric that needs no model."""
    import importlib.util

    from core.heavy import FULL_INSTALL, ModelStackMissing
    from core.metrics import DEFAULT_METRICS, create_metric
    from core.verbalise import open_verbaliser

    store, _lines, _refs, run_id = webnlg_like
    absent = {"torch", "transformers", "sentence_transformers", "bert_score"}
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in absent else find_spec(name, *a),
    )
    summary = _score(
        store, metrics=DEFAULT_METRICS, options=MetricOptions(wordnet=str(tmp_path / "none"))
    )
    for metric in ("bertscore", "similarity"):
        assert any(note.startswith(f"{metric} {FULL_INSTALL}") for note in summary.notes)
        assert metric not in summary.rows_written
    # A checkout: the hint is ./dev start (core.desktop.install names each kind's own).
    assert any("./dev start" in note for note in summary.notes)
    assert {"bleu", "chrf++", "ter", "rouge1"} <= {
        c.metric for c in corpus_scores(store, run_ids=[run_id])
    }
    with pytest.raises(
        ModelStackMissing, match=r"^ppl needs the full install .*: run \./dev start"
    ):
        create_metric("ppl", model=str(tmp_path))
    with pytest.raises(ModelStackMissing, match=r"^a local model needs the full install"):
        open_verbaliser(tmp_path)
