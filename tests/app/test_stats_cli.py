"""``taillens stats`` and View ▸ Dataset statistics…"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from core.formats import import_webnlg
from core.store import SessionStore
from tests.fixtures.controller_window import window_and_controller  # noqa: F401 - fixture
from tests.fixtures.dataset_check_cases import BODY


@pytest.fixture
def session(tmp_path: Path) -> Path:
    source = tmp_path / "small.xml"
    source.write_text(BODY, encoding="utf-8")
    path = tmp_path / "s.taillens"
    with SessionStore.create(path) as store:
        import_webnlg(store, source)
    return path


def test_stats_prints_tables_and_findings(
    capsys: pytest.CaptureFixture[str], session: Path
) -> None:
    assert main(["stats", "--session", str(session), "--list", "1"]) == 0
    out = capsys.readouterr().out
    assert "Units per tier\n  tier       units\n  ---------  -----\n  head           2\n" in out
    assert "Checks: 6 findings in 3 of 4 units" in out
    assert "  shape: 2\n    ONE: labelled chain, but a single triple is a sibling unit" in out
    assert "… and 1 more (--list N, or --json for all)" in out


def test_stats_json(capsys: pytest.CaptureFixture[str], session: Path) -> None:
    assert main(["stats", "--session", str(session), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["statistics"]["by_size"] == {"1": 1, "2": 3}
    assert len(payload["findings"]) == 6


def test_stats_of_a_missing_session_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["stats", "--session", str(tmp_path / "none.taillens")]) == 2
    assert "none.taillens" in capsys.readouterr().err


def test_the_dialog_shows_figures_and_filters_findings(
    qtbot,
    window_and_controller,  # noqa: F811
    session: Path,
) -> None:
    window, controller = window_and_controller
    assert controller.open_session(session)
    window.action_dataset_stats.trigger()
    qtbot.waitUntil(
        lambda: window.dataset_stats_dialog is not None and window.dataset_stats_dialog.isVisible(),
        timeout=30_000,
    )
    dialog = window.dataset_stats_dialog
    assert "Units per tier and size" in dialog.figures.toPlainText()
    assert dialog.summary.text().startswith("6 findings in 3 of 4 units")
    assert len(dialog.shown_findings()) == 6
    dialog.check_filter.setCurrentIndex(dialog.check_filter.findData("copied-object"))
    assert [row[:2] for row in dialog.shown_findings()] == [("PATH", "copied-object")]
