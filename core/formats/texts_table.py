"""The per-text table (METHODS §10): one row per text, every figure the session holds about it.

Rows are the runs' texts (``verbalisations``, kind ``output``) and the reference texts that
have a sentence score or a rating (kind ``reference``, model ``(references)``, their
quality gold/silver). Columns, in order:

* keys: ``kind, verbalisation_id, reference_id, unit, run, model, lang, candidate, tier,
  sub_tier, category, quality, text`` (``category`` as :func:`core.groups.category_name`
  names it; ``tier``/``sub_tier`` as the unit stores them);
* one float column per score column as the Scores panel and ``correlate`` name them: the
  metric (``esa``, ``perplexity``), or ``metric:quality`` for a reference-based metric
  (``bleu:gold``, ``chrf++:silver``; CONVENTIONS.md: one row per reference quality);
  missing values are empty (CSV), null (JSON Lines, Parquet), NaN in pandas;
* ``esa:undetected_entities`` (ESA's ``missing`` entities: a list in JSON Lines and
  Parquet, joined with ``" | "`` in CSV) and ``details`` (every score's details as one
  JSON object text, ``{column: details}``);
* each annotator's ratings, ``fluency__NAME`` and ``adequacy__NAME`` (golden answers left
  out), then the item's aggregates as METHODS §9 defines them
  (:func:`core.annotation.aggregation.item_aggregates`): ``ratings``, ``fluency_mean``,
  ``fluency_median``, ``adequacy_majority_voted``, ``adequacy_percentage``.

Where each metric's signature goes (the header names it): Parquet, in the schema's
metadata (``taillens`` key: columns, types and signatures; each metric field's own
``signature``) with pandas metadata so ``pd.read_parquet`` gives nullable integers;
CSV and JSON Lines, whose rows stay plain data for ``csv``/pandas/R, in a sidecar
``NAME.signatures.json`` beside the file (signatures, columns, their types and the
``pandas_dtypes`` to pass to ``pd.read_csv``/``pd.read_json(dtype=...)``); the CLI prints
them too.

Read in pages (keyset by id, :data:`PAGE_SIZE` texts, their scores and ratings) inside one
WAL snapshot and written as it goes: CSV and JSON Lines row by row, Parquet one row group
a page (pyarrow, imported only here), so memory stays flat on a session of 100k texts.
Every file goes through :func:`core.formats.common.atomic_output`; CSV cells through
:class:`core.formats.common.CsvWriter` (spreadsheet-safe unless ``raw``). Qt-free.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from core.annotation.aggregation import item_aggregates
from core.formats.common import CsvWriter, FormatError, atomic_output
from core.formats.report import ExportReport
from core.groups import category_name
from core.io import jsonio
from core.io.bounded import stored_json
from core.io.output_guard import check_output_target
from core.jobs import Job, JobContext
from core.labels import plural_word
from core.metrics.base import details_from_json
from core.metrics.details import EsaDetails, MetricDetails
from core.metrics.signature import read_signature
from core.report.data import REFERENCES_MODEL
from core.vocab import run_name

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.store import SessionStore

PAGE_SIZE = 2000  # texts per read and per Parquet row group
SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".parquet": "parquet"}
LIST_JOINER = " | "  # a list cell in CSV
OUTPUT, REFERENCE = "output", "reference"
ESA_UNDETECTED = "esa:undetected_entities"
DETAILS = "details"
RATING_SEPARATOR = "__"  # fluency__alice
AGGREGATE_COLUMNS = (
    ("ratings", "int"),
    ("fluency_mean", "float"),
    ("fluency_median", "float"),
    ("adequacy_majority_voted", "int"),
    ("adequacy_percentage", "float"),
)
KEY_COLUMNS = (
    ("kind", "string"),
    ("verbalisation_id", "int"),
    ("reference_id", "int"),
    ("unit", "string"),
    ("run", "int"),
    ("model", "string"),
    ("lang", "string"),
    ("candidate", "int"),
    ("tier", "string"),
    ("sub_tier", "string"),
    ("category", "string"),
    ("quality", "string"),
    ("text", "string"),
)
# What pandas should read each column type as (the sidecar's pandas_dtypes).
PANDAS_DTYPES = {"int": "Int64", "float": "float64", "string": "str", "list": "object"}


class TextsTableError(FormatError):
    """A per-text export that cannot be written as asked (the message says why)."""


def texts_format(path: Path | str) -> str:
    """``csv``, ``jsonl`` or ``parquet`` from the file's suffix, else a one-line error."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise TextsTableError(
            f"Cannot tell the table format of {Path(path).name}: name the file .csv, "
            ".jsonl or .parquet."
        )
    return SUFFIXES[suffix]


