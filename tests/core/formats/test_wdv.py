"""WDV JSON records: import into a session, export back unchanged, refuse broken files."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from core.annotation import adequacy_majority as majority
from core.annotation import aggregates
from core.formats import EXPORT_FORMATS, IMPORT_FORMATS, FormatError, detect_format
from core.formats.wdv.importer import import_wdv
from core.formats.wdv.records import item_id
from core.formats.wdv.writer import export_wdv
from core.store import SessionStore
from core.store.models import Annotation, Annotator, DataUnit, ModelRun, UnitTriple, Verbalisation
from tests.fixtures.table_digest import table_digest
from tests.fixtures.wdv_records import wdv_records, write_wdv


@pytest.fixture
def wdv_file(tmp_path: Path) -> Path:
    records = wdv_records()
    records[2]["annotations"]["fluency_mean"] = 4
    records[2]["annotations"]["fluency_median"] = 4
    return write_wdv(tmp_path / "wdv.json", records)


def test_import_maps_records(store: SessionStore, wdv_file: Path) -> None:
    report = import_wdv(store, wdv_file)
    assert (report.entries, report.units, report.errors) == (3, 3, [])
    with store.unit_of_work() as db:
        unit = db.scalars(select(DataUnit).where(DataUnit.uid == "wdv:Q2158$ABC-1")).one()
        assert (unit.root_qid, unit.size, unit.shape, unit.origin) == (
            "Q2158",
            1,
            "sibling",
            "imported",
        )
        assert "verbalisation" not in unit.attributes["record"]
        assert unit.attributes["record"]["sampling_weight"] == 3.25
        triples = db.scalars(select(UnitTriple).order_by(UnitTriple.id)).all()
        assert [(t.subject, t.predicate, t.object, t.object_value) for t in triples] == [
            ("Gubbio", "country", "Italy", "Q38"),
            ("Gubbio", "population", "31,000", None),
            ("Paris", "country", "France", "Q142"),
        ]
        assert {(t.lang, t.subject_qid) for t in triples} == {("en", "Q2158"), ("en", "Q90")}
        runs = db.scalars(select(ModelRun)).all()
        assert [(r.kind, r.system_name) for r in runs] == [("external", "WDV")]
        texts = db.scalars(select(Verbalisation.text).order_by(Verbalisation.id)).all()
        assert texts[0] == "Gubbio is in Italy."
        workers = db.scalars(select(Annotator).order_by(Annotator.id)).all()
        assert [(w.name, w.is_anonymous) for w in workers] == [
            (f"wdv-worker-{i}", True) for i in range(1, 6)
        ]
        assert len(db.scalars(select(Annotation)).all()) == 13


def test_roundtrip_is_exact(store: SessionStore, wdv_file: Path, tmp_path: Path) -> None:
    import_wdv(store, wdv_file)
    out = tmp_path / "out.json"
    report = export_wdv(store, out)
    assert (report.entries, report.units, report.references, report.skipped) == (3, 3, 0, [])
    exported = json.loads(out.read_text(encoding="utf-8"))
    original = json.loads(wdv_file.read_text(encoding="utf-8"))
    assert exported == original
    assert [list(r) for r in exported] == [list(r) for r in original]
    # A second import of another file reuses the workers and adds one run.
    records = copy.deepcopy(original)
    for record in records:
        record["claim_id"] += "-b"
    import_wdv(store, write_wdv(tmp_path / "b.json", records))
    with store.unit_of_work() as db:
        assert len(db.scalars(select(Annotator)).all()) == 5
        assert len(db.scalars(select(ModelRun)).all()) == 2


def test_export_recomputes_aggregates(store: SessionStore, tmp_path: Path) -> None:
    records = wdv_records()[:1]
    records[0]["annotations"]["fluency_mean"] = 1.0  # inconsistent with the scores
    import_wdv(store, write_wdv(tmp_path / "w.json", records))
    with store.unit_of_work() as db:
        annotator = Annotator(name="alice")
        db.add(annotator)
        db.flush()
        verbalisation = db.scalars(select(Verbalisation)).one()
        db.add(
            Annotation(
                annotator_id=annotator.id, verbalisation_id=verbalisation.id, fluency=2, adequacy=1
            )
        )
    out = tmp_path / "out.json"
    export_wdv(store, out)
    annotations = json.loads(out.read_text())[0]["annotations"]
    assert annotations["fluency_scores"] == [5, 5, 4, 5, 4, 2]
    assert annotations["fluency_mean"] == pytest.approx(25 / 6)
    assert annotations["fluency_median"] == 4.5
    assert annotations["adequacy_scores"] == [0, 0, 0, 0, 1, 1]
    assert annotations["adequacy_majority_voted"] == 0
    assert annotations["adequacy_percentage"] == pytest.approx(4 / 6)


def test_bad_records_are_listed_and_skipped(store: SessionStore, tmp_path: Path) -> None:
    good = wdv_records()[0]
    no_label = {k: v for k, v in good.items() if k != "object_label"} | {"claim_id": "c2"}
    bad_type = good | {"claim_id": "c3", "subject_label": 7}
    bad_scores = copy.deepcopy(good) | {"claim_id": "c4"}
    bad_scores["annotations"]["adequacy_scores"] = [0, 3]
    report = import_wdv(
        store, write_wdv(tmp_path / "w.json", [good, no_label, bad_type, bad_scores, 5, good])
    )
    assert (report.entries, report.units) == (6, 1)
    reasons = [str(e) for e in report.errors]
    assert "missing field(s): object_label" in reasons[0]
    assert "must be strings: subject_label" in reasons[1]
    assert "other than 0, 1 or 2" in reasons[2]
    assert "expected a JSON object" in reasons[3]
    assert "already in the session" in reasons[4]


def test_malformed_json_changes_nothing(store: SessionStore, tmp_path: Path) -> None:
    before = table_digest(store)
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"claim_id": "x",\n  "rank": }\n]\n')
    with pytest.raises(FormatError, match=r"not valid JSON: .* at line 3, column 11"):
        import_wdv(store, broken)
    not_array = tmp_path / "object.json"
    not_array.write_text('{"claim_id": "x"}')
    with pytest.raises(FormatError, match="expected an array"):
        import_wdv(store, not_array)
    assert table_digest(store) == before


def test_failure_mid_import_rolls_back(
    store: SessionStore, wdv_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.formats.wdv import importer

    before = table_digest(store)

    def boom(db: Any, count: int) -> list[int]:
        raise RuntimeError("boom")

    monkeypatch.setattr(importer, "_workers", boom)
    with pytest.raises(RuntimeError):
        import_wdv(store, wdv_file)
    assert table_digest(store) == before


def test_helpers_and_registry(wdv_file: Path) -> None:
    assert item_id("Q5") == "Q5" and item_id({"id": "P31", "entity-type": "property"}) is None
    assert item_id({"entity-type": "item", "numeric-id": 7}) == "Q7"
    assert item_id("+31000") is None and item_id(None) is None
    assert majority([1, 0, 1, 0]) == 1 and majority([]) is None  # a tie: No, not Yes
    assert aggregates([], [])["fluency_mean"] is None
    assert detect_format(wdv_file) == "wdv"
    assert IMPORT_FORMATS["wdv"].file_filter == "WDV JSON (*.json)"
    assert {"wdv", "turtle", "ntriples", "csv"} <= set(EXPORT_FORMATS)


# -- reading large files incrementally -------------------------------------------------------


def test_records_are_read_one_at_a_time(tmp_path: Path) -> None:
    from contextlib import closing

    from core.formats.wdv.reader import RecordReader

    records = []
    for i in range(300):
        record = copy.deepcopy(wdv_records()[i % 3])
        record["claim_id"] = f"Q{i + 1}$X"
        records.append(record)
    path = write_wdv(tmp_path / "big.json", records)
    size = path.stat().st_size
    with closing(RecordReader(path, chunk_bytes=4096)) as reader:
        stream = reader.records()
        assert next(stream) == records[0]
        # The first record came from the first chunk, not from reading the whole file.
        assert reader.bytes_read == 4096 < size // 10
        assert [records[0], *stream] == records
        assert reader.bytes_read == size


# Texts json.loads refuses (or reads): the reader must agree with it on every chunk size,
# values that straddle chunks (numbers, literals, escapes, multi-byte characters) included.
JSON_TEXTS = [
    '[\n  {"claim_id": "x",\n  "rank": }\n]\n',
    '[{"a": 1}',
    "[1,]",
    "[1 2]",
    "[1] x",
    "",
    '[{"a": tru}]',
    '[\n{"a": [1, 2,\n 3}\n]',
    '[1,\n\n  2,\n  {"é": "ñ", "b": nope}]',
    '[{"a": "Città \\u00e9\\n", "n": -12345.678e-3, "t": true, "f": false, "z": null}]',
    " [ ] ",
]


@pytest.mark.parametrize("chunk", [1, 3, 7, 1 << 16])
def test_reader_agrees_with_json_loads(tmp_path: Path, chunk: int) -> None:
    from contextlib import closing

    from core.formats.wdv.reader import RecordReader

    for number, text in enumerate(JSON_TEXTS):
        path = tmp_path / f"t{number}.json"
        path.write_text(text, encoding="utf-8")
        try:
            expected, message = json.loads(text), None
        except json.JSONDecodeError as exc:
            expected, message = None, f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
        with closing(RecordReader(path, chunk_bytes=chunk)) as reader:
            if message is None:
                assert list(reader.records()) == expected, text
            else:
                with pytest.raises(FormatError) as raised:
                    list(reader.records())
                assert f"not valid JSON: {message} (expected a JSON array" in str(raised.value)


def test_batches_stay_in_one_transaction(
    store: SessionStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.formats.wdv import importer, reader

    monkeypatch.setattr(importer, "BATCH", 2)
    monkeypatch.setattr(reader, "CHUNK_BYTES", 512)
    records = []
    for i in range(5):
        record = copy.deepcopy(wdv_records()[0])
        record["claim_id"] = f"c{i}"
        records.append(record)
    before = table_digest(store)
    text = json.dumps(records, indent=2)
    broken = tmp_path / "broken.json"
    broken.write_text(text[:-2] + ',\n  {"claim_id": }\n]\n', encoding="utf-8")
    line = text[:-2].count("\n") + 2
    # Two batches were inserted before the error; the transaction takes them back.
    with pytest.raises(FormatError, match=rf"Expecting value at line {line}, column 16"):
        import_wdv(store, broken)
    assert table_digest(store) == before
    report = import_wdv(store, write_wdv(tmp_path / "ok.json", records))
    assert (report.entries, report.units, report.errors) == (5, 5, [])
    with store.unit_of_work() as db:
        assert len(db.scalars(select(ModelRun)).all()) == 1  # one run for the whole file
        assert len(db.scalars(select(Verbalisation)).all()) == 5


@pytest.mark.parametrize(
    ("encoding", "message"),
    [
        (
            "latin-1",
            r"not readable as UTF-8 text: line 7, column 27 holds byte 0xe0, which is "
            r"not valid UTF-8 \(the file may be Latin-1",
        ),
        ("utf-16", r"not UTF-8: it looks like UTF-16 or UTF-32 text"),
    ],
)
def test_wrong_encoding_is_refused_and_changes_nothing(
    store: SessionStore, tmp_path: Path, encoding: str, message: str
) -> None:
    record = wdv_records()[0] | {"subject_label": "Città di Gubbio"}
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps([record], ensure_ascii=False, indent=2), encoding=encoding)
    before = table_digest(store)
    with pytest.raises(FormatError, match=message):
        import_wdv(store, path)
    assert table_digest(store) == before


def test_export_reports_the_units_it_cannot_hold(
    store: SessionStore, wdv_file: Path, tmp_path: Path
) -> None:
    import_wdv(store, wdv_file)
    with store.unit_of_work() as db:
        pair = DataUnit(uid="pair", origin="built", size=2, shape="sibling", root_qid="Q90")
        pair.triples = [
            UnitTriple(
                lang="en", tripleset="main", position=i, subject="Paris", predicate=p, object=o
            )
            for i, (p, o) in enumerate([("country", "France"), ("mayor", "X")])
        ]
        spanish = DataUnit(uid="solo-es", origin="built", size=1, shape="sibling")
        spanish.triples = [
            UnitTriple(
                lang="es",
                tripleset="main",
                position=0,
                subject="París",
                predicate="país",
                object="Francia",
            )
        ]
        db.add_all([pair, spanish])
    out = tmp_path / "out.json"
    report = export_wdv(store, out)
    assert (report.entries, report.units, report.references) == (3, 5, 0)
    assert [str(e) for e in report.skipped] == [
        "unit pair: 2 triples: a WDV record holds exactly one claim, so only single-triple "
        "units are exported",
        "unit solo-es: no English triple: a WDV record is English",
    ]
    assert report.errors == report.skipped
    assert report.summary_line() == "3 entries, 5 units, 0 references, 2 errors"
    assert len(json.loads(out.read_text(encoding="utf-8"))) == 3
