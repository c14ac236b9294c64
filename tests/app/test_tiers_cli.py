"""``taillens tiers``: tiers without the window, the same as a drag and as
``taillens distribution``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from app.cli import main
from core.store import SessionStore
from core.tiers.cutoffs import Distribution, TierSettings, settings_for_drag, tier_category
from core.tiers.stored import load_member_tiers, load_tier_settings
from core.wikidata.cache import load_category


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def fetched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    session = tmp_path_factory.mktemp("tiers") / "s.taillens"
    assert main(["fetch", "Airport", "--session", str(session), "--limit", "400", "--quiet"]) == 0
    return session


def test_tiers_are_empty_after_fetch_and_sampling_says_why(
    capsys: pytest.CaptureFixture[str], fetched: Path, tmp_path: Path
) -> None:
    session = tmp_path / "s.taillens"
    session.write_bytes(fetched.read_bytes())
    with SessionStore.open(session) as store:
        assert not any(t for t, _ in load_member_tiers(store, "Airport").values())
    status, _, err = run(
        capsys,
        "units",
        "sample",
        "Airport",
        "--session",
        str(session),
        "--tier",
        "long_tail_en",
        "--source",
        "cache",
        "--quiet",
    )
    assert status == 2
    assert "no member of 'Airport' has a tier yet" in err and "taillens tiers" in err
    assert "Traceback" not in err
    status, _, err = run(
        capsys, "verbalise", "--session", str(session), "--units", "tier:long_tail_en"
    )
    assert status == 2 and "no unit has the tier 'long_tail_en'" in err
    assert "taillens tiers" in err


def test_tiers_command_writes_what_a_drag_writes_and_distribution_agrees(
    capsys: pytest.CaptureFixture[str], fetched: Path, tmp_path: Path
) -> None:
    session = tmp_path / "s.taillens"
    session.write_bytes(fetched.read_bytes())
    with SessionStore.open(session) as store:
        table = load_category(store, "Airport")
    dist = Distribution(table.statements)
    # What the Browser stores for a Pareto line dragged to 3.3 statements.
    line = float(np.median(table.statements)) + 0.3
    dragged = settings_for_drag(dist, TierSettings(), "pareto", line)
    expected = tier_category(dist, dragged)

    status, out, _ = run(
        capsys,
        "tiers",
        "airport",
        "--session",
        str(session),
        "--rule",
        "pareto",
        "--share",
        repr(dragged.share),
        "--json",
    )
    assert status == 0
    printed = json.loads(out)
    assert printed["head_line"] == expected.head_line
    assert printed["tiers"]["head"] == expected.summary.tiers[0].size
    assert printed["members_written"] == len(table.qids)
    with SessionStore.open(session) as store:  # reopened: the same split
        saved = load_member_tiers(store, "Airport")
        settings = load_tier_settings(store, "Airport")
    assert settings == dragged
    heads = {q for q, (t, _) in saved.items() if t == "head"}
    assert heads == {
        q for q, c in zip(table.qids, table.statements, strict=True) if c >= expected.head_line
    }
    assert any(s for _, s in saved.values())  # sub-tiers written too

    status, out, _ = run(
        capsys,
        "distribution",
        "Airport",
        "--session",
        str(session),
        "--source",
        "cache",
        "--share",
        repr(dragged.share),
        "--json",
        "--quiet",
    )
    assert status == 0
    result = json.loads(out)
    assert result["cutoffs"]["pareto_value"] == expected.head_line
    assert result["tiers"]["by_pareto_cutoff"]["head"]["size"] == len(heads)

    # Head–tail rule with a torso line, in text.
    status, out, _ = run(
        capsys,
        "tiers",
        "Airport",
        "--session",
        str(session),
        "--rule",
        "head-tail",
        "--fraction",
        "0.3",
        "--torso",
        "2",
    )
    assert status == 0 and "head fraction 0.3" in out and "torso" in out
    with SessionStore.open(session) as store:
        tiers = {t for t, _ in load_member_tiers(store, "Airport").values()}
    assert tiers <= {"head", "torso", "long_tail"} and "head" in tiers


def test_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, fetched: Path) -> None:
    empty = tmp_path / "empty.taillens"
    SessionStore.create(empty).close()
    status, _, err = run(capsys, "tiers", "City", "--session", str(empty))
    assert status == 2 and "has no members" in err and "taillens fetch" in err
    status, _, err = run(capsys, "tiers", "Nowhere", "--session", str(fetched))
    assert status == 2 and "no category named 'Nowhere'" in err
    status, _, err = run(capsys, "tiers", "Airport", "--session", str(fetched), "--share", "2")
    assert status == 2 and "(0, 1]" in err


def test_units_remember_their_roots_tier_and_say_when_it_changed(
    qtbot, capsys: pytest.CaptureFixture[str], fetched: Path, tmp_path: Path
) -> None:
    from core.tiers.stored import unit_tier_changes
    from core.units.builder.saved import list_units
    from widgets.units import UnitsPanel

    session = tmp_path / "s.taillens"
    session.write_bytes(fetched.read_bytes())
    assert run(capsys, "tiers", "Airport", "--session", str(session), "--share", "0.5")[0] == 0
    status, out, err = run(
        capsys,
        "units",
        "sample",
        "Airport",
        "--session",
        str(session),
        "--tier",
        "long_tail",
        "--limit-entities",
        "12",
        "--shape",
        "sibling",
        "--size",
        "1",
        "--source",
        "embedded",
        "--quiet",
    )
    assert status == 0, err
    with SessionStore.open(session) as store:
        units = list_units(store)
        assert units and {u.tier for u in units} == {"long_tail"}
        assert unit_tier_changes(store) == {}
    # A share of 1.0 puts every member with a statement in the head.
    assert run(capsys, "tiers", "Airport", "--session", str(session), "--share", "1")[0] == 0
    with SessionStore.open(session) as store:
        changes = unit_tier_changes(store)
        units = list_units(store)
    assert set(changes) == {u.id for u in units}  # every sampled root is head now
    assert all(c.built_tier == "long_tail" and c.now_tier == "head" for c in changes.values())
    assert units[0].tier == "long_tail"  # the unit keeps its own tier

    panel = UnitsPanel()
    qtbot.addWidget(panel)
    panel.show_units(units, changes)
    assert "built under another tier" in panel.units_label.text()
    cell = panel.units_model.item(0, 3)
    assert "now head" in cell.text() and "built as long_tail" in cell.toolTip()
