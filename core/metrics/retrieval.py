"""Graph ↔ text retrieval (EREDAT, METHODS §7), with a session cache of encodings.

Graphs are linearised as the similarity metric does (``[S] s [P] p [O] o …``, the unit's
``main`` tripleset in the text's language, overrides applied) and embedded by the same
sentence encoder as the texts; candidates are ranked by cosine.

Definitions (a graph may have several texts, and two units may have the same graph):

* the candidates are the *unique* linearised graphs and the *unique* texts of the set;
  a (graph, text) pair is correct when some unit has that graph and that text;
* text → graph: for each unique text, the rank of its best-scoring correct graph among
  all unique graphs; graph → text the same the other way;
* rank = 1 + the number of wrong candidates scored strictly higher than the best correct
  one (a tie counts in the correct candidate's favour);
* top-k accuracy = share of queries with rank ≤ k; MRR = mean of 1/rank.

Encoding is the cost: every unique string is encoded once per encoder and kept in the
session's ``encodings`` table (rev 0005_retrieval) under the encoder's fingerprint, a hash
of its folder's files, so a retrained model in the same folder is never served stale
vectors. Vectors are L2-normalised float32.
"""

from __future__ import annotations

import hashlib
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import heavy
from core.errors import UserFacingError
from core.jobs import Job, JobContext
from core.metrics.similarity import linearise, load_encoder, resolve_encoder
from core.store.batching import in_chunks

if TYPE_CHECKING:
    from core.store import SessionStore

_FINGERPRINTS: dict[tuple[str, tuple[tuple[str, int, int], ...]], str] = {}
_FP_LOCK = threading.Lock()


# --------------------------------------------------------------------------- encoders


def _model_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def check_model_folder(folder: Path) -> None:
    """Refuse a folder that is not a sentence-transformers / transformers model."""
    if not folder.is_dir():
        raise UserFacingError(f"{folder}: not a folder")
    if not (folder / "config.json").is_file() and not (folder / "modules.json").is_file():
        raise UserFacingError(
            f"{folder}: not a model folder (no config.json or modules.json in it)"
        )


def encoder_fingerprint(folder: Path) -> str:
    """SHA-256 (first 16 hex digits) over the folder's file names and contents; memoised
    per (folder, names, sizes, modification times) for the process."""
    files = _model_files(folder)
    stamp = tuple(
        (str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns) for p in files
    )
    key = (str(folder.resolve()), stamp)
    with _FP_LOCK:
        if key in _FINGERPRINTS:
            return _FINGERPRINTS[key]
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    value = digest.hexdigest()[:16]
    with _FP_LOCK:
        _FINGERPRINTS[key] = value
    return value


@dataclass(frozen=True)
class Encoder:
    """A resolved sentence encoder: folder, display name, fingerprint, loaded lazily."""

    path: Path
    name: str
    fingerprint: str
    device: str = "cpu"
    batch_size: int = 64

    def model(self) -> Any:
        return load_encoder(self.path, self.device)


@dataclass(frozen=True)
class LoadedEncoder(Encoder):
    """An encoder already in memory (e.g. a model being trained): ``fingerprint`` must
    name this state of the weights; use it without a session cache (store None)."""

    loaded: Any = None

    def model(self) -> Any:
        return self.loaded


def open_encoder(
    encoder: str | Path | None, *, device: str = "cpu", batch_size: int = 64
) -> Encoder:
    """The encoder for a folder or cached Hugging Face id (None: the packaged MiniLM);
    a folder that is not a model is refused before anything is loaded or stored."""
    if device == "auto":
        device = _auto_device()
    path, name = resolve_encoder(encoder)
    check_model_folder(path)
    return Encoder(path, name, encoder_fingerprint(path), device, batch_size)


def _auto_device() -> str:
    try:
        with heavy.lock():
            import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:  # pragma: no cover - torch is a dependency of the model stack
        return "cpu"


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


# --------------------------------------------------------------------------- material


@dataclass(frozen=True)
class RetrievalPair:
    """One text and the graph of its unit. ``text_id`` is a reference id or a
    verbalisation id (``source`` says which)."""

    unit_id: int
    lang: str
    triples: tuple[tuple[str, str, str], ...]
    text: str
    text_id: int
    source: str  # 'reference' or 'verbalisation'

    @property
    def graph(self) -> str:
        return linearise(self.triples)


