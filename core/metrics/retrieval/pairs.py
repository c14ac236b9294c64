"""What retrieval ranks: (graph, text) pairs of a session's references or a run's
outputs, graphs linearised as the similarity metric does."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.errors import UserFacingError
from core.metrics.similarity import linearise
from core.store.batching import in_chunks

if TYPE_CHECKING:
    from core.store import SessionStore


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
