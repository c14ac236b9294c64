"""The embedded source: an Oxigraph store of the bundled demo snapshot, offline and instant."""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.io.files import MB, check_readable
from core.jobs import CancelToken
from core.wikidata import queries
from core.wikidata.categories import Category
from core.wikidata.records import EntityDetails, MembersPage
from core.wikidata.rows import (
    BadResults,
    RdfTerm,
    details_from_rows,
    members_from_rows,
    rows_from_oxigraph,
)
from core.wikidata.sources import SourceError, check_cancelled

if TYPE_CHECKING:
    import pyoxigraph

# The most an embedded source reads (after decompression): the bundled demo data is 100 MB.
DEMO_DATA_LIMIT = 512 * MB


def _read_rdf(path: Path, compressed: bool) -> bytes:
    # Read (and decompressed) up to the limit only: a few kilobytes of gzip can stand for
    # gigabytes.
    with gzip.open(path, "rb") if compressed else path.open("rb") as handle:
        data = handle.read(DEMO_DATA_LIMIT + 1)
    if len(data) > DEMO_DATA_LIMIT:
        raise _too_large(path, compressed)
    return data


def _too_large(path: Path, compressed: bool) -> SourceError:
    return SourceError(
        f"{path.name}: the demo data holds more than {DEMO_DATA_LIMIT // MB:,} MB"
        + (" once decompressed" if compressed else "")
        + "; use a SPARQL endpoint for data this large"
    )


# N-Triples lines per bulk load into an on-disk store. Oxigraph's bulk loader holds what it
# is given several times over: the 95 MB demo data in one call peaked near 680 MB, in
# batches of this size about 110 MB.
_BATCH_LINES = 50_000


def _rdf_batches(path: Path, compressed: bool, rdf_format: Any) -> Iterator[bytes]:
    """The file's content in pieces Oxigraph can load one after another: N-Triples (one
    statement a line) in batches of lines; anything else whole. Within DEMO_DATA_LIMIT,
    a line without an end included."""
    import pyoxigraph

    if rdf_format != pyoxigraph.RdfFormat.N_TRIPLES:
        yield _read_rdf(path, compressed)
        return
    left = DEMO_DATA_LIMIT + 1
    with gzip.open(path, "rb") if compressed else path.open("rb") as handle:
        while True:
            lines = []
            for _ in range(_BATCH_LINES):
                line = handle.readline(left)
                left -= len(line)
                if not line:
                    break
                lines.append(line)
            if left <= 0:
                raise _too_large(path, compressed)
            if not lines:
                return
            yield b"".join(lines)


# Written last into a finished on-disk store: a folder without it is a build that stopped.
_STORE_DONE = "taillens-store-complete"


def _cached_store(
    path: Path, cache: Path, compressed: bool, rdf_format: Any
) -> pyoxigraph.Store | None:
    """``path``'s triples in an on-disk Oxigraph store under ``cache``, opened read-only;
    built first when no finished one is there. None when the folder cannot hold one (no
    space, read-only, a store Oxigraph refuses): the caller then loads into memory.

    The store's name is the file's SHA-256 and Oxigraph's version, so an edited snapshot
    or an upgraded Oxigraph gets its own. A build goes into a fresh folder beside it and
    is renamed into place only when finished, so two processes building at once (two
    windows, parallel commands) never read half a store: the second rename fails and
    its copy is dropped."""
    import hashlib
    import os
    import shutil
    import tempfile

    import pyoxigraph

    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    version = re.sub(r"[^0-9A-Za-z.]", "_", str(getattr(pyoxigraph, "__version__", "0")))
    final = cache / f"oxigraph-{version}-{digest.hexdigest()[:32]}"
    if not (final / _STORE_DONE).is_file():
        try:
            cache.mkdir(parents=True, exist_ok=True)
            building = Path(tempfile.mkdtemp(prefix=".building-", dir=cache))
        except OSError:
            return None
        try:
            store = pyoxigraph.Store(str(building))
            for batch in _rdf_batches(path, compressed, rdf_format):
                store.bulk_load(batch, format=rdf_format)
            store.flush()
            store.optimize()
            del store  # closes the database before its folder moves
            (building / _STORE_DONE).write_text(path.name + "\n", "utf-8")
            if final.exists():  # a stopped build (no completion mark): replaced
                shutil.rmtree(final, ignore_errors=True)
            os.rename(building, final)
        except (OSError, EOFError, zlib.error):
            shutil.rmtree(building, ignore_errors=True)
            if not (final / _STORE_DONE).is_file():  # else another process won the rename
                return None
        except SyntaxError as exc:
            shutil.rmtree(building, ignore_errors=True)
            raise SourceError(f"Cannot load the demo data {path}: {exc}") from exc
        except BaseException:  # too large, or stopped: no half-built folder stays behind
            shutil.rmtree(building, ignore_errors=True)
            raise
    try:
        return pyoxigraph.Store.read_only(str(final))
    except OSError:
        return None


