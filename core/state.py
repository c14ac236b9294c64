"""Observable state objects: what a view decides, held apart from the widgets that show it.

Modelled on glue's state classes (callback properties) and napari's evented models, with
no Qt: a :class:`State` subclass declares its attributes as :class:`Field` s; setting one
to a different value notifies the callbacks subscribed to it with ``(name, old, new)``.
Widgets render a state and write the user's edits into it; controllers subscribe to it
to load, derive and save. Tests drive a state without a window.

Changes made inside ``with state.batch():`` (and by :meth:`State.update`) are delivered
together when the outermost batch ends, each field once (its value before the batch and
after), so a subscriber never sees half of a change, such as a new category with the old
category's settings. A subclass derives fields from others in :meth:`State.derive`,
which runs before anyone is told, so derived values are never stale when read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
Callback = Callable[[str, Any, Any], None]  # (name, old, new)
BatchCallback = Callable[[Mapping[str, tuple[Any, Any]]], None]  # name -> (old, new)


def same(old: object, new: object) -> bool:
    """Whether setting ``new`` over ``old`` changes nothing: identity, else equality where
    it is a plain yes or no (numpy arrays and objects without ``==`` count as changed)."""
    if old is new:
        return True
    try:
        return bool(old == new) if type(old) is type(new) else False
    except (TypeError, ValueError):
        return False


class Field(Generic[T]):
    """An observable attribute of a :class:`State` with a default value (never shared
    between instances when ``factory`` makes it)."""

    def __init__(self, default: T | None = None, *, factory: Callable[[], T] | None = None) -> None:
        self.default = default
        self.factory = factory
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> Field[T]: ...

    @overload
    def __get__(self, obj: State, owner: type) -> T: ...

    def __get__(self, obj: State | None, owner: type) -> Field[T] | T:
        if obj is None:
            return self
        values = obj.__dict__["_values"]
        if self.name not in values:
            values[self.name] = self.factory() if self.factory is not None else self.default
        return values[self.name]

    def __set__(self, obj: State, value: T) -> None:
        old = self.__get__(obj, type(obj))
        obj.__dict__["_values"][self.name] = value
        if not same(old, value):
            obj._changed(self.name, old, value)


class State:
    """Base of the observable state objects; see the module's docstring."""

    def __init__(self, **values: Any) -> None:
        self.__dict__["_values"] = {}
        self._callbacks: list[tuple[frozenset[str] | None, Callback]] = []
        self._batch_callbacks: list[tuple[frozenset[str] | None, BatchCallback]] = []
        self._depth = 0
        self._pending: dict[str, tuple[Any, Any]] = {}
        self._deriving = False
        unknown = set(values) - set(self.fields())
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        with self.batch():
            for name, value in values.items():
                setattr(self, name, value)
        self._pending.clear()  # construction is not a change anybody missed

    @classmethod
    def fields(cls) -> tuple[str, ...]:
        names: dict[str, None] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, Field):
                    names[name] = None
        return tuple(names)

    def values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.fields()}

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.values().items())
        return f"{type(self).__name__}({inner})"

    # -- subscribing ---------------------------------------------------------------------
    def subscribe(
        self, callback: Callback, names: Iterable[str] | None = None
    ) -> Callable[[], None]:
        """Call ``callback(name, old, new)`` for each change of ``names`` (all fields when
        None); returns a function that unsubscribes."""
        entry = (self._check(names), callback)
        self._callbacks.append(entry)
        return lambda: self._callbacks.remove(entry) if entry in self._callbacks else None

    def watch(
        self, callback: BatchCallback, names: Iterable[str] | None = None
    ) -> Callable[[], None]:
        """Call ``callback(changes)`` once per batch that changed any of ``names``, with
        every field the batch changed (name -> (old, new)): a subscriber that must tell a
        user's edit from a load sees both in one call."""
        entry = (self._check(names), callback)
        self._batch_callbacks.append(entry)
        return lambda: (
            self._batch_callbacks.remove(entry) if entry in self._batch_callbacks else None
        )

    def _check(self, names: Iterable[str] | None) -> frozenset[str] | None:
        if names is None:
            return None
        wanted = frozenset([names] if isinstance(names, str) else names)
        unknown = wanted - set(self.fields())
        if unknown:
            raise ValueError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        return wanted

    # -- changing ------------------------------------------------------------------------
    @contextmanager
    def batch(self) -> Iterator[None]:
        """Deliver the changes made inside as one, when the outermost batch ends."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._deliver()

    def update(self, **values: Any) -> None:
        """Set several fields as one change."""
        with self.batch():
            for name, value in values.items():
                if name not in self.fields():
                    raise TypeError(f"{type(self).__name__} has no field {name}")
                setattr(self, name, value)

    def derive(self, changed: set[str]) -> None:
        """Recompute derived fields after ``changed`` changed (a subclass's hook; it may
        set fields, which are delivered with the rest)."""

    def _changed(self, name: str, old: Any, new: Any) -> None:
        first_old = self._pending[name][0] if name in self._pending else old
        self._pending[name] = (first_old, new)
        if self._depth == 0:
            self._deliver()

    def _deliver(self) -> None:
        if self._deriving or not self._pending:
            return
        self._deriving = True
        try:
            self.derive(set(self._pending))
        finally:
            self._deriving = False
        pending = {k: v for k, v in self._pending.items() if not same(v[0], v[1])}
        self._pending = {}
        if not pending:
            return
        for names, callback in list(self._callbacks):
            for name, (old, new) in pending.items():
                if names is None or name in names:
                    callback(name, old, new)
        for names, batch_callback in list(self._batch_callbacks):
            if names is None or names & pending.keys():
                batch_callback(pending)
