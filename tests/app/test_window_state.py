"""The window comes back as it was left: where it was on the screen (under a window
manager that draws a frame), its docks' and splitters' sizes, and the Browser's
Compare-with ticks of each session and category."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Starts of the window, as ``taillens gui`` does each: the saved layout restored, fitted
# to the screen, shown; its client geometry and frame corner printed; closed (which saves
# the layout). Before the first, the window is placed as a user dragging it would.
_STARTS = """
import json, sys
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from widgets.main_window import MainWindow
for start in range(4):
    window = MainWindow(QSettings(sys.argv[1], QSettings.Format.IniFormat))
    window.restore_layout()
    window.fit_to_screen()
    window.show()
    app.processEvents()
    if start == 0:
        window.setGeometry(300, 200, 1200, 760)
        app.processEvents()
    g, f = window.geometry(), window.frameGeometry()
    print(json.dumps([g.x(), g.y(), g.width(), g.height(), f.x(), f.y()]))
    window.close()
    window.deleteLater()
    app.processEvents()
"""


def window_starts(settings: Path, screen: Path) -> list[list[int]]:
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={screen}", PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-c", _STARTS, str(settings)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("[")]


def test_the_window_stays_where_it_was_left_across_restarts(tmp_path: Path) -> None:
    # A desktop screen, and a window manager frame around the window (Qt's offscreen
    # platform draws one, a few pixels wide, when asked).
    screen = tmp_path / "screen.json"
    screen.write_text(
        json.dumps(
            {
                "windowFrameMargins": True,
                "screens": [
                    {
                        "name": "s",
                        "x": 0,
                        "y": 0,
                        "width": 1920,
                        "height": 1200,
                        "logicalDpi": 96,
                        "logicalBaseDpi": 96,
                        "dpr": 1,
                    }
                ],
            }
        )
    )
    placed, *restarts = window_starts(tmp_path / "TailLens.ini", screen)
    assert placed[:4] == [300, 200, 1200, 760]
    assert placed[4:] != placed[:2]  # there is a frame: the client is inside it
    # Each start puts it back where the last left it (it moved 2 px right and down
    # per start with this frame: 1 px and a 20 px title bar under a real window manager).
    assert restarts == [placed] * 3
