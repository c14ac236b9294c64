"""File ▸ Import folder… and the import dialog's language field."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from tests.fixtures.controller_window import window_and_controller  # noqa: F401 - fixture
from tests.fixtures.reads import settle_reads
from tests.fixtures.webnlg_release_samples import WEBNLG_2017, WEBNLG_2020


def langs(controller) -> list[str]:
    from sqlalchemy import select

    from core.store.models import UnitReference

    with controller.store.unit_of_work() as db:
        return list(db.scalars(select(UnitReference.lang).order_by(UnitReference.id)))


def test_import_folder_from_the_file_menu(
    qtbot,
    window_and_controller,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window, controller = window_and_controller
    assert controller.new_session(tmp_path / "s.taillens")
    folder = tmp_path / "release"
    (folder / "1triples").mkdir(parents=True)
    (folder / "1triples" / "Airport.xml").write_text(WEBNLG_2017, encoding="utf-8")
    (folder / "test-en.xml").write_text(WEBNLG_2020, encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    asked: list[str] = []
    monkeypatch.setattr(window, "ask_import_language", lambda target: asked.append(target) or "de")
    assert window.action_import_folder.isEnabled()
    window.action_import_folder.trigger()
    qtbot.waitUntil(lambda: not controller.runner.active, timeout=30_000)
    qtbot.waitUntil(
        lambda: window.last_message is not None and "3 units" in window.last_message.text(),
        timeout=5000,
    )
    assert asked == ["release/"]
    message = window.last_message
    assert "taken as de (as asked for the import (--lang))" in message.text()
    assert "1triples/Airport.xml: 1 entry" in message.detailedText()
    assert langs(controller) == ["de", "de", "de", "de"]


def test_language_field_cancel_and_bad_code(
    qtbot,
    window_and_controller,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window, controller = window_and_controller
    assert controller.new_session(tmp_path / "s.taillens")
    settle_reads(qtbot, controller)  # what opening it reads (the undo history's tail)
    source = tmp_path / "data-ru.xml"
    source.write_text(WEBNLG_2020, encoding="utf-8")
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", lambda *a, **k: (str(source), "WebNLG XML (*.xml)")
    )
    answers = iter([None, "zz", ""])
    monkeypatch.setattr(window, "ask_import_language", lambda target: next(answers))
    window.action_import.trigger()  # cancelled: nothing happens
    assert not controller.runner.active and controller.store.info()["tables"]["data_units"] == 0
    window.action_import.trigger()  # an unknown code: a message, nothing imported
    assert "'zz' is not a two-letter ISO 639-1 code" in window.error_log.model.entries[-1].message
    window.action_import.trigger()  # empty: the file name decides
    qtbot.waitUntil(lambda: not controller.runner.active, timeout=30_000)
    qtbot.waitUntil(
        lambda: window.last_message is not None and "2 units" in window.last_message.text(),
        timeout=5000,
    )
    assert langs(controller) == ["ru", "ru", "ru"]
    assert "from the file name data-ru.xml" in window.last_message.text()


def test_the_dialog_reads_the_language(qtbot) -> None:
    from widgets.import_dialog import ImportLanguageDialog

    dialog = ImportLanguageDialog("x.xml")
    qtbot.addWidget(dialog)
    qtbot.keyClicks(dialog.lang_edit, "RU")
    assert dialog.language() == "ru"
