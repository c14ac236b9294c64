"""Subsets of scored texts: ``--where`` conditions over a text's metadata, its sentence
scores and those scores' details (METHODS §7, "Agreement with humans").

A condition is ``FIELD OP VALUE`` with OP one of ``= != < <= > >=``; several conditions
must all hold. FIELD is

* a metadata field: ``tier``, ``sub_tier``, ``lang``, ``system`` (the run's system or
  model name), ``run`` (its id), ``unit`` (the unit's uid);
* a score column: ``esa``, ``bleu:gold``, … (the text's sentence score);
* a score's detail: ``COLUMN.KEY``, e.g. ``esa.undetected`` (ESA's count of undetected
  entities); a list detail (``esa.missing``) compares by its length.

Numbers compare as numbers; anything else as text, with ``=`` and ``!=`` only. A text
without the field (no such score, no tier) fails the condition. The ESA paper's subset,
the texts where ESA finds at least one undetected entity, is ``esa.undetected>=1``.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.errors import UserFacingError
from core.io.bounded import stored_json

if TYPE_CHECKING:
    from core.metrics.scoring.queries import SentenceScoreRow
    from core.store import SessionStore

METADATA = ("tier", "sub_tier", "lang", "system", "run", "unit")
_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "!=": operator.ne,
    "==": operator.eq,
    "=": operator.eq,
    "<": operator.lt,
    ">": operator.gt,
}
_CONDITION = re.compile(
    r"^\s*(?P<field>[^\s<>=!]+)\s*(?P<op><=|>=|!=|==|=|<|>)\s*(?P<value>.*?)\s*$"
)


class FilterError(UserFacingError):
    """A ``--where`` condition that cannot be read or names no field."""


@dataclass(frozen=True)
class Condition:
    text: str
    field: str
    op: str
    value: float | str

    def holds(self, value: Any) -> bool:
        if isinstance(value, (list, tuple)):
            value = len(value)
        if value is None:
            return False
        if isinstance(self.value, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                try:
                    value = float(str(value))
                except ValueError:
                    return False
            if isinstance(value, float) and math.isnan(value):
                return False
            return bool(_OPERATORS[self.op](float(value), self.value))
        return bool(_OPERATORS[self.op](str(value), self.value))


def parse_condition(text: str) -> Condition:
    match = _CONDITION.match(text)
    if not match or not match.group("value"):
        raise FilterError(
            f"--where {text!r}: write FIELD OP VALUE, e.g. esa.undetected>=1 or tier=long_tail "
            "(OP: = != < <= > >=)"
        )
    raw = match.group("value").strip("'\"")
    op = match.group("op")
    try:
        value: float | str = float(raw)
    except ValueError:
        value = raw
        if op not in ("=", "==", "!="):
            raise FilterError(
                f"--where {text!r}: {raw!r} is not a number; text compares with = or != only"
            ) from None
    return Condition(text, match.group("field"), op, value)


def _metadata(row: SentenceScoreRow, name: str) -> Any:
    return {
        "tier": row.tier,
        "sub_tier": row.sub_tier,
        "lang": row.lang,
        "system": row.model,
        "run": row.run_id,
        "unit": row.unit_uid,
    }[name]


def _detail_key(field: str, columns: Collection[str]) -> tuple[str, str] | None:
    """``COLUMN.KEY`` split at the dot after a known column (columns may hold dots)."""
    for column in sorted(columns, key=len, reverse=True):
        if field.startswith(column + ".") and len(field) > len(column) + 1:
            return column, field[len(column) + 1 :]
    return None


def sentence_details(
    store: SessionStore, columns: Iterable[str], vids: Collection[int]
) -> dict[str, dict[int, dict[str, Any]]]:
    """Score column -> verbalisation id -> the sentence score's details."""

    from sqlalchemy import bindparam, text

    from core.metrics.scoring.queries import score_column
    from core.store.batching import in_chunks

    wanted = set(columns)
    metrics = sorted({column.split(":", 1)[0] for column in wanted})
    out: dict[str, dict[int, dict[str, Any]]] = {column: {} for column in wanted}
    if not metrics or not vids:
        return out
    # Only the texts asked for, found by their index (SQLite would otherwise walk every
    # row of the metric, and each row's details would be parsed).
    query = text(
        "SELECT verbalisation_id, metric, details FROM scores "
        "INDEXED BY ix_scores_verbalisation_id WHERE level = 'sentence' "
        "AND metric IN :metrics AND verbalisation_id IN :ids ORDER BY id"
    ).bindparams(bindparam("metrics", expanding=True), bindparam("ids", expanding=True))
    with store.snapshot() as db:
        for chunk in in_chunks(sorted(vids)):
            for vid, metric, raw in db.execute(query, {"metrics": metrics, "ids": list(chunk)}):
                details = (stored_json(raw, {}) if isinstance(raw, str) else raw) or {}
                if not isinstance(details, dict):
                    details = {}
                column = score_column(metric, details.get("quality"))
                if column in wanted:
                    out[column][vid] = details
    return out


def filter_rows(
    store: SessionStore,
    rows: Sequence[SentenceScoreRow],
    conditions: Sequence[str],
    *,
    details: Callable[..., dict[str, dict[int, dict[str, Any]]]] | None = None,
) -> list[SentenceScoreRow]:
    """The rows every condition holds for (see the module docstring). ``details``: what
    reads the scores' details, called as :func:`sentence_details` (default that one; a
    reader that keeps what it read: ``core.correlate.Reads.details``)."""
    if not conditions:
        return list(rows)
    parsed = [parse_condition(text) for text in conditions]
    columns = {c for r in rows for c in r.scores}
    # condition -> where its value is: ("meta", name), ("score", column) or (column, key)
    fields: list[tuple[Condition, str, str]] = []
    for condition in parsed:
        name = condition.field
        if name in METADATA:
            fields.append((condition, "meta", name))
        elif name in columns:
            fields.append((condition, "score", name))
        elif (split := _detail_key(name, columns)) is not None:
            fields.append((condition, *split))
        else:
            raise FilterError(
                f"--where {condition.text!r}: no field {name!r} (fields: "
                f"{', '.join(METADATA)}; score columns here: {', '.join(sorted(columns)) or 'none'}"
                "; a score's detail: COLUMN.KEY, e.g. esa.undetected)"
            )
    found = (details or sentence_details)(
        store,
        {where for _c, where, _k in fields if where not in ("meta", "score")},
        {r.verbalisation_id for r in rows},
    )

    def value(row: SentenceScoreRow, where: str, key: str) -> Any:
        if where == "meta":
            return _metadata(row, key)
        if where == "score":
            return row.scores.get(key)
        return found.get(where, {}).get(row.verbalisation_id, {}).get(key)

    return [row for row in rows if all(c.holds(value(row, w, k)) for c, w, k in fields)]


__all__ = [
    "METADATA",
    "Condition",
    "FilterError",
    "check_conditions",
    "filter_rows",
    "parse_condition",
]


def check_conditions(texts: Sequence[str]) -> tuple[str, ...]:
    """``texts`` as given, each checked to read as FIELD OP VALUE (a FilterError saying
    how to write it otherwise); blank ones dropped. Whether each field exists is known
    only against a session's scores (``filter_rows``)."""
    kept = tuple(text.strip() for text in texts if text.strip())
    for text in kept:
        parse_condition(text)
    return kept
