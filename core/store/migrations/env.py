"""Alembic environment for session files.

At runtime :mod:`core.store.migrate` passes an open connection in
``config.attributes["connection"]``, so no alembic.ini is needed. For developers,
``alembic -x session=path/to/file.taillens revision --autogenerate -m "..."`` (with
``script_location`` pointing here) compares the models against that file.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine
from sqlalchemy.engine import URL

from core.store.models import Base

config = context.config
target_metadata = Base.metadata


def _configure_and_run(connection: object) -> None:
    context.configure(
        connection=connection,  # type: ignore[arg-type]
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url") or "sqlite://",
        target_metadata=target_metadata,
        render_as_batch=True,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure_and_run(connection)
        return
    session = context.get_x_argument(as_dictionary=True).get("session")
    # URL.create: a file name holding %, ? or # is the file itself, not URL syntax.
    url = (
        URL.create("sqlite", database=session)
        if session
        else config.get_main_option("sqlalchemy.url")
    )
    if not url:
        raise RuntimeError("pass -x session=FILE.taillens, or a connection in attributes")
    engine = create_engine(url)
    with engine.connect() as connection:
        _configure_and_run(connection)
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
