"""Annotate's reference modes in the real window: "Write references" (keyboard-first,
stored as gold with the annotator) and "Review translations" (F.2 flags by key, a
correction promoted to gold, the Table 1 summary)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from sqlalchemy import select

from app.gui import build_window
from core.store import SessionStore
from core.store.models import Annotation, ReferenceDerivation, UnitReference
from tests.fixtures.annotate_panel import activate, choose
from tests.fixtures.gold_reference_session import seed_session

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """Three units with English gold; units 0 and 1 translated into Italian (weak, good)."""
    path = seed_session(tmp_path / "r.taillens")
    with SessionStore.open(path) as store, store.unit_of_work() as db:
        sources = db.scalars(select(UnitReference).order_by(UnitReference.id)).all()
        for source, (band, score) in zip(
            sources[:2], [("weak", 0.4), ("good", 0.85)], strict=False
        ):
            silver = UnitReference(
                unit_id=source.unit_id, lang="it", text="Parigi è capitale.", quality="silver"
            )
            db.add(silver)
            db.flush()
            db.add(
                ReferenceDerivation(
                    reference_id=silver.id,
                    source_reference_id=source.id,
                    source_lang="en",
                    lang="it",
                    model="m",
                    key="k",
                    mt_text=silver.text,
                    qe_score=score,
                    qe_band=band,
                    qe_spans={
                        "spans": [{"text": "Parigi", "start": 0, "end": 6, "severity": "major"}]
                    },
                )
            )
    return path


@pytest.fixture
def wired(qtbot, session: Path, tmp_path: Path):
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(session)
    yield window, controller, controller.annotate.panel, controller.annotate.references
    controller.shutdown()


def test_write_references_by_keyboard(qtbot, wired, session: Path) -> None:
    window, controller, panel, refs = wired
    activate(qtbot, window)
    choose(panel, "ann")
    view = refs.write_view
    panel.tabs.setCurrentWidget(view)
    view.lang_combo.setCurrentIndex(view.lang_combo.findData("it"))
    view.load_button.click()
    qtbot.waitUntil(lambda: view.unit_id is not None, timeout=10_000)
    assert "Unit u2" in view.header.text()  # the one without an Italian reference first
    assert "Paris" in view.triples.text()
    qtbot.waitUntil(view.editor.hasFocus, timeout=5000)
    qtbot.keyClicks(view.editor, "Parigi sta in Francia.")
    qtbot.keyClick(view.editor, Qt.Key.Key_Return, CTRL)
    qtbot.waitUntil(lambda: "Saved as gold" in view.message.text(), timeout=10_000)
    with SessionStore.open_read_only(session) as store, store.snapshot() as db:
        row = db.scalars(
            select(UnitReference).where(UnitReference.text == "Parigi sta in Francia.")
        ).one()
        assert (row.quality, row.lang, row.created_by) == ("gold", "it", 1)


def test_review_translations_flags_by_key_and_promotes(qtbot, wired, session: Path) -> None:
    window, controller, panel, refs = wired
    activate(qtbot, window)
    choose(panel, "bob")
    view = refs.review_view
    panel.tabs.setCurrentWidget(view)
    assert view.sample_spin.value() == 50
    view.sample_button.click()
    qtbot.waitUntil(lambda: view.reference_id is not None, timeout=10_000)
    assert "en→it: 1 of 1 (band weak" in view.header.text()  # good is not sampled
    assert "background:" in view.translation.text()  # the error span is highlighted
    qtbot.waitUntil(view.hasFocus, timeout=5000)
    qtbot.keyClick(view, Qt.Key.Key_2)  # mistranslation
    qtbot.keyClick(view, Qt.Key.Key_6)  # grammar
    qtbot.keyClick(view, Qt.Key.Key_C)
    assert view.corrected.hasFocus()
    qtbot.keyClicks(view.corrected, "Parigi la capitale.")
    qtbot.keyClick(view.corrected, Qt.Key.Key_Return, CTRL)
    qtbot.waitUntil(lambda: "Review saved" in view.message.text(), timeout=10_000)
    assert "gold reference" in view.message.text()
    with SessionStore.open_read_only(session) as store, store.snapshot() as db:
        review = db.scalars(select(Annotation)).one()
        assert review.error_taxonomy == {"accuracy": ["mistranslation"], "fluency": ["grammar"]}
        assert review.annotator_id == 2
        gold = db.scalars(
            select(UnitReference).where(UnitReference.text == "Parigi la capitale.")
        ).one()
        assert gold.quality == "gold"
    view.report_button.click()
    qtbot.waitUntil(lambda: "4.00 ± 0.00" in view.summary.text(), timeout=10_000)
