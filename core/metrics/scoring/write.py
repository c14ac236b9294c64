"""How the scoring job writes a metric's rows: staged as they are computed, put in place
in one short transaction at the end.

A metric's ``scores`` rows go, a batch at a time, into a TEMP table of one connection of
the session (SQLite keeps its pages in a temporary file past a small page cache, not in
Python), so the job's memory follows a batch, not the session. Writing a TEMP table takes
no lock on the session file: other writers (a verbalise run, a rating being saved) go on
while a metric is scored, and readers read their WAL snapshot as ever. When every group
of the metric is scored, one ``BEGIN IMMEDIATE`` transaction deletes the rows the new
ones replace and copies the staged rows in (``INSERT … SELECT``, in the order they were
computed). A kill, a cancel or a failure before that commit leaves the metric wholly old
(the TEMP table dies with its connection); after it, wholly new.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from core.store.batching import in_chunks

if TYPE_CHECKING:
    from sqlalchemy import Table

    from core.store import SessionStore

_COLUMNS = (
    "metric",
    "value",
    "details",
    "signature",
    "level",
    "verbalisation_id",
    "reference_id",
    "run_id",
    "lang",
)


def _staging_table(name: str) -> Table:
    from sqlalchemy import Column, Integer, MetaData, Table

    from core.store.models import Score

    columns = [Column(c, Score.__table__.c[c].type) for c in _COLUMNS]
    return Table(
        name,
        MetaData(),
        Column("seq", Integer, primary_key=True, autoincrement=True),
        Column("grp", Integer, nullable=False),
        *columns,
        prefixes=["TEMPORARY"],
    )


class StagedScores:
    """One metric's new ``scores`` rows on their way in: :meth:`add` stages them (``batch``
    rows held in Python at most), :meth:`commit` replaces the old rows with them in one
    transaction, :meth:`close` drops what was staged. Rows are copied in ordered by their
    group's index, then in the order they were added (a group's rows are added together,
    groups may come in any order: perplexity scores them model by model)."""

    def __init__(self, store: SessionStore, slot: int, batch: int) -> None:
        from sqlalchemy.exc import DBAPIError

        from core.store.engine import translate_error

        self._store = store
        self._batch = max(1, batch)
        self._pending: list[dict[str, Any]] = []
        self.staged = 0
        self._table = _staging_table(f"taillens_staged_scores_{slot}")
        self._conn = store.staging_connection()
        try:
            with self._conn.begin():
                self._table.drop(self._conn, checkfirst=True)  # a leftover of this connection
                self._table.create(self._conn)
        except DBAPIError as exc:
            self._conn.close()
            raise translate_error(exc, store.path) from exc
        except BaseException:
            self._conn.close()
            raise

    def add(self, group: int, rows: Iterable[dict[str, Any]]) -> None:
        for row in rows:
            self._pending.append({"grp": group, **row})
            if len(self._pending) >= self._batch:
                self._flush()

    def _flush(self) -> None:
        from sqlalchemy import insert

        if self._pending:
            with self._conn.begin():  # the TEMP table only: no lock on the session file
                self._conn.execute(insert(self._table), self._pending)
            self.staged += len(self._pending)
            self._pending = []

    def commit(self, replaced: Iterable[Any]) -> int:
        """Delete the rows ``replaced`` (DELETE statements) and copy the staged rows in, in
        one ``BEGIN IMMEDIATE`` transaction; the number of rows written."""
        from sqlalchemy import insert, select
        from sqlalchemy.exc import DBAPIError

        from core.store.engine import BEGIN_OPTION, translate_error
        from core.store.models import Score

        self._flush()
        columns = [self._table.c[c] for c in _COLUMNS]
        copy = insert(Score).from_select(
            list(_COLUMNS), select(*columns).order_by(self._table.c.grp, self._table.c.seq)
        )
        self._conn.execution_options(**{BEGIN_OPTION: "BEGIN IMMEDIATE"})
        try:
            with self._conn.begin():
                for statement in replaced:
                    self._conn.execute(statement)
                self._conn.execute(copy)
        except DBAPIError as exc:
            translated = translate_error(exc, self._store.path)
            if translated is exc:
                raise
            raise translated from exc
        finally:
            self._conn.execution_options(**{BEGIN_OPTION: "BEGIN"})
        return self.staged

    def close(self) -> None:
        """Drop the staged rows (committed or not) and give the connection back."""
        from sqlalchemy.exc import DBAPIError

        try:
            if self._conn.in_transaction():
                self._conn.rollback()
            with self._conn.begin():
                self._table.drop(self._conn, checkfirst=True)
        except DBAPIError:
            self._conn.invalidate()  # never back to the pool holding a stray table
        finally:
            self._pending = []
            self._conn.close()


def replaced_rows(
    name: str,
    verbalisation_ids: Sequence[int],
    reference_ids: Sequence[int],
    run_langs: Iterable[tuple[int, str]],
    reference_groups: Iterable[tuple[str, str | None]],
) -> Iterator[Any]:
    """The DELETE statements removing the rows a metric's new rows replace: the sentence
    rows of the texts, the corpus rows of every (run, language) the request covered
    whatever their quality (a quality that has no references any more must not keep a
    stale corpus score), and the references' corpus rows of each (language, quality)."""
    from sqlalchemy import and_, delete, func

    from core.store.models import Score

    for chunk in in_chunks(list(verbalisation_ids)):
        yield delete(Score).where(
            Score.metric == name, Score.level == "sentence", Score.verbalisation_id.in_(chunk)
        )
    for chunk in in_chunks(list(reference_ids)):
        yield delete(Score).where(
            Score.metric == name, Score.level == "sentence", Score.reference_id.in_(chunk)
        )
    for run_id, lang in sorted(set(run_langs)):
        yield delete(Score).where(
            Score.metric == name,
            Score.level == "corpus",
            Score.run_id == run_id,
            Score.lang == lang,
        )
    quality = func.json_extract(Score.details, "$.quality")
    texts_kind = func.json_extract(Score.details, "$.texts")
    for lang, group_quality in reference_groups:
        yield delete(Score).where(
            and_(
                Score.metric == name,
                Score.level == "corpus",
                Score.run_id.is_(None),
                Score.lang == lang,
                quality == group_quality,
                texts_kind == "references",
            )
        )
