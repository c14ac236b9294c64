"""A process killed mid-queue loses no rating it reported saved, and leaves a sound file.

The child stands in for the Annotate panel: it rates the items of a queue one by one
through the same core calls (each save its own committed transaction) and prints each
rating only after ``save`` returned. The test kills it with SIGKILL part-way through.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import select

from core.annotation import ItemRef, QueueFilter, build_queue, find_annotator, rating_of
from core.store import SessionStore
from core.store.models import Annotation
from tests.fixtures.report_session import build_report_session

ROOT = Path(__file__).resolve().parents[2]

RATER = """
import sys
from core.annotation import QueueFilter, Rating, add_annotator, build_queue
from core.store import SessionStore

store = SessionStore.open(sys.argv[1])
round_ = 0
while True:
    annotator = add_annotator(store, f"crash-{round_}")
    print(f"annotator {annotator.id}", flush=True)
    queue = build_queue(store, annotator.id, QueueFilter(disagreements_first=True))
    for index, item in enumerate(queue):
        fluency = (index + round_) % 6
        adequacy = index % 3
        rating = Rating(fluency=fluency, adequacy=adequacy,
                        blame="object" if adequacy else None,
                        corrected_text=f"fixed {index}" if index % 4 == 0 else None)
        saved = queue.save(index, rating)
        # printed only after the commit returned
        print(f"saved {annotator.id} {saved.item.kind} {saved.item.id} {fluency} {adequacy}",
              flush=True)
    round_ += 1
"""


def test_killed_rater_keeps_every_saved_rating(tmp_path: Path) -> None:
    built = build_report_session(tmp_path / "crash.taillens")
    child = subprocess.Popen(
        [sys.executable, "-c", RATER, str(built.path)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    saved: list[tuple[int, str, int, int, int]] = []
    deadline = time.monotonic() + 60
    try:
        while len(saved) < 45 and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            if line.startswith("saved "):
                _, annotator, kind, item, fluency, adequacy = line.split()
                saved.append((int(annotator), kind, int(item), int(fluency), int(adequacy)))
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    assert len(saved) >= 45, "the rater did not get going"
    # 31 items per queue: the kill lands in the second annotator's queue, mid-way.
    assert len({a for a, *_ in saved}) == 2

    with sqlite3.connect(built.path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with SessionStore.open(built.path) as store:
        for annotator, kind, item, fluency, adequacy in saved:
            rating = rating_of(store, annotator, ItemRef(kind, item))
            assert rating is not None, (annotator, kind, item)
            assert (rating.fluency, rating.adequacy) == (fluency, adequacy)
        with store.unit_of_work() as db:
            fixture_ratings = db.scalars(
                select(Annotation).where(Annotation.annotator_id.in_(built.annotators.values()))
            ).all()
        assert len(fixture_ratings) == 13  # 12 ratings and the golden answer, untouched
        # The session is usable as before: the first annotator's queue is done.
        first = find_annotator(store, "crash-0")
        assert len(build_queue(store, first.id, QueueFilter())) == 0
