"""WDV JSON records (METHODS §10): one Wikidata claim and its crowd-rated verbalisation each.

A WDV file is one JSON array of records in UTF-8 (JSON Lines is not a WDV shape: a
top-level object is refused). Releases are large, so import reads the array record by
record (:class:`RecordReader`) and inserts in batches, all in one transaction.
Mapping (one single-triple data unit per record):

* ``data_units``: uid = ``"wdv:{claim_id}"``, root_qid = ``subject_id``, size 1, shape
  ``"sibling"``, origin ``"imported"``; ``attributes`` keeps every field that has no
  column elsewhere (and the record's key order), so export re-emits the record exactly.
* ``unit_triples``: one English main triple ``subject_label | property_label |
  object_label`` with ``subject_qid``, ``property_pid`` and, when the claim's value is an
  item, ``object_value`` = its QID.
* ``model_runs``: one ``kind="external"``, ``system_name="WDV"`` run per imported file;
  ``verbalisations``: the record's ``verbalisation`` (candidate 0, English).
* ``annotations``: position *i* of ``fluency_scores``/``adequacy_scores`` is the rating of
  the anonymous annotator ``wdv-worker-{i+1}`` (created once, reused by later imports).

Export recomputes the aggregates (``fluency_mean``, ``fluency_median``,
``adequacy_majority_voted``, ``adequacy_percentage``) from the session's annotations
with :func:`core.annotation.aggregates` (WDV's rules: strict majority, ties to the most
cautious answer, percentage 0 when the majority is Not sure), so
ratings added in the app count; where a recomputed value equals the imported one the
imported value is written as it was (``4`` stays ``4``, not ``4.0``). Units that are
not one English triple are skipped and listed in the :class:`ExportReport`.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections import defaultdict
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.annotation import ADEQUACY_LABELS, aggregates
from core.changes import IMPORT_WRITES
from core.formats.common import IMPORT_KEPT, FormatError, atomic_output, check_readable
from core.formats.csv_export import category_of
from core.formats.report import EntryError, ExportReport, ImportReport
from core.io import jsonio
from core.jobs import Job, JobContext

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.store import SessionStore

UID_PREFIX = "wdv:"
SYSTEM_NAME = "WDV"
WORKER_NAME = "wdv-worker-{}"
LAYOUT_VERSION = 1
ADEQUACY_CODES = frozenset(ADEQUACY_LABELS)  # 0 yes, 1 no, 2 not sure (core.annotation)

# Fields with a column (or a row) of their own; everything else goes to attributes.
LABEL_FIELDS = ("subject_label", "property_label", "object_label")
REQUIRED_STRINGS = ("claim_id", "subject_id", "property_id", *LABEL_FIELDS, "verbalisation")
MAPPED_FIELDS = frozenset({*REQUIRED_STRINGS, "annotations"})
SCORE_FIELDS = ("fluency_scores", "adequacy_scores")
AGGREGATE_FIELDS = (
    "fluency_mean",
    "fluency_median",
    "adequacy_majority_voted",
    "adequacy_percentage",
)
# Key order of a record built in the app (the order the WDV release uses).
RECORD_KEYS = (
    "claim_id",
    "rank",
    "subject_id",
    "property_id",
    "subject_label",
    "property_label",
    "object_label",
    "subject_desc",
    "property_desc",
    "object_desc",
    "subject_alias",
    "property_alias",
    "object_alias",
    "object_datatype",
    "object",
    "theme_root_class_id",
    "theme_label",
    "verbalisation",
    "verbalisation_unk_replaced",
    "sampling_weight",
    "annotations",
)
ANNOTATION_KEYS = (
    "fluency_scores",
    *AGGREGATE_FIELDS[:2],
    "adequacy_scores",
    *AGGREGATE_FIELDS[2:],
)
_QID = re.compile(r"Q[1-9][0-9]*")
_PID = re.compile(r"P[1-9][0-9]*")
# Bounds on what one record may hold: JSON nesting (the WDV layout needs 3 levels) and
# the digits of an integer (Python refuses to convert more than 4,300; a score has 1).
MAX_DEPTH = 64
MAX_INT_DIGITS = 40
CHUNK_BYTES = 1 << 16  # read this much of the file at a time
# Longest one record may be: a WDV record is a few kilobytes; a file is streamed, so
# without this a single element (one endless string) would be held whole, however long.
MAX_RECORD_CHARS = 16_000_000
BATCH = 500  # parsed records inserted together (all in the import's one transaction)


class RecordRejected(Exception):
    """A record that breaks the format; it is listed in the report and skipped."""


@dataclass(frozen=True)
class ParsedRecord:
    uid: str
    subject_id: str
    property_id: str
    labels: tuple[str, str, str]
    object_value: str | None
    verbalisation: str
    fluency: tuple[int, ...]
    adequacy: tuple[int, ...]
    attributes: dict[str, Any]


# -- shared by the export modules -----------------------------------------------------------


# -- import ---------------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def item_id(value: Any) -> str | None:
    """The QID of a Wikidata JSON value when it is an item: a datavalue
    (``{"value": {...}, "type": "wikibase-entityid"}``), its inner value, or a bare QID."""
    if isinstance(value, str):
        return value if _QID.fullmatch(value) else None
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("value"), dict):
        return item_id(value["value"])
    if value.get("entity-type", "item") != "item":
        return None
    if isinstance(value.get("id"), str) and _QID.fullmatch(value["id"]):
        return value["id"]
    if _is_int(value.get("numeric-id")) and "entity-type" in value:
        return f"Q{value['numeric-id']}"
    return None


def _scores(
    annotations: dict[str, Any], name: str, allowed: frozenset[int] | None
) -> tuple[int, ...]:
    scores = annotations.get(name, [])
    if not isinstance(scores, list) or not all(_is_int(s) for s in scores):
        raise RecordRejected(f"annotations.{name} must be a list of integers")
    if allowed is not None and any(s not in allowed for s in scores):
        raise RecordRejected(f"annotations.{name} holds a value other than 0, 1 or 2")
    return tuple(scores)


def _depth(value: Any) -> int:
    """How deeply ``value`` nests lists and objects (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if depth <= MAX_DEPTH:
                stack.extend(
                    (v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)
                )
    return deepest


def _unstorable(record: dict[str, Any]) -> str | None:
    """What in ``record`` no session or standard JSON can hold, named by its path: a lone
    surrogate (a ``\\ud800`` escape without its pair: half a character, not text; UTF-8
    cannot encode it) or a non-finite number (``NaN``, ``Infinity``: not JSON, though
    Python's parser takes them). Refused rather than repaired, so what is imported is what
    the file says."""
    stack: list[tuple[Any, str]] = [(record, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                where = f"{path}.{key}" if path else str(key)
                if _has_surrogate(str(key)):
                    return f"a field name holds a lone surrogate escape: {key!r}"
                stack.append((item, where))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(value))
        elif isinstance(value, str) and _has_surrogate(value):
            return (
                f"{path} holds a lone surrogate escape (half of a UTF-16 pair, not a "
                f"character): {value[:40]!r}"
            )
        elif isinstance(value, float) and not math.isfinite(value):
            return f"{path} is {value!r}, not a finite number (not standard JSON)"
    return None


def _has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate: the only thing UTF-8 cannot encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _looks_wrong(record: dict[str, Any]) -> list[str]:
    """What an accepted record holds that does not look like Wikidata's ids."""
    notes = []
    if not _QID.fullmatch(record["subject_id"]):
        notes.append(f"subject_id {record['subject_id']!r} is not a Wikidata item id like Q42")
    if not _PID.fullmatch(record["property_id"]):
        notes.append(
            f"property_id {record['property_id']!r} is not a Wikidata property id like P31"
        )
    return notes


def _parse_record(record: Any, file_name: str) -> ParsedRecord:
    if not isinstance(record, dict):
        raise RecordRejected(f"expected a JSON object, found {type(record).__name__}")
    if _depth(record) > MAX_DEPTH:
        raise RecordRejected(f"nests lists and objects more than {MAX_DEPTH} deep")
    missing = [name for name in REQUIRED_STRINGS if name not in record]
    if missing:
        raise RecordRejected(f"missing field(s): {', '.join(missing)}")
    wrong = [name for name in REQUIRED_STRINGS if not isinstance(record[name], str)]
    if wrong:
        raise RecordRejected(f"field(s) must be strings: {', '.join(wrong)}")
    if not record["claim_id"].strip():
        raise RecordRejected("claim_id is empty")
    unstorable = _unstorable(record)
    if unstorable is not None:
        raise RecordRejected(unstorable)
    weight = record.get("sampling_weight")
    if weight is not None and (isinstance(weight, bool) or not isinstance(weight, int | float)):
        raise RecordRejected(f"sampling_weight must be a number, not {weight!r}")
    annotations = record.get("annotations", {})
    if annotations is None:
        annotations = {}
    if not isinstance(annotations, dict):
        raise RecordRejected("annotations must be a JSON object")
    fluency = _scores(annotations, "fluency_scores", None)
    adequacy = _scores(annotations, "adequacy_scores", ADEQUACY_CODES)
    if any(not 0 <= s <= 5 for s in fluency):
        raise RecordRejected("annotations.fluency_scores holds a value outside 0-5")
    attributes: dict[str, Any] = {
        "format": "wdv",
        "layout_version": LAYOUT_VERSION,
        "file": file_name,
        "keys": list(record),
        "record": {k: v for k, v in record.items() if k not in MAPPED_FIELDS},
    }
    if "annotations" in record:
        # The imported aggregates (and key order) decide how export writes them back.
        attributes["annotations"] = (
            None
            if record["annotations"] is None
            else {k: v for k, v in annotations.items() if k not in SCORE_FIELDS}
        )
        attributes["annotation_keys"] = list(annotations)
    return ParsedRecord(
        uid=UID_PREFIX + record["claim_id"],
        subject_id=record["subject_id"],
        property_id=record["property_id"],
        labels=(record["subject_label"], record["property_label"], record["object_label"]),
        object_value=item_id(record.get("object")),
        verbalisation=record["verbalisation"],
        fluency=fluency,
        adequacy=adequacy,
        attributes=attributes,
    )


class _NumberTooLong(ValueError):
    def __init__(self, digits: int) -> None:
        super().__init__(f"a number of {digits} digits")
        self.digits = digits


_DIGIT_CHARS = frozenset("0123456789")


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _NumberTooLong(digits)
    return int(text)


_WHITESPACE = re.compile(r"[ \t\n\r]*")
# A decoding error this close to the end of what was read may only mean the value goes
# on in the next chunk ("tru|e", "\\u00|e9", "-|1"); further back it is a real error.
_TAIL_MARGIN = 16
_JSON_KINDS = {"{": "object", '"': "string", "t": "boolean", "f": "boolean", "n": "null"}


class RecordReader:
    """The elements of a JSON array read one at a time from a UTF-8 file.

    A WDV release is one large array; reading it whole would hold the text and every
    parsed record at once. This reader keeps only the undecoded rest of the current
    chunk: each element is decoded with :meth:`json.JSONDecoder.raw_decode` where it
    starts, and when an element runs past the chunk the next chunk is appended and the
    element decoded again. Errors name the line and column in the whole file, as
    :func:`json.loads` would.
    """

    def __init__(self, path: Path, chunk_bytes: int | None = None) -> None:
        self.path = path
        self.chunk_bytes = chunk_bytes or CHUNK_BYTES
        self.bytes_read = 0
        self._handle = path.open("rb")
        self._decoder = json.JSONDecoder(parse_int=_bounded_int)
        self._text_decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self._buffer = ""
        self._pos = 0  # next character to read in the buffer
        self._eof = False
        self._line, self._column = 1, 1  # where the buffer's first character is in the file
        self._raw_lines = 0  # newlines in the bytes decoded so far

    def close(self) -> None:
        self._handle.close()

    # -- reading ----------------------------------------------------------------------------
    def _fill(self, at_least: int = 0) -> None:
        """Append the next chunk of text, of at least ``at_least`` bytes (or note the end
        of the file)."""
        if self._eof:
            return
        # Dropping what was already read keeps the buffer about a chunk long.
        if self._pos:
            self._advance_origin(self._buffer[: self._pos])
            self._buffer = self._buffer[self._pos :]
            self._pos = 0
        raw = self._handle.read(max(self.chunk_bytes, at_least))
        if not raw:
            self._eof = True
        if self.bytes_read == 0 and raw:
            self._check_start(raw)
        try:
            text = self._text_decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            raise self._encoding_error(exc) from None
        self.bytes_read += len(raw)
        self._raw_lines += raw.count(b"\n")
        self._buffer += text

    def _check_start(self, head: bytes) -> None:
        if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\x00" in head[:64]:
            raise FormatError(
                f"{self.path.name} is not UTF-8: it looks like UTF-16 or UTF-32 text (it "
                "starts with a byte-order mark or holds NUL bytes). WDV files are UTF-8 "
                "JSON: save it as UTF-8 and import it again."
            )

    def _encoding_error(self, exc: UnicodeDecodeError) -> FormatError:
        before = exc.object[: exc.start]
        line = self._raw_lines + before.count(b"\n") + 1
        column = exc.start - before.rfind(b"\n") if b"\n" in before else None
        where = f"line {line}" + (f", column {column}" if column is not None else "")
        return FormatError(
            f"{self.path.name} is not readable as UTF-8 text: {where} holds byte "
            f"0x{exc.object[exc.start]:02x}, which is not valid UTF-8 (the file may be "
            "Latin-1 or Windows-1252). WDV files are UTF-8 JSON: save it as UTF-8 and "
            "import it again."
        )

    def _advance_origin(self, dropped: str) -> None:
        newlines = dropped.count("\n")
        if newlines:
            self._line += newlines
            self._column = len(dropped) - dropped.rfind("\n")
        else:
            self._column += len(dropped)

    def _where(self, index: int) -> tuple[int, int]:
        before = self._buffer[:index]
        newlines = before.count("\n")
        if newlines:
            return self._line + newlines, index - before.rfind("\n")
        return self._line, self._column + index

    def _error(self, message: str, index: int) -> FormatError:
        line, column = self._where(index)
        return FormatError(
            f"{self.path.name} is not valid JSON: {message} at line {line}, column "
            f"{column} (expected a JSON array of WDV records)."
        )

    def _peek(self) -> str:
        """The next character that is not whitespace ("" at the end of the file)."""
        while True:
            self._pos = _WHITESPACE.match(self._buffer, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._buffer) or self._eof:
                return self._buffer[self._pos : self._pos + 1]
            self._fill()

    def _more(self) -> None:
        """Read on for an element that runs past the buffer. The buffer at least doubles,
        so an element of n characters is decoded O(log n) times, not once per chunk (which
        took time quadratic in n: 8 MB in 1.6 s, 64 MB in minutes); one longer than
        :data:`MAX_RECORD_CHARS` is refused."""
        pending = len(self._buffer) - self._pos
        if pending > MAX_RECORD_CHARS:
            raise self._error(
                f"a record longer than {MAX_RECORD_CHARS:,} characters (the record starting here)",
                self._pos,
            )
        self._fill(at_least=pending)

    def _value(self) -> Any:
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buffer, self._pos)
            except RecursionError:
                raise self._error(
                    "lists or objects nested too deeply (the record starting here)", self._pos
                ) from None
            except _NumberTooLong as exc:
                if not self._eof and self._buffer[-1:] in _DIGIT_CHARS:
                    self._more()  # the number may go on in the next chunk: count it all
                    continue
                raise self._error(
                    f"a number of {exc.digits:,} digits, more than {MAX_INT_DIGITS} (in the "
                    "record starting here)",
                    self._pos,
                ) from None
            except json.JSONDecodeError as exc:
                near_end = exc.pos >= len(self._buffer) - _TAIL_MARGIN
                if not self._eof and (near_end or exc.msg.startswith("Unterminated string")):
                    self._more()
                    continue
                raise self._error(exc.msg, exc.pos) from None
            if end >= len(self._buffer) and not self._eof:
                self._more()  # a number at the very end may go on in the next chunk
                continue
            self._pos = end
            return value

    def records(self) -> Iterator[Any]:
        """Each element of the top-level array, in order."""
        first = self._peek()
        if first != "[":
            kind = _JSON_KINDS.get(first) or (
                "number" if first and first in "-0123456789" else None
            )
            if kind is None:
                raise self._error("Expecting value", self._pos)
            raise FormatError(
                f"{self.path.name} is not a WDV file: its top level is a JSON {kind}, "
                "expected an array of records."
            )
        self._pos += 1
        if self._peek() == "]":
            self._pos += 1
        else:
            while True:
                yield self._value()
                following = self._peek()
                self._pos += 1
                if following == "]":
                    break
                if following != ",":
                    raise self._error("Expecting ',' delimiter", self._pos - 1)
                self._peek()
        if self._peek():
            raise self._error("Extra data", self._pos)


def import_wdv(
    store: SessionStore, path: Path | str, ctx: JobContext | None = None
) -> ImportReport:
    """Import a WDV JSON file into ``store`` in one transaction.

    The file is read record by record (:class:`RecordReader`) and inserted in batches,
    all inside one transaction: records that break the format are skipped and listed in
    the report; a file that is not valid JSON or UTF-8, or a failure or cancel, leaves
    the session as it was.
    """
    from sqlalchemy import select

    from core.store.models import DataUnit

    path = check_readable(Path(path), "Give a WDV JSON file.")
    file_name = path.name
    size = path.stat().st_size
    errors: list[EntryError] = []
    warnings: list[EntryError] = []  # imported, but not what a WDV record should hold
    batch: list[ParsedRecord] = []
    entries = units = already = 0
    seen_in_file: set[str] = set()
    run_id: int | None = None
    with store.unit_of_work() as db, closing(RecordReader(path)) as reader:
        taken = set(db.scalars(select(DataUnit.uid)))
        for number, record in enumerate(reader.records(), start=1):
            if ctx is not None:
                ctx.check_cancelled()
            entries = number
            claim = record.get("claim_id") if isinstance(record, dict) else None
            if isinstance(claim, str) and _has_surrogate(claim):
                claim = claim.encode("utf-8", "backslashreplace").decode("utf-8")
            where = f"record {number}" + (f" (claim {claim})" if isinstance(claim, str) else "")
            try:
                entry = _parse_record(record, file_name)
                if entry.uid in taken:
                    from core.formats.rerun import same_wdv_record

                    if entry.uid in seen_in_file or not same_wdv_record(db, entry, SYSTEM_NAME):
                        raise RecordRejected(
                            f"id {entry.uid!r} is already in the session"
                            " with different content (or twice in this file)"
                        )
                    seen_in_file.add(entry.uid)
                    already += 1  # a re-run: the same record is there, not an error
                    continue
            except RecordRejected as exc:
                errors.append(EntryError(where, str(exc)))
                continue
            taken.add(entry.uid)
            seen_in_file.add(entry.uid)
            warnings.extend(EntryError(where, note) for note in _looks_wrong(record))
            batch.append(entry)
            units += 1
            if len(batch) >= BATCH:
                run_id = _insert(db, batch, file_name, run_id)
                batch.clear()
            if ctx is not None:
                ctx.progress(
                    min(reader.bytes_read, size), size, f"{units} records from {file_name}"
                )
        if ctx is not None:
            ctx.check_cancelled()
        if batch:
            _insert(db, batch, file_name, run_id)
    return ImportReport(
        entries,
        units,
        0,
        errors,
        triples=units,
        source=file_name,
        already=already,
        warnings=warnings,
    )


def _workers(db: Session, count: int) -> list[int]:
    """Ids of the anonymous annotators wdv-worker-1 … wdv-worker-{count}, made if missing."""
    from sqlalchemy import select

    from core.store.models import Annotator

    names = [WORKER_NAME.format(i + 1) for i in range(count)]
    known: dict[str, int] = {
        name: id_
        for name, id_ in db.execute(
            select(Annotator.name, Annotator.id).where(Annotator.name.in_(names))
        )
    }
    for name in names:
        if name not in known:
            annotator = Annotator(name=name, is_anonymous=True)
            db.add(annotator)
            db.flush()
            known[name] = annotator.id
    return [known[name] for name in names]


def _insert(db: Session, batch: list[ParsedRecord], file_name: str, run_id: int | None) -> int:
    """Core bulk inserts, as for WebNLG: the ORM's bookkeeping is not needed here.

    The file's one external run is made with the first batch; returns its id."""
    from datetime import UTC, datetime

    from sqlalchemy import insert

    from core.store.models import Annotation, DataUnit, ModelRun, UnitTriple, Verbalisation

    if run_id is None:
        run = ModelRun(
            kind="external",
            model_id=SYSTEM_NAME,
            system_name=SYSTEM_NAME,
            status="finished",
            parameters={"file": file_name},
            finished_at=datetime.now(UTC),
        )
        db.add(run)
        db.flush()
        run_id = run.id
    workers = _workers(db, max(max(len(r.fluency), len(r.adequacy)) for r in batch))
    unit_ids = db.scalars(
        insert(DataUnit).returning(DataUnit.id, sort_by_parameter_order=True),
        [
            {
                "uid": r.uid,
                "origin": "imported",
                "source": file_name,
                "shape": "sibling",
                "size": 1,
                "root_qid": r.subject_id,
                "attributes": r.attributes,
            }
            for r in batch
        ],
    ).all()
    db.execute(
        insert(UnitTriple),
        [
            {
                "unit_id": unit_id,
                "lang": "en",
                "tripleset": "main",
                "position": 0,
                "subject": r.labels[0],
                "predicate": r.labels[1],
                "object": r.labels[2],
                "subject_qid": r.subject_id,
                "property_pid": r.property_id,
                "object_value": r.object_value,
            }
            for unit_id, r in zip(unit_ids, batch, strict=True)
        ],
    )
    verbalisation_ids = db.scalars(
        insert(Verbalisation).returning(Verbalisation.id, sort_by_parameter_order=True),
        [
            {
                "run_id": run_id,
                "unit_id": unit_id,
                "lang": "en",
                "candidate_index": 0,
                "raw_output": r.verbalisation,
                "text": r.verbalisation,
                "parse_ok": True,
            }
            for unit_id, r in zip(unit_ids, batch, strict=True)
        ],
    ).all()
    rows = []
    for verbalisation_id, r in zip(verbalisation_ids, batch, strict=True):
        for i in range(max(len(r.fluency), len(r.adequacy))):
            rows.append(
                {
                    "annotator_id": workers[i],
                    "verbalisation_id": verbalisation_id,
                    "fluency": r.fluency[i] if i < len(r.fluency) else None,
                    "adequacy": r.adequacy[i] if i < len(r.adequacy) else None,
                }
            )
    if rows:
        db.execute(insert(Annotation), rows)
    return run_id


# -- export ---------------------------------------------------------------------------------


def _same(original: Any, computed: Any) -> bool:
    if original is None or computed is None:
        return original is computed
    if isinstance(original, bool) or not isinstance(original, int | float):
        return False
    return math.isclose(original, computed, rel_tol=1e-9, abs_tol=1e-9)


def _annotations(
    attributes: dict[str, Any] | None, fluency: list[int], adequacy: list[int]
) -> dict[str, Any] | None:
    imported = (attributes or {}).get("annotations", {})
    if imported is None and not fluency and not adequacy:
        return None
    imported = imported or {}
    computed = aggregates(fluency, adequacy)
    values: dict[str, Any] = {**imported, "fluency_scores": fluency, "adequacy_scores": adequacy}
    for name, value in computed.items():
        values[name] = (
            imported[name] if name in imported and _same(imported[name], value) else value
        )
    keys = (attributes or {}).get("annotation_keys")
    if keys is None:
        return {k: values[k] for k in ANNOTATION_KEYS}
    ordered = {k: values[k] for k in keys if k in values}
    # Fields the record did not have appear only once they hold something (ratings made
    # in the app), so an imported record without them round-trips as it was.
    ordered.update(
        {k: v for k, v in values.items() if k not in ordered and v is not None and v != []}
    )
    return ordered


def _worker_order(name: str, annotation_id: int) -> tuple[int, int]:
    # Imported workers keep their positions; people who rated in the app follow.
    match = re.fullmatch(r"wdv-worker-([0-9]+)", name)
    return (int(match.group(1)), 0) if match else (1 << 30, annotation_id)


def _text(row: Any, name: str) -> str:
    override = getattr(row, f"{name}_override")
    return override if override is not None else getattr(row, name)


def _record(
    unit: Any,
    triple: Any,
    verbalisation: Any,
    fluency: list[int],
    adequacy: list[int],
    category: str | None,
) -> dict[str, Any]:
    attributes = unit.attributes if _is_layout(unit.attributes) else None
    claim_id = unit.uid[len(UID_PREFIX) :] if unit.uid.startswith(UID_PREFIX) else unit.uid
    values: dict[str, Any] = {
        "claim_id": claim_id,
        "subject_id": unit.root_qid or triple.subject_qid,
        "property_id": triple.property_pid,
        "subject_label": _text(triple, "subject"),
        "property_label": _text(triple, "predicate"),
        "object_label": _text(triple, "object"),
        "verbalisation": verbalisation.text if verbalisation is not None else None,
    }
    annotations = _annotations(attributes, fluency, adequacy)
    if attributes is None:
        values.update(rank=None, object=triple.object_value, theme_label=category)
        values["annotations"] = annotations
        return {k: values.get(k) for k in RECORD_KEYS}
    values.update(attributes["record"])
    if "annotations" in attributes["keys"]:
        values["annotations"] = annotations
    ordered = {k: values[k] for k in attributes["keys"] if k in values}
    ordered.update({k: v for k, v in values.items() if k not in ordered})
    return ordered


def _is_layout(attributes: Any) -> bool:
    return (
        isinstance(attributes, dict)
        and attributes.get("format") == "wdv"
        and isinstance(attributes.get("keys"), list)
        and isinstance(attributes.get("record"), dict)
    )


def _skip_reason(unit: Any, english: list[Any]) -> str | None:
    """Why ``unit`` cannot be a WDV record (one English claim), or None if it can."""
    if unit.size != 1 or len(english) > 1:
        size = max(unit.size, len(english))
        return (
            f"{size} triples: a WDV record holds exactly one claim, so only "
            "single-triple units are exported"
        )
    if not english:
        return "no English triple: a WDV record is English"
    return None


def export_wdv(
    store: SessionStore, path: Path | str, ctx: JobContext | None = None, *, force: bool = False
) -> ExportReport:
    """Write every single-triple unit of ``store`` as a WDV record.

    A unit's record carries its first English verbalisation (lowest run, candidate 0)
    and the ratings of that verbalisation, aggregated again from the session. Units of
    more than one triple (or with no English triple) are listed in the report's
    ``skipped`` with the reason, so an export never drops units without saying so.
    """
    from sqlalchemy import select

    from core.store.models import (
        Annotation,
        Annotator,
        Category,
        DataUnit,
        UnitTriple,
        Verbalisation,
    )

    with store.unit_of_work() as db:
        units = list(db.scalars(select(DataUnit).order_by(DataUnit.id)))
        english: dict[int, list[Any]] = defaultdict(list)
        for row in db.scalars(
            select(UnitTriple)
            .where(UnitTriple.lang == "en", UnitTriple.tripleset == "main")
            .order_by(UnitTriple.position)
        ):
            english[row.unit_id].append(row)
        firsts: dict[int, Any] = {}
        for text in db.scalars(
            select(Verbalisation)
            .where(Verbalisation.lang == "en")
            .order_by(Verbalisation.run_id, Verbalisation.candidate_index, Verbalisation.id)
        ):
            firsts.setdefault(text.unit_id, text)
        wanted = {v.id for v in firsts.values()}
        ratings: dict[int, list[tuple[tuple[int, int], Any]]] = defaultdict(list)
        for annotation, name in db.execute(
            select(Annotation, Annotator.name)
            .join(Annotator)
            .where(Annotation.verbalisation_id.is_not(None))
        ):
            verbalisation_id = annotation.verbalisation_id
            if verbalisation_id is not None and verbalisation_id in wanted:
                ratings[verbalisation_id].append((_worker_order(name, annotation.id), annotation))
        categories = {row.id: row.name for row in db.execute(select(Category.id, Category.name))}
        db.expunge_all()
    records = []
    skipped: list[EntryError] = []
    for done, unit in enumerate(units, start=1):
        if ctx is not None:
            ctx.check_cancelled()
        reason = _skip_reason(unit, english.get(unit.id, []))
        if reason is not None:
            skipped.append(EntryError(f"unit {unit.uid}", reason))
            continue
        triple = english[unit.id][0]
        verbalisation = firsts.get(unit.id)
        rated = (
            [a for _, a in sorted(ratings.get(verbalisation.id, []), key=lambda p: p[0])]
            if verbalisation is not None
            else []
        )
        fluency = [a.fluency for a in rated if a.fluency is not None]
        adequacy = [a.adequacy for a in rated if a.adequacy is not None]
        records.append(
            _record(
                unit,
                triple,
                verbalisation,
                fluency,
                adequacy,
                category_of(unit, categories) or None,
            )
        )
        if ctx is not None:
            ctx.progress(done, len(units), f"{len(records)} records")
    with atomic_output(path, force=force) as handle:
        jsonio.dump(records, handle, ensure_ascii=False, indent=1)
        handle.write("\n")
    return ExportReport(
        len(records), len(units), 0, skipped, triples=len(records), path=str(path), format="wdv"
    )


# -- jobs for the GUI -----------------------------------------------------------------------


def import_job(store: SessionStore, path: Path | str) -> Job[ImportReport]:
    path = Path(path)
    return Job(
        title=f"Import {path.name}",
        run=lambda ctx: import_wdv(store, path, ctx=ctx),
        kind="import",
        kept=lambda: IMPORT_KEPT,
        params={"path": str(path), "format": "wdv"},
        writes=IMPORT_WRITES,
    )


def export_job(store: SessionStore, path: Path | str) -> Job[ExportReport]:
    path = Path(path)
    return Job(
        title=f"Export {path.name}",
        run=lambda ctx: export_wdv(store, path, ctx=ctx),
        kind="export",
        params={"path": str(path), "format": "wdv"},
    )
