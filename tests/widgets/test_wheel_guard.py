"""A mouse wheel changes no field it was not asked to: spin boxes, combo boxes and
sliders in every panel and every registered dialog take the wheel only when focused,
and an unfocused field passes it on to the scroll area around it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, QPointF, QSettings, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QScrollArea,
    QScrollBar,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.dialogs import DIALOGS, open_dialog
from app.gui import build_window
from widgets import wheel_guard


def _wheel(widget: QWidget, notches: int) -> bool:
    """Send a wheel of ``notches`` over ``widget``; whether it was accepted there (Qt
    passes a wheel the widget did not accept on to its parents: a test's event is
    not a spontaneous one, so it stops here)."""
    centre = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(
        centre,
        QPointF(widget.mapToGlobal(centre.toPoint())),
        QPoint(0, 0),
        QPoint(0, 120 * notches),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)
    return event.isAccepted()


def _value(widget: QWidget) -> object:
    if isinstance(widget, QComboBox):
        return (widget.currentIndex(), widget.currentText())
    if isinstance(widget, QAbstractSpinBox):
        return widget.text()
    assert isinstance(widget, QAbstractSlider)
    return widget.value()


def _fields(top: QWidget) -> list[QWidget]:
    return [
        w
        for kind in (QAbstractSpinBox, QComboBox, QAbstractSlider)
        for w in top.findChildren(kind)
        if not isinstance(w, QScrollBar) and w.isEnabled()
    ]


def test_an_unfocused_field_passes_the_wheel_to_its_scroll_area(qtbot) -> None:
    wheel_guard.install()
    area = QScrollArea()
    qtbot.addWidget(area)
    inner = QWidget()
    layout = QVBoxLayout(inner)
    spin = QSpinBox()
    spin.setRange(0, 100)
    spin.setValue(50)
    layout.addWidget(spin)
    layout.addSpacing(2000)  # room to scroll
    area.setWidget(inner)
    area.resize(300, 200)
    area.show()
    qtbot.waitExposed(area)
    assert spin.focusPolicy() == Qt.FocusPolicy.StrongFocus  # a wheel gives no focus

    assert not _wheel(spin, -2)  # passed on to the scroll area
    assert spin.value() == 50 and not spin.hasFocus()

    # Clicked or tabbed into, the field takes the wheel as before.
    area.activateWindow()
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus)
    assert _wheel(spin, -2)
    assert spin.value() == 48


def test_no_field_in_any_panel_or_dialog_changes_on_an_unasked_wheel(qtbot, tmp_path: Path) -> None:
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(tmp_path / "s.taillens", create=True)
    qtbot.waitUntil(lambda: not controller.runner.active, timeout=20_000)
    tops: list[tuple[str, QWidget]] = [("window", window)]
    for name in DIALOGS:
        tops.append((name, open_dialog(controller, name)))  # closed below
    tried = 0
    for where, top in tops:
        for field in _fields(top):
            assert field.focusPolicy() != Qt.FocusPolicy.WheelFocus, (where, field)
            before = _value(field)
            _wheel(field, 2)
            _wheel(field, -1)
            _wheel(field, -3)
            assert _value(field) == before, (where, field.objectName(), type(field).__name__)
            tried += 1
    for _name, top in tops[1:]:
        top.close()
    # The window's panels and the dialogs hold dozens of such fields; far fewer would
    # mean the search above missed them.
    assert tried >= 40
    controller.shutdown()
