"""core.state: observable fields, batches, derived fields; no Qt anywhere."""

from __future__ import annotations

import numpy as np
import pytest

from core.state import Field, State


class Point(State):
    x = Field[int](0)
    y = Field[int](0)
    tags = Field[list[str]](factory=list)
    total = Field[int](0)  # derived: x + y

    def derive(self, changed: set[str]) -> None:
        if changed & {"x", "y"}:
            self.total = self.x + self.y


def test_a_set_notifies_name_old_and_new_once_and_only_on_change() -> None:
    point = Point(x=1)
    heard: list[tuple[str, object, object]] = []
    point.subscribe(lambda *change: heard.append(change), ("x",))
    point.x = 2
    point.x = 2  # the same value: nobody is told
    point.y = 5  # not subscribed
    assert heard == [("x", 1, 2)]
    assert point.values() == {"x": 2, "y": 5, "tags": [], "total": 7}


def test_a_batch_is_delivered_once_with_first_old_and_last_new() -> None:
    point = Point()
    heard: list[tuple[str, object, object]] = []
    batches: list[dict] = []
    point.subscribe(lambda *change: heard.append(change))
    point.watch(lambda changes: batches.append(dict(changes)), ("x",))
    with point.batch():
        point.x = 1
        point.x = 3
        point.y = 4
        with point.batch():  # nested: still one delivery, at the outermost end
            point.y = 6
        assert heard == [] and point.total == 0  # derived when the batch ends
    assert heard == [("x", 0, 3), ("y", 0, 6), ("total", 0, 9)]
    assert batches == [{"x": (0, 3), "y": (0, 6), "total": (0, 9)}]
    point.update(x=3, y=6)  # nothing changes: nothing delivered
    assert len(batches) == 1
    with point.batch():  # changed and changed back: nothing to tell
        point.y = 1
        point.y = 6
    assert len(heard) == 3


def test_derived_fields_are_current_when_subscribers_read_them() -> None:
    point = Point()
    seen: list[int] = []
    point.subscribe(lambda _name, _old, _new: seen.append(point.total), ("x",))
    point.x = 4
    assert seen == [4]


def test_unsubscribe_defaults_and_bad_names() -> None:
    first, second = Point(), Point()
    first.tags.append("a")
    assert second.tags == []  # a factory default is never shared
    heard: list[object] = []
    stop = first.subscribe(lambda *change: heard.append(change))
    stop()
    first.x = 9
    assert heard == []
    with pytest.raises(ValueError, match="no field z"):
        first.subscribe(lambda *change: None, ("z",))
    with pytest.raises(TypeError, match="no field z"):
        Point(z=1)
    with pytest.raises(TypeError, match="no field z"):
        first.update(z=1)


def test_arrays_and_objects_without_equality_count_as_changed() -> None:
    class Holder(State):
        array = Field[object](None)

    holder = Holder()
    heard: list[str] = []
    holder.subscribe(lambda name, _old, _new: heard.append(name))
    values = np.arange(3)
    holder.array = values
    holder.array = values  # the same object
    holder.array = np.arange(3)  # equal contents, another array: told
    assert heard == ["array", "array"]
