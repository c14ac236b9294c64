"""``taillens units sample | list`` over the bundled demo snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from core.store import SessionStore
from core.units.builder.saved import load_unit
from core.units.shapes import Triple, unit_structure


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_sample_chains_then_list(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    session = str(tmp_path / "s.taillens")
    status, _, _ = run(capsys, "fetch", "River", "--session", session, "--limit", "200", "--quiet")
    assert status == 0
    args = (
        "units",
        "sample",
        "River",
        "--session",
        session,
        "--per-entity",
        "1",
        "--shape",
        "chain",
        "--size",
        "2",
        "--seed",
        "1",
        "--limit-entities",
        "30",
        "--source",
        "embedded",
        "--quiet",
    )
    status, out, _ = run(capsys, *args)
    assert status == 0 and "units built from 30 entities" in out
    built = int(out.split(": ", 1)[1].split()[0])
    assert built > 0

    status, out, _ = run(capsys, "units", "list", "--session", session, "--json")
    assert status == 0
    units = json.loads(out)
    assert len(units) == built
    assert all(u["shape"] == "chain" and u["size"] == 2 for u in units)
    assert all(u["origin"] == "sampled" and u["category"] == "River" for u in units)
    assert all(set(u["languages"]) == {"en", "it", "es"} for u in units)
    assert any(set(u["parallel"]) == {"en", "it", "es"} for u in units)
    with SessionStore.open(session) as store:
        for u in units:
            unit = load_unit(store, u["id"])
            triples = [
                Triple(t.subject_qid, t.property_pid, t.object_value or "")
                for t in unit.triples["en"]
            ]
            assert unit_structure(triples, unit.root_qid).shape == "chain"
            assert unit.attributes["category"] == "River"
            # The chain's first claim is the member's own, now held in the session.
            assert unit.triples["en"][0].claim_id is not None

    # Same seed, same units (the second run saves the same triples again).
    status, _, _ = run(capsys, *args)
    status, out, _ = run(capsys, "units", "list", "--session", session, "--json")
    again = json.loads(out)
    assert [u["triples"] for u in again[built:]] == [u["triples"] for u in units]

    status, out, _ = run(capsys, "units", "list", "--session", session)
    assert status == 0 and f"{2 * built} units" in out


def test_sample_needs_members_and_checks_arguments(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session = str(tmp_path / "s.taillens")
    SessionStore.create(session).close()
    status, _, err = run(capsys, "units", "sample", "River", "--session", session)
    assert status == 2 and "fetch them first" in err
    status, _, err = run(capsys, "units", "sample", "River", "--session", session, "--size", "9")
    assert status == 2 and "--size must be 1..7" in err


def test_sample_parallel_units_only(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    session = str(tmp_path / "s.taillens")
    status, _, _ = run(capsys, "fetch", "River", "--session", session, "--limit", "200", "--quiet")
    assert status == 0
    common = (
        "units",
        "sample",
        "River",
        "--session",
        session,
        "--per-entity",
        "1",
        "--shape",
        "chain",
        "--size",
        "2",
        "--seed",
        "1",
        "--limit-entities",
        "30",
        "--source",
        "embedded",
        "--quiet",
        "--json",
    )
    status, out, _ = run(capsys, *common)
    assert status == 0
    status, out, _ = run(capsys, "units", "list", "--session", session, "--json")
    free = json.loads(out)
    assert any(set(u["parallel"]) != {"en", "it", "es"} for u in free)  # the demo has gaps
    status, out, _ = run(capsys, *common, "--parallel")
    assert status == 0
    summary = json.loads(out)
    status, out, _ = run(capsys, "units", "list", "--session", session, "--json")
    parallel = json.loads(out)[len(free) :]
    assert parallel and len(parallel) == summary["units"]
    assert all(set(u["parallel"]) == {"en", "it", "es"} for u in parallel)


def test_override_names_the_entity_across_the_unit_and_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    from core.units.builder.draft import UnitDraft
    from core.units.builder.render import kept_labels, render_unit
    from core.units.builder.saved import save_unit
    from tests.fixtures.rome_italy_details import DETAILS, ITALY_CURRENCY, ROME_COUNTRY

    session = tmp_path / "s.taillens"
    with SessionStore.create(session) as store:
        draft = UnitDraft("Q220").add(ROME_COUNTRY).add(ITALY_CURRENCY)
        unit_id = save_unit(store, draft, render_unit(draft, DETAILS), source="test")
    base = ("units", "override", str(unit_id), "--session", str(session), "--lang", "es")
    status, out, _ = run(
        capsys, *base, "--position", "0", "--part", "object", "--text", "Italia", "--keep"
    )
    assert status == 0 and "in 2 places" in out and "kept for the session" in out
    with SessionStore.open(session) as store:
        es = load_unit(store, unit_id).triples["es"]
        assert es[0].display[2] == es[1].display[0] == "Italia"
        assert kept_labels(store) == {"es": {"Q38": "Italia"}}
    status, out, _ = run(capsys, *base, "--position", "1", "--part", "subject", "--clear")
    assert status == 0 and "cleared in 2 places" in out
    status, _, err = run(capsys, *base, "--position", "9", "--part", "object", "--text", "x")
    assert status == 2 and "no es triple at position 9" in err
    status, _, err = run(capsys, *base, "--position", "0", "--part", "object", "--text", " ")
    assert status == 2 and "--text is empty" in err


def test_a_sample_is_one_edit_its_command_records_and_history_undoes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from core.units.builder.saved import count_units, list_units
    from tests.fixtures.sampling_session import sampling_session

    session = tmp_path / "s.taillens"
    sampling_session(session).close()
    args = ("units", "sample", "City", "--session", str(session), "--shape", "sibling")
    status, out, _ = run(capsys, *args, "--size", "1", "--per-entity", "2", "--quiet")
    assert status == 0 and "4 units built from 2 entities" in out
    with SessionStore.open(session) as store:
        sampled = list_units(store)
    assert len(sampled) == 4

    status, out, _ = run(capsys, "history", "--session", str(session), "--json")
    (row,) = [e for e in json.loads(out) if e["kind"] == "unit"]
    assert (row["source"], row["status"]) == ("taillens units sample", "applied")
    assert row["description"] == "4 units sampled from City"

    status, out, _ = run(capsys, "history", "--session", str(session), "--undo", str(row["id"]))
    assert status == 0 and out.startswith("undone: 4 units sampled from City")
    with SessionStore.open(session) as store:
        assert count_units(store) == 0
    status, out, _ = run(capsys, "history", "--session", str(session), "--redo", str(row["id"]))
    assert status == 0
    with SessionStore.open(session) as store:
        assert list_units(store) == sampled  # the same units, under the same ids
