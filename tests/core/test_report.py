"""The bias report on the fixture session: comparisons, study table, plots, CSV and HTML."""

from __future__ import annotations

import csv
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from sqlalchemy import select

from core.errors import UserFacingError
from core.groups import category_name, subtier_group, tier_group
from core.report import (
    NothingToCompareError,
    PlotSpec,
    Settings,
    build_report,
    compare,
    default_pairs,
    load_frame,
    plot_specs,
    render_html,
    write_csv,
    write_html,
)
from core.report.figures import box_figure
from core.report.render import comparison_table, report_tables, study_grid
from core.store import SessionStore
from core.store.models import Score
from tests.fixtures import report_session as fixture_module
from tests.fixtures.lazy_modules import scipy_stats as stats
from tests.fixtures.report_session import (
    BASE,
    PPL,
    UNITS,
    ReportSession,
    bleu,
    build_report_session,
    ppl,
    ref_ppl,
)

report_session = fixture_module.report_session  # registers the fixture here


@pytest.fixture
def store(report_session: ReportSession):
    with SessionStore.open(report_session.path) as opened:
        yield opened


def _find(comparisons, metric: str, **stratum: str):
    found = [
        c
        for c in comparisons
        if c.metric == metric and all(c.stratum_value(k) == v for k, v in stratum.items())
    ]
    assert len(found) == 1, found
    return found[0]


def test_groups_follow_the_conventions() -> None:
    assert tier_group("top_head") == "head" and tier_group(None) == "(none)"
    assert subtier_group("long_tail", "long_tail_it") == "long_tail_it"
    assert subtier_group("top_head", "top_head") == "head"
    assert category_name(None, {"entry": {"category": "Airport"}}, {}) == "Airport"
    assert default_pairs("tier", ["long_tail", "head", "torso"]) == [
        ("head", "torso"),
        ("head", "long_tail"),
    ]
    assert default_pairs("lang", ["it", "en", "es"]) == [("en", "it"), ("en", "es"), ("it", "es")]


def test_frame_holds_sentence_scores_and_human_ratings(store: SessionStore) -> None:
    frame = load_frame(store)
    counts = frame.counts()
    # 2 models × 8 units × 2 languages, and twice that for gold + silver; corpus rows left out
    assert counts == {
        "bleu": 64,
        "chrf++": 64,
        "ppl": 32,
        "entity_ppl": 32,
        "human_fluency": 5,
        "human_adequacy": 5,
    }
    assert frame.metrics[:3] == ["bleu", "chrf++", "ppl"]
    assert [r.name for r in frame.runs] == ["model-a", "model-b"]
    assert ("bleu", "nrefs:1|case:mixed|tok:13a|v:2.6") in frame.signatures
    # The panel's cheap listing (one aggregate query) agrees with the frame, in its order.
    from core.report.data import available_metrics

    assert available_metrics(store) == [(m, counts[m]) for m in frame.metrics]


def test_head_against_long_tail_within_model_language_and_quality(store: SessionStore) -> None:
    frame = load_frame(store)
    results = compare(frame, "tier")
    a = _find(results, "bleu", model="model-a", lang="en", quality="gold")
    assert (a.group_a, a.group_b) == ("head", "long_tail")
    assert (a.a.n, a.a.median, a.a.mean, a.a.iqr) == (4, 65.0, 65.0, 15.0)
    assert (a.b.median, a.b.mean) == (25.0, 25.0)
    assert a.p_value == pytest.approx(2 / 70) and a.significant and a.effect_size == 1.0
    b = _find(results, "bleu", model="model-b", lang="it", quality="silver")
    expected = stats.mannwhitneyu(
        [v - 10 for v in BASE[("model-b", "head")]],
        [v - 10 for v in BASE[("model-b", "long_tail")]],
    ).pvalue
    assert b.p_value == pytest.approx(expected) and not b.significant
    assert b.effect_size == pytest.approx(-0.25)  # U = 6 of 16 pairs
    ppl = _find(results, "ppl", model="model-a", lang="it")
    assert ppl.stratum_value("quality") == "" and ppl.a.mean == 14.0 and ppl.b.mean == 71.0
    human = _find(results, "human_fluency", model="model-a", lang="en")
    assert human.p_value == pytest.approx(stats.mannwhitneyu([14 / 3, 4, 4], [2, 2.5]).pvalue)


