"""Blind annotation: model and tier hidden, the order shuffled per annotator,
deterministically."""

from __future__ import annotations

from pathlib import Path

from core.annotation import build_queue, list_annotators
from core.annotation.types import QueueFilter
from core.store import SessionStore
from tests.fixtures.report_session import build_report_session
from widgets.annotate.rate import ItemView, QueueFilterBar


def test_blind_queues_shuffle_per_annotator_and_repeat(tmp_path: Path) -> None:
    session = build_report_session(tmp_path / "r.taillens")
    with SessionStore.open(session.path) as store:
        ids = {a.name: a.id for a in list_annotators(store)}
        spec = QueueFilter(unrated_only=False, langs=("en",))
        blind = QueueFilter(unrated_only=False, langs=("en",), blind=True)

        def order(name: str, s: QueueFilter) -> list:
            return [item.ref for item in build_queue(store, ids[name], s).items]

        plain = order("ana", spec)
        assert len(plain) > 3
        assert order("ana", blind) == order("ana", blind)  # the same order every time
        assert sorted(order("ana", blind)) == sorted(plain)  # the same items
        assert order("ana", blind) != plain
        assert order("ana", blind) != order("ben", blind)  # each annotator their own


def test_blind_hides_the_model_and_tier_and_is_on_by_default(qtbot, tmp_path: Path) -> None:
    bar = QueueFilterBar()
    qtbot.addWidget(bar)
    assert bar.queue_filter().blind  # on by default for raters
    session = build_report_session(tmp_path / "r.taillens")
    with SessionStore.open(session.path) as store:
        ana = next(a.id for a in list_annotators(store) if a.name == "ana")
        item = build_queue(store, ana, QueueFilter(unrated_only=False)).items[0]
    view = ItemView()
    qtbot.addWidget(view)
    view.show_item(0, 9, item, blind=False)
    assert item.model in view.meta_label.text()
    view.show_item(0, 9, item, blind=True)
    shown = view.meta_label.text()
    assert item.model not in shown and "tail" not in shown and "head" not in shown
    assert f"unit {item.unit_uid}" in shown
