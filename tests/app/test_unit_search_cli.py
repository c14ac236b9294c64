"""``taillens units search``: end to end with a tiny random model on the embedded demo
snapshot, and bad input (template, property, model folder) exits 2 with nothing stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from core.local_models.loader import load_model
from core.store import SessionStore
from core.tiers.likelihood import sequence_loglik
from core.units.builder.saved import list_units

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models

ENTITY = "http://www.wikidata.org/entity/"


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.taillens"
    SessionStore.create(path).close()
    return path


def test_search_with_a_tiny_model_saves_real_claims_scored_by_the_model(
    capsys, session: Path, tiny_causal_lm: Path
) -> None:
    from core.wikidata.open_source import load_demo_source

    argv = [
        "units",
        "search",
        "--session",
        str(session),
        "--template",
        "?x P106 ?o . ?x P27 ?c",
        "--category",
        "Model",
        "--model",
        str(tiny_causal_lm),
        "--beam",
        "30",
        "--units",
        "4",
        "--json",
        "--quiet",
    ]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["results"]) == {"tail", "head"} and len(out["unit_ids"]) == 8
    with SessionStore.open(session) as store:
        units = list_units(store)
    loaded = load_model(tiny_causal_lm, device="cpu")
    demo = load_demo_source()
    means: dict[str, list[float]] = {"tail": [], "head": []}
    for unit in units:
        search = unit.attributes["search"]
        en = unit.triples["en"]
        assert unit.shape == "sibling" and [t.property_pid for t in en] == ["P106", "P27"]
        for t in en:
            ask = (
                f"ASK {{ <{ENTITY}{t.subject_qid}> <http://www.wikidata.org/prop/direct/"
                f"{t.property_pid}> <{ENTITY}{t.object_value}> }}"
            )
            assert demo.store.query(ask)
        # The stored score is the model's likelihood of the unit's verbalisation.
        text = " ".join(f"{t.subject} {t.predicate} {t.object}." for t in en)
        (expected,) = sequence_loglik(loaded.model, loaded.tokenizer, [text])
        assert search["loglik"] == pytest.approx(expected, abs=1e-4)
        assert search["model_fingerprint"] == loaded.fingerprint
        means[search["direction"]].append(search["loglik"])
    assert max(means["tail"]) <= min(means["head"])
    delta = sum(means["head"]) / 4 - sum(means["tail"]) / 4
    assert out["delta"] == pytest.approx(delta)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--template", "?x P17 ?a . ?b P36 ?c"], "pattern 2 at position 13"),
        (["--template", "?x P17 ?a . ?a P12345678 ?b"], "P12345678 is not a property"),
        (["--template", "?x Pxx ?a"], "'Pxx' is not a property id"),
        (["--class", "Q515 "], "not a Wikidata item id"),
        (["--beam", "0"], "--beam"),
    ],
)
def test_bad_input_exits_2_with_nothing_stored(
    capsys, session: Path, tiny_causal_lm: Path, args: list[str], words: str
) -> None:
    base = {
        "--template": "?x P17 ?a . ?a P36 ?b",
        "--class": "Q515",
        "--model": str(tiny_causal_lm),
    }
    for key, value in zip(args[::2], args[1::2], strict=True):
        base[key] = value
    argv = [
        "units",
        "search",
        "--session",
        str(session),
        "--quiet",
        *[x for kv in base.items() for x in kv],
    ]
    assert main(argv) == 2
    assert words in capsys.readouterr().err
    with SessionStore.open(session) as store:
        assert list_units(store) == []


def test_a_folder_that_is_not_a_model_exits_2(capsys, session: Path, tmp_path: Path) -> None:
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello", encoding="utf-8")
    argv = [
        "units",
        "search",
        "--session",
        str(session),
        "--template",
        "?x P17 ?a",
        "--class",
        "Q515",
        "--model",
        str(folder),
        "--quiet",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "not-a-model" in err and "Traceback" not in err
    with SessionStore.open(session) as store:
        assert list_units(store) == []
