"""Dialogs that fit their screen, a laptop's included: one mechanism for every dialog.

:class:`FittedDialog` is the base of every TailLens dialog. The first time it is shown,
everything in its layout except its button boxes moves into a frameless scroll area
(:func:`fit_dialog`), and the dialog is sized to what it asks for, capped at the screen's
available geometry less the window manager's frame, and moved to lie inside that area.
On a large screen it looks as it was laid out; at 1024 × 640 its body scrolls and its
buttons stay on screen (the Score dialog was 767 × 919, its buttons off a laptop screen).
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, QTimer
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

# Room left for a window manager's title bar and borders while the frame is not known.
FRAME_ALLOWANCE = QSize(16, 48)
BODY_NAME = "dialog-body"


class _BodyScroll(QScrollArea):
    """A scroll area that asks for its whole content (QScrollArea caps its size hint at
    about 24 lines): the dialog then keeps its laid-out size wherever there is room."""

    def sizeHint(self) -> QSize:  # noqa: N802
        inner = self.widget()
        if inner is None:
            return super().sizeHint()
        hint = inner.sizeHint().expandedTo(inner.minimumSizeHint())
        bar = self.verticalScrollBar().sizeHint().width()
        height = hint.height()
        if inner.hasHeightForWidth():  # wrapped labels: their height at this width
            height = max(height, inner.heightForWidth(hint.width()))
        return QSize(hint.width() + bar + 2 * self.frameWidth(), height)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        inner = self.widget()
        width = inner.minimumSizeHint().width() if inner is not None else 0
        bar = self.verticalScrollBar().sizeHint().width()
        return QSize(min(width + bar, 320), 80)


def available_area(widget: QWidget) -> QRect:
    """The available geometry of the screen ``widget`` (or its parent window) is on."""
    parent = widget.parentWidget()
    screen = (parent.window().screen() if parent is not None else None) or widget.screen()
    return screen.availableGeometry()


def wrap_body(dialog: QDialog) -> QScrollArea | None:
    """Once: move ``dialog``'s layout, less the button boxes in it, into a frameless
    scroll area, with the button boxes below it. Returns the scroll area (None where the
    dialog has no layout)."""
    existing = dialog.findChild(QScrollArea, BODY_NAME)
    if existing is not None:
        return existing
    layout = dialog.layout()
    if layout is None:
        return None
    boxes = [box for box in dialog.findChildren(QDialogButtonBox) if layout.indexOf(box) >= 0]
    for box in boxes:
        layout.removeWidget(box)
    # A combo box sized to its longest item on first show (Qt's default) widened the
    # body after the dialog was fitted: it takes the width the layout gives it instead.
    for combo in dialog.findChildren(QComboBox):
        if combo.sizeAdjustPolicy() == QComboBox.SizeAdjustPolicy.AdjustToContentsOnFirstShow:
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(max(combo.minimumContentsLength(), 12))
    body = QWidget()
    body.setObjectName("dialog-body-widget")
    body.setLayout(layout)  # taken from the dialog, with everything in it
    layout.setContentsMargins(0, 0, 0, 0)
    scroll = _BodyScroll()
    scroll.setObjectName(BODY_NAME)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setWidgetResizable(True)
    scroll.setWidget(body)
    outer = QVBoxLayout(dialog)
    outer.addWidget(scroll, 1)
    for box in boxes:
        outer.addWidget(box)
    scroll.show()  # with the dialog (Qt would show it a turn later, after the fitting)
    return scroll


TITLE_ALLOWANCE = 120  # a title bar's icon and buttons, beside the title


def fit_dialog(dialog: QDialog) -> None:
    """Size ``dialog`` to its content, at most its screen's available area less the
    frame, and place it inside that area (centred on its parent window where it can)."""
    wrap_body(dialog)
    area = available_area(dialog)
    room = QSize(area.width() - FRAME_ALLOWANCE.width(), area.height() - FRAME_ALLOWANCE.height())
    dialog.setMaximumSize(room)
    layout = dialog.layout()
    if layout is not None:
        layout.activate()
    wanted = dialog.sizeHint().expandedTo(dialog.size() if dialog.isVisible() else QSize())
    # Wide enough for its title beside the title bar's buttons ("Import: language of
    # unmarked texts" was cut to "Import: langu…" in a 303-pixel dialog).
    title = dialog.fontMetrics().horizontalAdvance(dialog.windowTitle()) + TITLE_ALLOWANCE
    wanted.setWidth(max(wanted.width(), title))
    size = wanted.boundedTo(room).expandedTo(dialog.minimumSizeHint().boundedTo(room))
    dialog.resize(size)
    parent = dialog.parentWidget()
    centre = parent.window().frameGeometry().center() if parent is not None else area.center()
    # move() places the frame: the frame (at most FRAME_ALLOWANCE more) stays inside.
    outer = size + FRAME_ALLOWANCE
    x = max(area.left(), min(centre.x() - outer.width() // 2, area.right() + 1 - outer.width()))
    y = max(area.top(), min(centre.y() - outer.height() // 2, area.bottom() + 1 - outer.height()))
    dialog.move(x, y)


def grow_to_content(dialog: QDialog) -> None:
    """Once laid out: where the body still scrolls (its content laid out larger than the
    first size hint said: wrapped labels, combo boxes sized on first show) and the screen
    has room, grow the dialog by what is hidden, staying inside the screen."""
    scroll = dialog.findChild(QScrollArea, BODY_NAME)
    if scroll is None:
        return
    area = available_area(dialog)
    hidden_w = max(0, scroll.horizontalScrollBar().maximum())
    hidden_h = max(0, scroll.verticalScrollBar().maximum())
    hint = dialog.sizeHint()  # now that every widget is polished and laid out
    width = min(
        max(dialog.width() + (hidden_w + 2 if hidden_w else 0), hint.width()),
        area.width() - FRAME_ALLOWANCE.width(),
    )
    height = min(
        max(dialog.height() + (hidden_h + 2 if hidden_h else 0), hint.height()),
        area.height() - FRAME_ALLOWANCE.height(),
    )
    grow_w, grow_h = max(0, width - dialog.width()), max(0, height - dialog.height())
    if not (grow_w or grow_h):
        return
    dialog.resize(dialog.width() + grow_w, dialog.height() + grow_h)
    frame = dialog.frameGeometry()
    x = max(area.left(), min(frame.x(), area.right() + 1 - frame.width()))
    y = max(area.top(), min(frame.y(), area.bottom() + 1 - frame.height()))
    if (x, y) != (frame.x(), frame.y()):
        dialog.move(x, y)


class FittedDialog(QDialog):
    """A dialog that fits its screen (:func:`fit_dialog`) each time it is shown."""

    def setVisible(self, visible: bool) -> None:  # noqa: N802
        if visible:
            wrap_body(self)  # before Qt sizes a dialog shown for the first time
        super().setVisible(visible)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        if not event.spontaneous():
            fit_dialog(self)
            QTimer.singleShot(0, self, lambda: grow_to_content(self))
            share_window_actions(self)
        super().showEvent(event)


# The main window's actions a dialog takes too: its own window would otherwise keep their
# shortcuts (Ctrl+Z; Ctrl+Shift+Z, Ctrl+Y) from reaching the session's undo stack.
SHARED_ACTIONS = ("action_undo", "action_redo")


def share_window_actions(dialog: QDialog) -> None:
    """Add the main window's Undo and Redo to ``dialog`` (a QAction added to a widget
    has its shortcut work in that widget's window): Ctrl+Z in a dialog undoes the
    session's last edit as it does in the window. A text field keeps its own Ctrl+Z."""
    parent = dialog.parentWidget()
    window = parent.window() if parent is not None else None
    for name in SHARED_ACTIONS:
        action = getattr(window, name, None)
        if isinstance(action, QAction) and action not in dialog.actions():
            dialog.addAction(action)
