"""widgets/binding.py: a combo refilled keeps the field's value and writes nothing back;
a binding on another of the widget's signals writes at each of its emissions."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QLineEdit

from core.state import Field, State
from widgets.binding import bind


class Form(State):
    tier: Field[str | None] = Field("torso")
    name = Field("")


def test_refill_shows_the_value_and_writes_nothing(qtbot) -> None:
    combo = QComboBox()
    qtbot.addWidget(combo)
    combo.addItems(["head", "torso"])
    state = Form()
    seen: list[tuple[str, object, object]] = []
    state.subscribe(lambda *change: seen.append(change))
    binding = bind(state, "tier", combo)

    def fill() -> None:
        combo.clear()  # index -1, then 0 once an item comes: neither is the user's
        combo.addItems(["long_tail", "torso", "head"])

    binding.refill(fill)
    assert combo.currentText() == "torso" and state.tier == "torso" and seen == []
    combo.setCurrentIndex(0)  # the user's choice still writes
    assert state.tier == "long_tail"


def test_a_chosen_signal_writes_at_each_key(qtbot) -> None:
    edit = QLineEdit()
    qtbot.addWidget(edit)
    state = Form()
    bind(state, "name", edit, signal=edit.textChanged)
    edit.setText("ab")  # no editingFinished: still the state's
    assert state.name == "ab"
    state.name = "cd"
    assert edit.text() == "cd"
