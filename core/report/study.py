"""The TailNLG study table of the bias report, as plain data: rows model × type ×
language, a cell per study metric, marked when it differs from the head row of the same
model and language (the METHODS §8 protocol). ``core.report.render`` lays it out."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.groups import STUDY_METRICS, order_key
from core.report.data import ScoreFrame
from core.report.settings import DEFAULT_SETTINGS, Settings
from core.report.statistics import mann_whitney_protocol

# (model, tier, lang, refs, metric): refs is "" unless gold and silver are split.
StudyKey = tuple[str, str, str, str, str]


@dataclass(frozen=True)
class StudyCell:
    value: float | None
    n: int
    significant: bool = False  # head against this row's type, same model and language
    p_value: float | None = None
    p_adjusted: float | None = None  # across the report's tests (Settings.correction)


@dataclass(frozen=True)
class StudyRow:
    model: str
    type: str  # tier group: head / torso / long_tail
    lang: str
    cells: dict[str, StudyCell]
    refs: str = ""  # split tables: the references' quality (gold / silver)


@dataclass(frozen=True)
class StudyTable:
    """Rows model × type × language; columns the study's metrics present in the session.

    A cell is the mean (or median) of the per-item scores; reference-based metrics use
    references of ``quality`` only. A non-head row's cell is marked when it differs from
    the head row of the same model and language (the METHODS §8 protocol, p < alpha).
    """

    quality: str  # gold / silver, "pooled" or "split"
    statistic: str
    metrics: tuple[str, ...]
    rows: list[StudyRow]


def study_table(
    frame: ScoreFrame,
    *,
    settings: Settings = DEFAULT_SETTINGS,
    metrics: Sequence[str] | None = None,
) -> StudyTable | None:
    """The TailNLG study layout (None when no study metric has scores)."""
    present = {o.metric for o in frame.observations}
    columns = tuple(m for m in (metrics or STUDY_METRICS) if m in present)
    if not columns:
        return None
    mode = settings.study_references
    values = _study_values(frame, columns, settings)
    keys = sorted(
        {k[:4] for k in values},
        key=lambda k: (
            k[0],
            order_key("tier", k[1]),
            order_key("lang", k[2]),
            order_key("quality", k[3]),
        ),
    )
    rows = [_study_row(values, key, columns, settings) for key in keys]
    quality = settings.study_quality if mode == "quality" else mode
    return StudyTable(quality, settings.statistic, columns, rows)


def _study_values(
    frame: ScoreFrame, columns: Sequence[str], settings: Settings
) -> dict[StudyKey, list[float]]:
    """The per-item values of each cell, by the references the settings ask for."""
    values: dict[StudyKey, list[float]] = defaultdict(list)
    if settings.study_references == "quality":
        for o in frame.observations:
            if o.metric not in columns or o.item.is_reference:
                continue
            if o.quality is not None and o.quality != settings.study_quality:
                continue
            values[(o.model, o.tier, o.lang, "", o.metric)].append(o.value)
    else:
        for key, value in _study_items(frame, columns, split=settings.study_references == "split"):
            values[key].append(value)
    return values


def _study_row(
    values: dict[StudyKey, list[float]],
    row_key: tuple[str, str, str, str],
    columns: Sequence[str],
    settings: Settings,
) -> StudyRow:
    """One row's cells; a non-head row's cell tested against the head row's values."""
    model, tier, lang, refs = row_key
    statistic = np.median if settings.statistic == "median" else np.mean
    cells = {}
    for metric in columns:
        data = values.get((model, tier, lang, refs, metric))
        if not data:
            continue
        test = None
        head = values.get((model, "head", lang, refs, metric))
        if tier != "head" and head:
            test = mann_whitney_protocol(
                head,
                data,
                repetitions=settings.repetitions,
                sample_size=settings.sample_size,
                seed=settings.seed,
                alpha=settings.alpha,
            )
        cells[metric] = StudyCell(
            float(statistic(data)),
            len(data),
            test is not None and test.significant,
            None if test is None else test.p_value,
        )
    return StudyRow(model, tier, lang, cells, refs)


def _study_items(
    frame: ScoreFrame, columns: Sequence[str], *, split: bool
) -> list[tuple[StudyKey, float]]:
    """Per-item study values when gold and silver references are pooled or split.

    Pooled: an item scored against both qualities counts once, with the mean of its
    values. Split: a reference-based value goes to the row of its quality; a metric with
    no references (PPL) goes to the row of each quality the item has references of."""
    by_item: dict[tuple[int, str], dict[str | None, float]] = defaultdict(dict)
    contexts: dict[int, Any] = {}
    qualities: dict[int, set[str]] = defaultdict(set)
    for o in frame.observations:
        if o.metric not in columns or o.item.is_reference:
            continue
        key = id(o.item)
        contexts[key] = o.item
        by_item[(key, o.metric)][o.quality] = o.value
        if o.quality is not None:
            qualities[key].add(o.quality)
    out: list[tuple[StudyKey, float]] = []
    for (key, metric), per_quality in by_item.items():
        item = contexts[key]
        head = (item.model, item.tier, item.lang)
        if not split:
            out.append(((*head, "", metric), float(np.mean(list(per_quality.values())))))
        elif None in per_quality:
            out += [((*head, q, metric), per_quality[None]) for q in sorted(qualities[key])]
        else:
            out += [((*head, q, metric), v) for q, v in per_quality.items() if q is not None]
    return out
