"""What a pack says about itself: its description (session_meta ``annotation:pack``:
format, the pack's uid and its source session's, the annotator, and each item's kind, id
and text digest), checked field by field before it is trusted; the session's own uid; and
the digest that tells a changed text."""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.annotation.types import (
    REFERENCE,
    VERBALISATION,
    AnnotationError,
    clean_annotator_name,
)
from core.store import SessionStore

PACK_FORMAT = 1
SESSION_UID_KEY = "session:uid"
MANIFEST_KEY = "annotation:pack"
GUIDELINES_KEY = "annotation:guidelines"
TARGETS = ("verbalisations", "references")

KIND_LETTER = {VERBALISATION: "v", REFERENCE: "r"}
LETTER_KIND = {"v": VERBALISATION, "r": REFERENCE}


class PackError(AnnotationError):
    """A pack that cannot be made or merged, with the reason."""


def text_hash(text: str | None) -> str:
    return hashlib.sha256((text or "").encode("utf-8")).hexdigest()


def session_uid(store: SessionStore, *, create: bool = False) -> str | None:
    """The session's identity stamped on its packs (made on first use with ``create``)."""
    uid = store.get_meta(SESSION_UID_KEY)
    if uid or not create:
        return uid or None
    uid = uuid.uuid4().hex
    store.set_meta(SESSION_UID_KEY, uid)
    return uid


# -- reading a pack ----------------------------------------------------------------------


@dataclass(frozen=True)
class PackInfo:
    """What an open session says about itself as a pack (None when it is not one)."""

    pack_uid: str
    annotator: str
    source_name: str
    blind: bool
    items: int
    guidelines: str


def pack_info(store: SessionStore) -> PackInfo | None:
    manifest = _manifest_of(store, store.path)
    if manifest is None:
        return None
    return PackInfo(
        manifest["pack_uid"],
        manifest["annotator"],
        manifest.get("source_name", ""),
        bool(manifest.get("blind")),
        len(manifest["items"]),
        store.get_meta(GUIDELINES_KEY) or "",
    )


def _manifest_of(store: SessionStore, path: Path) -> dict[str, Any] | None:
    text = store.get_meta(MANIFEST_KEY)
    return None if text is None else check_manifest(text, path)


_HEX = re.compile(r"[0-9a-f]{1,64}")
_DIGEST = re.compile(r"[0-9a-f]{64}")
MAX_ID = (1 << 63) - 1


def check_manifest(text: object, path: Path) -> dict[str, Any]:
    """A pack's description (session_meta ``annotation:pack``), every field checked, or a
    :class:`PackError` naming the pack and the field."""
    from core.io.bounded import BoundedTextError, loads_json

    def damaged(why: str) -> PackError:
        return PackError(f"{path.name} is damaged: its pack description {why}.")

    if not isinstance(text, str):
        raise damaged("is not text")
    try:
        manifest = loads_json(text, name=path.name, what="the pack description of")
    except BoundedTextError as exc:
        raise damaged(f"cannot be read ({exc})") from None
    if not isinstance(manifest, dict):
        raise damaged("is not a JSON object")
    version = manifest.get("format", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise damaged(f"has format {ascii(version)[:40]}, not a version number")
    if version > PACK_FORMAT:
        raise PackError(f"{path.name} was made by a newer TailLens; update TailLens to merge it.")
    for key in ("pack_uid", "source_session"):
        value = manifest.get(key)
        if not isinstance(value, str) or _HEX.fullmatch(value) is None:
            raise damaged(f"has {key} {ascii(value)[:40]}, not an id")
    try:
        manifest["annotator"] = clean_annotator_name(manifest.get("annotator"))
    except AnnotationError as exc:
        raise damaged(f"names no annotator ({exc})") from None
    for key, kind in (("source_name", str), ("target", str), ("blind", bool)):
        if key in manifest and not isinstance(manifest[key], kind):
            raise damaged(f"has {key} {ascii(manifest[key])[:40]}")
    items = manifest.get("items")
    if not isinstance(items, list):
        raise damaged("lists no items")
    for item in items:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and item[0] in LETTER_KIND
            and isinstance(item[1], int)
            and not isinstance(item[1], bool)
            and 1 <= item[1] <= MAX_ID
            and isinstance(item[2], str)
            and _DIGEST.fullmatch(item[2]) is not None
        ):
            raise damaged(f"lists an item {ascii(item)[:60]} that is not [kind, id, digest]")
    return manifest
