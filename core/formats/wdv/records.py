"""What one WDV record holds and whether a session can take it: the field names, the
checks a record must pass (:func:`parse_record`), and :class:`ParsedRecord`, what import
inserts. Shared by the importer (:mod:`.importer`) and the writer (:mod:`.writer`), which
re-emits records in the key order kept here."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from core.annotation import ADEQUACY_LABELS

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
# JSON nesting one record may hold (the WDV layout needs 3 levels).
MAX_DEPTH = 64


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
                if has_surrogate(str(key)):
                    return f"a field name holds a lone surrogate escape: {key!r}"
                stack.append((item, where))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(value))
        elif isinstance(value, str) and has_surrogate(value):
            return (
                f"{path} holds a lone surrogate escape (half of a UTF-16 pair, not a "
                f"character): {value[:40]!r}"
            )
        elif isinstance(value, float) and not math.isfinite(value):
            return f"{path} is {value!r}, not a finite number (not standard JSON)"
    return None


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate: the only thing UTF-8 cannot encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def looks_wrong(record: dict[str, Any]) -> list[str]:
    """What an accepted record holds that does not look like Wikidata's ids."""
    notes = []
    if not _QID.fullmatch(record["subject_id"]):
        notes.append(f"subject_id {record['subject_id']!r} is not a Wikidata item id like Q42")
    if not _PID.fullmatch(record["property_id"]):
        notes.append(
            f"property_id {record['property_id']!r} is not a Wikidata property id like P31"
        )
    return notes


def parse_record(record: Any, file_name: str) -> ParsedRecord:
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