def test_other_dimensions(store: SessionStore) -> None:
    frame = load_frame(store)
    quality = _find(compare(frame, "quality", metrics=["bleu"]), "bleu", model="model-a", lang="en")
    gold = [
        bleu("model-a", u, "en", "gold") for u in ("u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8")
    ]
    assert (quality.group_a, quality.group_b) == ("gold", "silver")
    assert quality.p_value == pytest.approx(stats.mannwhitneyu(gold, [g - 5 for g in gold]).pvalue)
    lang = compare(frame, "lang", metrics=["ppl"])
    assert {(c.group_a, c.group_b) for c in lang} == {("en", "it")} and len(lang) == 2
    models = _find(compare(frame, "model", metrics=["ppl"]), "ppl", lang="en")
    assert (models.group_a, models.group_b) == ("model-a", "model-b")
    subtiers = compare(frame, "subtier", metrics=["ppl"])
    pairs = {(c.group_a, c.group_b) for c in subtiers}
    assert pairs == {("head", "long_tail_en"), ("head", "long_tail_it"), ("head", "long_tail_es")}
    en = _find(
        [c for c in subtiers if c.group_b == "long_tail_en"], "ppl", model="model-a", lang="en"
    )
    assert en.b.n == 2 and en.b.mean == (40 + 80) / 2  # u5 and u7
    chosen = compare(frame, "subtier", metrics=["ppl"], pairs=[("long_tail_it", "head")])
    assert {(c.group_a, c.group_b) for c in chosen} == {("long_tail_it", "head")}


def test_study_table_layout_and_marks(store: SessionStore) -> None:
    # Uncorrected marks, as the TailNLG tables have them (with Holm, 4 against 4 items
    # leave nothing significant: see tests/core/test_report_statistics.py).
    report = build_report(store, by=("tier",), settings=Settings(correction="none"))
    table = study_grid(report.study)
    assert table.columns == ("model", "type", "lang", "BLEU", "chrF++", "PPL")
    rows = {row[:3]: row[3:] for row in table.rows}
    assert rows[("model-a", "head", "en")] == (65.0, 75.0, 13.0)
    assert rows[("model-a", "long_tail", "it")] == (20.0, 30.0, 71.0)
    assert rows[("model-b", "long_tail", "en")] == (50.0, 60.0, 22.0)
    marked_rows = {table.rows[r][:3] for r, _ in table.marked}
    assert marked_rows == {("model-a", "long_tail", "en"), ("model-a", "long_tail", "it")}
    silver = build_report(store, settings=Settings(study_quality="silver", statistic="median"))
    assert {r[:3]: r[3] for r in study_grid(silver.study).rows}[("model-a", "head", "en")] == 60.0


def test_report_tables_notes_and_errors(store: SessionStore, tmp_path: Path) -> None:
    report = build_report(store, by=("tier", "lang"), metrics=["bleu", "human_adequacy"])
    names = [t.name for t in report_tables(report)]
    assert names == [
        "runs_used",
        "counts",
        "headlines",
        "study_gold",
        "compare_tier",
        "compare_lang",
        "annotations",
        "agreement",
        "runs",
        "signatures",
    ]
    tier = comparison_table(report, "tier")
    assert {row[0] for row in tier.rows} == {"bleu", "human_adequacy"}
    assert len(tier.rows) == 2 * 2 * 2 + 1  # bleu: models × langs × qualities; human: 1
    annotations = next(t for t in report_tables(report) if t.name == "annotations")
    assert annotations.rows[0][:3] == ("all", 5, 12)
    with pytest.raises(UserFacingError, match="no scores for meteor"):
        build_report(store, metrics=["meteor"])
    with pytest.raises(UserFacingError, match="Cannot compare by 'colour'"):
        build_report(store, by=("colour",))
    with pytest.raises(UserFacingError, match="repetitions"):
        build_report(store, settings=Settings(repetitions=0))
    one_tier = build_report(store, by=("tier",), pairs=[("head", "torso")])
    assert one_tier.comparisons["tier"] == [] and "nothing to compare" in one_tier.notes[0]
    with (
        SessionStore.create(tmp_path / "empty.taillens") as empty,
        pytest.raises(NothingToCompareError, match="no per-item scores"),
    ):
        build_report(empty)


