"""Both themes are complete, and a live switch between them repaints everything: the
window is built on a session with scores, a report, ratings and an annotator's queue,
then switched light → dark → light as Preferences ▸ Theme does; under each theme every
panel (each of its tabs) and every registered dialog is drawn, and the contrast of what
is drawn is read from its pixels (tests/fixtures/contrast.py): text >= 4.5:1,
checkbox/radio indicators and symbol buttons (the message's close cross) >= 3:1 (WCAG 2
AA), and each is painted in the theme's own background (none stays light after a
switch to dark)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from app.dialogs import DIALOGS
from tests.fixtures.contrast import INDICATOR_MIN, TEXT_MIN, contrast, findings_under
from tests.fixtures.report_session import build_report_session

ROOT = Path(__file__).resolve().parents[2]


def _screen(tmp_path: Path) -> Path:
    config = tmp_path / "screen.json"
    screen = {"name": "s", "x": 0, "y": 0, "width": 1366, "height": 768}
    screen.update({"logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1})
    config.write_text(json.dumps({"windowFrameMargins": False, "screens": [screen]}))
    return config


def test_the_wcag_ratio_is_the_standard_one() -> None:
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((0x77, 0x77, 0x77), (255, 255, 255)) == pytest.approx(4.48, abs=0.01)
    assert (TEXT_MIN, INDICATOR_MIN) == (4.5, 3.0)


def test_the_measure_finds_faint_text_indicators_and_rich_text(qtbot) -> None:
    """The check can fail: text, markup colours and an indicator drawn too faint are
    each reported; the same widgets in readable colours are not."""
    host = QWidget()
    qtbot.addWidget(host)
    host.setStyleSheet("background:#2b2b2b")
    layout = QVBoxLayout(host)
    faint = QLabel("Dark blue on dark grey")
    faint.setStyleSheet("color:#2a4d69")
    rich = QLabel("Plain <b>white</b> and <span style='color:#5a1010'>dark red</span>")
    rich.setStyleSheet("color:#f0f0f0")
    box = QCheckBox("Torso line")
    box.setStyleSheet(
        "QCheckBox{color:#f0f0f0} QCheckBox::indicator{border:1px solid #303030;"
        "background:#2b2b2b; width:13px; height:13px}"
    )
    readable = QLabel("Light grey on dark grey")
    readable.setStyleSheet("color:#e6e6e6")
    for widget in (faint, rich, box, readable):
        layout.addWidget(widget)
    host.resize(400, 200)
    host.show()
    qtbot.waitExposed(host)
    found = {(f.kind, f.where.split(" ", 1)[1][1:8]) for f in findings_under(host)}
    assert ("text", "Dark bl") in found
    assert ("rich text", "Plain <") in found
    assert ("indicator", "Torso l") in found
    assert not any(where.startswith("Light g") for _kind, where in found)


@pytest.mark.slow
def test_every_panel_and_dialog_reads_in_both_themes_after_live_switches(
    tmp_path: Path,
) -> None:
    session = tmp_path / "report.taillens"
    build_report_session(session)
    env = dict(
        os.environ,
        QT_QPA_PLATFORM=f"offscreen:configfile={_screen(tmp_path)}",
        PYTHONPATH=str(ROOT),
        TAILLENS_HOME=str(tmp_path / "home"),
    )
    themes = ["light", "dark", "light"]
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "fixtures" / "theme_contrast_run.py"),
            str(tmp_path / "settings.ini"),
            str(session),
            *themes,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stderr[-3000:]
    result = json.loads(lines[0][len("RESULT ") :])
    findings, measured = result["findings"], result["measured"]
    assert list(findings) == [f"{i} {t}" for i, t in enumerate(themes)]
    for step, seen in findings.items():
        # Every panel and every registered dialog was drawn and measured.
        assert {k for k in seen if k.startswith("dialog ")} == {f"dialog {n}" for n in DIALOGS}
        assert "message" in seen  # the message bar, with Open and Show in folder
        assert len(measured[step]) > 300, step
        # Rich text the fixes are about was among what was measured.
        assert any("Annotating as" in m for m in measured[step]), step
        assert any("Head vs long tail" in m for m in measured[step]), step
        failures = {where: found for where, found in seen.items() if found}
        assert not failures, (step, failures)
        # Each panel and dialog is painted in the theme switched to (none stays light in
        # the dark theme, or dark in the light one): its most frequent colour.
        dark = step.endswith("dark")
        wrong = {
            where: colour
            for where, (colour, luminance) in result["backgrounds"][step].items()
            if (luminance > 0.2) == dark
        }
        assert not wrong, (step, wrong)
