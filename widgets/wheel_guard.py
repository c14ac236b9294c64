"""No field changes on a mouse wheel it did not ask for.

Qt lets a spin box, a combo box or a slider take every wheel turn over it, focused or
not, and gives it the focus on the way (``Qt.WheelFocus``). Scrolling a dialog or a
panel past such a field then changes a study's setting unseen: a Pareto share, an ESA
distance, who is rating. One application-wide event filter decides for every such
widget, those built later included:

* when a guarded widget is polished (before it is first shown), a wheel no longer gives
  it the focus (``Qt.WheelFocus`` becomes ``Qt.StrongFocus``);
* a wheel over a guarded widget without the focus is ignored by it and goes on to its
  parents, so the scroll area around it scrolls as the user meant;
* a focused field (clicked or tabbed into) takes the wheel as before.

Scroll bars are sliders too, and keep the wheel: scrolling is what they are for.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QScrollBar,
    QWidget,
)

GUARDED = (QAbstractSpinBox, QComboBox, QAbstractSlider)


def guarded(widget: QObject) -> bool:
    """Whether ``widget`` takes the wheel only when it has the focus."""
    return isinstance(widget, GUARDED) and not isinstance(widget, QScrollBar)


class WheelGuard(QObject):
    """The application-wide filter (see the module doc); :func:`install` adds it once."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        kind = event.type()
        if kind == QEvent.Type.Polish and guarded(watched):
            assert isinstance(watched, QWidget)
            if watched.focusPolicy() == Qt.FocusPolicy.WheelFocus:
                watched.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        elif kind == QEvent.Type.Wheel and guarded(watched):
            assert isinstance(watched, QWidget)
            if not watched.hasFocus():
                # Handled here, but not accepted: Qt passes an unaccepted wheel event on
                # to the widget's parent (the scroll area), never to the field itself.
                event.ignore()
                return True
        return False


NAME = "taillens-wheel-guard"


def install(app: QApplication | None = None) -> QObject | None:
    """Add the guard to ``app`` (default: the running application) once, and guard the
    widgets that already exist; returns the guard."""
    app = app if app is not None else QApplication.instance()  # type: ignore[assignment]
    if app is None:
        return None
    current = app.findChild(QObject, NAME)
    if current is not None:
        return current
    guard = WheelGuard(app)
    guard.setObjectName(NAME)
    app.installEventFilter(guard)
    for widget in app.allWidgets():
        if guarded(widget) and widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
            widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    return guard