def test_duplicate_score_rows_count_once(
    store: SessionStore, report_session: ReportSession
) -> None:
    vid = report_session.verbalisations[("model-a", "u1", "en")]
    with store.unit_of_work() as db:
        db.add(
            Score(
                metric="ppl",
                value=1000.0,
                level="sentence",
                verbalisation_id=vid,
                run_id=report_session.runs["model-a"],
                lang="en",
                details={},
            )
        )
    frame = load_frame(store)
    values = [
        o.value for o in frame.observations if o.metric == "ppl" and o.verbalisation_id == vid
    ]
    assert values == [1000.0]  # the newest row


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: dict[str, int] = {}
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for name, value in attrs:
            if name in ("src", "href") and value and not value.startswith("#"):
                self.external.append(value)


def test_html_report_is_self_contained(store: SessionStore, tmp_path: Path) -> None:
    report = build_report(store, by=("tier", "quality"))
    written = write_html(report, tmp_path / "report.html")
    text = written.path.read_text(encoding="utf-8")
    parser = _Parser()
    parser.feed(text)
    assert parser.tags["table"] == written.tables == len(report_tables(report)) - 1  # runs: <pre>
    assert parser.tags["svg"] == written.plots >= 9 and not parser.external
    assert "Entity perplexity against statement count" in text
    assert "nrefs:1|case:mixed|tok:13a|v:2.6" in text  # metric signatures
    assert "Verbalizza: {triples}" in text and "&quot;temperature&quot;: 0.7" in text
    assert "class='sig'" in text
    assert render_html(report).count("<svg ") == written.plots
    ids = re.findall(r'\sid="([^"]+)"', text)  # several inline figures, one id namespace
    assert ids and len(ids) == len(set(ids))


def test_every_plot_is_well_formed_svg(store: SessionStore) -> None:
    report = build_report(store)
    specs = plot_specs(report)
    kinds = {(s.kind, s.metric) for s in specs}
    assert ("scatter", "entity_ppl") in kinds and ("box", "ppl") in kinds
    assert ("distribution", "bleu") in kinds
    for spec in specs:
        root = ET.fromstring(spec.svg())
        assert root.tag.endswith("svg")
    ppl = next(s for s in specs if s.kind == "box" and s.metric == "ppl")
    assert ppl.log10 and "log10 axis" in ppl.svg()
    assert [g[0] for g in ppl.groups] == [
        "model-a · head",
        "model-a · long_tail",
        "model-b · head",
        "model-b · long_tail",
    ]
    assert sorted(ppl.groups[1][1]) == sorted(
        [float(v) for v in PPL[("model-a", "long_tail")]]
        + [float(v) + 1 for v in PPL[("model-a", "long_tail")]]
    )
    assert "no values" in PlotSpec("box", "t", "bleu", groups=(("x", ()),)).svg()
    assert [t.get_text() for t in box_figure([("x", [])], title="t").axes[0].texts] == ["no values"]
    # Axes follow the data within the metric's range: BLEU's never runs below 0 (it ran to
    # -25 in the hand-written SVG), perplexities are on a log10 axis.
    for spec in specs:
        axes = spec.figure().axes[0]
        if spec.metric == "bleu":
            low, high = axes.get_xlim() if spec.kind == "distribution" else axes.get_ylim()
            assert 0 <= low < high <= 100
    assert ppl.figure().axes[0].get_yscale() == "log"


def test_reference_texts_stay_out_of_the_model_output_plots(tmp_path: Path) -> None:
    # PPL is reference-free: the reference texts' own PPL (gold and silver texts) must not
    # be pooled with the models' texts, nor give the plot a "gold references" title.
    built = build_report_session(tmp_path / "refs.taillens", reference_scores=True)
    with SessionStore.open(built.path) as store:
        specs = plot_specs(build_report(store))
    ppl_specs = {(s.kind, s.title): s for s in specs if s.metric == "ppl"}
    assert set(ppl_specs) == {
        ("box", "PPL by model and tier"),
        ("distribution", "PPL: distribution by tier (all models' texts)"),
        ("box", "PPL of reference texts by reference quality and tier"),
    }
    pooled = ppl_specs[("distribution", "PPL: distribution by tier (all models' texts)")]
    tier_of = {u: "head" if n < 4 else "long_tail" for n, u in enumerate(UNITS)}
    for tier, values in pooled.groups:
        assert sorted(values) == sorted(
            ppl(model, u, lang)
            for model in ("model-a", "model-b")
            for u in UNITS
            if tier_of[u] == tier
            for lang in ("en", "it")
        )
    by_model = ppl_specs[("box", "PPL by model and tier")]
    assert [g[0] for g in by_model.groups] == [
        "model-a · head",
        "model-a · long_tail",
        "model-b · head",
        "model-b · long_tail",
    ]
    references = ppl_specs[("box", "PPL of reference texts by reference quality and tier")]
    assert references.log10
    assert [(g[0], sorted(g[1])) for g in references.groups] == [
        (
            f"{q} references · {tier}",
            sorted(
                ref_ppl(u, lang, q) for u in UNITS if tier_of[u] == tier for lang in ("en", "it")
            ),
        )
        for q in ("gold", "silver")
        for tier in ("head", "long_tail")
    ]
    bleu_titles = [s.title for s in specs if s.metric == "bleu"]
    assert "BLEU by model and tier, against gold references" in bleu_titles


