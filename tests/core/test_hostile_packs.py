"""Annotation packs and sessions from elsewhere: what the file holds is checked before a
row is read, nothing of it is changed or run, and what is merged passes the app's own
checks. Real packs made from a real session, then edited as another program could."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import func, select

from core.annotation import find_annotator, list_annotators, save_rating
from core.annotation.packs import (
    MANIFEST_KEY,
    PACK_VALUE_BYTES,
    PackError,
    PackRequest,
    _bounded_reader,
    make_pack,
    merge_pack,
    pack_info,
)
from core.annotation.types import Rating
from core.io.output_guard import OutputRefusedError
from core.store import SessionError, SessionStore
from core.store.models import Annotation, Verbalisation
from tests.fixtures import report_session as fixture_module
from tests.fixtures.report_session import ReportSession

report_session = fixture_module.report_session


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rated_pack(session: ReportSession, tmp_path: Path, name: str = "eve") -> Path:
    out = tmp_path / f"{name}.taillens"
    with SessionStore.open(session.path) as store:
        make_pack(store, PackRequest(annotator=name, out=out, units=(session.units["u1"],)))
    with SessionStore.open(out) as pack:
        info = pack_info(pack)
        assert info is not None
        who = find_annotator(pack, info.annotator)
        with pack.snapshot() as db:
            ids = list(db.scalars(select(Verbalisation.id).order_by(Verbalisation.id)))
        for vid in ids:
            save_rating(pack, who.id, vid, Rating(fluency=4, adequacy=0))
    return out


def _edited(pack: Path, tmp_path: Path, sql: str, name: str = "edited.taillens") -> Path:
    """A copy of ``pack`` changed by another program (plain sqlite3)."""
    target = tmp_path / name
    shutil.copy(pack, target)
    with closing(sqlite3.connect(target)) as conn:
        conn.executescript(sql)
    return target


def _ratings(session: ReportSession) -> int:
    with SessionStore.open_read_only(session.path) as store, store.snapshot() as db:
        return int(db.scalar(select(func.count()).select_from(Annotation)) or 0)


_RECURSIVE = (
    "WITH RECURSIVE r(id, name, is_anonymous, created_at) AS "
    "(SELECT 1, 'x', 0, NULL UNION ALL SELECT id + 1, 'x', 0, NULL FROM r) SELECT * FROM r"
)


@pytest.mark.parametrize(
    ("sql", "found"),
    [
        (
            f"ALTER TABLE annotators RENAME TO kept; CREATE VIEW annotators AS {_RECURSIVE};",
            "view 'annotators'",
        ),
        (
            "ALTER TABLE annotations RENAME TO kept; CREATE VIEW annotations AS "
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
            "SELECT * FROM kept, r;",
            "view 'annotations'",
        ),
        (
            "CREATE TRIGGER planted AFTER UPDATE ON session_meta BEGIN "
            "DELETE FROM annotations; END;",
            "trigger 'planted'",
        ),
        ("CREATE VIEW extra AS SELECT 1;", "view 'extra'"),
    ],
)
def test_a_pack_holding_a_view_or_trigger_is_refused_before_a_row_is_read(
    report_session: ReportSession, tmp_path: Path, sql: str, found: str
) -> None:
    pack = _edited(_rated_pack(report_session, tmp_path), tmp_path, sql)
    before, held = _digest(pack), _ratings(report_session)
    with SessionStore.open(report_session.path) as store, pytest.raises(PackError) as caught:
        merge_pack(store, pack)
    assert found in str(caught.value) and "\n" not in str(caught.value)
    assert _digest(pack) == before and _ratings(report_session) == held
    # Opening it as a session is refused the same way.
    with pytest.raises(SessionError, match="not a session as TailLens writes them"):
        SessionStore.open(pack)
    assert _digest(pack) == before


@pytest.mark.parametrize(
    ("sql", "found"),
    [
        ("ALTER TABLE annotations DROP COLUMN blame;", "no column annotations.blame"),
        ("DROP TABLE annotation_origins;", "no table annotation_origins"),
        (
            "ALTER TABLE annotators RENAME TO a2; CREATE TABLE annotators (id INTEGER PRIMARY "
            "KEY, name BLOB, is_anonymous BOOLEAN, created_at DATETIME); "
            "INSERT INTO annotators SELECT * FROM a2;",
            "annotators.name is declared 'BLOB'",
        ),
    ],
)
def test_a_pack_missing_a_table_or_column_is_refused_in_one_line(
    report_session: ReportSession, tmp_path: Path, sql: str, found: str
) -> None:
    pack = _edited(_rated_pack(report_session, tmp_path), tmp_path, sql)
    before = _digest(pack)
    with SessionStore.open(report_session.path) as store, pytest.raises(PackError) as caught:
        merge_pack(store, pack)
    assert found in str(caught.value)
    assert _digest(pack) == before


def test_an_older_pack_is_upgraded_as_a_private_copy_never_in_place(
    report_session: ReportSession, tmp_path: Path
) -> None:
    from core.store.migrate import revision_graph

    head = SessionStore.head_revision()
    older = revision_graph()[head]
    # Claims an older revision (its tables are the head's, so the upgrade fails) and
    # carries a trigger that an upgrade in place would fire.
    pack = _edited(
        _rated_pack(report_session, tmp_path),
        tmp_path,
        f"UPDATE alembic_version SET version_num = '{older}';",
    )
    before = _digest(pack)
    with SessionStore.open(report_session.path) as store, pytest.raises(PackError) as caught:
        merge_pack(store, pack)
    assert "private copy" in str(caught.value)
    assert _digest(pack) == before
    assert sorted(p.name for p in tmp_path.glob("edited.taillens*")) == ["edited.taillens"]
    trigger = _edited(
        pack,
        tmp_path,
        "CREATE TRIGGER fire BEFORE UPDATE ON alembic_version BEGIN "
        "INSERT INTO session_meta VALUES ('fired', 'yes'); END;",
        "trigger.taillens",
    )
    before = _digest(trigger)
    with SessionStore.open(report_session.path) as store, pytest.raises(PackError, match="fire"):
        merge_pack(store, trigger)
    assert _digest(trigger) == before


@pytest.mark.parametrize(
    "manifest",
    [
        {"format": "2"},
        {"format": None},
        {"format": [1]},
        {"format": True},
        {"pack_uid": None},
        {"pack_uid": "../../x"},
        {"annotator": "\x1b[2Jeve"},
        {"annotator": ["eve"]},
        {"items": [["v", 1e400, "x"]]},
        {"items": [["v", "1", "0" * 64]]},
        {"items": "all"},
    ],
)
def test_a_manifest_field_of_the_wrong_kind_is_one_line(
    report_session: ReportSession, tmp_path: Path, manifest: dict[str, object]
) -> None:
    pack = _rated_pack(report_session, tmp_path)
    with closing(sqlite3.connect(pack)) as conn:
        (text,) = conn.execute(
            "SELECT value FROM session_meta WHERE key = ?", (MANIFEST_KEY,)
        ).fetchone()
        changed = json.loads(text) | manifest
        conn.execute(
            "UPDATE session_meta SET value = ? WHERE key = ?",
            (json.dumps(changed), MANIFEST_KEY),
        )
        conn.commit()
    with SessionStore.open(report_session.path) as store, pytest.raises(PackError) as caught:
        merge_pack(store, pack)
    assert "\n" not in str(caught.value) and pack.name in str(caught.value)


@pytest.mark.parametrize(
    "value",
    ["[" * 100_000 + "]" * 100_000, '{"format": ' + "9" * 5000 + "}", "1e400", "null", "[]"],
)
def test_a_manifest_that_is_not_bounded_json_is_one_line(
    report_session: ReportSession, tmp_path: Path, value: str
) -> None:
    pack = _edited(
        _rated_pack(report_session, tmp_path),
        tmp_path,
        f"UPDATE session_meta SET value = '{value}' WHERE key = '{MANIFEST_KEY}';",
    )
    with SessionStore.open(report_session.path) as store, pytest.raises(PackError):
        merge_pack(store, pack)


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("UPDATE annotators SET name = X'00ff01' WHERE name = 'eve';", "must be text"),
        ("UPDATE annotations SET annotator_id = 999;", "names no annotator"),
        ("UPDATE annotators SET name = 'e' || char(27) || '[2J' WHERE name = 'eve';", "control"),
        ("UPDATE annotators SET name = '   ' WHERE name = 'eve';", "needs a name"),
        ("UPDATE annotations SET created_at = 'yesterday';", "not a date and time"),
        ("UPDATE annotations SET updated_at = X'00';", "not a date and time"),
        ("UPDATE annotations SET fluency = 7;", "Fluency must be"),
        ("UPDATE annotations SET fluency = 'high';", "Fluency must be"),
        ("UPDATE annotations SET adequacy = 0, blame = 'text';", "Blame is only recorded"),
        ("UPDATE annotations SET checks = '{\"bogus\": true}';", "Unknown check"),
        ("UPDATE annotations SET checks = '[1, 2]';", "not a JSON object"),
        ("UPDATE annotations SET corrected_text = X'eda080';", "not text"),
    ],
)
def test_a_rating_the_app_would_refuse_is_left_out_and_said(
    report_session: ReportSession, tmp_path: Path, sql: str, why: str
) -> None:
    pack = _edited(_rated_pack(report_session, tmp_path), tmp_path, sql)
    held = _ratings(report_session)
    with SessionStore.open(report_session.path) as store:
        report = merge_pack(store, pack)
        assert report.added == 0 and report.refused
        assert all(why in reason for reason in report.refused), report.refused
        assert "refused" in report.describe()
        # What is there still lists and counts.
        names = [a.name for a in list_annotators(store)]
        assert all(isinstance(n, str) and "\x1b" not in n for n in names)
        assert store.check() == []
    assert _ratings(report_session) == held


def test_a_statement_on_a_pack_ends_at_its_deadline(
    report_session: ReportSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.annotation.packs as packs

    pack = _rated_pack(report_session, tmp_path)
    monkeypatch.setattr(packs, "PACK_STATEMENT_S", 0.3)
    with pytest.raises(PackError, match="longer than"), _bounded_reader(pack, None) as conn:
        conn.execute(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
        ).fetchall()


def test_the_description_of_a_pack_of_every_text_of_a_study_fits_the_value_limit() -> None:
    """A pack's description lists each item (kind, id, SHA-256 of its text): for the
    TailNLG study's 12,915 texts it passed 1 MB, and a limit of 1 MB refused every such
    pack. Written the way make_pack writes it, 400,000 items with the longest ids fit."""
    import json

    from core.annotation import packs

    items = [["v", (1 << 62) + i, packs.text_hash(str(i))] for i in range(400_000)]
    described = json.dumps({"items": items, "annotator": "x" * 200})
    assert 12_915 * len(json.dumps(items[0])) > 1_000_000
    assert len(described.encode("utf-8")) < packs.PACK_VALUE_BYTES


def test_a_value_larger_than_a_rating_can_be_is_refused_before_it_is_read(
    report_session: ReportSession, tmp_path: Path
) -> None:
    # 50 MB in one corrected text: SQLite's length limit on the pack's connection stops the read
    # of that value, so it is never copied into the process.
    pack = _edited(
        _rated_pack(report_session, tmp_path),
        tmp_path,
        "UPDATE annotations SET corrected_text = zeroblob(50000000) "
        "WHERE id = (SELECT min(id) FROM annotations);",
    )
    before, held = _digest(pack), _ratings(report_session)
    with SessionStore.open(report_session.path) as store, pytest.raises(PackError) as caught:
        merge_pack(store, pack)
    assert "longer than 48,000,000 bytes" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert _digest(pack) == before and _ratings(report_session) == held


def test_a_pack_holding_more_than_its_read_budget_is_refused(
    report_session: ReportSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.annotation.packs as packs

    # Many rows, each value within the limit: the pack's reads stop at the budget (made
    # small here so the test writes kilobytes, not the real 256 MB).
    pack = _edited(
        _rated_pack(report_session, tmp_path),
        tmp_path,
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2000) "
        "INSERT INTO annotators (name, is_anonymous) SELECT 'a' || n, 0 FROM r;",
    )
    monkeypatch.setattr(packs, "PACK_READ_BYTES", 50_000)
    held = _ratings(report_session)
    with SessionStore.open(report_session.path) as store, pytest.raises(PackError) as caught:
        merge_pack(store, pack)
    assert "more than" in str(caught.value) and "not a pack TailLens made" in str(caught.value)
    assert _ratings(report_session) == held
    monkeypatch.setattr(packs, "PACK_READ_BYTES", 256_000_000)
    with SessionStore.open(report_session.path) as store:
        assert merge_pack(store, pack).added > 0  # the same pack within the real budget


def test_session_check_finds_what_a_merge_would_refuse(
    report_session: ReportSession, tmp_path: Path
) -> None:
    session = _edited(
        report_session.path,
        tmp_path,
        "INSERT INTO annotators (name, is_anonymous) VALUES (X'00ff', 0);"
        "INSERT INTO annotators (name, is_anonymous) VALUES ('a' || char(7), 0);"
        "UPDATE annotations SET adequacy = 0, blame = 'text', checks = '{\"bogus\": true}' "
        "WHERE id = (SELECT min(id) FROM annotations);"
        "UPDATE annotations SET created_at = 'not a date' "
        "WHERE id = (SELECT max(id) FROM annotations);",
        "damaged.taillens",
    )
    with SessionStore.open(session) as store:
        found = [str(d) for d in store.check()]
        assert any("annotators" in f and "not text" in f for f in found), found
        assert any("annotators" in f and "control character" in f for f in found), found
        assert any("blame" in f for f in found), found
        assert any("unknown check" in f for f in found), found
        assert any("not a date and time" in f for f in found), found
        # and the readers skip them instead of failing
        assert all(isinstance(a.name, str) for a in list_annotators(store))


def test_a_pack_never_replaces_a_file_it_did_not_make_without_force(
    report_session: ReportSession, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    with SessionStore.open(report_session.path) as store:
        request = PackRequest(annotator="eve", out=notes, units=(report_session.units["u1"],))
        with pytest.raises(OutputRefusedError, match="--force"):
            make_pack(store, request)
        assert notes.read_text(encoding="utf-8") == "my notes\n"
        make_pack(store, PackRequest(**{**request.__dict__, "force": True}))
    assert notes.read_bytes().startswith(b"SQLite format 3")


@pytest.mark.parametrize(
    ("sql", "found"),
    [
        (
            "UPDATE verbalisations SET text = CAST(X'41eda08042' AS TEXT) "
            "WHERE id = (SELECT min(id) FROM verbalisations);",
            "text is not UTF-8 text",
        ),
        (
            'UPDATE model_runs SET parameters = \'{"a": "\\ud800"}\' '
            "WHERE id = (SELECT min(id) FROM model_runs);",
            "parameters holds a lone surrogate escape",
        ),
    ],
)
def test_text_no_writer_can_write_is_found_by_check_and_skipped_by_export(
    report_session: ReportSession, tmp_path: Path, sql: str, found: str
) -> None:
    from core.formats.texts_table import export_texts

    session = _edited(report_session.path, tmp_path, sql, "surrogate.taillens")
    with SessionStore.open(session) as store:
        assert any(found in str(d) for d in store.check())
        export_texts(store, tmp_path / "texts.csv")
    (tmp_path / "texts.csv").read_text(encoding="utf-8")


def test_a_pack_of_many_texts_is_merged_though_its_description_is_long(
    report_session: ReportSession, tmp_path: Path
) -> None:
    # A pack of 20,000 texts lists 20,000 [kind, id, digest] items in its description:
    # about 1.6 MB in one value (a limit of 1 MB refused it), and still a pack TailLens
    # made. The ids added here are of texts the session does not have.
    pack = _rated_pack(report_session, tmp_path)
    with closing(sqlite3.connect(pack)) as conn:
        manifest = json.loads(
            conn.execute(
                "SELECT value FROM session_meta WHERE key = ?", (MANIFEST_KEY,)
            ).fetchone()[0]
        )
        manifest["items"] += [["v", 10_000_000 + n, "0" * 64] for n in range(20_000)]
        text = json.dumps(manifest)
        assert 1_000_000 < len(text) < PACK_VALUE_BYTES
        conn.execute("UPDATE session_meta SET value = ? WHERE key = ?", (text, MANIFEST_KEY))
        conn.commit()
    with SessionStore.open(report_session.path) as store:
        report = merge_pack(store, pack)
    assert report.added > 0 and not report.refused
