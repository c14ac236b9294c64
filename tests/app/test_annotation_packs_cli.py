"""A team of three through the command line, each step in its own process as on three
laptops: pack, rate in the pack, merge, merge again, progress and agreement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_process import python_script, taillens
from tests.fixtures.report_session import build_report_session

# What an annotator does on their own machine: open the pack, rate every text in it.
RATE = """
import sys
from sqlalchemy import select
from core.annotation import Rating, find_annotator, save_rating
from core.annotation.packs.manifest import pack_info
from core.store import SessionStore
from core.store.models import Verbalisation

path, fluency = sys.argv[1], int(sys.argv[2])
with SessionStore.open(path) as store:
    who = find_annotator(store, pack_info(store).annotator)
    with store.snapshot() as db:
        ids = list(db.scalars(select(Verbalisation.id).order_by(Verbalisation.id)))
    for n, vid in enumerate(ids):
        save_rating(store, who.id, vid, Rating(fluency=max(0, fluency - n % 2), adequacy=0))
print(len(ids))
"""


@pytest.mark.slow
def test_a_team_of_three_round_trips_packs(tmp_path: Path) -> None:
    session = build_report_session(tmp_path / "study.taillens", ratings=False)
    units = f"{session.units['u1']},{session.units['u2']},{session.units['u5']}"
    packs = []
    for name in ("ada", "bo", "cy"):
        out = tmp_path / "outbox" / f"{name}.taillens"
        out.parent.mkdir(exist_ok=True)
        made = taillens(
            "annotations", "pack", "--session", session.path, "--annotator", name,
            "--units", units, "--lang", "en", "--blind", "--out", out, "--json",
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
        assert json.loads(made.stdout)["items"] == 6  # 3 units x 2 runs
        packs.append(out)
    for fluency, pack in zip((5, 4, 3), packs, strict=True):
        rated = python_script(RATE, pack, str(fluency))
        assert rated.returncode == 0, rated.stderr
        assert rated.stdout.strip() == "6"
    merged = taillens("annotations", "merge", "--session", session.path, *packs, "--json")
    assert merged.returncode == 0, merged.stderr
    assert [(r["annotator"], r["added"]) for r in json.loads(merged.stdout)] == [
        ("ada", 6),
        ("bo", 6),
        ("cy", 6),
    ]
    again = taillens("annotations", "merge", "--session", session.path, *packs, "--json")
    assert again.returncode == 0, again.stderr
    assert [(r["added"], r["unchanged"]) for r in json.loads(again.stdout)] == [(0, 6)] * 3
    said = taillens("annotations", "merge", "--session", session.path, packs[0])
    assert said.returncode == 0, said.stderr  # nothing new is fine, and said
    assert (
        said.stdout.strip() == "ada.taillens (ada): 0 added, 0 updated, 6 already in: nothing new"
    )
    progress = taillens("annotations", "progress", "--session", session.path, "--json")
    assert progress.returncode == 0, progress.stderr
    team = json.loads(progress.stdout)
    assert [
        (a["annotator"], a["assigned"], a["done"], a["remaining"]) for a in team["annotators"]
    ] == [
        ("ada", 6, 6, 0),
        ("bo", 6, 6, 0),
        ("cy", 6, 6, 0),
    ]
    assert team["rated_items"] == 6
    assert team["alpha_fluency"] is not None and -1 <= team["alpha_fluency"] <= 1
    agreement = taillens("annotations", "--session", session.path, "--agreement", "--json")
    assert agreement.returncode == 0, agreement.stderr
    assert json.loads(agreement.stdout)["overall"]["annotators"] == 3
    text = taillens("annotations", "progress", "--session", session.path)
    assert "ada" in text.stdout and "Krippendorff" in text.stdout


def test_bad_packs_and_options_get_one_line(tmp_path: Path) -> None:
    session = build_report_session(tmp_path / "study.taillens", ratings=False)
    stray = tmp_path / "stray.taillens"
    stray.write_bytes(b"\x00" * 300)
    result = taillens("annotations", "merge", "--session", session.path, stray)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1].startswith("taillens: ")
    assert "Traceback" not in result.stderr
    result = taillens(
        "annotations", "pack", "--session", session.path, "--annotator", "ada",
        "--units", "9-1", "--out", tmp_path / "p.taillens",
    )  # fmt: skip
    assert result.returncode == 2 and "backwards" in result.stderr
    assert not (tmp_path / "p.taillens").exists()