def sidecar_path(path: Path | str) -> Path:
    """Where a CSV or JSON Lines table's signatures and column types go."""
    path = Path(path).expanduser()
    return path.with_name(path.name + ".signatures.json")


@dataclass(frozen=True)
class TextsReport(ExportReport):
    """An :class:`ExportReport` (entries: rows) with what the table holds: its columns and
    their types, each score column's signatures, outputs and references written, and the
    sidecar written (CSV, JSON Lines)."""

    columns: tuple[tuple[str, str], ...] = ()
    signatures: dict[str, list[str]] = field(default_factory=dict)
    outputs: int = 0
    sidecar: str = ""

    def texts_line(self) -> str:
        """``"5 texts (4 outputs, 1 reference) of 2 units, 27 columns"``: plain integers,
        as :func:`core.formats.report.counts_line`, so scripts can parse the line."""
        return "{} ({}, {}) of {}, {}".format(
            *(
                f"{n} {plural_word(n, word)}"
                for n, word in (
                    (self.entries, "text"),
                    (self.outputs, "output"),
                    (self.references, "reference"),
                    (self.units, "unit"),
                    (len(self.columns), "column"),
                )
            )
        )


@dataclass(frozen=True)
class _Plan:
    """What the table holds, decided before the first row: filters, columns, signatures."""

    runs: tuple[int, ...] | None
    langs: tuple[str, ...] | None
    score_columns: tuple[str, ...]
    annotators: tuple[tuple[int, str], ...]
    signatures: dict[str, list[str]]
    categories: dict[int, str]
    # SQL keeping the rows readers may use (core.store.integrity.usable_rows), by alias:
    # v verbalisations, ur unit_references, s scores, n annotations. Damaged rows (and
    # those that belong to them) are left out, as every read of a session leaves them.
    kept: dict[str, str] = field(default_factory=dict)

    @property
    def references(self) -> bool:
        return self.runs is None  # reference texts belong to no run

    @property
    def columns(self) -> tuple[tuple[str, str], ...]:
        columns = list(KEY_COLUMNS)
        columns += [(c, "float") for c in self.score_columns]
        if "esa" in self.score_columns:
            columns.append((ESA_UNDETECTED, "list"))
        columns.append((DETAILS, "string"))
        for _id, name in self.annotators:
            columns += [
                (f"fluency{RATING_SEPARATOR}{name}", "int"),
                (f"adequacy{RATING_SEPARATOR}{name}", "int"),
            ]
        columns += AGGREGATE_COLUMNS
        return tuple(columns)


def _column(metric: str, quality: Any) -> str:
    return f"{metric}:{quality}" if isinstance(quality, str) and quality else metric


def _in(names: str, values: Sequence[Any], params: dict[str, Any]) -> str:
    keys = [f"{names}{i}" for i in range(len(values))]
    params.update(zip(keys, values, strict=True))
    return "(" + ", ".join(":" + k for k in keys) + ")"


_QUALITY = "json_extract(s.details, '$.quality')"
_RATED_REFERENCE = (
    "SELECT n.reference_id FROM annotations n WHERE n.reference_id IS NOT NULL "
    "AND n.verbalisation_id IS NULL AND n.is_golden = 0 AND {n}"
)
_SCORED_REFERENCE = (
    "SELECT s.reference_id FROM scores s WHERE s.level = 'sentence' "
    "AND s.verbalisation_id IS NULL AND s.reference_id IS NOT NULL AND {s}"
)


def _output_where(plan: _Plan, params: dict[str, Any]) -> str:
    clauses = [plan.kept["v"]]
    if plan.runs is not None:
        clauses.append(f"v.run_id IN {_in('run', list(plan.runs), params)}")
    if plan.langs is not None:
        clauses.append(f"v.lang IN {_in('lang', list(plan.langs), params)}")
    return " AND ".join(clauses)


def _reference_where(plan: _Plan, params: dict[str, Any]) -> str:
    scored = _SCORED_REFERENCE.format(s=plan.kept["s"])
    rated = _RATED_REFERENCE.format(n=plan.kept["n"])
    clauses = [plan.kept["ur"], f"(ur.id IN ({scored}) OR ur.id IN ({rated}))"]
    if plan.langs is not None:
        clauses.append(f"ur.lang IN {_in('lang', list(plan.langs), params)}")
    return " AND ".join(clauses)


