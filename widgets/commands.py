"""A panel's main commands as QActions: what the window's Actions menu triggers.

Each command of ``widgets.panels.COMMANDS`` names the panel's button that does it (an
attribute of the panel, never its label: a reworded button keeps its command). Its
QAction, a child of the button, presses the button when triggered and is enabled
exactly while the button is (it follows the button's enabled changes), so the menu
shows what the panel allows and a key never presses a disabled button.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractButton, QWidget

from widgets.panels import COMMANDS


class ButtonAction(QAction):
    """A QAction that presses ``button``; enabled while the button is."""

    def __init__(self, button: QAbstractButton, text: str) -> None:
        super().__init__(text, button)
        self.button = button
        self.setEnabled(button.isEnabled())
        self.triggered.connect(self._press)
        button.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.button and event.type() == QEvent.Type.EnabledChange:
            self.setEnabled(self.button.isEnabled())
        return False

    def _press(self) -> None:
        if self.button.isEnabled():
            self.button.click()


def command_actions(key: str, panel: QWidget) -> dict[str, QAction]:
    """The commands of panel ``key`` (its entries in ``COMMANDS``), by name."""
    actions: dict[str, QAction] = {}
    for command in COMMANDS:
        if command.panel != key:
            continue
        button = getattr(panel, command.button, None)
        if not isinstance(button, QAbstractButton):
            raise TypeError(f"panel {key!r} has no button {command.button!r} for {command.name}")
        actions[command.name] = ButtonAction(button, command.text)
    return actions