def test_csv_export_writes_every_table(store: SessionStore, tmp_path: Path) -> None:
    report = build_report(store, by=("tier", "model"), settings=Settings(correction="none"))
    written = write_csv(report, tmp_path / "csv")
    names = sorted(p.name for p in written)
    assert names == sorted(
        [
            "counts.csv",
            "study_gold.csv",
            "study_gold_marks.csv",
            "compare_tier.csv",
            "compare_model.csv",
            "annotations.csv",
            "agreement.csv",
            "runs.csv",
            "runs_used.csv",
            "signatures.csv",
            "headlines.csv",
            "headlines_marks.csv",
        ]
    )
    with (tmp_path / "csv" / "study_gold.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["model", "type", "lang", "BLEU", "chrF++", "PPL"]
    assert rows[1] == ["model-a", "head", "en", "65.0", "75.0", "13.0"]
    with (tmp_path / "csv" / "compare_tier.csv").open(newline="", encoding="utf-8") as handle:
        tier = list(csv.DictReader(handle))
    first = next(
        r
        for r in tier
        if r["metric"] == "bleu"
        and r["model"] == "model-a"
        and r["lang"] == "en"
        and r["quality"] == "gold"
    )
    assert float(first["p_value"]) == pytest.approx(2 / 70) and first["significant"] == "True"
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserFacingError, match="not a folder"):
        write_csv(report, tmp_path / "file")


def test_session_without_scores_reports_human_ratings_only(tmp_path: Path) -> None:
    built = build_report_session(tmp_path / "ratings.taillens", scores=False)
    with SessionStore.open(built.path) as store:
        report = build_report(store)
    assert report.study is None
    assert {c.metric for c in report.comparisons["tier"]} == {"human_fluency", "human_adequacy"}


def test_report_runs_as_a_job_with_progress(store: SessionStore) -> None:
    from core.jobs import CancelToken, JobSucceeded, JobWasCancelled, run_job
    from core.report import report_job

    seen = []
    outcome = run_job(report_job(store, by=("tier", "lang")), CancelToken(), seen.append)
    assert isinstance(outcome, JobSucceeded) and outcome.result.comparisons["lang"]
    assert seen and seen[-1].done == seen[-1].total == 5
    token = CancelToken()
    token.cancel()
    assert isinstance(run_job(report_job(store), token, seen.append), JobWasCancelled)


def test_scores_of_reference_texts_compare_gold_and_silver(
    store: SessionStore, report_session: ReportSession
) -> None:
    from core.report.data import REFERENCES_MODEL
    from core.store.models import UnitReference

    with store.unit_of_work() as db:
        refs = db.execute(
            select(UnitReference.id, UnitReference.quality).where(UnitReference.lang == "en")
        ).all()
        for n, (ref_id, quality) in enumerate(refs):
            # silver texts worse: ESA 0.5 + n/100 against 0.9 + n/1000; no quality in details
            value = 0.9 + n / 1000 if quality == "gold" else 0.5 + n / 100
            db.add(
                Score(
                    metric="esa",
                    value=value,
                    level="sentence",
                    reference_id=ref_id,
                    lang="en",
                    details={},
                )
            )
    frame = load_frame(store)
    esa = [o for o in frame.observations if o.metric == "esa"]
    assert len(esa) == 16 and {o.model for o in esa} == {REFERENCES_MODEL}
    result = _find(compare(frame, "quality", metrics=["esa"]), "esa", lang="en")
    assert (result.a.n, result.b.n) == (8, 8) and result.significant
    assert result.effect_size == 1.0
    with store.unit_of_work() as db:
        db.add(
            Score(
                metric="ppl",
                value=5.0,
                level="sentence",
                reference_id=refs[0][0],
                lang="en",
                details={},
            )
        )
    study = build_report(store).study
    assert all(row.model != REFERENCES_MODEL for row in study.rows)  # models' texts only