def _plan(db: Session, runs: Sequence[int] | None, langs: Sequence[str] | None) -> _Plan:
    from sqlalchemy import text

    from core.store.integrity import usable_rows

    kept = {
        alias: usable_rows(db, table, alias)
        for alias, table in (
            ("v", "verbalisations"),
            ("ur", "unit_references"),
            ("s", "scores"),
            ("n", "annotations"),
        )
    }

    runs_t = None if runs is None else tuple(sorted({int(r) for r in runs}))
    langs_t = None if langs is None else tuple(sorted(set(langs)))
    if runs_t is not None:
        known = {int(r) for (r,) in db.execute(text("SELECT id FROM model_runs"))}
        missing = [r for r in runs_t if r not in known]
        if missing:
            raise TextsTableError(
                f"run {', '.join(map(str, missing))} is not in this session; its runs are: "
                f"{', '.join(map(str, sorted(known))) or 'none'}."
            )
    params: dict[str, Any] = {}
    draft = _Plan(runs_t, langs_t, (), (), {}, {}, kept)
    where = _output_where(draft, params)
    found: dict[str, set[str]] = defaultdict(set)
    rows = list(
        db.execute(
            text(
                f"SELECT s.metric, {_QUALITY}, s.signature FROM scores s "
                "JOIN verbalisations v ON v.id = s.verbalisation_id "
                f"WHERE s.level = 'sentence' AND {kept['s']} AND {where} "
                f"GROUP BY s.metric, {_QUALITY}, s.signature"
            ),
            params,
        )
    )
    if runs_t is None:
        ref_params: dict[str, Any] = {}
        lang = "" if langs_t is None else f"AND s.lang IN {_in('lang', list(langs_t), ref_params)}"
        rows += list(
            db.execute(
                text(
                    f"SELECT s.metric, {_QUALITY}, s.signature FROM scores s "
                    "WHERE s.level = 'sentence' AND s.verbalisation_id IS NULL "
                    f"AND s.reference_id IS NOT NULL AND {kept['s']} {lang} "
                    f"GROUP BY s.metric, {_QUALITY}, s.signature"
                ),
                ref_params,
            )
        )
    for metric, quality, signature in rows:
        column = _column(metric, quality)
        if signature:
            found[column].add(signature)
        else:
            found.setdefault(column, set())
    from core.metrics.score_pages import column_order

    columns = tuple(sorted(found, key=column_order))
    annotators = tuple(
        (int(i), str(n))
        for i, n in db.execute(
            text(
                "SELECT a.id, a.name FROM annotators a WHERE EXISTS (SELECT 1 FROM annotations "
                f"n WHERE n.annotator_id = a.id AND n.is_golden = 0 AND {kept['n']}) "
                "ORDER BY a.name"
            )
        )
    )
    categories = {int(i): str(n) for i, n in db.execute(text("SELECT id, name FROM categories"))}
    return _Plan(
        runs_t,
        langs_t,
        columns,
        annotators,
        {c: sorted(found[c]) for c in columns if found[c]},
        categories,
        kept,
    )


_UNIT_COLUMNS = (
    "u.uid, u.tier, u.sub_tier, u.category_id, "
    "json_extract(u.attributes, '$.entry.category') AS entry_category, "
    "json_extract(u.attributes, '$.record.theme_label') AS theme"
)


def _category(row: Any, categories: dict[int, str]) -> str:
    """The unit's category by :func:`core.groups.category_name`, from the two attributes
    it looks at (read in SQL: a unit's whole attributes are never parsed here)."""
    attributes = {"entry": {"category": row.entry_category}, "record": {"theme_label": row.theme}}
    return category_name(row.category_id, attributes, categories)


def _keyset_pages(
    db: Session, query: str, where: Callable[[dict[str, Any]], str], page_size: int
) -> Iterator[Sequence[Any]]:
    """The rows of ``query`` (with ``{where}`` filled by ``where(params)``), a page at a
    time in id order: each page starts after the last id of the one before."""
    from sqlalchemy import text

    after = 0
    while True:
        params: dict[str, Any] = {"after": after, "limit": page_size}
        rows = db.execute(text(query.format(where=where(params))), params).all()
        if not rows:
            return
        after = rows[-1].id
        yield rows