def unit_triples(
    store: SessionStore, unit_ids: Sequence[int] | None = None, langs: Sequence[str] | None = None
) -> dict[tuple[int, str], tuple[tuple[str, str, str], ...]]:
    """(unit, lang) → the ``main`` tripleset (else the set the language has), overrides
    applied: the rule of the scoring job."""
    from sqlalchemy import select

    from core.store.models import UnitTriple

    rows_by_set: dict[tuple[int, str, str], list[tuple[str, str, str]]] = defaultdict(list)
    query = select(UnitTriple).order_by(
        UnitTriple.unit_id, UnitTriple.lang, UnitTriple.tripleset, UnitTriple.position
    )
    if langs:
        query = query.where(UnitTriple.lang.in_(list(langs)))
    with store.snapshot() as db:
        if unit_ids is None:
            for row in db.scalars(query):
                rows_by_set[(row.unit_id, row.lang, row.tripleset)].append(row.shown())
        else:
            for chunk in in_chunks(list(unit_ids)):
                for row in db.scalars(query.where(UnitTriple.unit_id.in_(chunk))):
                    rows_by_set[(row.unit_id, row.lang, row.tripleset)].append(row.shown())
    chosen: dict[tuple[int, str], tuple[tuple[str, str, str], ...]] = {}
    for (unit_id, lang, tripleset), triples in rows_by_set.items():
        if tripleset == "main" or (unit_id, lang) not in chosen:
            chosen[(unit_id, lang)] = tuple(triples)
    return chosen


def load_pairs(
    store: SessionStore,
    *,
    run_id: int | None = None,
    langs: Sequence[str] | None = None,
    quality: str | None = None,
    one_text_per_graph: bool = False,
) -> list[RetrievalPair]:
    """The session's references (``run_id`` None; only ``quality`` if given) or a run's
    parsed outputs, each with its unit's graph in the text's language. Texts that are
    empty or whose unit has no triples in that language are left out.
    ``one_text_per_graph`` keeps each unit's first text (lowest id) per language."""
    from sqlalchemy import select

    from core.store.models import ModelRun, UnitReference, Verbalisation

    rows: list[tuple[int, int, str, str]] = []
    with store.unit_of_work() as db:
        if run_id is None:
            query: Any = select(
                UnitReference.id, UnitReference.unit_id, UnitReference.lang, UnitReference.text
            ).order_by(UnitReference.id)
            if quality:
                query = query.where(UnitReference.quality == quality)
            source = "reference"
        else:
            if db.get(ModelRun, run_id) is None:
                raise UserFacingError(f"run {run_id}: no such run in this session")
            query = (
                select(
                    Verbalisation.id, Verbalisation.unit_id, Verbalisation.lang, Verbalisation.text
                )
                .where(Verbalisation.run_id == run_id)
                .order_by(Verbalisation.id)
            )
            source = "verbalisation"
        if langs:
            column = UnitReference.lang if run_id is None else Verbalisation.lang
            query = query.where(column.in_(list(langs)))
        rows = [(r[0], r[1], r[2], r[3]) for r in db.execute(query)]
    graphs = unit_triples(store, sorted({r[1] for r in rows}), langs)
    pairs: list[RetrievalPair] = []
    seen: set[tuple[int, str]] = set()
    for text_id, unit_id, lang, text in rows:
        triples = graphs.get((unit_id, lang))
        if not triples or not text or not text.strip():
            continue
        if one_text_per_graph:
            if (unit_id, lang) in seen:
                continue
            seen.add((unit_id, lang))
        pairs.append(RetrievalPair(unit_id, lang, triples, text, text_id, source))
    return pairs


# --------------------------------------------------------------------------- ranking


@dataclass(frozen=True)
class DirectionScores:
    queries: int
    top1: float
    top5: float
    mrr: float

    def as_dict(self) -> dict[str, float | int]:
        return {"queries": self.queries, "top1": self.top1, "top5": self.top5, "mrr": self.mrr}


@dataclass(frozen=True)
class TextMatch:
    """How one text matches its own graph: cosine with it, and the rank of its best
    correct graph among all graphs (1 = found)."""

    pair: RetrievalPair
    similarity: float
    rank: int