class EmbeddedSource:
    """An in-memory Oxigraph store (the bundled demo snapshot), offline and instant."""

    kind = "embedded"

    def __init__(
        self, store: pyoxigraph.Store, name: str = "Demo data (embedded snapshot)"
    ) -> None:
        self.store = store
        self.name = name

    @classmethod
    def from_file(
        cls, path: Path | str, name: str | None = None, cache: Path | None = None
    ) -> EmbeddedSource:
        """Load an N-Triples or Turtle file (optionally gzip-compressed).

        Without ``cache`` the triples are held in memory (about 2.5 times the decompressed
        size: 250 MB for the bundled demo data, rebuilt in seconds of CPU by every process).
        With it, they go once into an on-disk store in that folder, named by the file's
        SHA-256 (:func:`_cached_store`), which every later process opens read-only at
        once, holding only the pages its queries read."""
        import pyoxigraph

        path = Path(path)
        suffixes = [s.lower() for s in path.suffixes]
        compressed = suffixes[-1:] == [".gz"]
        ext = suffixes[-2] if compressed and len(suffixes) > 1 else suffixes[-1:][0]
        formats = {".nt": pyoxigraph.RdfFormat.N_TRIPLES, ".ttl": pyoxigraph.RdfFormat.TURTLE}
        if ext not in formats:
            raise SourceError(f"{path.name}: demo data must be a .nt or .ttl file (optionally .gz)")
        check_readable(path, what="the demo data", error=SourceError)
        label = name or f"Demo data ({path.name})"
        if cache is not None:
            store = _cached_store(path, cache, compressed, formats[ext])
            if store is not None:
                return cls(store, label)
        try:
            store = pyoxigraph.Store()
            store.load(_read_rdf(path, compressed), format=formats[ext])
        except (OSError, SyntaxError, EOFError, zlib.error) as exc:
            raise SourceError(f"Cannot load the demo data {path}: {exc}") from exc
        return cls(store, label)

    def _select(self, query: str) -> list[dict[str, RdfTerm]]:
        try:
            # Oxigraph runs a SERVICE clause itself (over HTTP), so only checked texts.
            return rows_from_oxigraph(self.store.query(queries.outgoing(query)))
        except (SyntaxError, OSError) as exc:
            raise SourceError(f"{self.name}: the query failed: {exc}") from exc

    def select(self, query: str, token: CancelToken | None = None) -> list[dict[str, RdfTerm]]:
        """Run a SELECT built by :mod:`core.wikidata.queries`."""
        check_cancelled(token)
        return self._select(query)

    def members_page(
        self, category: Category, offset: int, limit: int, token: CancelToken | None = None
    ) -> MembersPage:
        query = queries.members_page(category, limit, offset)
        check_cancelled(token)
        try:
            return members_from_rows(category, offset, self._select(query))
        except BadResults as exc:
            raise SourceError(f"{self.name}: unexpected results: {exc}") from exc

    def entity(self, qid: str, token: CancelToken | None = None) -> EntityDetails:
        term_query, claim_query = queries.entity_terms(qid), queries.entity_claims(qid)
        check_cancelled(token)
        try:
            return details_from_rows(qid, self._select(term_query), self._select(claim_query))
        except BadResults as exc:
            raise SourceError(f"{self.name}: unexpected results: {exc}") from exc