def _pages(db: Session, plan: _Plan, page_size: int) -> Iterator[list[dict[str, Any]]]:
    """The table's rows, a page at a time: every output, then the references."""
    outputs = (
        "SELECT v.id, v.run_id, r.system_name, r.model_id, v.lang, v.candidate_index, "
        f"v.text, {_UNIT_COLUMNS} FROM verbalisations v "
        "JOIN model_runs r ON r.id = v.run_id JOIN data_units u ON u.id = v.unit_id "
        "WHERE v.id > :after AND {where} ORDER BY v.id LIMIT :limit"
    )
    for texts in _keyset_pages(db, outputs, lambda p: _output_where(plan, p), page_size):
        rows = [
            {
                "kind": OUTPUT,
                "verbalisation_id": t.id,
                "reference_id": None,
                "unit": t.uid,
                "run": t.run_id,
                "model": run_name(t.system_name, t.model_id),
                "lang": t.lang,
                "candidate": t.candidate_index or 0,
                "tier": t.tier,
                "sub_tier": t.sub_tier,
                "category": _category(t, plan.categories),
                "quality": None,
                "text": t.text,
            }
            for t in texts
        ]
        _add_figures(db, plan, rows, "verbalisation_id")
        yield rows
    if not plan.references:
        return
    references = (
        f"SELECT ur.id, ur.lang, ur.quality, ur.text, {_UNIT_COLUMNS} "
        "FROM unit_references ur JOIN data_units u ON u.id = ur.unit_id "
        "WHERE ur.id > :after AND {where} ORDER BY ur.id LIMIT :limit"
    )
    for texts in _keyset_pages(db, references, lambda p: _reference_where(plan, p), page_size):
        rows = [
            {
                "kind": REFERENCE,
                "verbalisation_id": None,
                "reference_id": t.id,
                "unit": t.uid,
                "run": None,
                "model": REFERENCES_MODEL,
                "lang": t.lang,
                "candidate": None,
                "tier": t.tier,
                "sub_tier": t.sub_tier,
                "category": _category(t, plan.categories),
                "quality": t.quality,
                "text": t.text,
            }
            for t in texts
        ]
        _add_figures(db, plan, rows, "reference_id")
        yield rows


def _add_figures(db: Session, plan: _Plan, rows: list[dict[str, Any]], key: str) -> None:
    """Scores, details, ratings and aggregates of one page's rows, in place."""
    from sqlalchemy import text

    from core.store.batching import in_chunks

    by_id = {row[key]: row for row in rows}
    ids = list(by_id)
    own = "" if key == "verbalisation_id" else "s.verbalisation_id IS NULL AND "
    details: dict[int, dict[str, MetricDetails]] = defaultdict(dict)
    for row in rows:
        for column in plan.score_columns:
            row[column] = None
    for ids_chunk in in_chunks(ids):
        params: dict[str, Any] = {}
        chunk = _in("i", ids_chunk, params)
        for item, metric, value, raw in db.execute(
            text(
                f"SELECT s.{key}, s.metric, s.value, s.details FROM scores s "
                f"WHERE s.level = 'sentence' AND {own}s.{key} IN {chunk} AND {plan.kept['s']} "
                "ORDER BY s.id"
            ),
            params,
        ):
            # Not JSON (or not within bounds): integrity hides such rows; never a traceback.
            info = stored_json(raw, {}) if isinstance(raw, str) else (raw or {})
            typed = details_from_json(metric, info if isinstance(info, dict) else {})
            column = _column(metric, typed.extra.get("quality"))
            if column not in plan.score_columns:
                continue
            by_id[item][column] = value  # the newest row wins, as everywhere
            typed = typed.without("quality")
            if typed:
                details[item][column] = typed
    ratings: dict[int, dict[int, tuple[int | None, int | None]]] = defaultdict(dict)
    for ids_chunk in in_chunks(ids):
        params = {}
        chunk = _in("i", ids_chunk, params)
        for item, annotator, fluency, adequacy in db.execute(
            text(
                f"SELECT n.{key}, n.annotator_id, n.fluency, n.adequacy FROM annotations n "
                f"WHERE n.is_golden = 0 AND n.{key} IN {chunk} AND {plan.kept['n']}"
                + ("" if key == "verbalisation_id" else " AND n.verbalisation_id IS NULL")
            ),
            params,
        ):
            ratings[item][annotator] = (fluency, adequacy)
    undetected = "esa" in plan.score_columns  # the ESA_UNDETECTED column is there
    for item, row in by_id.items():
        found = details.get(item, {})
        if undetected:
            esa = found.get("esa")
            missing = esa.missing if isinstance(esa, EsaDetails) else None
            row[ESA_UNDETECTED] = [str(m) for m in missing] if missing is not None else None
        row[DETAILS] = (
            jsonio.dumps(
                {column: typed.to_json() for column, typed in found.items()},
                ensure_ascii=False,
                sort_keys=True,
            )
            if found
            else None
        )
        given = ratings.get(item, {})
        for annotator_id, name in plan.annotators:
            fluency, adequacy = given.get(annotator_id, (None, None))
            row[f"fluency{RATING_SEPARATOR}{name}"] = fluency
            row[f"adequacy{RATING_SEPARATOR}{name}"] = adequacy
        fluencies = [f for f, _ in given.values() if f is not None]
        adequacies = [a for _, a in given.values() if a is not None]
        aggregates = item_aggregates(fluencies, adequacies)
        row["ratings"] = len(given) if given else None
        for name, _kind in AGGREGATE_COLUMNS[1:]:
            row[name] = aggregates[name]


