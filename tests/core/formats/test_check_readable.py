"""One check of an import's input file for every format (core.formats.common)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.formats import FormatError
from core.formats.wdv import import_wdv
from core.formats.webnlg.importer import import_webnlg
from core.store import SessionStore


@pytest.mark.parametrize("importer", [import_wdv, import_webnlg])
def test_bad_input_files_are_refused_with_the_reason(
    store: SessionStore, tmp_path: Path, importer
) -> None:
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, reason in (
        (tmp_path / "missing.json", "no such file"),
        (empty, "the file is empty"),
        (fifo, "not a regular file"),
    ):
        with pytest.raises(FormatError, match=reason):
            importer(store, path)
    if importer is import_wdv:  # webnlg imports a folder's files
        with pytest.raises(FormatError, match="a folder, not a file"):
            importer(store, tmp_path)
