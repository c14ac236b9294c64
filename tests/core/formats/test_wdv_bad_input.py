"""WDV files that used to end in a traceback, and records imported that look wrong."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from app.cli import main
from core.formats import FormatError
from core.formats.wdv.importer import import_wdv
from core.formats.wdv.reader import MAX_RECORD_CHARS, RecordReader
from core.formats.wdv.records import MAX_DEPTH
from core.store import SessionStore
from tests.fixtures.table_digest import table_digest
from tests.fixtures.wdv_records import wdv_records, write_wdv


def test_deeply_nested_file_is_a_message(store: SessionStore, tmp_path: Path) -> None:
    path = tmp_path / "brackets.json"
    path.write_text("[" * 100_000)
    before = table_digest(store)
    with pytest.raises(FormatError, match=r"nested too deeply .* at line 1, column 2"):
        import_wdv(store, path)
    assert table_digest(store) == before


@pytest.mark.parametrize("chunk", [None, 1024])  # the number whole in a chunk, or across
def test_a_score_of_5000_digits_is_a_message(
    store: SessionStore, tmp_path: Path, chunk: int | None
) -> None:
    records = wdv_records()
    text = json.dumps(records, indent=1)
    huge = "9" * 5000
    text = text.replace('"fluency_scores": [\n    5,', f'"fluency_scores": [\n    {huge},', 1)
    assert huge in text
    path = tmp_path / "huge.json"
    path.write_text(text)
    reader = RecordReader(path, chunk_bytes=chunk)
    with pytest.raises(FormatError, match="a number of 5,000 digits"):
        list(reader.records())
    reader.close()
    before = table_digest(store)
    with pytest.raises(FormatError, match=r"a number of 5,000 digits, more than 40"):
        import_wdv(store, path)
    assert table_digest(store) == before


def test_a_long_record_is_decoded_a_few_times_not_once_per_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One record of 4 MB read in chunks of 1 KB: decoded again after every chunk it was
    # 4,000 decodes of up to 4 MB each (time quadratic in the record's length); with the
    # buffer doubling it is about log2(4,000) = 12.
    path = tmp_path / "long.json"
    path.write_text(json.dumps([{"verbalisation": "x" * 4_000_000}, {"a": 1}]))
    reader = RecordReader(path, chunk_bytes=1024)
    decodes = []
    decode = reader._decoder.raw_decode

    def counted(text: str, index: int = 0) -> tuple[object, int]:
        decodes.append(index)
        return decode(text, index)

    monkeypatch.setattr(reader._decoder, "raw_decode", counted)
    try:
        records = list(reader.records())
    finally:
        reader.close()
    assert len(records[0]["verbalisation"]) == 4_000_000 and records[1] == {"a": 1}
    assert len(decodes) <= 20


def test_a_record_longer_than_the_limit_is_a_message(tmp_path: Path) -> None:
    path = tmp_path / "endless.json"
    path.write_text('[{"verbalisation": "' + "x" * (MAX_RECORD_CHARS + 10))
    reader = RecordReader(path)
    try:
        with pytest.raises(FormatError, match="a record longer than 16,000,000 characters"):
            list(reader.records())
    finally:
        reader.close()


def test_a_deep_record_is_skipped_with_a_reason(store: SessionStore, tmp_path: Path) -> None:
    good, deep = wdv_records()[0], copy.deepcopy(wdv_records()[1])
    nested: list[object] = []
    for _ in range(MAX_DEPTH + 5):
        nested = [nested]
    deep["note"] = nested  # deep, but within what the JSON decoder can read
    report = import_wdv(store, write_wdv(tmp_path / "deep.json", [good, deep]))
    assert (report.entries, report.units) == (2, 1)
    assert f"more than {MAX_DEPTH} deep" in report.errors[0].reason


def test_ids_that_are_not_wikidata_ids_are_reported(store: SessionStore, tmp_path: Path) -> None:
    records = wdv_records()
    records[0]["subject_id"] = "Gubbio"
    records[1]["subject_id"] = "Q2158\n"
    records[2]["property_id"] = "P17 "
    report = import_wdv(store, write_wdv(tmp_path / "ids.json", records))
    assert (report.units, report.errors) == (3, [])  # imported, as the file says ...
    notes = [str(w) for w in report.warnings]  # ... and each oddity named
    assert len(notes) == 3
    assert "record 1" in notes[0] and "subject_id 'Gubbio' is not a Wikidata item id" in notes[0]
    assert "record 2" in notes[1] and "'Q2158\\n'" in notes[1]
    assert "property_id 'P17 ' is not a Wikidata property id" in notes[2]
    clean = import_wdv(
        store,
        write_wdv(
            tmp_path / "clean.json", [r | {"claim_id": r["claim_id"] + "-b"} for r in wdv_records()]
        ),
    )
    assert clean.warnings == []


def test_cli_messages_and_exit_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    session = str(tmp_path / "s.taillens")
    brackets = tmp_path / "brackets.json"
    brackets.write_text("[" * 100_000)
    status = main(["import", str(brackets), "--session", session, "--format", "wdv", "--quiet"])
    err = capsys.readouterr().err
    assert status == 2 and "nested too deeply" in err and "Traceback" not in err
    records = wdv_records()
    records[0]["subject_id"] = "Gubbio"
    odd = write_wdv(tmp_path / "odd.json", records)
    status = main(["import", str(odd), "--session", session, "--format", "wdv", "--quiet"])
    out, err = capsys.readouterr()
    assert status == 0 and "3 units" in out
    assert "imported, but record 1" in err and "'Gubbio' is not a Wikidata item id" in err
