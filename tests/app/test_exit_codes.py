"""Exit codes a script can rely on: ``taillens --help`` and docs/cli.md list the same
ones, and a command asked for something that produced none of it exits 2 with one line
(score with no metric computable here, export of nothing), while doing again what is
done already (merging a pack twice: tests/app/test_annotation_packs_cli.py) exits 0."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.cli import EXIT_CODES
from core.heavy import FULL_INSTALL
from core.store import SessionStore
from tests.cli_process import taillens
from tests.fixtures.base_install import base_cli
from tests.fixtures.scoring_session import build_session

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def session(tmp_path: Path) -> Path:
    build_session(tmp_path / "s.taillens")
    return tmp_path / "s.taillens"


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if not line.startswith("LOADED:")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_help_and_docs_list_the_same_exit_codes() -> None:
    shown = taillens("--help")
    assert shown.returncode == 0
    assert EXIT_CODES in shown.stdout
    in_help = set(re.findall(r"^  (\d+) ", EXIT_CODES, flags=re.M))
    docs = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    in_docs = set(re.findall(r"^\| (\d+) \|", docs, flags=re.M))
    assert in_help == in_docs == {"0", "1", "2", "130"}


def test_score_with_no_metric_computable_here_exits_2(tmp_path: Path, session: Path) -> None:
    done = base_cli(
        tmp_path, "score", "--session", str(session), "--metrics", "bertscore", "--quiet"
    )
    assert done.returncode == 2, done.stdout + done.stderr
    line = _one_line(done.stderr)
    assert line.startswith(f"taillens: nothing scored: bertscore {FULL_INSTALL}")
    # With --json the summary is still printed, for the script to read the notes.
    done = base_cli(
        tmp_path, "score", "--session", str(session), "--metrics", "similarity", "--json", "--quiet"
    )
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["rows_written"] == {}
    assert _one_line(done.stderr).startswith("taillens: nothing scored: similarity")


def test_meteor_without_wordnet_exits_2(tmp_path: Path, session: Path) -> None:
    empty = tmp_path / "no-wordnet"
    empty.mkdir()
    done = taillens(
        "score", "--session", session, "--metrics", "meteor", "--wordnet", empty, "--quiet"
    )
    assert done.returncode == 2, done.stdout + done.stderr
    line = _one_line(done.stderr)
    assert line.startswith("taillens: nothing scored: METEOR is absent") and "wordnet-base" in line
    with SessionStore.open_read_only(session) as store:
        assert store.row_counts()["scores"] == 0


def test_export_of_nothing_exits_2(tmp_path: Path, session: Path) -> None:
    empty = tmp_path / "empty.taillens"
    SessionStore.open(empty, create=True).close()
    done = taillens("export", "--session", empty, "--format", "tailnlg", tmp_path / "o.xml")
    assert done.returncode == 2, done.stdout + done.stderr
    assert _one_line(done.stderr).startswith("taillens: nothing exported: o.xml holds no entry")
    table = tmp_path / "t.csv"
    done = taillens("export", "--session", session, "--texts", table, "--langs", "zz")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "chosen by --runs/--langs" in _one_line(done.stderr)
    done = taillens("export", "--session", session, "--texts", table, "--langs", "en", "--force")
    assert done.returncode == 0, done.stderr
