"""What the Session panel and ``taillens session info`` show about a session: a leaf
module (no imports from core), so widgets can name the type without the store."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class SessionInfo(TypedDict):
    """What a session holds, as ``SessionStore.info()`` and ``read_session_info`` describe
    it (JSON-serialisable: ``taillens session info`` prints it; the Session panel shows it)."""

    path: str
    schema_revision: str | None
    head_revision: str
    app_version: str
    created_with: str | None
    created_at: str | None
    tables: dict[str, int]  # table -> rows
    # Each category with its members held and how its last fetch ended, None where the
    # file's categories cannot be read (``core.wikidata.cache.describe_session_file``).
    categories: NotRequired[list[dict[str, object]] | None]
