"""Bad WebNLG input: refused files leave the session as it was; bad entries are listed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import select

from core.formats import FormatError, export_webnlg, import_job, import_webnlg
from core.formats.webnlg import importer, writer
from core.formats.webnlg.entries import ParsedEntry
from core.jobs import CancelToken, JobCancelled, JobContext, JobWasCancelled, Progress, run_job
from core.store import SessionStore
from core.store.models import DataUnit, UnitReference
from tests.fixtures.table_digest import table_digest
from tests.fixtures.webnlg_xml import HEAD, TAIL, entry, seeded, write


def test_malformed_xml_names_file_line_and_column(store: SessionStore, tmp_path: Path) -> None:
    before = seeded(store, tmp_path)
    path = write(
        tmp_path,
        "broken.xml",
        HEAD + entry("A1") + "    <entry eid='x'>\n      <lex>unclosed\n    </entry>\n" + TAIL,
    )
    with pytest.raises(FormatError) as caught:
        import_webnlg(store, path)
    message = str(caught.value)
    assert "broken.xml" in message and "line 10" in message and "column" in message
    assert "mismatched tag" in message
    assert table_digest(store) == before


XXE = """<?xml version="1.0"?>
<!DOCTYPE benchmark [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<benchmark><entries><entry eid="1" size="1"><lex lid="Id1">&xxe;</lex></entry></entries></benchmark>
"""

LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<benchmark><entries><entry eid="1" size="1">
<lex lid="Id1">&lol3;</lex></entry></entries></benchmark>
"""


@pytest.mark.parametrize("body", [XXE, LAUGHS], ids=["xxe", "billion-laughs"])
def test_doctype_and_entities_are_refused(store: SessionStore, tmp_path: Path, body: str) -> None:
    before = seeded(store, tmp_path)
    path = write(tmp_path, "evil.xml", body)
    with pytest.raises(FormatError, match=r"evil\.xml was refused: it declares a DOCTYPE"):
        import_webnlg(store, path)
    assert table_digest(store) == before


def test_latin1_bytes_in_a_utf8_file(store: SessionStore, tmp_path: Path) -> None:
    before = seeded(store, tmp_path)
    body = (HEAD + entry("L1") + TAIL).replace("Text L1.", "Caf\u00e9").encode("latin-1")
    path = write(tmp_path, "latin.xml", body)
    with pytest.raises(FormatError) as caught:
        import_webnlg(store, path)
    message = str(caught.value)
    assert "latin.xml" in message and "not valid utf-8" in message and "line 6" in message
    assert table_digest(store) == before


def test_not_a_webnlg_file(store: SessionStore, tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="expected <benchmark>"):
        import_webnlg(store, write(tmp_path, "other.xml", "<html><body/></html>"))
    with pytest.raises(FormatError, match="no such file"):
        import_webnlg(store, tmp_path / "missing.xml")


def test_bad_entries_are_listed_and_valid_ones_imported(
    store: SessionStore, tmp_path: Path
) -> None:
    body = (
        HEAD
        + entry("E1")
        + entry("E1")
        + entry("E3", triple="A | p")
        + entry("E4", lang="xx-bogus")
        + entry("E5", size="two")
        + entry("E6", lang="it")
        + entry("E7", lang="xx")
        + TAIL
    )
    report = import_webnlg(store, write(tmp_path, "mixed.xml", body))
    assert report.summary_line() == "7 entries, 2 units, 2 references, 5 errors"
    reasons = {e.where: e.reason for e in report.errors}
    assert "duplicate id 'E1'" in reasons["entry 2 (eid E1)"]
    assert "triple without three parts" in reasons["entry 3 (eid E3)"]
    assert "unknown language 'xx-bogus'" in reasons["entry 4 (eid E4)"]
    assert "size 'two' is not an integer" in reasons["entry 5 (eid E5)"]
    assert "unknown language 'xx'" in reasons["entry 7 (eid E7)"]
    with store.unit_of_work() as db:
        assert db.scalars(select(DataUnit.uid).order_by(DataUnit.id)).all() == ["E1", "E6"]
        assert db.scalars(select(UnitReference.lang).order_by(UnitReference.id)).all() == [
            "en",
            "it",
        ]
    # Importing the same file again (a re-run): the two units are "already imported".
    again = import_webnlg(store, write(tmp_path, "mixed.xml", body))
    assert again.units == 0 and again.already == 2 and len(again.errors) == 5


def test_unexpected_failure_mid_import_changes_nothing(
    store: SessionStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = seeded(store, tmp_path)
    real = importer.parse_entry
    calls = 0

    def failing(*args: object, **kwargs: object) -> ParsedEntry:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise RuntimeError("disk on fire")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(importer, "parse_entry", failing)
    body = HEAD + "".join(entry(f"F{i}") for i in range(5)) + TAIL
    with pytest.raises(RuntimeError, match="disk on fire"):
        import_webnlg(store, write(tmp_path, "five.xml", body))
    assert table_digest(store) == before


def test_failure_after_a_flushed_batch_changes_nothing(
    store: SessionStore, tailnlg_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    before = seeded(store, tmp_path)
    real = importer.parse_entry
    calls = 0

    def failing(*args: object, **kwargs: object) -> ParsedEntry:
        nonlocal calls
        calls += 1
        if calls == 600:  # after the first batch of 500 went to the database
            raise RuntimeError("late failure")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(importer, "parse_entry", failing)
    with pytest.raises(RuntimeError):
        import_webnlg(store, tailnlg_path)
    assert table_digest(store) == before


def test_cancel_mid_import_changes_nothing(store: SessionStore, tmp_path: Path) -> None:
    before = seeded(store, tmp_path)
    token = CancelToken()
    seen: list[float] = []

    def on_progress(progress: Progress) -> None:
        seen.append(progress.done)
        if progress.done >= 3:
            token.cancel()

    body = HEAD + "".join(entry(f"C{i}") for i in range(6)) + TAIL
    path = write(tmp_path, "six.xml", body)
    # Unthrottled, to cancel exactly after the 3rd entry.
    ctx = JobContext(token, on_progress, min_interval_s=0)
    with pytest.raises(JobCancelled):
        import_webnlg(store, path, ctx=ctx)
    assert seen == [1, 2, 3]
    assert table_digest(store) == before


def test_cancelled_job_changes_nothing(store: SessionStore, tmp_path: Path) -> None:
    before = seeded(store, tmp_path)
    token = CancelToken()
    body = HEAD + "".join(entry(f"J{i}") for i in range(6)) + TAIL
    path = write(tmp_path, "six.xml", body)
    outcome = run_job(import_job(store, path), token, lambda _progress: token.cancel())
    assert isinstance(outcome, JobWasCancelled)
    assert table_digest(store) == before


def test_export_to_an_unwritable_place_leaves_no_file(
    store: SessionStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_webnlg(store, write(tmp_path, "one.xml", HEAD + entry("X1") + TAIL))
    with pytest.raises(FormatError, match="Cannot export to .*Choose another folder"):
        export_webnlg(store, tmp_path / "no-such-folder" / "out.xml")
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(FormatError, match="Cannot export to"):
        export_webnlg(store, tmp_path / "a-file" / "out.xml")
    with pytest.raises(FormatError, match="it is a folder"):
        export_webnlg(store, tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user who can write anywhere (root)")
        with pytest.raises(FormatError, match="Cannot export to"):
            export_webnlg(store, locked / "out.xml")
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o700)


def test_failure_while_writing_leaves_no_partial_file(
    store: SessionStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_webnlg(store, write(tmp_path, "two.xml", HEAD + entry("Y1") + entry("Y2") + TAIL))
    out_folder = tmp_path / "out"
    out_folder.mkdir()
    export_webnlg(store, out_folder / "out.xml")  # a previous export, TailLens's own
    previous = (out_folder / "out.xml").read_bytes()
    real = writer._entry_element
    calls = 0

    def failing(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(writer, "_entry_element", failing)
    with pytest.raises(FormatError, match="the disk is full .*; out.xml was left as it was"):
        export_webnlg(store, out_folder / "out.xml")
    assert [p.name for p in out_folder.iterdir()] == ["out.xml"]
    assert (out_folder / "out.xml").read_bytes() == previous
