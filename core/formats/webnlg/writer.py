"""Exporting a session as WebNLG/TailNLG XML (METHODS §10): an imported entry is re-emitted
from its stored layout with the values the app may have edited taken from the columns."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

import defusedxml.ElementTree as SafeET

from core.formats.common import FormatError, atomic_output
from core.formats.report import ExportReport
from core.formats.webnlg.entries import (
    MENTION_ATTRIBUTES,
    TRIPLE_SEPARATOR,
    TRIPLESETS,
    XML_DECLARATION,
    ExportFlavour,
    ParsedTriple,
)
from core.formats.webnlg.parse import MAX_SIZE, split_triple
from core.io.bounded import bounded_int
from core.jobs import Job, JobContext

if TYPE_CHECKING:
    from core.store import SessionStore


# -- export -------------------------------------------------------------------------------


def _text_of(row: Any, name: str) -> str:
    override = getattr(row, f"{name}_override")
    return override if override is not None else getattr(row, name)


def _triple_element(tag: str, row: Any, raw: str | None, attributes: dict[str, str]) -> ET.Element:
    element = ET.Element(tag, attributes)
    parts = (_text_of(row, "subject"), _text_of(row, "predicate"), _text_of(row, "object"))
    # The original text (odd spacing) is written back only while the triple is unchanged.
    if raw is not None and split_triple(raw) == ParsedTriple(*parts):
        element.text = raw
    else:
        element.text = TRIPLE_SEPARATOR.join(parts)
    return element


def _tripleset_element(slot: dict[str, Any], rows: list[Any]) -> ET.Element:
    tag = slot["tag"]
    triple_tag = TRIPLESETS[tag][0]
    element = ET.Element(tag, slot.get("attributes", {}))
    if "text" in slot:
        element.text = slot["text"]
    raw = slot.get("raw", {})
    triple_attributes = slot.get("triple_attributes", {})
    for row in rows:
        key = str(row.position)
        element.append(
            _triple_element(triple_tag, row, raw.get(key), triple_attributes.get(key, {}))
        )
    return element


def _mentions_element(mentions: list[Any], layout: dict[str, Any]) -> ET.Element:
    """``references`` of an enriched lex, rebuilt from its ``reference_mentions`` rows."""
    element = ET.Element("references", layout.get("attributes", {}))
    numbers, orders = layout.get("numbers", {}), layout.get("orders", {})
    extras = layout.get("extra", {})
    for index, row in enumerate(mentions):
        key = str(row.position)
        values = {
            "entity": row.entity,
            "number": numbers.get(key, str(index + 1)),
            "tag": row.tag,
            "type": row.mention_type,
            **extras.get(key, {}),
        }
        order = orders.get(key, list(MENTION_ATTRIBUTES))
        child = ET.SubElement(
            element, "reference", {n: values[n] for n in order if values.get(n) is not None}
        )
        child.text = row.mention
    return element


def _lex_element(
    slot: dict[str, Any] | None, reference: Any, flavour: str, mentions: list[Any] | None = None
) -> ET.Element:
    if slot is None:
        order = ["lid", "lang"] + (["quality"] if flavour == "tailnlg" else [])
        slot = {"kind": "lex", "order": order}
    values = {
        "lid": reference.lid,
        "lang": reference.lang,
        "quality": reference.quality,
        **slot.get("extra", {}),
    }
    if "lang_written" in slot and reference.lang == slot.get("lang_decided"):
        values["lang"] = slot["lang_written"]  # lang="" as the file had it
    attributes = {name: values[name] for name in slot["order"] if values.get(name) is not None}
    element = ET.Element("lex", attributes)
    if "children" in slot:
        for index, (xml, tail) in enumerate(zip(slot["children"], slot["tails"], strict=True)):
            if index == slot.get("mentions_at"):
                child = _mentions_element(mentions or [], slot.get("mention_layout", {}))
            else:
                child = SafeET.fromstring(xml)
            if slot.get("text_from_child") and child.tag == "text":
                child.text = reference.text
            child.tail = tail
            element.append(child)
        element.text = slot["own_text"] if slot.get("text_from_child") else reference.text
    else:
        element.text = reference.text
    return element


def _entry_attributes(
    unit: Any, layout: dict[str, Any] | None, eid: str, flavour: str, category: str | None
) -> dict[str, str]:
    if layout is None:
        attributes = {
            "category": category or "",
            "eid": eid,
            "shape": "",
            "shape_type": unit.shape or "",
            "size": str(unit.size),
        }
        if flavour == "tailnlg":
            attributes.update(
                unique_id=unit.uid,
                qid=unit.root_qid or "",
                type=unit.tier or "",
                subtype=unit.sub_tier or "",
            )
        return attributes
    attributes = dict(layout["entry"])
    # Columns win where they were edited after the import; otherwise the original string.
    if "unique_id" in attributes:
        attributes["unique_id"] = unit.uid
    if "size" in attributes and (
        bounded_int(attributes["size"], low=0, high=MAX_SIZE) != unit.size
    ):
        attributes["size"] = str(unit.size)
    if "shape_type" in attributes and unit.shape is not None:
        attributes["shape_type"] = unit.shape
    for name, value in (("qid", unit.root_qid), ("type", unit.tier), ("subtype", unit.sub_tier)):
        if name in attributes and value is not None:
            attributes[name] = value
    return attributes


def _entry_element(
    unit: Any,
    triples: list[Any],
    references: list[Any],
    eid: str,
    flavour: str,
    category: str | None,
    mentions: dict[int, list[Any]] | None = None,
) -> ET.Element:
    layout = unit.attributes if _is_layout(unit.attributes) else None
    entry = ET.Element("entry", _entry_attributes(unit, layout, eid, flavour, category))
    by_set: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for row in triples:
        by_set[(row.lang, row.tripleset)].append(row)
    if layout is None:
        _append_generated_children(entry, by_set, references, flavour)
        return entry
    if "text" in layout:
        entry.text = layout["text"]
    written: set[tuple[str, str]] = set()
    lex_slots = [slot for slot in layout["children"] if slot["kind"] == "lex"]
    remaining = list(references)
    for slot in layout["children"]:
        kind = slot["kind"]
        if kind == "tripleset":
            key = (slot["lang"], slot["tripleset"])
            written.add(key)
            entry.append(_tripleset_element(slot, by_set.get(key, [])))
        elif kind == "lex":
            if remaining:
                reference = remaining.pop(0)
                entry.append(
                    _lex_element(slot, reference, flavour, (mentions or {}).get(reference.id))
                )
        else:
            entry.append(SafeET.fromstring(slot["xml"]))
        if kind == "lex" and slot is lex_slots[-1]:
            # References added in the app after the import follow the imported ones.
            for reference in remaining:
                entry.append(_lex_element(None, reference, flavour))
            remaining = []
    for reference in remaining:
        entry.append(_lex_element(None, reference, flavour))
    return entry


def _append_generated_children(
    entry: ET.Element, by_set: dict[tuple[str, str], list[Any]], references: list[Any], flavour: str
) -> None:
    """Children of a unit built in the app: the usual WebNLG/TailNLG set order."""
    main_en = by_set.get(("en", "main"), [])
    original = by_set.get(("en", "original"), main_en)
    sets: list[tuple[str, list[Any]]] = [
        ("originaltripleset", original),
        ("modifiedtripleset", main_en),
    ]
    if flavour == "tailnlg":
        sets += [
            ("spanishtripleset", by_set.get(("es", "main"), [])),
            ("italiantripleset", by_set.get(("it", "main"), [])),
        ]
    for tag, rows in sets:
        entry.append(_tripleset_element({"tag": tag}, rows))
    for reference in references:
        entry.append(_lex_element(None, reference, flavour))


def _is_layout(attributes: Any) -> TypeGuard[dict[str, Any]]:
    return (
        isinstance(attributes, dict)
        and attributes.get("format") in ("tailnlg", "webnlg")
        and "entry" in attributes
        and "children" in attributes
    )


def lex_attributes(store: SessionStore, unit_ids: Sequence[int]) -> dict[int, dict[str, str]]:
    """reference id → the attributes its imported ``lex`` element had besides lid, lang and
    quality (WebNLG's ``comment="good"``, …), for the references of ``unit_ids`` that have
    any. A unit's ``lex`` slots pair with its references in id order, as the export
    writes them back; references added in the app after the import have none."""
    from sqlalchemy import select

    from core.store.batching import in_chunks
    from core.store.models import DataUnit, UnitReference

    found: dict[int, dict[str, str]] = {}
    ids = list(unit_ids)
    with store.snapshot() as db:
        for chunk in in_chunks(ids):
            layouts = {
                unit_id: attributes
                for unit_id, attributes in db.execute(
                    select(DataUnit.id, DataUnit.attributes).where(DataUnit.id.in_(chunk))
                )
                if _is_layout(attributes)
            }
            references: dict[int, list[int]] = defaultdict(list)
            query = (
                select(UnitReference.unit_id, UnitReference.id)
                .where(UnitReference.unit_id.in_(list(layouts)))
                .order_by(UnitReference.id)
            )
            for unit_id, reference_id in db.execute(query):
                references[unit_id].append(reference_id)
            for unit_id, layout in layouts.items():
                slots = [slot for slot in layout["children"] if slot["kind"] == "lex"]
                for slot, reference_id in zip(slots, references[unit_id], strict=False):
                    if slot.get("extra"):
                        found[reference_id] = dict(slot["extra"])
    return found


def export_webnlg(
    store: SessionStore,
    path: Path | str,
    *,
    flavour: ExportFlavour = "tailnlg",
    ctx: JobContext | None = None,
    force: bool = False,
) -> ExportReport:
    """Write every data unit of ``store`` to ``path``; the report counts entries (one per
    unit: no unit is skipped), the ``lex`` references and the triples written.

    Imported units are written back as they came (with edits made since); units built in
    the app get a generated eid. The file is written under a temporary name and moved
    into place, so a failure never leaves half a file.
    """
    from sqlalchemy import select

    from core.store.models import (
        Category,
        DataUnit,
        ReferenceMention,
        UnitReference,
        UnitTriple,
    )

    if flavour not in ("tailnlg", "webnlg"):
        raise FormatError(f"Unknown WebNLG flavour {flavour!r}: use tailnlg or webnlg.")
    path = Path(path).expanduser()
    if path.is_dir():
        raise FormatError(f"Cannot export to {path}: it is a folder. Give a file name.")
    with store.unit_of_work() as db:
        units = list(db.scalars(select(DataUnit).order_by(DataUnit.id)))
        triples: dict[int, list[Any]] = defaultdict(list)
        for row in db.scalars(
            select(UnitTriple).order_by(
                UnitTriple.unit_id, UnitTriple.lang, UnitTriple.tripleset, UnitTriple.position
            )
        ):
            triples[row.unit_id].append(row)
        references: dict[int, list[Any]] = defaultdict(list)
        for ref in db.scalars(select(UnitReference).order_by(UnitReference.id)):
            references[ref.unit_id].append(ref)
        categories = {row.id: row.name for row in db.execute(select(Category.id, Category.name))}
        mentions: dict[int, list[Any]] = defaultdict(list)
        for mention in db.scalars(
            select(ReferenceMention).order_by(
                ReferenceMention.reference_id, ReferenceMention.position, ReferenceMention.id
            )
        ):
            mentions[mention.reference_id].append(mention)
        db.expunge_all()
    used_eids = {u.attributes["entry"].get("eid") for u in units if _is_layout(u.attributes)}
    next_eid = _eid_counter(used_eids)
    written_references = written_triples = 0
    with atomic_output(path, force=force) as handle:
        handle.write(XML_DECLARATION)
        handle.write("<benchmark>\n  <entries>\n")
        for done, unit in enumerate(units, start=1):
            if ctx is not None:
                ctx.check_cancelled()
            eid = "" if _is_layout(unit.attributes) else next_eid()
            element = _entry_element(
                unit,
                triples[unit.id],
                references[unit.id],
                eid,
                flavour,
                categories.get(unit.category_id),
                mentions,
            )
            # Counted from the element, so the report says what the file holds (a WebNLG
            # export has no Spanish/Italian sets).
            written_references += len(element.findall("lex"))
            written_triples += sum(len(child) for child in element if child.tag in TRIPLESETS)
            ET.indent(element, space="  ", level=2)
            handle.write("    " + ET.tostring(element, encoding="unicode") + "\n")
            if ctx is not None:
                ctx.progress(done, len(units), f"{done} entries written")
        handle.write("  </entries>\n</benchmark>\n")
    return ExportReport(
        len(units),
        len(units),
        written_references,
        [],
        triples=written_triples,
        path=str(path),
        format=flavour,
    )


def _eid_counter(used: set[str | None]) -> Callable[[], str]:
    counter = 0

    def next_eid() -> str:
        nonlocal counter
        while True:
            counter += 1
            candidate = f"Id{counter}"
            if candidate not in used:
                used.add(candidate)
                return candidate

    return next_eid


def export_job(
    store: SessionStore, path: Path | str, *, flavour: ExportFlavour = "tailnlg"
) -> Job[ExportReport]:
    path = Path(path)
    return Job(
        title=f"Export {path.name}",
        run=lambda ctx: export_webnlg(store, path, flavour=flavour, ctx=ctx),
        kind="export",
        params={"path": str(path), "format": flavour},
    )
