"""The training folder's housekeeping, without a model: what a killed write left is
removed before a resume, a write that fails leaves the old file, leftovers alone make no
training to resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.io.folder_lock import LOCK_NAME
from core.verbalise.training.folder import (
    CHECKPOINT,
    check_out,
    remove_leftovers,
    write_atomically,
)


def test_a_resume_removes_what_killed_writes_left_and_keeps_the_checkpoint(
    tmp_path: Path,
) -> None:
    (tmp_path / CHECKPOINT).write_bytes(b"weights")
    (tmp_path / f".{CHECKPOINT}.123-abcd.tmp").write_bytes(b"half")
    (tmp_path / ".final-123-abcd").mkdir()
    (tmp_path / ".final-123-abcd" / "model.safetensors").write_bytes(b"half")
    remove_leftovers(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [CHECKPOINT]
    assert (tmp_path / CHECKPOINT).read_bytes() == b"weights"


def test_an_atomic_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / CHECKPOINT
    path.write_bytes(b"old")

    def fail(handle: object) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(path, fail)
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == [CHECKPOINT]
    write_atomically(path, lambda handle: handle.write(b"new"))
    assert path.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == [CHECKPOINT]


def test_a_folder_with_only_leftovers_is_a_new_training(tmp_path: Path) -> None:
    (tmp_path / ".x.tmp").write_bytes(b"")
    (tmp_path / LOCK_NAME).write_text("{}")
    folder = check_out(tmp_path)
    assert folder.resume_step is None and folder.record is None


def test_the_lock_file_is_never_a_leftover_and_new_temporary_names_are(tmp_path: Path) -> None:
    from core.io.atomic import temporary_name
    from core.io.folder_lock import LOCK_NAME

    (tmp_path / LOCK_NAME).write_text("{}", encoding="utf-8")
    partial = temporary_name(tmp_path / "final", "partial")
    partial.mkdir()
    temporary_name(tmp_path / CHECKPOINT).write_bytes(b"half")
    remove_leftovers(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [LOCK_NAME]
