"""Correlation the way papers report it: on a subset of the texts (tiers,
systems, languages, ``--where`` over scores and their details, as the ESA paper's texts
with at least one undetected entity) and, at system level, against the metric's corpus
score as well as the mean of its per-text scores, each labelled."""

from __future__ import annotations

from pathlib import Path

import pytest
import sacrebleu

from app.cli import main
from core.agreement.correlate import CorrelationRequest, correlate
from core.agreement.human import human_values
from core.agreement.judgments import import_webnlg_judgments
from core.errors import UserFacingError
from core.jobs import JobSucceeded, run_job
from core.metrics.esa.detect import esa_of_text
from core.metrics.scoring import ScoringRequest, score_job, sentence_score_table
from core.report.render import report_tables
from core.store import SessionStore
from core.store.models import DataUnit, UnitTriple
from core.text_filters import FilterError, parse_condition
from tests.fixtures.correlation_session import REFERENCE, SAMPLES, SYSTEMS, build, write_release
from tests.fixtures.lazy_modules import scipy_stats as stats

HUMAN = "webnlg:correctness"


@pytest.fixture
def session(tmp_path: Path):
    """The correlation session, its units given a triple (so ESA has entities to miss: the
    shorter texts stop before "Italy" or "Tiber") and a tier (odd samples long tail), ESA
    scored, and the WebNLG ratings imported."""
    path = tmp_path / "s.taillens"
    made = build(path)
    with SessionStore.open(path) as store:
        with store.unit_of_work() as db:
            for n, unit in enumerate(db.query(DataUnit).order_by(DataUnit.id), start=1):
                unit.tier = "long_tail" if n % 2 else "head"
                for position, (s, p, o) in enumerate(
                    [("Rome", "capital", "Italy"), ("Rome", "river", "Tiber")]
                ):
                    db.add(
                        UnitTriple(
                            unit_id=unit.id,
                            lang="en",
                            position=position,
                            subject=s,
                            predicate=p,
                            object=o,
                        )
                    )
        outcome = run_job(score_job(store, ScoringRequest(metrics=("esa",))))
        assert isinstance(outcome, JobSucceeded), outcome
        import_webnlg_judgments(store, [write_release(tmp_path / "release")])
    store = SessionStore.open(path)
    yield store, made
    store.close()


def _text_row(store: SessionStore, request: CorrelationRequest, metric: str):
    result = correlate(store, request)
    return result, next(r for r in result.rows if r.level == "text" and r.metric == metric)


def test_where_on_esa_details_is_the_esa_papers_subset(session) -> None:
    store, _made = session
    table = {r.verbalisation_id: r for r in sentence_score_table(store)}
    human = human_values(store)[HUMAN]
    # Independently: the texts where ESA misses an entity, by running ESA itself.
    from core.metrics.esa.detect import entities_of_triples

    entities = entities_of_triples([("Rome", "capital", "Italy"), ("Rome", "river", "Tiber")])
    subset = sorted(
        vid
        for vid, row in table.items()
        if vid in human and esa_of_text(row.text or "", entities, "en").missing
    )
    assert 3 <= len(subset) < len(human)
    result, row = _text_row(
        store,
        CorrelationRequest(metrics=("esa",), humans=(HUMAN,), where=("esa.undetected>=1",)),
        "esa",
    )
    assert row.n == len(subset)
    xs = [table[v].scores["esa"] for v in subset]
    ys = [human[v] for v in subset]
    assert (row.pearson, row.pearson_p) == pytest.approx(tuple(stats.pearsonr(xs, ys)))
    assert "where esa.undetected>=1" in result.notes
    # The same subset by the score itself; a list detail compares by its length.
    _, same = _text_row(
        store, CorrelationRequest(metrics=("esa",), humans=(HUMAN,), where=("esa<1",)), "esa"
    )
    _, by_list = _text_row(
        store,
        CorrelationRequest(metrics=("esa",), humans=(HUMAN,), where=("esa.missing>0",)),
        "esa",
    )
    assert same.n == by_list.n == len(subset)


