"""The window's one way of telling a user something went wrong (or finished).

A non-modal bar inside the main window, above the panels: the message in one line,
"Details…" on demand, and a close button. User errors (bad input, a refused file)
come here; bugs (unexpected exceptions) go to the error log, and the bar points there.
The status bar keeps short temporary notes in a label of its own, elided, so they never
run into the session path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QStatusBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

ERROR, INFO = "error", "info"
_COLOURS = {ERROR: ("#fbe3e0", "#8a1f11", "#e0a49a"), INFO: ("#e3eefb", "#153d6b", "#9ab8e0")}


class MessageBar(QFrame):
    """One message at a time; a new one replaces the last. ``text()``, ``windowTitle()``
    and ``detailedText()`` read back what is shown (as a QMessageBox's would)."""

    details_link = Signal()  # "Details…" of a bug: open the error log
    dismissed = Signal()  # the holder hides it
    resized = Signal()  # its text or details changed: the holder places it again

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("message-bar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.kind = INFO
        self._text = ""
        self._details = ""
        self.title_label = QLabel()
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.details_button = QPushButton("Details…")
        self.details_button.setCheckable(True)
        self.details_button.toggled.connect(self._toggle_details)
        self.action_buttons: list[QPushButton] = []  # set_actions: e.g. Open, Show in folder
        self._actions_row = QHBoxLayout()
        self._actions_row.setContentsMargins(0, 0, 0, 0)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss (Esc)")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.dismiss)
        self.details_view = QPlainTextEdit()
        self.details_view.setReadOnly(True)
        self.details_view.setMaximumHeight(160)
        self.details_view.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.title_label)
        row.addWidget(self.message_label, 1)
        row.addLayout(self._actions_row)
        row.addWidget(self.details_button)
        row.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addLayout(row)
        layout.addWidget(self.details_view)

    def show_message(
        self, kind: str, title: str, text: str, details: str = "", details_in_log: bool = False
    ) -> None:
        self.kind = kind
        self.setWindowTitle(title)
        self._text, self._details = text, details
        background, foreground, border = _COLOURS[kind]
        self.setStyleSheet(
            f"#message-bar {{ background: {background}; "
            f"border: 1px solid {border}; border-radius: 3px; }} "
            f"#message-bar QLabel {{ color: {foreground}; }} "
            # The close cross is drawn straight on the bar: in the bar's ink (the dark
            # theme's light button text vanished on its pale background).
            f"#message-bar QToolButton {{ color: {foreground}; }}"
        )
        self.title_label.setText(f"<b>{title}:</b>")
        self.message_label.setText(text)
        self.details_button.setChecked(False)
        self.details_view.setPlainText(details)
        self._details_in_log = details_in_log
        self.details_button.setVisible(bool(details) or details_in_log)
        self.set_actions([])
        self.resized.emit()

    def set_actions(self, actions: Sequence[tuple[str, Callable[[], object]]]) -> None:
        """Buttons for what the message is about (text, what it does), until the next."""
        for button in self.action_buttons:
            self._actions_row.removeWidget(button)
            button.deleteLater()
        self.action_buttons = []
        for text, slot in actions:
            button = QPushButton(text)
            button.clicked.connect(lambda _checked=False, s=slot: s())
            self._actions_row.addWidget(button)
            self.action_buttons.append(button)
        self.resized.emit()

    def text(self) -> str:
        return self._text

    def detailedText(self) -> str:  # noqa: N802 - QMessageBox's name
        return self._details

    def dismiss(self) -> None:
        self.details_button.setChecked(False)
        self.dismissed.emit()

    def _toggle_details(self, shown: bool) -> None:
        if shown and self._details_in_log:
            self.details_button.setChecked(False)
            self.details_link.emit()
            return
        self.details_view.setVisible(shown)
        self.resized.emit()


class ElidedLabel(QLabel):
    """A one-line label that elides (in the middle) rather than pushing its neighbours;
    ``text()`` stays the whole text, shown in full as the tooltip."""

    def __init__(
        self,
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle,
        parent: QWidget | None = None,
        policy: QSizePolicy.Policy = QSizePolicy.Policy.Preferred,
    ) -> None:
        super().__init__(parent)
        self.mode = mode
        # Preferred: as wide as its text when there is room, down to a few characters.
        self.setSizePolicy(policy, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self):  # noqa: N802
        hint = super().minimumSizeHint()
        hint.setWidth(self.fontMetrics().horizontalAdvance("…") * 4)
        return hint

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), self.mode, rect.width())
        painter.drawText(rect, int(self.alignment() | Qt.AlignmentFlag.AlignVCenter), text)


class StatusBar(QStatusBar):
    """A status bar whose temporary messages live in an elided label left of the
    permanent widgets, so a long message never runs into the session path."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note = ElidedLabel(Qt.TextElideMode.ElideRight, policy=QSizePolicy.Policy.Ignored)
        self.addWidget(self.note, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.clearMessage)

    def showMessage(self, text: str, timeout: int = 0) -> None:  # noqa: N802
        self.note.setText(text)
        self.note.setToolTip(text)
        self.note.update()
        self._timer.stop()
        if timeout > 0:
            self._timer.start(timeout)
        self.messageChanged.emit(text)

    def clearMessage(self) -> None:  # noqa: N802
        self.note.clear()
        self.note.setToolTip("")
        self.messageChanged.emit("")

    def currentMessage(self) -> str:  # noqa: N802
        return self.note.text()
