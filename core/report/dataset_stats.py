"""Dataset statistics and checks: the figures a paper's data table prints, and entries
that look wrong.

Statistics count the session's data units by tier, sub-tier, size, shape (the stored
label), dataset (the file a unit came from, or "built in the app"), the languages that
hold a main triple set, and reference texts by language and quality (gold/silver).

Checks (each finding names the unit, the check and the reason):

* ``shape``: the stored shape label contradicts the unit's own triples, decided by
  :func:`core.units.shapes.unit_structure` on the main English set (METHODS §5: sibling = every
  triple has the same subject, so a one-triple unit is a sibling; chain = one path;
  mixed = both). Units whose triples do not connect from the root are reported too.
  In TailNLG v1.0 the labels look like the shape the unit was sampled for, not the shape
  its triples have: 1-triple units labelled chain or mixed, two siblings labelled chain.
* ``copied-object``: an Italian or Spanish triple whose object repeats its subject while
  the English triple at the same position has a different object (a copy slip of the
  translation step: ``Adam Fuhrmann | luogo di nascita | Adam Fuhrmann``).
* ``missing-language``: a unit lacks a main triple set, some of its triples or a
  reference in a language that other units of the same dataset have.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.units.shapes import Triple, unit_structure

if TYPE_CHECKING:
    from core.jobs import Job, JobContext
    from core.store import SessionStore

NONE = "(none)"
BUILT = "built in the app"
CHECKS = ("shape", "not-connected", "copied-object", "missing-language")


@dataclass(frozen=True)
class Finding:
    uid: str
    check: str  # one of CHECKS
    reason: str


@dataclass(frozen=True)
class Table:
    """One table of figures: a title, column headers and rows (first cell the label)."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class DatasetStatistics:
    units: int
    references: int
    triples: int  # main-set triples, every language
    by_tier: dict[str, int] = field(default_factory=dict)
    by_sub_tier: dict[str, int] = field(default_factory=dict)
    by_size: dict[str, int] = field(default_factory=dict)
    by_shape: dict[str, int] = field(default_factory=dict)
    by_dataset: dict[str, int] = field(default_factory=dict)
    units_by_lang: dict[str, int] = field(default_factory=dict)
    # language -> quality -> reference texts
    references_by_lang: dict[str, dict[str, int]] = field(default_factory=dict)
    # tier -> size -> units
    tier_by_size: dict[str, dict[str, int]] = field(default_factory=dict)
    # tier -> shape -> units
    tier_by_shape: dict[str, dict[str, int]] = field(default_factory=dict)
    # stored shape label -> shape of the triples (METHODS §5) -> units
    label_by_shape: dict[str, dict[str, int]] = field(default_factory=dict)

    def tables(self) -> list[Table]:
        """The figures as tables, in the order a data table prints them."""
        tables = [
            Table(
                "Totals",
                ("", "count"),
                (
                    ("units", str(self.units)),
                    ("reference texts", str(self.references)),
                    ("triples (main sets, all languages)", str(self.triples)),
                ),
            )
        ]
        for title, key_name, counts in (
            ("Units per dataset", "dataset", self.by_dataset),
            ("Units per tier", "tier", self.by_tier),
            ("Units per sub-tier", "sub-tier", self.by_sub_tier),
            ("Units per size", "triples", self.by_size),
            ("Units per shape (stored label)", "shape", self.by_shape),
            ("Units with a main triple set, per language", "language", self.units_by_lang),
        ):
            tables.append(
                Table(
                    title,
                    (key_name, "units"),
                    tuple((key, str(value)) for key, value in counts.items()),
                )
            )
        qualities = sorted({q for row in self.references_by_lang.values() for q in row})
        tables.append(
            Table(
                "Reference texts per language and quality",
                ("language", *qualities, "all"),
                tuple(
                    (lang, *(str(row.get(q, 0)) for q in qualities), str(sum(row.values())))
                    for lang, row in self.references_by_lang.items()
                ),
            )
        )
        for title, first, cross in (
            ("Units per tier and size", "tier", self.tier_by_size),
            ("Units per tier and shape", "tier", self.tier_by_shape),
            (
                "Shape label (rows) against the shape of the triples, METHODS §5 (columns)",
                "label",
                self.label_by_shape,
            ),
        ):
            columns = sorted({c for row in cross.values() for c in row}, key=_order)
            tables.append(
                Table(
                    title,
                    (first, *columns, "all"),
                    tuple(
                        (tier, *(str(row.get(c, 0)) for c in columns), str(sum(row.values())))
                        for tier, row in cross.items()
                    ),
                )
            )
        return tables


