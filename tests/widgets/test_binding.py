"""widgets/binding.py: a state field and a widget stay equal both ways, without echoes."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QPlainTextEdit,
    QSlider,
    QSpinBox,
)

from core.state import Field, State
from widgets.binding import bind


class Form(State):
    kind = Field("bleu")
    on = Field(False)
    count = Field(3)
    share = Field(0.2)
    name = Field("")
    note = Field("")


def test_combo_by_data_both_ways(qtbot):
    combo = QComboBox()
    qtbot.addWidget(combo)
    combo.addItem("BLEU", "bleu")
    combo.addItem("chrF++", "chrf")
    state = Form(kind="chrf")
    seen: list[tuple[str, object, object]] = []
    state.subscribe(lambda *change: seen.append(change))
    bind(state, "kind", combo)
    assert combo.currentText() == "chrF++"  # shown at once
    assert seen == []  # rendering wrote nothing back
    combo.setCurrentIndex(0)  # the user's choice
    assert state.kind == "bleu"
    assert seen == [("kind", "chrf", "bleu")]
    state.kind = "chrf"
    assert combo.currentIndex() == 1
    assert len(seen) == 2  # no echo from the widget's own signal


def test_combo_without_data_binds_text(qtbot):
    combo = QComboBox()
    qtbot.addWidget(combo)
    combo.addItems(["en", "it", "es"])
    state = Form(name="it")
    bind(state, "name", combo)
    assert combo.currentText() == "it"
    combo.setCurrentText("es")
    assert state.name == "es"


@pytest.mark.parametrize(
    ("make", "field", "user", "value"),
    [
        (QCheckBox, "on", lambda w: w.setChecked(True), True),
        (QSpinBox, "count", lambda w: w.setValue(7), 7),
        (QDoubleSpinBox, "share", lambda w: w.setValue(0.5), 0.5),
        (QSlider, "count", lambda w: w.setValue(9), 9),
        (QPlainTextEdit, "note", lambda w: w.setPlainText("hi"), "hi"),
    ],
)
def test_each_kind_both_ways(qtbot, make, field, user, value):
    widget = make()
    qtbot.addWidget(widget)
    state = Form()
    bind(state, field, widget)
    user(widget)
    assert getattr(state, field) == value


def test_checkable_action_both_ways(qtbot):
    """A switch in a menu (a checkable QAction) binds like a check box."""
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMenu

    menu = QMenu()
    qtbot.addWidget(menu)
    action = menu.addAction("Drop")
    action.setCheckable(True)
    assert isinstance(action, QAction)
    state = Form(on=True)
    bind(state, "on", action)
    assert action.isChecked()
    action.setChecked(False)
    assert state.on is False
    state.on = True
    assert action.isChecked()


def test_line_edit_writes_on_editing_finished_only(qtbot):
    edit = QLineEdit()
    qtbot.addWidget(edit)
    state = Form(name="a")
    bind(state, "name", edit)
    assert edit.text() == "a"
    edit.setText("abc")  # typing: not a change of state yet
    assert state.name == "a"
    edit.editingFinished.emit()
    assert state.name == "abc"
    state.name = "zz"
    assert edit.text() == "zz"


def test_converters(qtbot):
    spin = QSpinBox()
    spin.setRange(0, 100)
    qtbot.addWidget(spin)
    state = Form(share=0.25)
    bind(state, "share", spin, to_widget=lambda v: round(v * 100), from_widget=lambda v: v / 100)
    assert spin.value() == 25
    spin.setValue(40)
    assert state.share == pytest.approx(0.4)


def test_unbind_and_widget_destroyed(qtbot):
    spin = QSpinBox()
    qtbot.addWidget(spin)
    state = Form()
    binding = bind(state, "count", spin)
    binding.unbind()
    binding.unbind()  # twice is fine
    spin.setValue(5)
    assert state.count == 3
    other = QSpinBox()
    bind(state, "count", other)
    other.deleteLater()
    qtbot.waitUntil(lambda: not state._callbacks)  # the destroyed widget's binding left
    state.count = 8  # and nobody calls into the deleted widget


def test_unknown_field_and_widget_refused(qtbot):
    state = Form()
    with pytest.raises(ValueError, match="no field"):
        bind(state, "nope", QSpinBox())
    from PySide6.QtWidgets import QLabel

    with pytest.raises(TypeError, match="QLabel"):
        bind(state, "name", QLabel())
