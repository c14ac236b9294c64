"""The WebNLG 2020 English data exactly as the challenge published it (shared data folder):
the test set, the 16 systems' primary outputs and the human-evaluation folder, imported the
way a user would, one command each. The folder holds ``WebNLG-2020-reference/``, the
ratings of the human references themselves, and the all-teams list; neither may stop the
import of the systems' own ratings."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from core.agreement.human import human_values
from core.store import SessionStore
from tests import shared_data

pytestmark = shared_data.needs(*shared_data.WEBNLG2020_EN)


def _published_session(path: Path) -> None:
    test = shared_data.require(*shared_data.WEBNLG2020_TEST)
    assert main(["import", str(test), "--session", str(path)]) == 0
    submissions = shared_data.require(*shared_data.WEBNLG2020_SUBMISSIONS)
    for output in sorted(submissions.glob("*/primary.en")):
        system = output.parent.name
        assert (
            main(["import-outputs", str(output), "--system", system, "--session", str(path)]) == 0
        )


def test_the_published_human_evaluation_folder_imports_in_one_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "webnlg2020.taillens"
    _published_session(session)
    capsys.readouterr()
    folder = shared_data.require(*shared_data.WEBNLG2020_HUMAN)
    assert main(["import-judgments", str(folder), "--session", str(session)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    # One line per system's own ratings, every one matched by the entry id
    imported = [line for line in lines if "primary.json" in line and " to run " in line]
    assert len(imported) == 16, out
    assert all("matched by WebNLG entry id Id<N>" in line for line in imported)
    assert not any("WARNING" in line for line in imported), out
    # The references' ratings: one note, no run, nothing stored for them
    notes = [line for line in lines if line.startswith("note:")]
    assert len(notes) == 1 and "WebNLG-2020-reference/primary.json" in notes[0], out
    with SessionStore.open(session) as store:
        values = human_values(store)
    assert set(values) >= {
        "webnlg:correctness",
        "webnlg:data_coverage",
        "webnlg:fluency",
        "webnlg:relevance",
        "webnlg:text_structure",
    }
    # 16 systems × 178 sampled entries, less those the raters left empty
    assert 16 * 170 <= len(values["webnlg:data_coverage"]) <= 16 * 178
