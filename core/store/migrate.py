"""The session schema's migrations: Alembic configured in code, the revision graph read
from the scripts without importing Alembic, and upgrading a file in place."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from core.store.errors import (
    SessionCorruptError,
)

if TYPE_CHECKING:
    from alembic.config import Config

from core.store.engine import make_engine, translate_error

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


# -- Alembic -------------------------------------------------------------------------


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic configuration for session files, built in code (no alembic.ini).
    Alembic (about 0.45 s to import) is loaded only to upgrade a file."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    config.attributes["connection"] = connection
    return config


# The module-level assignments Alembic reads from each migration script.
_REVISION = re.compile(r"^revision\b[^=\n]*=\s*[\"']([^\"']+)[\"']", re.M)
_DOWN_REVISION = re.compile(r"^down_revision\b[^=\n]*=\s*(?:None|[\"']([^\"']+)[\"'])", re.M)


@lru_cache(maxsize=1)
def revision_graph() -> dict[str, str | None]:
    """Each schema revision and the one it upgrades from, read from the migration
    scripts' ``revision`` / ``down_revision`` lines without importing Alembic (checking a
    file on opening needs only this; a test checks it agrees with Alembic's own reading)."""
    graph: dict[str, str | None] = {}
    for script in sorted((MIGRATIONS_DIR / "versions").glob("*.py")):
        text = script.read_text(encoding="utf-8")
        revision, down = _REVISION.search(text), _DOWN_REVISION.search(text)
        if revision is None or down is None:
            raise RuntimeError(f"{script.name}: no revision / down_revision assignment")
        graph[revision.group(1)] = down.group(1)
    return graph


def head_revision() -> str:
    """The schema revision this version of TailLens writes."""
    graph = revision_graph()
    heads = set(graph) - {down for down in graph.values() if down is not None}
    assert len(heads) == 1, f"the migrations must form one line, heads: {sorted(heads)}"
    return heads.pop()


def known_revisions() -> frozenset[str]:
    """Every schema revision this version of TailLens can open (and upgrade)."""
    return frozenset(revision_graph())


def upgrade(path: Path, busy_timeout_s: float, revision: str = "head") -> None:
    """Run Alembic on ``path`` in one transaction: it fails as a whole or not at all."""
    # Foreign keys off: batch mode rebuilds tables with DROP TABLE, which with foreign
    # keys on would cascade-delete the rows that point at them.
    engine = make_engine(path, busy_timeout_s, foreign_keys=False)
    try:
        with engine.begin() as connection:
            from alembic import command

            command.upgrade(alembic_config(connection), revision)
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise SessionCorruptError(
                    path, f"after the upgrade {len(broken)} rows point at missing rows"
                )
    except DBAPIError as exc:
        translated = translate_error(exc, path)
        if translated is exc:
            raise
        raise translated from exc
    finally:
        engine.dispose()
