"""Two-way binding between a Qt-free :class:`core.state.State` field and one widget.

The one helper every panel uses instead of a setter per widget and ``blockSignals``
around it (glue's ``autoconnect_callbacks_to_qt`` is the model): the state holds the
value, the widget shows it, and the user's edit is written back into the state.

- ``bind(state, "field", widget)`` shows the field's value now, again whenever it
  changes, and writes the widget's edits into the field.
- A value the state sets is shown without echoing back (the widget's change is ignored
  while the binding itself renders), so nothing loops and no signal reaches the panel's
  own handlers twice.
- ``to_widget`` / ``from_widget`` convert where the widget shows something else than the
  field holds (a combo's item data is the usual case: see :func:`bind` for combos).
- The returned :class:`Binding` ``unbind()`` s itself when the widget is destroyed, so a
  state that outlives a panel never calls into a deleted widget.

Supported widgets: QComboBox (by item data, else text), QAbstractButton with a check
(QCheckBox, checkable QPushButton/QToolButton), QSpinBox, QDoubleSpinBox, QAbstractSlider,
QLineEdit (on editingFinished, so typing is not a state change per key, unless
``signal=edit.textChanged`` asks for it), QPlainTextEdit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSlider,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QWidget,
)

from core.state import State

Convert = Callable[[Any], Any]


def _same(value: Any) -> Any:
    return value


class Binding:
    """One field bound to one widget; see the module's docstring."""

    def __init__(
        self,
        state: State,
        name: str,
        widget: QWidget,
        *,
        to_widget: Convert = _same,
        from_widget: Convert = _same,
        signal: Any = None,
    ) -> None:
        self.state = state
        self.name = name
        self.widget = widget
        self.to_widget = to_widget
        self.from_widget = from_widget
        self._rendering = False
        self._unsubscribe: Callable[[], None] | None = state.subscribe(self._on_state, [name])
        self._disconnect = self._connect(signal)
        widget.destroyed.connect(self._on_destroyed)
        self.render()

    # -- state -> widget -------------------------------------------------------------------
    def _on_state(self, _name: str, _old: Any, _new: Any) -> None:
        self.render()

    def render(self) -> None:
        """Show the field's value in the widget, without writing it back."""
        value = self.to_widget(getattr(self.state, self.name))
        widget = self.widget
        self._rendering = True
        try:
            if isinstance(widget, QComboBox):
                index = widget.findData(value)
                if index < 0 and isinstance(value, str):
                    index = widget.findText(value)
                if index >= 0:
                    widget.setCurrentIndex(index)
                elif widget.isEditable():
                    widget.setEditText("" if value is None else str(value))
            elif isinstance(widget, QAbstractButton):
                widget.setChecked(bool(value))
            elif isinstance(widget, QSpinBox):
                widget.setValue(int(value))
            elif isinstance(widget, QDoubleSpinBox):
                widget.setValue(float(value))
            elif isinstance(widget, QAbstractSlider):
                widget.setValue(int(value))
            elif isinstance(widget, QLineEdit):
                text = "" if value is None else str(value)
                if widget.text() != text:
                    widget.setText(text)
            elif isinstance(widget, QPlainTextEdit):
                text = "" if value is None else str(value)
                if widget.toPlainText() != text:
                    widget.setPlainText(text)
        finally:
            self._rendering = False

    def refill(self, fill: Callable[[], object]) -> None:
        """Run ``fill`` (it changes what the widget offers: a combo's items), then show the
        field's value. The widget's changes while it is filled (a cleared combo's empty
        choice, its first new item) are the filling's, not the user's: none reaches the
        state."""
        self._rendering = True
        try:
            fill()
        finally:
            self._rendering = False
        self.render()

    # -- widget -> state -------------------------------------------------------------------
    def _connect(self, signal: Any = None) -> Callable[[], object]:
        widget = self.widget
        if signal is not None:
            pass  # the caller's: the edit is the state's at each of its emissions
        elif isinstance(widget, QComboBox):
            signal = widget.currentIndexChanged
        elif isinstance(widget, QAbstractButton):
            signal = widget.toggled
        elif isinstance(widget, QSpinBox | QDoubleSpinBox | QAbstractSlider):
            signal = widget.valueChanged
        elif isinstance(widget, QLineEdit):
            signal = widget.editingFinished
        elif isinstance(widget, QPlainTextEdit):
            signal = widget.textChanged
        else:
            raise TypeError(f"bind() does not know how to bind a {type(widget).__name__}")
        connection = signal.connect(self._on_widget)
        return lambda: QObject.disconnect(connection)

    def widget_value(self) -> Any:
        """What the widget shows, converted to the field's kind."""
        widget = self.widget
        if isinstance(widget, QComboBox):
            data = widget.currentData()
            value: Any = widget.currentText() if data is None else data
        elif isinstance(widget, QAbstractButton):
            value = widget.isChecked()
        elif isinstance(widget, QSpinBox | QDoubleSpinBox | QAbstractSlider):
            value = widget.value()
        elif isinstance(widget, QLineEdit):
            value = widget.text()
        else:
            assert isinstance(widget, QPlainTextEdit)
            value = widget.toPlainText()
        return self.from_widget(value)

    def _on_widget(self, *_args: Any) -> None:
        if self._rendering or self._unsubscribe is None:
            return
        setattr(self.state, self.name, self.widget_value())

    def _on_destroyed(self, *_args: Any) -> None:
        # The widget's connections went with its C++ side: only the state's side is left.
        self._disconnect = lambda: None
        self.unbind()

    def unbind(self) -> None:
        """Stop both directions (idempotent; also runs when the widget is destroyed)."""
        if self._unsubscribe is None:
            return
        self._unsubscribe()
        self._unsubscribe = None
        self._disconnect()


def bind(
    state: State,
    name: str,
    widget: QWidget,
    *,
    to_widget: Convert = _same,
    from_widget: Convert = _same,
    signal: Any = None,
) -> Binding:
    """Bind ``state.<name>`` to ``widget`` both ways; see the module's docstring.

    A combo is matched by item data first (``findData``), then by text; its edits give
    the current item's data, or its text where the item has none. ``signal`` (one of the
    widget's) replaces the one the edits are taken on: a line edit's ``textChanged`` where
    each key is a change, an editable combo's ``currentTextChanged`` where typed text is.
    """
    if name not in state.fields():
        raise ValueError(f"{type(state).__name__} has no field {name}")
    return Binding(state, name, widget, to_widget=to_widget, from_widget=from_widget, signal=signal)
