"""The TailNLG protocol in the report: study table with gold and silver references pooled
(TailNLG's Table 2) or split (Tables 7-10), ``rare_claims`` as its own sub-tier, and
datasets compared (TailNLG against WebNLG, §5.2 of the TailNLG paper)."""

from __future__ import annotations

import statistics

import pytest
from sqlalchemy import select

from core.errors import UserFacingError
from core.groups import dataset_name, subtier_group
from core.report import Settings, build_report, compare, load_frame
from core.report.render import comparison_table, study_grid
from core.store import SessionStore
from core.store.models import DataUnit
from tests.fixtures import report_session as fixture_module
from tests.fixtures.report_session import LANGS, MODELS, TIERS, UNITS, ReportSession, bleu, ppl

report_session = fixture_module.report_session  # registers the fixture here


@pytest.fixture
def store(report_session: ReportSession):
    with SessionStore.open(report_session.path) as opened:
        yield opened


def _units(tier: str) -> list[str]:
    return [u for u in UNITS if TIERS[u][0] == tier]


def test_rare_claims_is_its_own_subtier() -> None:
    # TailNLG labels these entries type="top_head" subtype="rare_claims".
    assert subtier_group("top_head", "rare_claims") == "rare_claims"
    assert subtier_group("top_head", "top_head") == "head"
    assert subtier_group("long_tail", "long_tail_es") == "long_tail_es"


def test_dataset_names() -> None:
    assert dataset_name({"format": "tailnlg"}) == "TailNLG"
    assert dataset_name({"format": "webnlg"}) == "WebNLG"
    assert dataset_name({"format": "wdv"}) == "WDV"
    assert dataset_name(None) == dataset_name({}) == "Wikidata"


def test_study_table_pools_gold_and_silver(store: SessionStore) -> None:
    report = build_report(store, settings=Settings(study_references="pooled"))
    table = study_grid(report.study)
    assert table.name == "study_pooled" and "pooled" in table.title
    assert table.columns[:3] == ("model", "type", "lang")
    rows = {row[:3]: dict(zip(table.columns[3:], row[3:], strict=True)) for row in table.rows}
    for model in MODELS:
        for tier in ("head", "long_tail"):
            for lang in LANGS:
                # Every item has a gold and a silver BLEU: it counts once, their mean.
                expected = statistics.fmean(
                    statistics.fmean([bleu(model, u, lang, "gold"), bleu(model, u, lang, "silver")])
                    for u in _units(tier)
                )
                assert rows[(model, tier, lang)]["BLEU"] == pytest.approx(expected)
                assert rows[(model, tier, lang)]["PPL"] == pytest.approx(
                    statistics.fmean(ppl(model, u, lang) for u in _units(tier))
                )


def test_study_table_splits_gold_and_silver(store: SessionStore) -> None:
    report = build_report(
        store, settings=Settings(study_references="split", correction="none", statistic="median")
    )
    table = study_grid(report.study)
    assert table.name == "study_split"
    assert table.columns[:4] == ("model", "type", "lang", "refs")
    rows = {row[:4]: dict(zip(table.columns[4:], row[4:], strict=True)) for row in table.rows}
    assert {key[3] for key in rows} == {"gold", "silver"}
    for quality in ("gold", "silver"):
        cell = rows[("model-a", "long_tail", "it", quality)]
        assert cell["BLEU"] == pytest.approx(
            statistics.median(bleu("model-a", u, "it", quality) for u in _units("long_tail"))
        )
        # PPL has no references: each quality's row over the items that have them.
        assert cell["PPL"] == pytest.approx(
            statistics.median(ppl("model-a", u, "it") for u in _units("long_tail"))
        )
    # Marks compare with head of the same model, language and references.
    marked = {table.rows[r][:4] for r, _ in table.marked}
    assert ("model-a", "long_tail", "en", "gold") in marked
    assert ("model-a", "long_tail", "en", "silver") in marked
    with pytest.raises(UserFacingError, match="references are"):
        build_report(store, settings=Settings(study_references="both"))


def test_datasets_are_compared_within_model_language_and_quality(store: SessionStore) -> None:
    with store.unit_of_work() as db:
        for unit in db.scalars(select(DataUnit)):
            fmt = "tailnlg" if unit.uid in ("u5", "u6", "u7", "u8") else "webnlg"
            unit.attributes = {**(unit.attributes or {}), "format": fmt}
    frame = load_frame(store)
    assert {o.item.dataset for o in frame.observations} == {"TailNLG", "WebNLG"}
    results = compare(frame, "dataset", metrics=["bleu"])
    assert {(c.group_a, c.group_b) for c in results} == {("TailNLG", "WebNLG")}
    one = next(
        c
        for c in results
        if c.stratum == (("model", "model-a"), ("lang", "en"), ("quality", "gold"))
    )
    assert one.a.n == one.b.n == 4
    assert one.a.mean == pytest.approx(
        statistics.fmean(bleu("model-a", u, "en", "gold") for u in _units("long_tail"))
    )
    report = build_report(store, by=("dataset",), metrics=["bleu"])
    assert comparison_table(report, "dataset").rows
