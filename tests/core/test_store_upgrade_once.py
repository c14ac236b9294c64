"""An upgrade killed after its backup was written, run again, keeps one backup."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from core.store import SessionStore, inspect_file

ROOT = Path(__file__).resolve().parents[2]

# Killed (SIGKILL, by itself) at the moment the schema upgrade would start: the backup
# copy is written, the upgrade never runs.
KILLED_UPGRADE = """
import os, signal, sys
import core.store.session as session
session.upgrade = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
session.SessionStore.open(sys.argv[1])
"""


@pytest.mark.parametrize("kills", [1, 3])
def test_an_interrupted_upgrade_leaves_one_backup_and_says_where(
    make_old_session: Callable[..., Path], kills: int
) -> None:
    path = make_old_session("0003")
    for _ in range(kills):
        killed = subprocess.run(
            [sys.executable, "-c", KILLED_UPGRADE, str(path)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
        )
        assert killed.returncode == -9, killed.stderr
        assert inspect_file(path).revision == "0003"
    backups = [p for p in path.parent.iterdir() if ".backup-" in p.name]
    assert len(backups) == 1
    with SessionStore.open(path) as store:
        assert store.migrated_from == "0003" and store.schema_revision != "0003"
        assert store.backup_path == backups[0].resolve(), "the backup kept is the one named"
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, backups[0].name])
    assert inspect_file(backups[0]).revision == "0003"


def test_a_changed_file_gets_a_new_backup(make_old_session: Callable[..., Path]) -> None:
    """Only a byte-identical backup is used again: after a change, the next try copies."""
    import sqlite3
    from contextlib import closing

    path = make_old_session("0003")
    subprocess.run(
        [sys.executable, "-c", KILLED_UPGRADE, str(path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
    )
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("INSERT INTO annotators (name) VALUES ('later')")
        conn.commit()
    with SessionStore.open(path) as store:
        assert store.migrated_from == "0003"
    assert len([p for p in path.parent.iterdir() if ".backup-" in p.name]) == 2


def test_the_cli_says_where_the_backup_is(make_old_session: Callable[..., Path]) -> None:
    path = make_old_session("0003")
    done = subprocess.run(
        [sys.executable, "-m", "app", "annotators", "--session", str(path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    backups = [p for p in path.parent.iterdir() if ".backup-" in p.name]
    assert len(backups) == 1
    assert (
        f"taillens: old.taillens upgraded from schema revision 0003 to "
        f"{SessionStore.head_revision()}; the old file was kept as {backups[0]}" in done.stderr
    )


# Killed while the backup copy is being placed: its hidden .partial file is left behind.
KILLED_BACKUP = """
import os, signal, sys
import core.store.session as session
os.replace = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
session.SessionStore.open(sys.argv[1])
"""


def test_a_backup_killed_half_way_is_cleaned_by_the_next_run(
    make_old_session: Callable[..., Path],
) -> None:
    path = make_old_session("0003")
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_BACKUP, str(path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -9, killed.stderr
    partial = [p.name for p in path.parent.iterdir() if p.name.endswith(".partial")]
    assert len(partial) == 1 and partial[0].startswith(".old.backup-rev0003-")
    with SessionStore.open(path) as store:
        backup = store.backup_path
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, backup.name])