def test_tier_system_and_language_filters(session) -> None:
    store, made = session
    every = correlate(store, CorrelationRequest(metrics=("chrf++:gold",), humans=(HUMAN,)))
    total = next(r for r in every.rows if r.level == "text").n
    assert total == len(SYSTEMS) * SAMPLES
    _, long_tail = _text_row(
        store,
        CorrelationRequest(metrics=("chrf++:gold",), humans=(HUMAN,), tiers=("long_tail",)),
        "chrf++:gold",
    )
    assert long_tail.n == total // 2
    result, two = _text_row(
        store,
        CorrelationRequest(
            metrics=("chrf++:gold",), humans=(HUMAN,), systems=("bt5", "nilc"), langs=("en",)
        ),
        "chrf++:gold",
    )
    assert two.n == 2 * SAMPLES and "systems: NILC, bt5" in result.notes
    _, combined = _text_row(
        store,
        CorrelationRequest(
            metrics=("chrf++:gold",),
            humans=(HUMAN,),
            systems=("bt5",),
            where=("tier=head", "run!=1"),
        ),
        "chrf++:gold",
    )
    assert combined.n == SAMPLES // 2
    with pytest.raises(
        UserFacingError, match="no text of tier 'torso' .tiers here: head, long_tail"
    ):
        correlate(store, CorrelationRequest(tiers=("torso",)))
    with pytest.raises(UserFacingError, match="no run of system 'Huawei'"):
        correlate(store, CorrelationRequest(systems=("Huawei",)))
    with pytest.raises(UserFacingError, match="in the subset asked for .where esa>2"):
        correlate(store, CorrelationRequest(where=("esa>2",)))


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("esa", "write FIELD OP VALUE"),
        ("tier<head", "'head' is not a number; text compares with = or != only"),
    ],
)
def test_unreadable_conditions_say_how_to_write_them(condition: str, message: str) -> None:
    with pytest.raises(FilterError, match=message):
        parse_condition(condition)


def test_an_unknown_field_lists_the_fields(session) -> None:
    store, _made = session
    with pytest.raises(FilterError, match=r"no field 'bleu:silver' .fields: tier, sub_tier"):
        correlate(store, CorrelationRequest(where=("bleu:silver>1",)))


def test_system_level_mean_and_corpus_are_both_offered_labelled(session) -> None:
    store, made = session
    result = correlate(
        store, CorrelationRequest(metrics=("bleu:gold",), humans=(HUMAN,), levels=("system",))
    )
    rows = {r.level: r for r in result.rows}
    assert set(rows) == {"system", "system-corpus"}
    table = {r.verbalisation_id: r for r in sentence_score_table(store)}
    human = human_values(store)[HUMAN]
    corpus = [
        sacrebleu.corpus_bleu(
            [table[made[(s, n)]].text for n in range(1, SAMPLES + 1)], [[REFERENCE] * SAMPLES]
        ).score
        for s in SYSTEMS
    ]
    means = [sum(human[made[(s, n)]] for n in range(1, SAMPLES + 1)) / SAMPLES for s in SYSTEMS]
    expected = stats.pearsonr(corpus, means)
    assert (rows["system-corpus"].pearson, rows["system-corpus"].pearson_p) == pytest.approx(
        tuple(expected)
    )
    per_text = [
        sum(table[made[(s, n)]].scores["bleu:gold"] for n in range(1, SAMPLES + 1)) / SAMPLES
        for s in SYSTEMS
    ]
    assert rows["system"].pearson == pytest.approx(stats.pearsonr(per_text, means)[0])
    corpus_note = next(n for n in result.notes if n.startswith("system level (system-corpus)"))
    assert "bleu:gold: " in corpus_note, corpus_note
    only_mean = correlate(
        store,
        CorrelationRequest(
            metrics=("bleu:gold",), humans=(HUMAN,), levels=("system",), system_scores=("mean",)
        ),
    )
    assert {r.level for r in only_mean.rows} == {"system"}


