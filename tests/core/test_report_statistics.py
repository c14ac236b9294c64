"""Multiple-testing correction, bootstrap intervals and the head-vs-tail verdict."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

import numpy as np
import pytest

from app.cli import main
from core.report import Settings, build_report, render_html
from core.report.render import comparison_table, headline_lines
from core.report.statistics import (
    _bootstrap_medians,
    adjust_p_values,
    benjamini_hochberg,
    bootstrap_medians_ci,
    holm,
)
from core.report.verdict import headline_text, verdict
from core.store import SessionStore
from tests.fixtures import report_session as fixture_module
from tests.fixtures.lazy_modules import scipy_stats as stats
from tests.fixtures.report_session import ReportSession

report_session = fixture_module.report_session  # registers the fixture here


def test_holm_by_hand() -> None:
    # m = 4; sorted 0.01, 0.02, 0.03, 0.04 get x4, x3, x2, x1: 0.04, 0.06, 0.06, 0.04,
    # then the running maximum: 0.04, 0.06, 0.06, 0.06. Given out of order.
    p = [0.03, 0.01, 0.04, 0.02]
    assert holm(p) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    # Capped at 1, and the running maximum keeps the order of the sorted p-values.
    assert holm([0.5, 0.3, 0.001]) == pytest.approx([0.6, 0.6, 0.003])
    assert holm([]).size == 0
    with pytest.raises(ValueError, match="between 0 and 1"):
        holm([0.2, 1.5])


@pytest.mark.parametrize("seed", range(5))
def test_benjamini_hochberg_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(0, 1, 40), rng.uniform(0, 0.01, 10), [0.02, 0.02, 1.0]])
    rng.shuffle(p)
    assert benjamini_hochberg(p) == pytest.approx(stats.false_discovery_control(p, method="bh"))
    assert adjust_p_values(p, "bh") == pytest.approx(stats.false_discovery_control(p))
    assert np.array_equal(adjust_p_values(p, "none"), p)
    with pytest.raises(ValueError, match="unknown correction"):
        adjust_p_values(p, "bonferroni")


def test_bootstrap_intervals_are_seeded_and_cover_the_medians() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(10, 2, 300), rng.normal(7, 2, 200)
    first = bootstrap_medians_ci(a, b, resamples=500, seed=3)
    again = bootstrap_medians_ci(list(a), list(b), resamples=500, seed=3)
    other = bootstrap_medians_ci(a, b, resamples=500, seed=4)
    assert first == again and first != other
    assert first.a[0] < np.median(a) < first.a[1]
    assert first.b[0] < np.median(b) < first.b[1]
    assert first.difference[0] < first.median_difference < first.difference[1]
    assert first.median_difference == pytest.approx(np.median(a) - np.median(b))
    assert first.difference[0] > 0  # a clear gap: the interval excludes 0
    # By hand for a tiny group: every resample of [5, 5, 5] has median 5.
    tiny = bootstrap_medians_ci([5, 5, 5], [1, 1], resamples=20, seed=0)
    assert tiny.a == (5.0, 5.0) and tiny.difference == (4.0, 4.0)
    assert bootstrap_medians_ci([], [1.0]) is None


@pytest.mark.parametrize("n", [1, 2, 7, 8, 51])
def test_drawn_medians_have_the_distribution_of_resampled_medians(n: int) -> None:
    # The order-statistic shortcut against plain resampling with replacement.
    x = np.sort(np.random.default_rng(n).integers(0, 20, n).astype(float))
    fast = _bootstrap_medians(x, 40_000, np.random.default_rng(1))
    naive = np.median(x[np.random.default_rng(2).integers(0, n, (40_000, n))], axis=1)
    possible = {(a + b) / 2 for a in x for b in x} if n % 2 == 0 else set(x)
    assert set(np.unique(fast)) <= possible
    quantiles = [0.025, 0.25, 0.5, 0.75, 0.975]
    assert np.quantile(fast, quantiles) == pytest.approx(np.quantile(naive, quantiles), abs=0.5)
    assert fast.mean() == pytest.approx(naive.mean(), abs=0.1)


def test_report_corrects_across_all_its_tests(report_session: ReportSession) -> None:
    with SessionStore.open(report_session.path) as store:
        raw = build_report(store, by=("tier", "lang"), settings=Settings(correction="none"))
        holm_report = build_report(store, by=("tier", "lang"))
        bh = build_report(store, by=("tier", "lang"), settings=Settings(correction="bh"))
    family = [c.p_value for by in ("tier", "lang") for c in raw.comparisons[by]]
    family += [
        cell.p_value
        for row in raw.study.rows
        for cell in row.cells.values()
        if cell.p_value is not None
    ]
    family += [c.p_value for c in raw.headlines]
    assert holm_report.tests_corrected == len(family) == bh.tests_corrected
    expected_holm, expected_bh = holm(family), stats.false_discovery_control(family)
    got_holm = [c.p_adjusted for by in ("tier", "lang") for c in holm_report.comparisons[by]]
    got_bh = [c.p_adjusted for by in ("tier", "lang") for c in bh.comparisons[by]]
    n = len(got_holm)
    assert got_holm == pytest.approx(expected_holm[:n])
    assert got_bh == pytest.approx(expected_bh[:n])
    # Raw p-values stay; the marks follow the corrected ones.
    separated = next(
        c
        for c in holm_report.comparisons["tier"]
        if c.metric == "bleu"
        and c.stratum_value("model") == "model-a"
        and c.stratum_value("lang") == "en"
        and c.stratum_value("quality") == "gold"
    )
    assert separated.p_value == pytest.approx(2 / 70) and separated.p_adjusted > 0.05
    assert not separated.significant
    assert any(c.significant for c in raw.comparisons["tier"])
    for report in (holm_report, bh):
        table = comparison_table(report, "tier")
        p_adj = table.columns.index("p_adjusted")
        assert {r for r, _ in table.marked} == {
            r for r, row in enumerate(table.rows) if row[p_adj] < 0.05
        }
        assert all(c == p_adj for _, c in table.marked)
    assert "Holm-corrected p < 0.05" in comparison_table(holm_report, "tier").note
    # Bootstrap intervals: in the rows, reproducible with the seed.
    row = comparison_table(holm_report, "tier").rows[0]
    columns = comparison_table(holm_report, "tier").columns
    low, high = (row[columns.index(n)] for n in ("median_diff_ci_low", "median_diff_ci_high"))
    assert low <= row[columns.index("median_diff")] <= high
    with SessionStore.open(report_session.path) as store:
        again = build_report(store, by=("tier", "lang"))
        off = build_report(store, by=("tier",), settings=Settings(bootstrap_resamples=0))
    assert comparison_table(again, "tier").rows == comparison_table(holm_report, "tier").rows
    assert off.comparisons["tier"][0].ci is None


def test_verdict_reads_the_same_in_core_cli_and_html(
    capsys: pytest.CaptureFixture[str], report_session: ReportSession, tmp_path: Path
) -> None:
    with SessionStore.open(report_session.path) as store:
        report = build_report(store, by=("tier",), settings=Settings(correction="bh"))
    ppl = next(
        c for c in report.headlines if c.metric == "ppl" and c.stratum_value("model") == "model-a"
    )
    assert verdict(ppl).worse is True  # higher perplexity in the long tail is worse
    assert str(verdict(ppl)) == "significant: long tail worse"
    text = headline_text(ppl, show_model=True, correction="bh")
    assert text.startswith("PPL (model-a): head 13.50 vs long tail 70.50, p = 1.6e-04, BH q =")
    assert text.endswith("(significant; long tail worse)")
    model_b = next(
        c for c in report.headlines if c.metric == "bleu" and c.stratum_value("model") == "model-b"
    )
    assert str(verdict(model_b)) == "not significant: long tail better"
    lines = headline_lines(report)
    html = render_html(report)
    for line in lines:
        assert escape(line) in html
    assert "significant: long tail worse" in html
    status = main(["report", "--session", str(report_session.path), "--correction", "bh"])
    out = capsys.readouterr().out
    assert status == 0 and "== Head vs long tail ==" in out
    for line in lines:
        assert line in out
    status = main(
        [
            "report",
            "--session",
            str(report_session.path),
            "--json",
            "--bootstrap",
            "200",
            "--seed",
            "5",
        ]
    )
    payload = json.loads(capsys.readouterr().out)
    assert status == 0 and payload["settings"]["correction"] == "holm"
    assert payload["settings"]["bootstrap_resamples"] == 200
    headlines = next(t for t in payload["tables"] if t["name"] == "headlines")
    assert any(row[-1] == "not significant: long tail worse" for row in headlines["rows"])
    with pytest.raises(SystemExit) as refused:  # argparse: the choices are listed
        main(["report", "--session", str(report_session.path), "--correction", "bonferroni"])
    assert refused.value.code == 2 and "choose from 'holm', 'bh', 'none'" in capsys.readouterr().err
    assert main(["report", "--session", str(report_session.path), "--bootstrap", "-1"]) == 2
    assert "--bootstrap must be 0" in capsys.readouterr().err