@dataclass
class RetrievalResult:
    encoder: str
    fingerprint: str
    pairs: int
    graphs: int
    texts: int
    text_to_graph: DirectionScores
    graph_to_text: DirectionScores
    encoded: int = 0  # strings encoded by this call (the rest came from the cache)
    matches: list[TextMatch] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "encoder": self.encoder,
            "fingerprint": self.fingerprint,
            "pairs": self.pairs,
            "graphs": self.graphs,
            "texts": self.texts,
            "encoded": self.encoded,
            "text_to_graph": self.text_to_graph.as_dict(),
            "graph_to_text": self.graph_to_text.as_dict(),
        }

    def worst(self, n: int = 20) -> list[TextMatch]:
        """The texts that match their own graph worst: lowest cosine first."""
        return sorted(self.matches, key=lambda m: (m.similarity, -m.rank))[:n]


def ranks(
    queries: Any, candidates: Any, positives: Sequence[Sequence[int]], chunk: int = 256
) -> tuple[list[int], list[float]]:
    """Per query row: rank of its best correct candidate (1 + wrong candidates scored
    strictly higher) and that best correct score. Chunked, so memory stays
    ``chunk × len(candidates)``."""
    import numpy as np

    out_ranks: list[int] = []
    best_scores: list[float] = []
    for start in range(0, queries.shape[0], chunk):
        scores = queries[start : start + chunk] @ candidates.T
        for offset, row in enumerate(scores):
            best = float(np.max(row[list(positives[start + offset])]))
            out_ranks.append(1 + int(np.count_nonzero(row > best)))
            best_scores.append(best)
    return out_ranks, best_scores


def _direction(rank_list: Sequence[int]) -> DirectionScores:
    n = len(rank_list)
    if n == 0:
        return DirectionScores(0, 0.0, 0.0, 0.0)
    return DirectionScores(
        n,
        sum(r == 1 for r in rank_list) / n,
        sum(r <= 5 for r in rank_list) / n,
        sum(1.0 / r for r in rank_list) / n,
    )


def evaluate(
    pairs: Sequence[RetrievalPair],
    encoder: Encoder,
    store: SessionStore | None = None,
    ctx: JobContext | None = None,
) -> RetrievalResult:
    """Retrieval in both directions over ``pairs`` (definitions in the module doc)."""
    if not pairs:
        raise UserFacingError(
            "no texts with a graph to retrieve over (the session has no "
            "references, or the run no parsed outputs, in these languages)"
        )
    graphs = list(dict.fromkeys(p.graph for p in pairs))
    texts = list(dict.fromkeys(p.text for p in pairs))
    g_index = {g: i for i, g in enumerate(graphs)}
    t_index = {t: i for i, t in enumerate(texts)}
    text_pos: list[set[int]] = [set() for _ in texts]
    graph_pos: list[set[int]] = [set() for _ in graphs]
    for pair in pairs:
        gi, ti = g_index[pair.graph], t_index[pair.text]
        text_pos[ti].add(gi)
        graph_pos[gi].add(ti)
    total = len(graphs) + len(texts)
    done = [0]

    def encoded(n: int) -> None:
        done[0] += n
        if ctx is not None:
            ctx.progress(done[0], total, "encoding")

    if ctx is not None:
        ctx.progress(0, total, "encoding")
    g_vec = encode_cached(store, encoder, graphs, "graph", ctx, encoded)
    t_vec = encode_cached(store, encoder, texts, "text", ctx, encoded)
    if ctx is not None:
        ctx.check_cancelled()
        ctx.progress(total, total, "ranking")
    t_ranks, t_best = ranks(t_vec, g_vec, [sorted(s) for s in text_pos])
    g_ranks, _ = ranks(g_vec, t_vec, [sorted(s) for s in graph_pos])
    import numpy as np

    matches = []
    for pair in pairs:
        ti, gi = t_index[pair.text], g_index[pair.graph]
        matches.append(TextMatch(pair, float(np.dot(t_vec[ti], g_vec[gi])), t_ranks[ti]))
    return RetrievalResult(
        encoder.name,
        encoder.fingerprint,
        len(pairs),
        len(graphs),
        len(texts),
        _direction(t_ranks),
        _direction(g_ranks),
        done[0],
        matches,
    )


