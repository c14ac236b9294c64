"""Each (unit, language, candidate) of a model counts once in the report: overlapping runs
are never pooled; the report says which runs and how many items it used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from core.report import build_report, load_frame
from core.report.data import UnknownRunError
from core.report.render import runs_used_table
from core.store import SessionStore
from core.store.models import ModelRun, Score, Verbalisation
from tests.fixtures import report_session as fixture_module
from tests.fixtures.report_session import UNITS, ReportSession, bleu

report_session = fixture_module.report_session  # registers the fixture here

RERUN = ("u1", "u2", "u5")  # a subset of model-a's units, verbalised again in English
RERUN_BLEU = 1.0  # every re-run item scores this (gold and silver)


def rerun_subset(session: ReportSession) -> int:
    """A second run of model-a over RERUN in English, scored; returns its id."""
    with SessionStore.open(session.path) as store, store.unit_of_work() as db:
        run = ModelRun(
            kind="causal",
            model_id="/models/model-a",
            system_name="model-a",
            status="finished",
            seed=8,
            parameters={},
            prompt_templates={},
            software={},
        )
        db.add(run)
        db.flush()
        for uid in RERUN:
            v = Verbalisation(
                run_id=run.id,
                unit_id=session.units[uid],
                lang="en",
                candidate_index=0,
                raw_output="again",
                text="again",
                parse_ok=True,
            )
            db.add(v)
            db.flush()
            for quality in ("gold", "silver"):
                db.add(
                    Score(
                        metric="bleu",
                        value=RERUN_BLEU,
                        details={"quality": quality},
                        level="sentence",
                        verbalisation_id=v.id,
                        run_id=run.id,
                        lang="en",
                    )
                )
        return run.id


def bleu_items(
    frame, model: str = "model-a", lang: str = "en", quality: str = "gold"
) -> dict[int, float]:
    values = {}
    for o in frame.observations:
        if (o.metric, o.model, o.lang, o.quality) == ("bleu", model, lang, quality):
            assert o.item.unit_id not in values, "an item counted twice"
            values[o.item.unit_id] = o.value
    return values


def test_a_rerun_replaces_its_items_instead_of_adding_them(report_session: ReportSession) -> None:
    first = report_session.runs["model-a"]
    with SessionStore.open(report_session.path) as store:
        before = bleu_items(load_frame(store))
    assert len(before) == len(UNITS)
    second = rerun_subset(report_session)
    with SessionStore.open(report_session.path) as store:
        latest = load_frame(store)
        only_first = load_frame(store, runs=[first])
        only_second = load_frame(store, runs=[second])
        both = load_frame(store, runs=[first, second])
        with pytest.raises(UnknownRunError, match=r"run 99 is not in this session.*runs are"):
            load_frame(store, runs=[first, 99])
        report = build_report(store, by=("tier",), metrics=["bleu"])
    units = report_session.units
    # Default: the latest output of each item, and still one value per item.
    after = bleu_items(latest)
    assert len(after) == len(UNITS)
    for uid in UNITS:
        expected = RERUN_BLEU if uid in RERUN else bleu("model-a", uid, "en", "gold")
        assert after[units[uid]] == expected
    use = {u.run_id: u for u in latest.run_use}
    per_run_items = 2 * len(UNITS) - len(RERUN)  # both languages, minus the re-run ones
    assert use[second].items == len(RERUN) and use[first].items == per_run_items
    assert use[first].superseded == len(RERUN) and use[first].superseded_by == (second,)
    assert any("overlap on 3 items" in n and "counted once" in n for n in latest.notes)
    # Picking runs: only theirs; two overlapping picked runs are not pooled either.
    assert bleu_items(only_first) == before
    assert set(bleu_items(only_second)) == {units[u] for u in RERUN}
    assert bleu_items(both) == after and both.notes
    assert not only_first.notes
    # The report lists the runs it used and its item count; head / en / gold stays 4.
    table = runs_used_table(report)
    assert {row[0]: row[2] for row in table.rows}[second] == len(RERUN)
    assert "latest output" in table.note
    head = next(
        c
        for c in report.comparisons["tier"]
        if c.stratum_value("model") == "model-a"
        and c.stratum_value("lang") == "en"
        and c.stratum_value("quality") == "gold"
    )
    assert head.a.n == 4 and head.b.n == 4
    assert any("overlap" in n for n in report.notes)


def test_cli_runs_flag_and_a_run_that_no_longer_exists(
    capsys: pytest.CaptureFixture[str], report_session: ReportSession, tmp_path: Path
) -> None:
    second = rerun_subset(report_session)
    session = str(report_session.path)
    assert main(["report", "--session", session, "--metrics", "bleu", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    used = next(t for t in payload["tables"] if t["name"] == "runs_used")
    assert payload["runs"] is None
    assert sum(row[2] for row in used["rows"]) == 2 * 2 * len(UNITS)  # 2 models × 2 langs × 8
    assert main(["report", "--session", session, "--runs", str(second)]) == 0
    out = capsys.readouterr().out
    assert "== Runs used ==" in out and f"runs picked: {second}" in out
    assert f"{len(RERUN)} items in all" in out
    # A picked run deleted since: a clear message and exit 2.
    with SessionStore.open(report_session.path) as store, store.unit_of_work() as db:
        db.delete(db.get(ModelRun, second))
    assert main(["report", "--session", session, "--runs", f"{second}"]) == 2
    err = capsys.readouterr().err
    assert f"run {second} is not in this session" in err and "Traceback" not in err
    assert main(["report", "--session", session, "--runs", "a,b"]) == 2
    assert "--runs takes run ids" in capsys.readouterr().err


def test_report_says_when_units_were_built_under_another_tier(
    report_session: ReportSession,
) -> None:
    from core.store.models import Category, CategoryMember, DataUnit, Entity

    with SessionStore.open(report_session.path) as store:
        assert not any("another tier" in n for n in build_report(store, metrics=["bleu"]).notes)
        with store.unit_of_work() as db:
            unit = db.get(DataUnit, report_session.units["u1"])  # built as head, in City
            entity = db.query(Entity).filter_by(qid=unit.root_qid).one()
            city = db.query(Category).filter_by(name="City").one()
            db.add(CategoryMember(category_id=city.id, entity_id=entity.id, tier="long_tail"))
        notes = build_report(store, metrics=["bleu"]).notes
    note = next(n for n in notes if "another tier" in n)
    assert note.startswith("1 of the report's units") and "built as head" in note
    assert "long_tail now" in note
