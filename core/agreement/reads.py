"""What the correlations read from one state of a session (human values, score columns,
the judged texts' scores, their details), kept in a :class:`Reads` so that the next
table or subset reads it no more."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from core.agreement.human import human_values, webnlg_payloads, zscore_only_systems

if TYPE_CHECKING:
    from core.metrics.scoring.queries import SentenceScoreRow
    from core.store import SessionStore


class Reads:
    """What the agreement table and the ESA matrix read from one state of a session,
    kept so that the next of them (another subset, the other table) reads it no more:
    the human values, the score columns, the judged texts' scores, their details (for
    ``--where`` conditions), sentence statistics (for corpus scores), the stored WebNLG
    rating payloads (parsed once) and the systems rated in z-scores only. What is kept is
    never changed by its readers. The holder drops it when the session is written (the
    report keeps one in its ``ReportCache``); one without is read afresh each time."""

    def __init__(self) -> None:
        import threading

        self._parts: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.RLock()
        self._details: dict[str, dict[int, dict[str, Any]]] = {}
        self._details_asked: dict[str, set[int]] = {}

    def get(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        with self._lock:
            if key not in self._parts:
                self._parts[key] = make()
            return self._parts[key]

    def details(
        self, store: SessionStore, columns: Iterable[str], vids: Iterable[int]
    ) -> dict[str, dict[int, dict[str, Any]]]:
        """:func:`core.text_filters.sentence_details`, each text's details read once
        (the result may hold other texts too)."""
        from core.text_filters import sentence_details

        wanted = set(vids)
        out = {}
        with self._lock:
            for column in set(columns):
                asked = self._details_asked.setdefault(column, set())
                have = self._details.setdefault(column, {})
                missing = wanted - asked
                if missing:
                    have.update(sentence_details(store, [column], missing)[column])
                    asked |= missing
                out[column] = have
        return out


def read_through(reads: Reads | None, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
    """``make()``, or what ``reads`` kept of it under ``key`` (made there once)."""
    return make() if reads is None else reads.get(key, make)


def read_humans(
    store: SessionStore, *, zscore: bool = False, reads: Reads | None = None
) -> dict[str, dict[int, float]]:
    """:func:`human_values`, from ``reads`` when it holds them."""
    return read_through(
        reads,
        ("humans", zscore),
        lambda: human_values(store, zscore=zscore, payloads=read_payloads(store, reads)),
    )


def read_payloads(store: SessionStore, reads: Reads | None = None) -> list[dict[str, Any]]:
    """:func:`webnlg_payloads`, parsed once per ``reads`` (the raw values, the z-scored
    ones and the z-score-only systems all come from them)."""
    return list(read_through(reads, ("webnlg payloads",), lambda: webnlg_payloads(store)))


def read_zscore_only(store: SessionStore, reads: Reads | None = None) -> list[str]:
    """:func:`zscore_only_systems`, from ``reads`` when it holds them."""
    return list(
        read_through(
            reads,
            ("z-scores only",),
            lambda: zscore_only_systems(store, payloads=read_payloads(store, reads)),
        )
    )


def read_columns(
    store: SessionStore,
    *,
    run_ids: Sequence[int] | None,
    langs: Sequence[str] | None,
    reads: Reads | None = None,
) -> list[str]:
    """:func:`core.metrics.scoring.score_columns`, from ``reads`` when it holds them."""
    from core.metrics.scoring import score_columns

    key = ("columns", _frozen(run_ids), _frozen(langs))
    return list(
        read_through(reads, key, lambda: score_columns(store, run_ids=run_ids, langs=langs))
    )


def read_score_table(
    store: SessionStore,
    *,
    run_ids: Sequence[int] | None,
    langs: Sequence[str] | None,
    verbalisation_ids: Collection[int] | None,
    reads: Reads | None = None,
) -> list[SentenceScoreRow]:
    """:func:`core.metrics.scoring.sentence_score_table`, from ``reads`` when it holds it."""
    from core.metrics.scoring import sentence_score_table

    key = (
        "table",
        _frozen(run_ids),
        _frozen(langs),
        None if verbalisation_ids is None else frozenset(verbalisation_ids),
    )
    return list(
        read_through(
            reads,
            key,
            lambda: sentence_score_table(
                store, run_ids=run_ids, langs=langs, verbalisation_ids=verbalisation_ids
            ),
        )
    )


def _frozen(values: Sequence[Any] | None) -> tuple[Any, ...] | None:
    return None if values is None else tuple(values)
