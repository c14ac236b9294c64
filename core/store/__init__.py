"""The session store: one SQLite file per session, every change committed at once.

Qt-free like the rest of :mod:`core`; only this package imports SQLAlchemy and Alembic.
"""

from core.session_info import SessionInfo
from core.store.errors import (
    NotASessionError,
    SessionCorruptError,
    SessionError,
    SessionExistsError,
    SessionLockedError,
    SessionMissingError,
    SessionReadOnlyError,
    SessionStorageError,
    SessionTooNewError,
)
from core.store.session import (
    APPLICATION_ID,
    FileCheck,
    SessionStore,
    alembic_config,
    clean_leftovers,
    discard_new_session,
    file_identity,
    head_revision,
    inspect_file,
    known_revisions,
    read_session_info,
    translate_error,
)

__all__ = [
    "APPLICATION_ID",
    "FileCheck",
    "NotASessionError",
    "SessionCorruptError",
    "SessionError",
    "SessionExistsError",
    "SessionLockedError",
    "SessionMissingError",
    "SessionReadOnlyError",
    "SessionStorageError",
    "SessionInfo",
    "SessionStore",
    "SessionTooNewError",
    "alembic_config",
    "clean_leftovers",
    "discard_new_session",
    "file_identity",
    "head_revision",
    "inspect_file",
    "known_revisions",
    "read_session_info",
    "translate_error",
]