# -- writers ------------------------------------------------------------------------------------


def _number(value: Any) -> Any:
    """A float that JSON and CSV can hold: None for NaN and infinities."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    return value


class _CsvTable:
    def __init__(self, handle: IO[str], columns: Sequence[tuple[str, str]], raw: bool) -> None:
        self.names = [name for name, _ in columns]
        self.lists = {name for name, kind in columns if kind == "list"}
        self.writer = CsvWriter(handle, raw=raw, fieldnames=self.names, convert=_csv_cell)
        self.writer.writeheader()

    def write(self, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            cells = [
                LIST_JOINER.join(row[n]) if n in self.lists and row[n] is not None else row[n]
                for n in self.names
            ]
            # None never reaches convert as text: an absent string is an empty cell.
            self.writer.writerow(["" if c is None else c for c in cells])


class _JsonLinesTable:
    def __init__(self, handle: IO[str], columns: Sequence[tuple[str, str]]) -> None:
        self.handle = handle
        self.names = [name for name, _ in columns]

    def write(self, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            record = {n: _number(row[n]) for n in self.names}
            self.handle.write(jsonio.dumps(record, ensure_ascii=False) + "\n")


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        from core.desktop.install import pip_hint

        raise TextsTableError(
            f"Writing Parquet needs pyarrow, which is not installed: {pip_hint('pyarrow')} "
            "(or export to .csv or .jsonl)."
        ) from exc
    return pyarrow


def _metadata(plan: _Plan, fmt: str) -> dict[str, Any]:
    """The description of the table the sidecar and the Parquet metadata carry."""
    from core import __version__

    return {
        "table": "taillens per-text table (METHODS §10)",
        "format": fmt,
        "taillens": __version__,
        "signatures": plan.signatures,
        # The same, typed: metric, library, version and settings (an old session's
        # free-form text as {"legacy": text}).
        "signature_fields": {
            column: [read_signature(text).to_json() for text in texts]
            for column, texts in plan.signatures.items()
        },
        "columns": [{"name": n, "type": k} for n, k in plan.columns],
        "pandas_dtypes": {n: PANDAS_DTYPES[k] for n, k in plan.columns},
        "list_joiner": LIST_JOINER if fmt == "csv" else None,
        "filters": {"runs": plan.runs, "langs": plan.langs},
    }


class _ParquetTable:
    def __init__(self, handle: IO[bytes], plan: _Plan) -> None:
        pa = _pyarrow()
        self.pa = pa
        types = {
            "int": pa.int64(),
            "float": pa.float64(),
            "string": pa.string(),
            "list": pa.list_(pa.string()),
        }
        fields = []
        for name, kind in plan.columns:
            signatures = plan.signatures.get(name)
            meta = {b"signature": " || ".join(signatures).encode()} if signatures else None
            fields.append(pa.field(name, types[kind], nullable=True, metadata=meta))
        # pandas metadata (its documented "pandas" key): nullable integers come back as
        # Int64, not float64, from a plain pd.read_parquet. No pandas needed to write it.
        pandas_types = {"int": "int64", "float": "float64", "string": "unicode"}
        pandas_meta = {
            "index_columns": [],
            "column_indexes": [],
            "columns": [
                {
                    "name": name,
                    "field_name": name,
                    "pandas_type": pandas_types.get(kind, "list[unicode]"),
                    "numpy_type": "Int64"
                    if kind == "int"
                    else ("float64" if kind == "float" else "object"),
                    "metadata": None,
                }
                for name, kind in plan.columns
            ],
            "creator": {"library": "taillens", "version": _metadata(plan, "parquet")["taillens"]},
            "pandas_version": "2.0.0",
        }
        self.schema = pa.schema(fields).with_metadata(
            {
                b"taillens": jsonio.dumps(_metadata(plan, "parquet"), ensure_ascii=False).encode(),
                b"pandas": jsonio.dumps(pandas_meta).encode(),
            }
        )
        self.names = [name for name, _ in plan.columns]
        self.writer = pa.parquet.ParquetWriter(handle, self.schema)

    def write(self, rows: list[dict[str, Any]]) -> None:
        arrays = {n: [_number(row[n]) for row in rows] for n in self.names}
        self.writer.write_table(self.pa.Table.from_pydict(arrays, schema=self.schema))

    def close(self) -> None:
        self.writer.close()


def export_texts(
    store: SessionStore,
    path: Path | str,
    ctx: JobContext | None = None,
    *,
    force: bool = False,
    raw: bool = False,
    runs: Sequence[int] | None = None,
    langs: Sequence[str] | None = None,
    page_size: int = PAGE_SIZE,
) -> TextsReport:
    """Write the per-text table of ``store`` to ``path`` (.csv, .jsonl or .parquet, by its
    suffix); ``runs``/``langs`` keep only those runs' texts (no references then) or
    languages. A CSV or JSON Lines file gets its sidecar (:func:`sidecar_path`)."""
    path = Path(path).expanduser()
    check_output_target(path, force=force)
    fmt = texts_format(path)
    sidecar = sidecar_path(path) if fmt != "parquet" else None
    if sidecar is not None:
        check_output_target(sidecar, force=force)
    if fmt == "parquet":
        _pyarrow()  # refused before any read
    with store.snapshot() as db:
        from sqlalchemy import text

        plan = _plan(db, runs, langs)
        total_params: dict[str, Any] = {}
        total = int(
            db.execute(
                text(
                    "SELECT count(*) FROM verbalisations v WHERE "
                    + _output_where(plan, total_params)
                ),
                total_params,
            ).scalar_one()
        )
        written = outputs = references = 0
        units: set[str] = set()  # bounded by the session's units, not its texts
        neutralised, cells = 0, ""
        newline = "" if fmt == "csv" else None
        with atomic_output(path, binary=fmt == "parquet", newline=newline, force=force) as handle:
            table: Any
            if fmt == "csv":
                table = _CsvTable(handle, plan.columns, raw)
            elif fmt == "jsonl":
                table = _JsonLinesTable(handle, plan.columns)
            else:
                table = _ParquetTable(handle, plan)
            try:
                for rows in _pages(db, plan, page_size):
                    if ctx is not None:
                        ctx.check_cancelled()
                    table.write(rows)
                    written += len(rows)
                    outputs += sum(1 for r in rows if r["kind"] == OUTPUT)
                    references += sum(1 for r in rows if r["kind"] == REFERENCE)
                    units.update(r["unit"] for r in rows)
                    if ctx is not None:
                        ctx.progress(min(written, total), total, f"{written} texts written")
            finally:
                if fmt == "parquet":
                    table.close()
            if fmt == "csv":
                neutralised, cells = table.writer.neutralised, table.writer.note
    if sidecar is not None:
        meta = _metadata(plan, fmt) | {"rows": written, "file": path.name}
        with atomic_output(sidecar, force=force) as handle:
            jsonio.dump(meta, handle, ensure_ascii=False, indent=2)
            handle.write("\n")
    return TextsReport(
        written,
        len(units),
        references,
        [],
        path=str(path),
        format=fmt,
        cells=cells,
        neutralised=neutralised,
        columns=plan.columns,
        signatures=plan.signatures,
        outputs=outputs,
        sidecar=str(sidecar) if sidecar is not None else "",
    )


def export_texts_job(
    store: SessionStore,
    path: Path | str,
    *,
    runs: Sequence[int] | None = None,
    langs: Sequence[str] | None = None,
) -> Job[TextsReport]:
    """The per-text export as a job (the Scores panel's "Export texts…"): reads only."""
    path = Path(path)
    texts_format(path)  # a wrong suffix is refused before the job starts
    return Job(
        title=f"Export texts to {path.name}",
        run=lambda ctx: export_texts(store, path, ctx=ctx, runs=runs, langs=langs),
        kind="export",
        params={"path": str(path), "format": "texts", "runs": runs, "langs": langs},
    )
