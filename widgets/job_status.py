"""Status-bar widget that shows the running job's progress and a Cancel button.

It knows nothing of how jobs run: ``app`` tells it which jobs exist and how far
they are, and listens to :attr:`JobStatusWidget.cancel_requested`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QWidget

from core.jobs import Progress, TimeLeft, format_time_left
from widgets.message_bar import ElidedLabel

_BAR_RANGE = 1000


class JobStatusWidget(QWidget):
    cancel_requested = Signal(int)  # job id

    def __init__(
        self, parent: QWidget | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(parent)
        self._clock = clock
        self._titles: dict[int, str] = {}
        self._left: dict[int, TimeLeft] = {}  # each job's time-left estimate
        self._shown: int | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        # Elided, the whole text in its tooltip: a plain label as wide as "Score run 3:
        # BERTScore on 2,933 texts…" pushed the status bar's parts over one another on a
        # 1024-pixel window.
        self.label = ElidedLabel(Qt.TextElideMode.ElideRight)
        self.bar = QProgressBar()
        # "42% · ~3 min left" whole; the status note keeps its 150 px at 1024 px.
        self.bar.setFixedWidth(130)
        self.bar.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the work in progress; what it finished is kept")
        self.cancel_button.clicked.connect(self._on_cancel)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.bar)
        layout.addWidget(self.cancel_button)
        self.setVisible(False)

    # -- driven by app ---------------------------------------------------------------
    def job_started(self, job_id: int, title: str) -> None:
        self._titles[job_id] = title
        self._left[job_id] = TimeLeft(self._clock)
        self._show(job_id)
        self._set_unknown_total("starting")
        self.cancel_button.setEnabled(True)

    def job_progress(self, job_id: int, progress: Progress) -> None:
        estimate = self._left.get(job_id)
        left = estimate.update(progress) if estimate is not None else None
        if job_id != self._shown:
            return
        fraction = progress.fraction
        if fraction is None:
            self._set_unknown_total(f"{progress.done:,.0f} done" if progress.done else "working")
        else:
            self.bar.setRange(0, _BAR_RANGE)
            self.bar.setValue(round(fraction * _BAR_RANGE))
            text = f"{fraction:.0%}"
            if left is not None:
                # "~" for "about": the bar stays narrow enough for a 1024-pixel window.
                text += f" · ~{format_time_left(left).removeprefix('about ')} left"
            self.bar.setFormat(text)
        self._set_label(job_id, progress.message)

    def job_finished(self, job_id: int) -> None:
        self._titles.pop(job_id, None)
        self._left.pop(job_id, None)
        if job_id == self._shown:
            self._shown = None
            if self._titles:
                self._show(next(reversed(self._titles)))
        self.setVisible(bool(self._titles))

    # -- internals -------------------------------------------------------------------
    def _set_unknown_total(self, text: str) -> None:
        # Not Qt's busy indicator: it animates (repaints) many times a second for as long
        # as the job runs, which on some platforms repaints the whole window and takes
        # CPU and the GIL from the job itself. A still bar with a count says as much.
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.bar.setFormat(text)

    def _show(self, job_id: int) -> None:
        self._shown = job_id
        self._set_label(job_id, "")
        self.setVisible(True)

    def _set_label(self, job_id: int, message: str) -> None:
        text = self._titles.get(job_id, "")
        if message:
            text = f"{text}: {message}"
        others = len(self._titles) - 1
        if others > 0:
            text += f"  (+{others} more)"
        self.label.setText(text)
        self.label.setToolTip(text)

    def _on_cancel(self) -> None:
        if self._shown is not None:
            self.cancel_button.setEnabled(False)
            self.label.setText(self.label.text() + " — cancelling…")
            self.cancel_requested.emit(self._shown)
