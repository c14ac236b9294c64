"""Hostile or broken XML for the WebNLG/TailNLG reader: a message naming file, entry and
reason (never a traceback) and an unchanged session; or, where the entry is accepted, a
warning in the import report."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from core.formats import FormatError, import_webnlg
from core.formats.webnlg import reader
from core.store import SessionStore
from core.store.models import DataUnit, UnitReference
from tests.fixtures.table_digest import table_digest
from tests.fixtures.webnlg_xml import HEAD, TAIL, entry, seeded, write


def refused(store: SessionStore, tmp_path: Path, path: Path) -> str:
    before = table_digest(store)
    with pytest.raises(FormatError) as caught:
        import_webnlg(store, path)
    assert table_digest(store) == before
    return str(caught.value)


def test_unknown_encoding(store: SessionStore, tmp_path: Path) -> None:
    seeded(store, tmp_path)
    body = (HEAD + entry("K1") + TAIL).replace('encoding="utf-8"', 'encoding="x-klingon"')
    message = refused(store, tmp_path, write(tmp_path, "klingon.xml", body))
    assert message.startswith("klingon.xml declares encoding 'x-klingon', which is not a known")


def test_deep_nesting_is_refused_with_its_entry(store: SessionStore, tmp_path: Path) -> None:
    seeded(store, tmp_path)
    deep = "<a>" * 20_000 + "</a>" * 20_000
    body = HEAD + entry("D1") + entry("D2").replace("Text D2.", deep) + TAIL
    message = refused(store, tmp_path, write(tmp_path, "deep.xml", body))
    assert "deep.xml is refused: elements nest deeper than 100 levels" in message
    assert "levels (in entry 2, eid D2);" in message


def test_an_attribute_over_the_cap_is_refused(
    store: SessionStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded(store, tmp_path)
    monkeypatch.setattr(reader, "MAX_TOKEN_BYTES", 1 << 20)
    monkeypatch.setattr(reader, "READ_SIZE", 4096)
    huge = entry("H1").replace('category="C"', f'category="{"x" * (3 << 20)}"')
    message = refused(store, tmp_path, write(tmp_path, "huge.xml", HEAD + huge + TAIL))
    assert "huge.xml is refused: near line 4" in message and "runs over 1 MiB" in message


def test_a_long_attribute_under_the_cap_is_read_whole(
    store: SessionStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small reads force the growing-chunk path: the tag spans hundreds of reads.
    monkeypatch.setattr(reader, "READ_SIZE", 1024)
    category = "y" * (1 << 20)
    body = HEAD + entry("L1").replace('category="C"', f'category="{category}"') + entry("L2")
    report = import_webnlg(store, write(tmp_path, "long.xml", body + TAIL))
    assert (report.units, report.errors) == (2, [])
    with store.unit_of_work() as db:
        unit = db.scalars(select(DataUnit).where(DataUnit.uid == "L1")).one()
        assert unit.attributes["entry"]["category"] == category


def test_not_a_regular_file(store: SessionStore) -> None:
    with pytest.raises(FormatError, match="it is not a regular file"):
        import_webnlg(store, "/dev/null")


def test_utf8_declared_as_latin1_is_refused(store: SessionStore, tmp_path: Path) -> None:
    seeded(store, tmp_path)
    body = (HEAD + entry("M1") + TAIL).replace("Text M1.", "Caffè a Milano.")
    body = body.replace('encoding="utf-8"', 'encoding="ISO-8859-1"')
    message = refused(store, tmp_path, write(tmp_path, "moji.xml", body))
    assert "moji.xml declares encoding 'ISO-8859-1' but its bytes are UTF-8" in message
    assert "line 6" in message and "Caffè" in message and "CaffÃ¨" in message


def test_real_latin1_is_read_as_latin1(store: SessionStore, tmp_path: Path) -> None:
    body = (HEAD + entry("R1") + TAIL).replace("Text R1.", "Caffè a Milano.")
    body = body.replace('encoding="utf-8"', 'encoding="ISO-8859-1"')
    report = import_webnlg(store, write(tmp_path, "latin.xml", body.encode("latin-1")))
    assert report.errors == []
    with store.unit_of_work() as db:
        assert db.scalars(select(UnitReference.text)).all() == ["Caffè a Milano."]


def test_an_entry_without_triples_is_listed_not_imported(
    store: SessionStore, tmp_path: Path
) -> None:
    empty = (
        '    <entry category="C" eid="N1" size="0" unique_id="N1">\n'
        '      <lex quality="gold" lid="Id1" lang="en">Nothing.</lex>\n    </entry>\n'
    )
    report = import_webnlg(store, write(tmp_path, "none.xml", HEAD + empty + entry("N2") + TAIL))
    assert report.summary_line() == "2 entries, 1 unit, 1 reference, 1 error"
    assert report.errors[0].where == "entry 1 (eid N1)"
    assert "entry has no triples" in report.errors[0].reason


def test_a_text_without_lang_among_italian_and_spanish_is_warned(
    store: SessionStore, tmp_path: Path
) -> None:
    lexes = (
        '      <lex quality="gold" lid="Id1" lang="it">Testo.</lex>\n'
        '      <lex quality="gold" lid="Id2" lang="es">Texto.</lex>\n'
        '      <lex quality="gold" lid="Id3">Testo senza lingua.</lex>\n'
    )
    body = (
        HEAD
        + entry("W1").replace(
            '      <lex quality="gold" lid="Id1" lang="en">Text W1.</lex>\n', lexes
        )
        + TAIL
    )
    report = import_webnlg(store, write(tmp_path, "tail.xml", body))
    assert (report.units, report.errors) == (1, [])
    [warning] = report.warnings
    assert warning.where == "entry 1 (eid W1)"
    assert warning.reason.startswith("lex Id3 has no language and was stored as en (English by")
    assert "the entry's other texts are es, it" in warning.reason
    # An English sibling makes the file's language plausible: no warning.
    plain = import_webnlg(
        store, write(tmp_path, "plain.xml", HEAD + entry("W2").replace('lang="en"', "") + TAIL)
    )
    assert plain.warnings == []
