"""The status bar at 1024 pixels: a long note, a running job with a long title and
message, and a long session path share one row without running into one another or
widening the window."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from core.jobs import Progress
from widgets.main_window import MainWindow


def test_status_bar_parts_never_overlap_at_1024_pixels(qtbot, tmp_path) -> None:
    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.resize(1024, 640)
    window.show()
    qtbot.waitExposed(window)
    bar = window.statusBar()
    bar.showMessage("Load demo data: done in 11.5 s; 12 categories, 20,000 members each " * 2)
    title = "Score run 3 (model-a, en, it, es): BERTScore, chrF++, BLEU, METEOR"
    window.job_status.job_started(1, title)
    window.job_status.job_progress(1, Progress(120, 2933, "BERTScore on 2,933 texts, 4 left"))
    window.job_status.job_started(1 + 1, title)  # the latest job is the one shown
    window.session_label.setText("/home/someone/projects/tail/sessions/" + "x" * 80 + ".taillens")
    qtbot.wait(50)
    parts = {
        "note": bar.note,
        "job": window.job_status,
        "session": window.session_label,
    }
    shown = {name: w.geometry() for name, w in parts.items() if w.isVisible()}
    assert set(shown) == {"note", "job", "session"}
    assert window.width() == 1024 and bar.width() <= 1024  # nothing pushed the window wider
    names = list(shown)
    for i, a in enumerate(names):
        assert bar.rect().contains(shown[a]), (a, shown[a], bar.rect())
        for b in names[i + 1 :]:
            assert not shown[a].intersects(shown[b]), (a, b, shown)
    # The status note keeps room to be read while the job runs.
    assert shown["note"].width() >= 150, shown
    # The job's words are elided, whole in the tooltip; the Cancel button stays whole.
    assert title in window.job_status.label.toolTip()
    cancel = window.job_status.cancel_button
    assert cancel.width() >= cancel.minimumSizeHint().width()
