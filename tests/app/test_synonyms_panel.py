"""Scores panel ▸ Synonyms…: the ESA synonym editor on a real session."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.gui import build_window
from core.metrics.esa import synonyms
from core.store import SessionStore
from tests.fixtures.reads import settle_reads
from tests.fixtures.scoring_session import build_session


@pytest.fixture
def editor(qtbot, tmp_path: Path):
    path = tmp_path / "s.taillens"
    build_session(path)
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(path)
    panel = controller.scores.panel
    panel.synonyms_button.click()
    dialog = panel.synonym_dialog
    settle_reads(qtbot, controller)  # the table is a view read (off the UI thread)
    yield controller, dialog, path
    dialog.close()
    controller.shutdown()


def test_add_seed_remove_through_the_dialog(qtbot, editor) -> None:
    controller, dialog, _path = editor
    starter = len(dialog.rows())
    assert starter > 200 and "First use" in dialog.message.text()
    dialog.entity_edit.setText("Rome")
    dialog.synonym_edit.setText("the Eternal City")
    dialog.add_button.click()
    settle_reads(qtbot, controller)
    assert ("Rome", "the Eternal City", "", "user") in dialog.rows()
    assert len(dialog.rows()) == starter + 1
    assert "Added 'the Eternal City'" in dialog.message.text()
    assert dialog.entity_edit.text() == ""
    dialog.seed_button.click()
    settle_reads(qtbot, controller)
    assert "Starter set: 0 of" in dialog.message.text()
    dialog.table.selectRow(next(i for i, r in enumerate(dialog.rows()) if r[0] == "Rome"))
    dialog.remove_button.click()
    settle_reads(qtbot, controller)
    assert all(r[0] != "Rome" for r in dialog.rows())
    assert ("Rome", "the Eternal City", "") not in synonyms.synonym_rows(controller.store)


def test_a_row_that_names_no_entity_is_refused_in_red(qtbot, editor) -> None:
    controller, dialog, path = editor
    starter = dialog.rows()
    dialog.entity_edit.setText("   ")
    dialog.synonym_edit.setText("Spanish")
    dialog.add_button.click()
    settle_reads(qtbot, controller)
    assert "the row names no entity" in dialog.message.text()
    from widgets.theme import tone

    assert tone("error") in dialog.message.styleSheet()  # the theme's error colour
    assert dialog.rows() == starter
    bad = path.parent / "bad.tsv"
    bad.write_text("Italy\tItalian\n\tGerman\n", encoding="utf-8")
    dialog.import_requested.emit(str(bad))
    settle_reads(qtbot, controller)
    assert "bad.tsv, line 2: the row names no entity" in dialog.message.text()
    assert dialog.rows() == starter
    with SessionStore.open(path) as store:
        assert all(r.source == "starter" for r in synonyms.list_synonyms(store))