def inversion_errors(
    pairs: Sequence[RetrievalPair],
    encoder: Encoder,
    store: SessionStore | None = None,
    ctx: JobContext | None = None,
) -> tuple[int, int]:
    """EREDAT's inversion test: over the 1-triple graphs whose subject and object differ,
    (how many texts score the swapped graph strictly above their own, how many tested)."""
    import numpy as np

    tested = [
        p
        for p in pairs
        if len(p.triples) == 1 and p.triples[0][0].strip() != p.triples[0][2].strip()
    ]
    if not tested:
        return 0, 0
    swapped_graphs = [
        linearise([(p.triples[0][2], p.triples[0][1], p.triples[0][0])]) for p in tested
    ]
    t_vec = encode_cached(store, encoder, [p.text for p in tested], "text", ctx)
    g_vec = encode_cached(store, encoder, [p.graph for p in tested], "graph", ctx)
    s_vec = encode_cached(store, encoder, swapped_graphs, "graph", ctx)
    right = np.sum(t_vec * g_vec, axis=1)
    wrong = np.sum(t_vec * s_vec, axis=1)
    return int(np.count_nonzero(wrong > right)), len(tested)


@dataclass(frozen=True)
class GraphHit:
    unit_id: int
    lang: str
    triples: tuple[tuple[str, str, str], ...]
    similarity: float

    @property
    def linearised(self) -> str:
        """The graph as the encoder read it (``linearise``)."""
        return linearise(self.triples)


def find_graphs(
    store: SessionStore,
    text: str,
    encoder: Encoder,
    *,
    lang: str | None = None,
    k: int = 10,
    ctx: JobContext | None = None,
) -> list[GraphHit]:
    """The ``k`` session graphs (units, in ``lang`` if given) most similar to ``text``."""
    import numpy as np

    if not text or not text.strip():
        raise UserFacingError("the text is empty: nothing to search with")
    graphs = unit_triples(store, None, [lang] if lang else None)
    if not graphs:
        raise UserFacingError(
            "the session has no units with triples" + (f" in {lang!r}" if lang else "")
        )
    keys = sorted(graphs)
    strings = [linearise(graphs[key]) for key in keys]
    g_vec = encode_cached(store, encoder, strings, "graph", ctx)
    t_vec = encode_cached(store, encoder, [text], "text", ctx)
    scores = g_vec @ t_vec[0]
    order = np.argsort(-scores, kind="stable")[:k]
    return [GraphHit(keys[i][0], keys[i][1], graphs[keys[i]], float(scores[i])) for i in order]


# --------------------------------------------------------------------------- job


@dataclass(frozen=True)
class RetrievalRequest:
    run_id: int | None = None  # None: the session's references
    langs: tuple[str, ...] | None = None
    quality: str | None = None
    one_text_per_graph: bool = False
    encoder: str | None = None
    device: str = "cpu"
    batch_size: int = 64
    inversion: bool = True


@dataclass
class RetrievalSummary:
    result: RetrievalResult
    inverted_above: int = 0
    inversion_tested: int = 0

    def as_dict(self) -> dict[str, Any]:
        out = self.result.as_dict()
        out["inversion"] = {
            "tested": self.inversion_tested,
            "inverted_above": self.inverted_above,
            "share": (
                self.inverted_above / self.inversion_tested if self.inversion_tested else None
            ),
        }
        return out


def retrieval_job(store: SessionStore, request: RetrievalRequest) -> Job[RetrievalSummary]:
    """Encode (cached) and rank a session's references or a run's outputs."""
    if request.batch_size < 1:
        raise UserFacingError("batch size must be at least 1")
    encoder = open_encoder(request.encoder, device=request.device, batch_size=request.batch_size)
    what = "references" if request.run_id is None else f"run {request.run_id}"

    def run(ctx: JobContext) -> RetrievalSummary:
        pairs = load_pairs(
            store,
            run_id=request.run_id,
            langs=request.langs,
            quality=request.quality,
            one_text_per_graph=request.one_text_per_graph,
        )
        result = evaluate(pairs, encoder, store, ctx)
        summary = RetrievalSummary(result)
        if request.inversion:
            above, tested = inversion_errors(pairs, encoder, store, ctx)
            summary.inverted_above, summary.inversion_tested = above, tested
        return summary

    return Job(
        f"Retrieval over {what}",
        run,
        kind="retrieval",
        params={
            "run": request.run_id,
            "langs": list(request.langs or ()),
            "encoder": encoder.name,
            "fingerprint": encoder.fingerprint,
        },
    )
