"""The per-text table's writers: CSV, JSON Lines and Parquet, each written a page at a time."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import IO, Any

from core.formats.common import CsvWriter
from core.formats.texts_table.plan import PANDAS_DTYPES, Plan, TextsTableError
from core.io import jsonio
from core.metrics.signature import read_signature

LIST_JOINER = " | "  # a list cell in CSV


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


class _Table:
    """A table file being written: ``write`` a page of rows, ``close`` at the end; a CSV
    table counts the cells it neutralised (see :class:`CsvWriter`)."""

    def write(self, rows: list[dict[str, Any]]) -> None:
        raise NotImplementedError

    def cells(self) -> tuple[int, str]:
        """Cells neutralised and the note that says so (CSV only)."""
        return 0, ""

    def close(self) -> None:
        return None


class _CsvTable(_Table):
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

    def cells(self) -> tuple[int, str]:
        return self.writer.neutralised, self.writer.note


class _JsonLinesTable(_Table):
    def __init__(self, handle: IO[str], columns: Sequence[tuple[str, str]]) -> None:
        self.handle = handle
        self.names = [name for name, _ in columns]

    def write(self, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            record = {n: _number(row[n]) for n in self.names}
            self.handle.write(jsonio.dumps(record, ensure_ascii=False) + "\n")


def pyarrow_module() -> Any:
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


def metadata(plan: Plan, fmt: str) -> dict[str, Any]:
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


class _ParquetTable(_Table):
    def __init__(self, handle: IO[bytes], plan: Plan) -> None:
        pa = pyarrow_module()
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
            "creator": {"library": "taillens", "version": metadata(plan, "parquet")["taillens"]},
            "pandas_version": "2.0.0",
        }
        self.schema = pa.schema(fields).with_metadata(
            {
                b"taillens": jsonio.dumps(metadata(plan, "parquet"), ensure_ascii=False).encode(),
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


def open_table(fmt: str, handle: IO[Any], plan: Plan, raw: bool) -> _Table:
    """The writer of a ``fmt`` table (csv, jsonl, parquet) into ``handle``; ``raw`` writes
    CSV cells as they are, not spreadsheet-safe."""
    if fmt == "csv":
        return _CsvTable(handle, plan.columns, raw)
    if fmt == "jsonl":
        return _JsonLinesTable(handle, plan.columns)
    return _ParquetTable(handle, plan)