def test_correlate_on_a_subset_from_the_cli(
    session, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store, _made = session
    path = str(store.path)
    store.close()
    status = main(
        [
            "correlate",
            "--session",
            path,
            "--metrics",
            "esa",
            "--human",
            HUMAN,
            "--where",
            "esa.undetected>=1",
            "--tier",
            "long_tail,head",
            "--language",
            "en",
            "--quiet",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "note: where esa.undetected>=1" in out and out.startswith("level")
    status = main(["correlate", "--session", path, "--where", "nothing>1", "--quiet"])
    _, err = capsys.readouterr()
    assert status == 2 and err.startswith("taillens: --where 'nothing>1': no field 'nothing'")


def test_the_corpus_score_uses_the_tokenisation_of_the_stored_scores(session) -> None:
    """Scored with --bleu-tokenize char, the system-corpus BLEU is sacrebleu's corpus BLEU
    with char tokenisation (it was 13a whatever the scores said), and the note says so."""
    from core.metrics import MetricOptions

    store, made = session
    outcome = run_job(
        score_job(
            store,
            ScoringRequest(metrics=("bleu",), options=MetricOptions(bleu_tokenize="char")),
        )
    )
    assert isinstance(outcome, JobSucceeded), outcome
    result = correlate(
        store, CorrelationRequest(metrics=("bleu:gold",), humans=(HUMAN,), levels=("system",))
    )
    rows = {r.level: r for r in result.rows}
    table = {r.verbalisation_id: r for r in sentence_score_table(store)}
    human = human_values(store)[HUMAN]
    means = [sum(human[made[(s, n)]] for n in range(1, SAMPLES + 1)) / SAMPLES for s in SYSTEMS]

    def corpus(tokenize: str) -> list[float]:
        return [
            sacrebleu.corpus_bleu(
                [table[made[(s, n)]].text for n in range(1, SAMPLES + 1)],
                [[REFERENCE] * SAMPLES],
                tokenize=tokenize,
            ).score
            for s in SYSTEMS
        ]

    assert corpus("char") != pytest.approx(corpus("13a"))  # the test can tell them apart
    assert rows["system-corpus"].pearson == pytest.approx(stats.pearsonr(corpus("char"), means)[0])
    note = next(n for n in result.notes if n.startswith("system level (system-corpus)"))
    assert "tok:char" in note, note


def test_the_table_3_matrix_is_esa_against_each_metric_and_criterion(session) -> None:
    from core.agreement.matrix import MatrixRequest, correlation_matrix, matrix_lines

    store, _made = session
    table = {r.verbalisation_id: r for r in sentence_score_table(store)}
    humans = human_values(store)
    result = correlation_matrix(store, MatrixRequest())
    assert result.subsets == ["all texts", "≥1 undetected", "≥2 undetected"]
    assert "chrf++:gold" in result.columns and HUMAN in result.columns
    assert "esa" not in result.columns  # the row is not its own column
    judged = set().union(*(set(v) for v in humans.values()))
    missing = {v for v, row in table.items() if v in judged and (row.scores.get("esa") or 1) < 1}
    assert result.row_n[("esa", "≥1 undetected")] == len(missing)
    # Metric against metric over the judged texts of the subset, as the paper's BLEU entry
    subset = sorted(missing)
    xs = [table[v].scores["esa"] for v in subset]
    chrf = [table[v].scores["chrf++:gold"] for v in subset]
    cell = result.cells[("esa", "≥1 undetected", "chrf++:gold")]
    assert cell.n == len(subset)
    assert cell.pearson == pytest.approx(stats.pearsonr(xs, chrf)[0])
    assert cell.kendall == pytest.approx(stats.kendalltau(xs, chrf)[0])
    human = humans[HUMAN]
    rated = [v for v in subset if v in human]
    assert result.cells[("esa", "≥1 undetected", HUMAN)].spearman == pytest.approx(
        stats.spearmanr([table[v].scores["esa"] for v in rated], [human[v] for v in rated])[0]
    )
    text = "\n".join(matrix_lines(result))
    for head in ("Pearson", "Spearman", "Kendall", "chrF++", "Correctness", "ESA · ≥2 undetected"):
        assert head in text


def test_the_matrix_from_the_cli_and_in_the_report(
    session, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.report import report_job

    store, _made = session
    outcome = run_job(report_job(store, by=("tier",)))
    assert isinstance(outcome, JobSucceeded), outcome
    tables = {t.name: t for t in report_tables(outcome.result)}
    matrix = tables["esa_matrix"]
    assert matrix.columns[:4] == ("coefficient", "metric", "texts", "n")
    assert "Correctness" in matrix.columns
    assert [row[2] for row in matrix.rows[:3]] == ["all texts", "≥1 undetected", "≥2 undetected"]
    assert {row[0] for row in matrix.rows} == {"Pearson", "Spearman", "Kendall"}
    path = str(store.path)
    store.close()
    status = main(["correlate", "--session", path, "--matrix", "--quiet"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out.startswith("Pearson") and "ESA · ≥1 undetected" in out
    status = main(["correlate", "--session", path, "--matrix", "--against", "nothing", "--quiet"])
    _, err = capsys.readouterr()
    assert status == 2 and "no score column or human rating 'nothing'" in err


def test_reads_kept_for_one_state_give_the_tables_read_afresh(session, monkeypatch) -> None:
    """The agreement table and the ESA matrix over several subsets, sharing one Reads (as
    the report's cache does), equal those read afresh, and each text's scores and details
    are read once for all of them."""
    import core.metrics.scoring as scoring
    import core.text_filters as text_filters
    from core.agreement import human
    from core.agreement import reads as reads_module
    from core.agreement.matrix import matrix_table
    from core.agreement.reads import Reads
    from core.agreement.table import agreement_table

    store, _made = session
    subsets = [(), ("esa.undetected>=1",), ("tier=long_tail",), ("esa.undetected>=1", "tier=head")]

    def both(where: tuple[str, ...], reads: Reads | None) -> tuple:
        request = CorrelationRequest(where=where)
        return (
            agreement_table(store, request, strict=True, reads=reads),
            matrix_table(store, where=where, strict=bool(where), reads=reads),
        )

    fresh = [both(where, None) for where in subsets]
    assert all(table is not None and matrix is not None for table, matrix in fresh)
    assert fresh[1] != fresh[0]  # the subsets differ: the comparison below can fail
    calls: dict[str, int] = {"table": 0, "details": 0, "payloads": 0}

    def counted(name: str, function):
        def call(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(
        scoring, "sentence_score_table", counted("table", scoring.sentence_score_table)
    )
    monkeypatch.setattr(
        text_filters, "sentence_details", counted("details", text_filters.sentence_details)
    )
    # The human values and the z-score-only systems are both read from these payloads.
    payloads = counted("payloads", human.webnlg_payloads)
    monkeypatch.setattr(reads_module, "webnlg_payloads", payloads)
    monkeypatch.setattr(human, "webnlg_payloads", payloads)
    reads = Reads()
    assert [both(where, reads) for where in subsets] == fresh
    assert calls == {"table": 1, "details": 1, "payloads": 1}


def test_the_report_with_its_human_judgment_tables_imports_no_scipy_stats(session) -> None:
    """Importing scipy.stats took a second of a report: the agreement table, the ESA matrix
    and the comparisons compute scipy's coefficients and p-values without it; and its HTML
    imports no matplotlib."""
    import subprocess
    import sys

    store, _made = session
    code = (
        "import sys\n"
        "from core.report import build_report\n"
        "from core.store import SessionStore\n"
        f"with SessionStore.open_read_only({str(store.path)!r}) as store:\n"
        "    report = build_report(store, by=('tier',))\n"
        "assert report.agreement_table is not None and report.matrix_table is not None\n"
        "assert report.comparisons['tier'], 'no comparison was made'\n"
        "from core.report import render_html\n"
        "assert render_html(report).count('<svg ') >= 2\n"
        "print('scipy.stats' in sys.modules, 'scipy.special' in sys.modules,\n"
        "      'matplotlib' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split()
    # The HTML's figures are written as SVG: no matplotlib either (about a second).
    assert out == ["False", "True", "False"]