def _order(key: str) -> tuple[int, Any]:
    """Numbers in numeric order, then words, "(none)" last."""
    if key == NONE:
        return (2, key)
    return (0, int(key)) if key.isdigit() else (1, key)


def _sorted(counter: Counter[str]) -> dict[str, int]:
    return {key: counter[key] for key in sorted(counter, key=_order)}


def _dataset(source: str | None, origin: str | None) -> str:
    """The file a unit was imported from (its path below the imported folder)."""
    if origin != "imported" or not source:
        return BUILT
    return source


def _read(
    store: SessionStore,
) -> tuple[Sequence[Any], dict[int, dict[str, list[Triple]]], Sequence[Any]]:
    from sqlalchemy import select

    from core.store.models import DataUnit, UnitReference, UnitTriple

    with store.snapshot() as db:
        units = db.execute(
            select(
                DataUnit.id,
                DataUnit.uid,
                DataUnit.tier,
                DataUnit.sub_tier,
                DataUnit.size,
                DataUnit.shape,
                DataUnit.source,
                DataUnit.origin,
                DataUnit.root_qid,
            ).order_by(DataUnit.id)
        ).all()
        triples: dict[int, dict[str, list[Triple]]] = defaultdict(lambda: defaultdict(list))
        for row in db.execute(
            select(
                UnitTriple.unit_id,
                UnitTriple.lang,
                UnitTriple.subject,
                UnitTriple.predicate,
                UnitTriple.object,
                UnitTriple.subject_override,
                UnitTriple.predicate_override,
                UnitTriple.object_override,
            )
            .where(UnitTriple.tripleset == "main")
            .order_by(UnitTriple.unit_id, UnitTriple.lang, UnitTriple.position)
        ):
            triples[row.unit_id][row.lang].append(
                Triple(
                    row.subject_override if row.subject_override is not None else row.subject,
                    row.predicate_override if row.predicate_override is not None else row.predicate,
                    row.object_override if row.object_override is not None else row.object,
                )
            )
        references = db.execute(
            select(UnitReference.unit_id, UnitReference.lang, UnitReference.quality)
        ).all()
    return units, triples, references


def dataset_statistics(store: SessionStore) -> DatasetStatistics:
    """Counts of the session's data units and reference texts (two reads)."""
    units, triples, references = _read(store)
    by = {name: Counter[str]() for name in ("tier", "sub_tier", "size", "shape", "dataset")}
    tier_by_size: dict[str, Counter[str]] = defaultdict(Counter)
    tier_by_shape: dict[str, Counter[str]] = defaultdict(Counter)
    label_by_shape: dict[str, Counter[str]] = defaultdict(Counter)
    langs: Counter[str] = Counter()
    for unit in units:
        tier = unit.tier or NONE
        size = str(unit.size) if unit.size is not None and unit.size >= 0 else NONE
        shape = unit.shape or NONE
        by["tier"][tier] += 1
        by["sub_tier"][unit.sub_tier or NONE] += 1
        by["size"][size] += 1
        by["shape"][shape] += 1
        by["dataset"][_dataset(unit.source, unit.origin)] += 1
        tier_by_size[tier][size] += 1
        tier_by_shape[tier][shape] += 1
        label_by_shape[shape][_computed_shape(triples.get(unit.id, {}))] += 1
        langs.update(lang for lang, rows in triples.get(unit.id, {}).items() if rows)
    by_lang: dict[str, Counter[str]] = defaultdict(Counter)
    for reference in references:
        by_lang[reference.lang][reference.quality] += 1
    return DatasetStatistics(
        units=len(units),
        references=len(references),
        triples=sum(len(rows) for sets in triples.values() for rows in sets.values()),
        by_tier=_sorted(by["tier"]),
        by_sub_tier=_sorted(by["sub_tier"]),
        by_size=_sorted(by["size"]),
        by_shape=_sorted(by["shape"]),
        by_dataset=_sorted(by["dataset"]),
        units_by_lang=_sorted(langs),
        references_by_lang={lang: dict(sorted(by_lang[lang].items())) for lang in sorted(by_lang)},
        tier_by_size={t: _sorted(tier_by_size[t]) for t in sorted(tier_by_size, key=_order)},
        tier_by_shape={t: _sorted(tier_by_shape[t]) for t in sorted(tier_by_shape, key=_order)},
        label_by_shape={s: _sorted(label_by_shape[s]) for s in sorted(label_by_shape, key=_order)},
    )


