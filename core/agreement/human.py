"""Each text's human values: the session's own annotations (fluency, adequacy) and the
stored WebNLG 2020 ratings (``webnlg:<criterion>``), averaged over raters, z-scored per
rater with ``zscore`` (see :mod:`core.agreement`)."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from core.agreement.judgments import META_PREFIX
from core.formats.webnlg.human_eval import ZSCORES

if TYPE_CHECKING:
    from core.store import SessionStore

WEBNLG_PREFIX = "webnlg:"
APP_RATINGS = ("fluency", "adequacy")


def webnlg_payloads(store: SessionStore) -> list[dict[str, Any]]:
    """The stored WebNLG human-evaluation payloads (one per imported system), parsed: the
    human values and the list of z-score-only systems come from them (each payload is a
    JSON text of tens of KB, so a report parses them once: ``core.agreement.reads``)."""
    from sqlalchemy import select

    from core.store.models import SessionMeta

    with store.unit_of_work() as db:
        values = db.scalars(
            select(SessionMeta.value)
            .where(SessionMeta.key.like(f"{META_PREFIX}%"))
            .order_by(SessionMeta.key)
        ).all()
    from core.io.bounded import stored_json

    # Stored by import-judgments; a session from elsewhere may hold anything there.
    payloads = (stored_json(v, None) for v in values)
    return [p for p in payloads if isinstance(p, dict)]


def human_values(
    store: SessionStore,
    *,
    zscore: bool = False,
    payloads: list[dict[str, Any]] | None = None,
) -> dict[str, dict[int, float]]:
    """Rating name -> verbalisation id -> the text's value (see :mod:`core.agreement`);
    ``payloads``: :func:`webnlg_payloads` of the same state, when read already."""
    from core.annotation import per_item_values

    out: dict[str, dict[int, float]] = defaultdict(dict)
    for vid, entry in per_item_values(store).items():
        for name, value in entry.items():
            if name in APP_RATINGS and value is not None:
                out[name][vid] = float(value)
    # WebNLG: (criterion, vid) -> worker -> value; the all-teams file's z-scores apart
    # (they are z-scores already, and only comparable with z-scores: --zscore)
    cells: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    given_z: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for payload in webnlg_payloads(store) if payloads is None else payloads:
        z_only = payload.get("scale") == ZSCORES
        if z_only and not zscore:
            continue
        for vid, workers in payload.get("ratings", {}).items():
            for worker, values in workers.items():
                for criterion, value in values.items():
                    (given_z if z_only else cells)[(criterion, int(vid))][worker] = float(value)
    if zscore:
        _zscore_per_rater(cells)
    for (criterion, vid), workers in (*cells.items(), *given_z.items()):
        out[WEBNLG_PREFIX + criterion][vid] = sum(workers.values()) / len(workers)
    return {name: dict(values) for name, values in out.items() if values}


def _zscore_per_rater(cells: dict[tuple[str, int], dict[str, float]]) -> None:
    """Each rater's ratings of a criterion as z-scores over all that rater's ratings of
    it, in place (a rater with constant ratings gives 0: numpy's ``nan_to_num``, as the
    WebNLG 2020 analysis did)."""
    import numpy as np

    by_worker: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    for (criterion, vid), workers in cells.items():
        for worker, value in workers.items():
            by_worker[(criterion, worker)].append((vid, value))
    for (criterion, worker), rated in by_worker.items():
        values = np.array([v for _, v in rated], dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            z = np.nan_to_num((values - values.mean()) / values.std())
        for (vid, _), zv in zip(rated, z, strict=True):
            cells[(criterion, vid)][worker] = float(zv)


def zscore_only_systems(
    store: SessionStore, *, payloads: list[dict[str, Any]] | None = None
) -> list[str]:
    """The systems whose WebNLG ratings are the all-teams file's z-scores only
    (``payloads`` as in :func:`human_values`)."""
    read = webnlg_payloads(store) if payloads is None else payloads
    return [str(p.get("system", "?")) for p in read if p.get("scale") == ZSCORES]
