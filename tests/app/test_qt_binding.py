"""Guards against known-bad Qt binding releases."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    value = Signal(object)


def test_signal_emit_keeps_reference_counts(qapp) -> None:
    """PySide6 6.12.0 loses a reference to True on every emit(); after a few hundred
    emits Python aborts ("bool_dealloc"). The app emits progress signals constantly."""
    emitter = _Emitter()
    received: list[object] = []
    emitter.value.connect(received.append)
    before = sys.getrefcount(True)
    for i in range(200):
        emitter.value.emit(i)
    after = sys.getrefcount(True)
    assert len(received) == 200
    assert abs(after - before) < 20, f"True lost {before - after} references in 200 emits"