def _main_rows(sets: dict[str, list[Triple]]) -> list[Triple]:
    """The set a unit's shape is judged on: English, else the first language's."""
    return sets.get("en") or next(iter(sets.values()), [])


def _computed_shape(sets: dict[str, list[Triple]]) -> str:
    rows = _main_rows(sets)
    if not rows:
        return NONE
    structure = unit_structure(rows)
    if not structure.connected:
        return "not connected"
    return structure.shape.value if structure.shape else NONE


def _shape_finding(label: str | None, rows: list[Triple]) -> tuple[str, str] | None:
    """(check, reason) when the label contradicts the triples or they do not connect."""
    if not rows:
        return None
    structure = unit_structure(rows)
    if not structure.connected:
        return "not-connected", (
            f"labelled {label or 'with no shape'}, but its triples do not connect from "
            f"{structure.root}: " + "; ".join(structure.problems)
        )
    if not label:
        return None
    shape = structure.shape.value if structure.shape else None
    if shape == label:
        return None
    subjects = len({t.subject for t in rows})
    why = (
        {
            "sibling": f"all {len(rows)} triples share the subject {rows[0].subject!r}"
            if len(rows) > 1
            else "a single triple is a sibling unit",
            "chain": "its triples form one path, each object the next subject",
            "mixed": f"its {len(rows)} triples have {subjects} subjects and do not form one path",
        }[shape]
        if shape
        else "it has no shape"
    )
    return "shape", f"labelled {label}, but {why} (METHODS §5: {shape})"


def dataset_checks(store: SessionStore) -> list[Finding]:
    """Units that look wrong, in unit order, each with the check and the reason."""
    units, triples, references = _read(store)
    ref_langs: dict[int, set[str]] = defaultdict(set)
    for reference in references:
        ref_langs[reference.unit_id].add(reference.lang)
    # Languages expected per dataset: those any of its units has a main set in.
    expected: dict[str, set[str]] = defaultdict(set)
    for unit in units:
        expected[_dataset(unit.source, unit.origin)].update(triples.get(unit.id, {}))
    findings: list[Finding] = []
    for unit in units:
        sets = triples.get(unit.id, {})
        english = _main_rows(sets)
        shape_finding = _shape_finding(unit.shape, english)
        if shape_finding:
            findings.append(Finding(unit.uid, *shape_finding))
        for lang in ("it", "es"):
            for position, (triple, en) in enumerate(
                zip(sets.get(lang, []), sets.get("en", []), strict=False)
            ):
                if triple.object == triple.subject and en.object != en.subject:
                    findings.append(
                        Finding(
                            unit.uid,
                            "copied-object",
                            (
                                f"{lang} triple {position + 1} repeats its subject as object "
                                f"({triple.subject} | {triple.predicate} | {triple.object}); "
                                f"in English: {en.subject} | {en.predicate} | {en.object}"
                            ),
                        )
                    )
        wanted = expected[_dataset(unit.source, unit.origin)]
        for lang in sorted(wanted):
            rows = sets.get(lang, [])
            if not rows:
                findings.append(
                    Finding(
                        unit.uid,
                        "missing-language",
                        f"no {lang} triples, although its dataset has {lang}",
                    )
                )
            elif len(rows) < len(english):
                findings.append(
                    Finding(
                        unit.uid,
                        "missing-language",
                        (
                            f"{len(rows)} of {len(english)} triples in {lang} "
                            f"(a label missing in {lang}?)"
                        ),
                    )
                )
            if len(wanted) > 1 and lang not in ref_langs.get(unit.id, set()):
                findings.append(Finding(unit.uid, "missing-language", f"no {lang} reference text"))
    return findings


def stats_job(
    store: SessionStore, *, checks: bool = True
) -> Job[tuple[DatasetStatistics, list[Finding]]]:
    """Statistics (and checks) as a job, for the GUI."""
    from core.jobs import Job

    def run(ctx: JobContext) -> tuple[DatasetStatistics, list[Finding]]:
        stats = dataset_statistics(store)
        ctx.check_cancelled()
        return stats, (dataset_checks(store) if checks else [])

    return Job(title="Dataset statistics", run=run, kind="stats", params={"checks": checks})
