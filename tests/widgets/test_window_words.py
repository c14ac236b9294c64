"""What the window says is true to it and in the user's words: Getting
started names only panels, menu commands and buttons the window has; the panels' main
commands are menu actions with keys, listed in Help ▸ Keyboard shortcuts; no widget of
the window or of any dialog shows a developer's word."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QGroupBox,
    QLabel,
    QMenu,
    QWidget,
)

from app.dialogs import DIALOGS, open_dialog
from app.gui import build_window
from widgets.help import STEPS
from widgets.panels import COMMANDS, PANELS

DEVELOPER_WORDS = re.compile(
    r"\bjobs?\b|session store|\brow ?id\b|\bNone\b|traceback|payload|\bNaN\b|\bkwargs\b"
    r"|\bstderr\b|\bdict\b|\bException\b",
    re.IGNORECASE,
)
_CASE_SENSITIVE = {"none", "nan"}


@pytest.fixture
def wired(qtbot, tmp_path: Path):
    window, controller = build_window(
        QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    controller.open_session(tmp_path / "s.taillens", create=True)
    QApplication.processEvents()
    yield window, controller
    controller.shutdown()


def _menu_texts(window) -> set[str]:
    texts: set[str] = set()
    for menu in window.findChildren(QMenu):
        texts.add(menu.title().replace("&", ""))
        for action in menu.actions():
            texts.add(action.text().replace("&", ""))
    return texts


def _button_texts(widget: QWidget) -> set[str]:
    return {b.text().replace("&", "") for b in widget.findChildren(QAbstractButton)}


def test_getting_started_names_only_what_the_window_has(wired) -> None:
    window, _controller = wired
    known = {spec.title for spec in PANELS} | _menu_texts(window) | _button_texts(window)
    shortcuts = {spec.title: spec.shortcut for spec in PANELS}
    for title, panel, text in STEPS:
        assert panel in window.docks, title
        for name in re.findall(r"<b>(.*?)</b>", text):
            name = re.sub(r"\s+", " ", name)
            assert name in known, (title, name)
        for name, key in re.findall(r"<b>(\w+)</b> \((Ctrl\+\d)\)", text):
            assert shortcuts[name] == key, (title, name, key)


def test_panel_commands_are_menu_actions_with_keys(wired, qtbot) -> None:
    window, _controller = wired
    for command in COMMANDS:
        assert window.panel_command(command.panel, command.name) is not None, command
        action = window.command_actions[command.key]
        assert action in window.actions_menu.actions()
    rows = window.show_shortcuts().texts()
    listed = {(where, what, keys) for where, what, keys in rows}
    for command in COMMANDS:
        if command.shortcut:
            assert ("Actions", command.text.replace("&", ""), command.shortcut) in listed
    # The key works: Build report brings the Report forward and presses its button.
    window.docks["browser"].raise_()
    pressed = []
    button = window.panels["report"].build_button
    button.clicked.connect(lambda: pressed.append(True))
    window.command_actions["report:build"].trigger()
    assert pressed and not window.docks["report"].visibleRegion().isEmpty()
    # The menu item follows the panel's button: disabled with it, and never presses it.
    button.setEnabled(False)
    assert not window.command_actions["report:build"].isEnabled()
    window.command_actions["report:build"].trigger()
    assert pressed == [True]
    button.setEnabled(True)
    assert window.command_actions["report:build"].isEnabled()


def _shown_texts(root: QWidget) -> list[tuple[str, str]]:
    texts: list[tuple[str, str]] = [(root.objectName(), root.windowTitle())]
    for widget in [root, *root.findChildren(QWidget)]:
        name = type(widget).__name__
        if isinstance(widget, QLabel):
            texts.append((name, re.sub(r"<[^>]+>", " ", widget.text())))
        elif isinstance(widget, QAbstractButton):
            texts.append((name, widget.text()))
        elif isinstance(widget, QGroupBox):
            texts.append((name, widget.title()))
        elif isinstance(widget, QComboBox):
            texts.extend((name, widget.itemText(i)) for i in range(widget.count()))
        for action in widget.actions():
            texts.append(("QAction", action.text()))
        # Tooltips are prose: "None ticked" is English there, "job" is not.
        tip = re.sub(r"\b(None|NaN)\b", "", widget.toolTip() + " " + widget.statusTip())
        texts.append((f"{name} tooltip", tip))
    return texts


def _developer_words(texts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    found = []
    for kind, text in texts:
        for match in DEVELOPER_WORDS.finditer(text or ""):
            word = match.group(0)
            if word.lower() in _CASE_SENSITIVE and word not in ("None", "NaN"):
                continue
            found.append((kind, text))
    return found


def test_no_developer_words_in_the_window_or_its_dialogs(wired) -> None:
    window, controller = wired
    texts = _shown_texts(window)
    for name in DIALOGS:
        dialog = open_dialog(controller, name)
        QApplication.processEvents()
        texts.extend(_shown_texts(dialog))
        dialog.close()
    assert not _developer_words(texts)


def test_the_word_scan_finds_a_developer_word(wired) -> None:
    window, _controller = wired
    window.statusBar().showMessage("job 3 failed: None")
    assert _developer_words(_shown_texts(window))


def test_the_score_and_sample_dialogs_reopen_with_the_choices_made(wired) -> None:
    window, controller = wired
    dialog = open_dialog(controller, "score")
    ticked = [name for name, check in dialog.metric_checks.items() if check.isChecked()]
    dialog.metric_checks[ticked[0]].setChecked(False)
    dialog.references_check.setChecked(True)
    dialog.esa_distance.setValue(0.25)
    dialog.accept()
    again = open_dialog(controller, "score")
    assert not again.metric_checks[ticked[0]].isChecked()
    assert all(again.metric_checks[name].isChecked() for name in ticked[1:])
    assert again.references_check.isChecked() and again.esa_distance.value() == 0.25
    again.reject()

    sample = open_dialog(controller, "sample")
    sample.shape.setCurrentText("chain")
    sample.size_spin.setValue(4)
    sample.accept()
    again = open_dialog(controller, "sample")
    assert (again.shape.currentText(), again.size_spin.value()) == ("chain", 4)
    # Kept in the window's settings, through a Qt-free state object.
    assert "chain" in str(window.settings.value("dialogs/sample"))
