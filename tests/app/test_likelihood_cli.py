"""``taillens likelihood``: scoring, resume, the model_tail cut-off, disagreements, bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from sqlalchemy import select

from app.cli import main
from core.store import SessionStore
from core.store.models import CategoryMember, Entity
from core.tiers.likelihood import model_key
from core.tiers.model_tail import load_cutoff
from tests.fixtures.likelihood_session import CITIES, seed_city_session

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return seed_city_session(tmp_path / "cities.taillens", empty_category=True)


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_scores_resumes_and_reports_correlations(capsys, session, tiny_causal_lm) -> None:
    base = [
        "likelihood",
        "City",
        "--session",
        str(session),
        "--model",
        str(tiny_causal_lm),
        "--device",
        "cpu",
        "--quiet",
        "--json",
    ]
    first = _json(capsys, base)
    assert first["summary"]["scored"] == len(CITIES) and first["summary"]["skipped"] == 0
    assert [c["against"] for c in first["correlations"]] == ["statements", "sitelinks"]
    assert all(c["n"] == len(CITIES) for c in first["correlations"])
    second = _json(capsys, base)
    assert second["summary"]["scored"] == 0 and second["summary"]["skipped"] == len(CITIES)
    assert second["correlations"] == first["correlations"]


def test_cutoff_stores_the_sub_tier_and_disagreements_list(capsys, session, tiny_causal_lm) -> None:
    base = [
        "likelihood",
        "City",
        "--session",
        str(session),
        "--model",
        str(tiny_causal_lm),
        "--device",
        "cpu",
        "--quiet",
    ]
    payload = _json(capsys, [*base, "--cutoff", "auto", "--json"])
    cutoff = payload["model_tail"]["cutoff"]
    with SessionStore.open(session) as store:
        assert load_cutoff(store, "City").cutoff == cutoff
        assert load_cutoff(store, "City").model == model_key(tiny_causal_lm)
        with store.unit_of_work() as db:
            tiers = db.execute(select(CategoryMember.model_tier)).scalars().all()
    assert tiers.count("model_tail") == payload["model_tail"]["counts"]["model_tail"] > 0
    # The stored cut-off is the one --disagreements uses by default.
    listed = _json(capsys, [*base, "--disagreements", "--json"])
    assert listed["cutoff"] == cutoff
    assert main([*base, "--disagreements"]) == 0
    out = capsys.readouterr().out
    assert f"Disagreements at cut-off {cutoff:.4f}: {len(listed['disagreements'])}" in out
    for d in listed["disagreements"]:
        assert f"  {d['qid']}  {d['label']}  {d['kind']}" in out
    # A cut-off above every likelihood puts every member in the model's tail.
    payload = _json(capsys, [*base, "--cutoff", "0", "--json"])
    assert payload["model_tail"]["counts"] == {
        "model_tail": len(CITIES),
        "model_head": 0,
        "unscored": 0,
    }
    with SessionStore.open(session) as store, store.unit_of_work() as db:
        tiers = dict(
            db.execute(
                select(Entity.qid, CategoryMember.model_tier).join(
                    CategoryMember, CategoryMember.entity_id == Entity.id
                )
            ).all()
        )
    assert set(tiers.values()) == {"model_tail"}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["City", "--model", "{notmodel}"], "not a text generation model"),
        (["City", "--model", "{missing}"], "no model folder"),
        (["Town", "--model", "{model}"], "category 'Town' has no members"),
        (["City", "--model", "{model}", "--lang", "es"], "has a label in 'es'"),
        (["City", "--model", "{model}", "--lang", "de"], "unknown language 'de'"),
        (["City", "--model", "{model}", "--cutoff", "soon"], "a cut-off is a mean log-likelihood"),
    ],
)
def test_bad_input_exits_2_with_a_message_and_changes_nothing(
    capsys, session, tiny_causal_lm, tmp_path, argv, message
) -> None:
    notmodel = tmp_path / "notmodel"
    notmodel.mkdir()
    (notmodel / "config.json").write_text(json.dumps({"architectures": ["BertModel"]}))
    values = {"model": tiny_causal_lm, "notmodel": notmodel, "missing": tmp_path / "none"}
    argv = [a.format(**values) for a in argv]
    before = _digest(session)
    try:
        code = main(["likelihood", *argv, "--session", str(session), "--quiet"])
    except SystemExit as exit_:  # argparse refuses a malformed option itself
        code = exit_.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert _digest(session) == before
