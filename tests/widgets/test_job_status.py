"""The status bar's job progress says how long a job has left once it can tell."""

from __future__ import annotations

from core.jobs import Progress
from widgets.job_status import JobStatusWidget


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_long_job_shows_its_time_left_and_a_short_one_none(qtbot) -> None:
    clock = _Clock()
    widget = JobStatusWidget(clock=clock)
    qtbot.addWidget(widget)
    widget.job_started(1, "Score")
    widget.job_progress(1, Progress(0, 100, "BLEU"))
    clock.now = 1.0
    widget.job_progress(1, Progress(1, 100, "BLEU"))
    assert widget.bar.format() == "1%"  # a second in: too soon to say
    clock.now = 30.0
    widget.job_progress(1, Progress(25, 100, "BLEU"))
    # 25 % in 30 s: 90 s for the rest.
    assert widget.bar.format() == "25% · ~2 min left"
    assert widget.label.text() == "Score: BLEU"
    widget.job_progress(1, Progress(7, None, "reading"))
    assert "left" not in widget.bar.format()  # the size of the work is unknown

    # A second job has its own estimate, started with it.
    widget.job_started(2, "Export")
    widget.job_progress(2, Progress(50, 100))
    assert widget.bar.format() == "50%"
    widget.job_finished(2)
    widget.job_finished(1)
    assert not widget.isVisible()
