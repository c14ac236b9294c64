"""The session store: one SQLite file per session, every change committed at once.

Qt-free like the rest of :mod:`core`; only this package imports SQLAlchemy and Alembic.
"""

from core.session_info import SessionInfo
from core.store.engine import translate_error
from core.store.errors import (
    NotASessionError,
    SessionBoundsError,
    SessionCorruptError,
    SessionError,
    SessionExistsError,
    SessionForeignSchemaError,
    SessionLockedError,
    SessionMissingError,
    SessionReadOnlyError,
    SessionStorageError,
    SessionTooNewError,
)
from core.store.fileinfo import APPLICATION_ID, FileCheck, inspect_file, read_session_info
from core.store.migrate import alembic_config, head_revision, known_revisions
from core.store.placing import clean_leftovers, discard_new_session, file_identity
from core.store.session import SessionStore

__all__ = [
    "APPLICATION_ID",
    "FileCheck",
    "NotASessionError",
    "SessionCorruptError",
    "SessionError",
    "SessionExistsError",
    "SessionBoundsError",
    "SessionForeignSchemaError",
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
