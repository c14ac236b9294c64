"""The session cache of encodings: each unique string encoded once per encoder and kept in
the ``encodings`` table under the encoder's fingerprint; vectors L2-normalised float32."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from core.jobs import JobContext
from core.metrics.retrieval.encoders import Encoder
from core.store.batching import in_chunks

if TYPE_CHECKING:
    from core.store import SessionStore


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cached_vectors(
    store: SessionStore, fingerprint: str, hashes: Sequence[str]
) -> dict[str, bytes]:
    from sqlalchemy import select

    from core.store.models import Encoding

    found: dict[str, bytes] = {}
    with store.unit_of_work() as db:
        for chunk in in_chunks(hashes):
            for digest, vector in db.execute(
                select(Encoding.content_hash, Encoding.vector).where(
                    Encoding.encoder == fingerprint, Encoding.content_hash.in_(chunk)
                )
            ):
                found[digest] = vector
    return found


def _store_vectors(
    store: SessionStore, fingerprint: str, rows: Sequence[tuple[str, str, bytes, int]]
) -> None:
    from sqlalchemy.dialects.sqlite import insert

    from core.store.models import Encoding

    if not rows:
        return
    statement = insert(Encoding).values(
        [
            {
                "encoder": fingerprint,
                "content_hash": digest,
                "kind": kind,
                "vector": blob,
                "dim": dim,
            }
            for digest, kind, blob, dim in rows
        ]
    )
    with store.unit_of_work() as db:
        # A row already there was damaged (reads skip it, so the text was encoded again)
        # or written by another process meanwhile: either way the new vector replaces it,
        # and a damaged cache is rebuilt as it is used.
        db.execute(
            statement.on_conflict_do_update(
                index_elements=[Encoding.encoder, Encoding.content_hash],
                set_={
                    "kind": statement.excluded.kind,
                    "vector": statement.excluded.vector,
                    "dim": statement.excluded.dim,
                },
            )
        )


def encode_cached(
    store: SessionStore | None,
    encoder: Encoder,
    texts: Sequence[str],
    kind: str,
    ctx: JobContext | None = None,
    on_encoded: Callable[[int], None] | None = None,
) -> Any:
    """A (len(texts), dim) float32 array of normalised vectors. Unique strings missing from
    the session cache are encoded in batches of ``encoder.batch_size`` (longest first, as
    sentence-transformers does) and stored as they come, so a cancel keeps them."""
    import numpy as np

    unique = list(dict.fromkeys(texts))
    hashes = [content_hash(t) for t in unique]
    found = cached_vectors(store, encoder.fingerprint, hashes) if store is not None else {}
    missing = [i for i, h in enumerate(hashes) if h not in found]
    vectors: dict[str, Any] = {h: np.frombuffer(b, dtype="<f4") for h, b in found.items()}
    if missing:
        model = encoder.model()
        missing.sort(key=lambda i: -len(unique[i]))
        # Several batches per call keep sentence-transformers' own per-call work small
        # relative to the encoding, and give cancel and the cache a point every call.
        step = encoder.batch_size * 8
        for start in range(0, len(missing), step):
            if ctx is not None:
                ctx.check_cancelled()
            part = missing[start : start + step]
            out = np.asarray(
                model.encode(
                    [unique[i] for i in part],
                    batch_size=encoder.batch_size,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                    convert_to_numpy=True,
                ),
                dtype="<f4",
            )
            rows = []
            for i, vector in zip(part, out, strict=True):
                vectors[hashes[i]] = vector
                rows.append((hashes[i], kind, vector.tobytes(), int(vector.shape[0])))
            if store is not None:
                _store_vectors(store, encoder.fingerprint, rows)
            if on_encoded is not None:
                on_encoded(len(part))
    index = {t: vectors[h] for t, h in zip(unique, hashes, strict=True)}
    if not texts:
        return np.zeros((0, 0), dtype="<f4")
    return np.stack([index[t] for t in texts]).astype("<f4", copy=False)
