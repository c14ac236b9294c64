"""A seeded mutation fuzzer over every reader of files from outside.

Each reader starts from a valid sample (built here, so no download is needed) and reads
mutated copies of it: bytes flipped, inserted, deleted, duplicated, cut, and hostile
pieces spliced in (deep brackets, 1e400, 5,000 digits, lone surrogates, bare CR, NUL,
YAML anchors and aliases, XML entities, terminal escapes). Annotation packs are mutated
as another program would edit them (values of any type in any column, views, triggers,
dropped columns, the manifest's JSON mutated). Every case is one of

* **ok**: read (and, for an import, stored);
* **refused**: a ``UserFacingError`` (one message for the user);
* **traceback**: any other exception (a bug: the case is kept to reproduce it);
* **hang**: no answer within the per-case limit (SIGALRM; main thread only).

For readers that write to a session, a refused case must leave the session as it was:
its rows are hashed before and after (``changed`` counts those that differ).

The cases depend only on the seed: ``run(reader, cases, seed)`` twice gives the same
cases. Used by ``tests/test_fuzz_readers.py`` (a few hundred cases per reader) and
``benchmarks/fuzz_readers.py`` (10,000 and more).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import tempfile
import traceback
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import UserFacingError

TOKENS: tuple[bytes, ...] = (
    b"[" * 3000,
    b"{" * 3000,
    b'{"a":' * 2000,
    b"1e400",
    b"-1e400",
    b"9" * 5000,
    b"99999999999999999999",
    b"-9223372036854775809",
    b"NaN",
    b"Infinity",
    b"\\ud800",
    b"\\udfff\\ud800",
    b"\xed\xa0\x80",
    b"\xff\xfe",
    b"\xc3",
    b"\r",
    b"\r\r\n",
    b"\x00",
    b"\t",
    b"\n",
    b'"',
    b"'",
    b",",
    b"\x1b[2J",
    b"\x07",
    b"&a [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
    b"*a",
    b"!!python/object/apply:os.system ['true']",
    b"---\n",
    b'<!DOCTYPE b [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>',
    b"&b;",
    b'<!ENTITY x SYSTEM "file:///etc/passwd">&x;',
    b"<entry>",
    b"</entry>",
    b"<a>" * 500,
    b'size="99999999999999999999"',
    b"<![CDATA[",
    b"{triples}",
    b"{{triples}}",
    b"../../x",
    b"/etc/passwd",
    b"\xef\xbb\xbf",
    b" " * 1000,
    b"x" * 70000,
)


def mutate(data: bytes, rng: random.Random) -> bytes:
    """``data`` changed in one to four random ways."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        position = rng.randint(0, len(out))
        op = rng.randrange(8)
        if op == 0 and out:  # flip a bit
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        elif op in (1, 2):  # splice in a hostile piece
            out[position:position] = rng.choice(TOKENS)
        elif op == 3 and out:  # delete a span
            end = min(len(out), position + rng.randint(1, 64))
            del out[position:end]
        elif op == 4 and out:  # duplicate a span
            start = rng.randrange(len(out))
            piece = out[start : start + rng.randint(1, 256)]
            out[position:position] = piece * rng.randint(1, 8)
        elif op == 5:  # cut the end
            del out[position:]
        elif op == 6:  # random bytes
            out[position:position] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif out:  # replace a span with a hostile piece
            end = min(len(out), position + rng.randint(1, 16))
            out[position:end] = rng.choice(TOKENS)
    return bytes(out)


# -- outcomes ------------------------------------------------------------------------------


class Hang(BaseException):
    """A case that did not finish within its time."""


@contextlib.contextmanager
def _limit(seconds: float) -> Iterator[None]:
    def fire(_signum: int, _frame: Any) -> None:
        raise Hang()

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Tally:
    reader: str
    cases: int = 0
    ok: int = 0
    refused: int = 0
    tracebacks: list[tuple[int, str]] = field(default_factory=list)
    hangs: list[int] = field(default_factory=list)
    changed: list[int] = field(default_factory=list)
    multiline: list[int] = field(default_factory=list)  # refusals of more than one line

    def line(self) -> str:
        return (
            f"{self.reader:<16} {self.cases:>7,} cases: {self.ok:>6,} read, "
            f"{self.refused:>6,} refused, {len(self.tracebacks)} tracebacks, "
            f"{len(self.hangs)} hangs, {len(self.changed)} sessions changed on refusal, "
            f"{len(self.multiline)} refusals over one line"
        )


def session_digest(path: Path) -> str:
    """A hash of every row of the session at ``path`` (not its bytes: a checkpoint may
    move pages without changing a row)."""
    digest = hashlib.sha256()
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        tables = [
            str(r[0])
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        conn.text_factory = bytes
        for table in tables:
            digest.update(table.encode())
            for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid'):
                digest.update(repr(row).encode())
    return digest.hexdigest()


# -- readers -------------------------------------------------------------------------------


@dataclass
class Reader:
    """One reader of outside files: ``make`` builds what it needs in a folder and returns
    the valid sample and, for readers that write, a pristine session; ``read`` reads a
    case (a file path) into a session path (or None)."""

    name: str
    suffix: str
    make: Callable[[Path], tuple[bytes, Path | None]]
    read: Callable[[Path, Path | None], Any]
    write_case: Callable[[Path, bytes, random.Random], None] | None = None
    # What the app shows the user as a refusal besides a UserFacingError.
    refusals: tuple[type[BaseException], ...] = ()


def _write(path: Path, data: bytes, _rng: random.Random) -> None:
    path.write_bytes(data)


def _new_session(folder: Path) -> Path:
    from core.store import SessionStore

    path = folder / "pristine.taillens"
    SessionStore.create(path).close()
    return path


WEBNLG_SAMPLE = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<benchmark>\n  <entries>\n'
    b'    <entry category="City" eid="Id1" shape="(X (X))" shape_type="NA" size="1" '
    b'qid="Q2158" type="long_tail" subtype="tail">\n'
    b"      <originaltripleset><otriple>Gubbio | country | Italy</otriple></originaltripleset>\n"
    b"      <modifiedtripleset><mtriple>Gubbio | country | Italy</mtriple></modifiedtripleset>\n"
    b'      <lex quality="gold" lid="Id1" lang="en">Gubbio is in Italy.</lex>\n'
    b'      <lex quality="gold" lid="Id2" lang="it">Gubbio &#232; in Italia.</lex>\n'
    b"    </entry>\n"
    b'    <entry category="City" eid="Id2" shape="(X (X) (X))" shape_type="sibling" size="2">\n'
    b"      <modifiedtripleset><mtriple>Rome | country | Italy</mtriple>"
    b"<mtriple>Rome | population | 2800000</mtriple></modifiedtripleset>\n"
    b'      <lex quality="gold" lid="Id1" lang="en">Rome, in Italy, has 2.8 million people.</lex>\n'
    b"    </entry>\n  </entries>\n</benchmark>\n"
)


def _webnlg_make(folder: Path) -> tuple[bytes, Path | None]:
    return WEBNLG_SAMPLE, _new_session(folder)


def _webnlg_read(path: Path, session: Path | None) -> Any:
    from core.formats import import_webnlg
    from core.store import SessionStore

    with SessionStore.open(session) as store:  # type: ignore[arg-type]
        return import_webnlg(store, path)


def _wdv_make(folder: Path) -> tuple[bytes, Path | None]:
    from tests.core.formats.test_wdv import wdv_records

    return json.dumps(wdv_records(), indent=1).encode(), _new_session(folder)


def _wdv_read(path: Path, session: Path | None) -> Any:
    from core.formats.wdv import import_wdv
    from core.store import SessionStore

    with SessionStore.open(session) as store:  # type: ignore[arg-type]
        return import_wdv(store, path)


# As WebNLG 2020 publishes them: sample id -> rater -> criterion -> score.
JUDGMENTS_SAMPLE = json.dumps(
    {
        str(sample): {
            f"en_worker_{sample * 3 + r}": {
                "Correctness": 93 - r,
                "DataCoverage": 100,
                "Fluency": 81.5,
                "Relevance": 86,
                "TextStructure": 87,
            }
            for r in range(3)
        }
        for sample in (3, 29)
    }
).encode()


def _judgments_make(folder: Path) -> tuple[bytes, Path | None]:
    return JUDGMENTS_SAMPLE, None


def _judgments_read(path: Path, _session: Path | None) -> Any:
    from core.formats.webnlg.human_eval import read_judgment_file

    target = path.parent / "SYS" / "primary.json"
    target.parent.mkdir(exist_ok=True)
    os.replace(path, target)
    return read_judgment_file(target)


def _outputs_make(folder: Path) -> tuple[bytes, Path | None]:
    from core.formats import import_webnlg
    from core.store import SessionStore

    session = _new_session(folder)
    sample = folder / "sample.xml"
    sample.write_bytes(WEBNLG_SAMPLE)
    with SessionStore.open(session) as store:
        import_webnlg(store, sample)
    sample.unlink()
    return b"Gubbio is in Italy.\r\nRome is in Italy.\n", session


def _outputs_read(path: Path, session: Path | None) -> Any:
    from core.formats.outputs import import_outputs
    from core.store import SessionStore

    with SessionStore.open(session) as store:  # type: ignore[arg-type]
        return import_outputs(store, path, system="fuzzed")


def _synonyms_make(folder: Path) -> tuple[bytes, Path | None]:
    return b"# entity\tsynonym\tlang\nRome\tRoma\tit\nUnited States\tUSA\n", _new_session(folder)


def _synonyms_read(path: Path, session: Path | None) -> Any:
    from core import synonyms
    from core.store import SessionStore

    with SessionStore.open(session) as store:  # type: ignore[arg-type]
        return synonyms.import_file(store, path)


def _template_make(folder: Path) -> tuple[bytes, Path | None]:
    from core.verbalise.prompts import default_template

    return default_template("en").encode(), None


def _template_read(path: Path, _session: Path | None) -> Any:
    from core import files
    from core.verbalise.prompts import check_template, render_prompt

    text = files.read_text(path, limit=files.TEMPLATE_LIMIT, what="the prompt template")
    check_template(text, "en")
    return render_prompt(text, [("Gubbio", "country", "Italy")], "en")


def _lock_make(folder: Path) -> tuple[bytes, Path | None]:
    return json.dumps(
        {"pid": 1, "host": "h", "user": "u", "since": "2024-01-01 10:00"}
    ).encode(), None


def _lock_write(path: Path, data: bytes, rng: random.Random) -> None:
    roll = rng.random()
    if roll < 0.02:
        os.mkfifo(path)
    elif roll < 0.04:
        path.symlink_to("/dev/zero")
    elif roll < 0.05:
        path.mkdir()
    else:
        path.write_bytes(data)


def _lock_read(path: Path, _session: Path | None) -> Any:
    from core.session_lock import LockHolder, read_holder_at

    holder = read_holder_at(path)
    if holder is not None:
        assert isinstance(holder, LockHolder) and isinstance(holder.pid, int)
        holder.describe()
        holder.is_stale()
    return holder


CARD_SAMPLE = (
    b"---\nlanguage:\n- en\n- it\nlicense: mit\npipeline_tag: text-generation\n"
    b"tags: [a, b]\nbase: &base {x: 1}\nother: *base\n---\n# model\n"
)


def _card_make(folder: Path) -> tuple[bytes, Path | None]:
    return CARD_SAMPLE, None


def _card_read(path: Path, _session: Path | None) -> Any:
    from core import hub

    model = path.parent / "model"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")
    os.replace(path, model / "README.md")
    found = hub.list_models([path.parent])
    for m in found:
        hub.as_json([m])
    return found


# Packs: the edits another program could make, each chosen by the case's random numbers.
_PACK_VALUES: tuple[Any, ...] = (
    None,
    0,
    -1,
    7,
    2**63 - 1,
    1.5,
    1e308,
    float("inf"),
    "",
    "   ",
    "x" * 5000,
    "\x1b[2J",
    "2024-13-45",
    "yesterday",
    '{"bogus": true}',
    "[1, 2]",
    "[" * 3000,
    '{"fluent_natural": 1}',
    b"\x00\xff",
    b"\xed\xa0\x80",
    "text",
    "other",
    "combination",
)
_PACK_COLUMNS = {
    "annotators": ("name", "is_anonymous", "created_at"),
    "annotations": (
        "annotator_id",
        "verbalisation_id",
        "reference_id",
        "fluency",
        "adequacy",
        "blame",
        "blame_other",
        "checks",
        "error_taxonomy",
        "corrected_text",
        "is_golden",
        "created_at",
        "updated_at",
    ),
    "session_meta": ("value",),
}
_PACK_SCHEMA_EDITS = (
    "ALTER TABLE annotators RENAME TO kept; CREATE VIEW annotators AS "
    "WITH RECURSIVE r(id, name, is_anonymous, created_at) AS (SELECT 1, 'x', 0, NULL "
    "UNION ALL SELECT id + 1, 'x', 0, NULL FROM r) SELECT * FROM r;",
    "CREATE TRIGGER t AFTER INSERT ON annotators BEGIN DELETE FROM annotations; END;",
    "ALTER TABLE annotations DROP COLUMN blame;",
    "DROP TABLE annotation_origins;",
    "DELETE FROM alembic_version;",
    "UPDATE alembic_version SET version_num = 'zzzz';",
    "CREATE VIEW v AS SELECT 1;",
    "DELETE FROM session_meta;",
)


def _pack_make(folder: Path) -> tuple[bytes, Path | None]:
    from sqlalchemy import select

    from core.annotation import find_annotator, save_rating
    from core.annotation.packs import PackRequest, make_pack, pack_info
    from core.annotation.types import Rating
    from core.store import SessionStore
    from core.store.models import Verbalisation
    from tests.fixtures.report_session import build_report_session

    built = build_report_session(folder / "pristine.taillens")
    pack = folder / "pack.taillens"
    with SessionStore.open(built.path) as store:
        make_pack(store, PackRequest(annotator="eve", out=pack, units=(built.units["u1"],)))
    with SessionStore.open(pack) as opened:
        info = pack_info(opened)
        assert info is not None
        who = find_annotator(opened, info.annotator)
        with opened.snapshot() as db:
            ids = list(db.scalars(select(Verbalisation.id).order_by(Verbalisation.id)))
        for n, vid in enumerate(ids):
            save_rating(opened, who.id, vid, Rating(fluency=n % 6, adequacy=n % 3))
    data = pack.read_bytes()
    pack.unlink()
    return data, built.path


def _pack_write(path: Path, data: bytes, rng: random.Random) -> None:
    path.write_bytes(data)
    with closing(sqlite3.connect(path)) as conn:
        for _ in range(rng.randint(1, 3)):
            roll = rng.random()
            try:
                if roll < 0.15:
                    conn.executescript(rng.choice(_PACK_SCHEMA_EDITS))
                elif roll < 0.35:
                    (text,) = conn.execute(
                        "SELECT value FROM session_meta WHERE key = 'annotation:pack'"
                    ).fetchone() or ("{}",)
                    raw = text if isinstance(text, str) else "{}"
                    changed = mutate(raw.encode(), rng).decode("utf-8", "surrogateescape")
                    conn.execute(
                        "UPDATE session_meta SET value = ? WHERE key = 'annotation:pack'",
                        (changed.encode("utf-8", "surrogateescape"),)
                        if rng.random() < 0.1
                        else (changed.encode("utf-8", "replace").decode("utf-8"),),
                    )
                else:
                    table = rng.choice(sorted(_PACK_COLUMNS))
                    column = rng.choice(_PACK_COLUMNS[table])
                    value = rng.choice(_PACK_VALUES)
                    conn.execute(
                        f'UPDATE "{table}" SET "{column}" = ? WHERE rowid IN '
                        f'(SELECT rowid FROM "{table}" ORDER BY random() LIMIT ?)',
                        (value, rng.randint(1, 3)),
                    )
                conn.commit()
            except sqlite3.Error:
                conn.rollback()


def _pack_read(path: Path, session: Path | None) -> Any:
    from core.annotation.packs import merge_pack
    from core.store import SessionStore

    with SessionStore.open(session) as store:  # type: ignore[arg-type]
        report = merge_pack(store, path)
        report.describe()
    return report


def _prompt_error() -> tuple[type[BaseException], ...]:
    from core.verbalise.prompts import PromptError

    return (PromptError,)


READERS: dict[str, Reader] = {
    r.name: r
    for r in (
        Reader("webnlg_xml", ".xml", _webnlg_make, _webnlg_read),
        Reader("wdv_json", ".json", _wdv_make, _wdv_read),
        Reader("judgments", ".json", _judgments_make, _judgments_read),
        Reader("outputs", ".txt", _outputs_make, _outputs_read),
        Reader("synonyms", ".tsv", _synonyms_make, _synonyms_read),
        Reader("prompt_template", ".txt", _template_make, _template_read, refusals=_prompt_error()),
        Reader("lock_file", "#", _lock_make, _lock_read, _lock_write),
        Reader("model_card", ".md", _card_make, _card_read),
        Reader("pack", ".taillens", _pack_make, _pack_read, _pack_write),
    )
}


def run(
    reader: Reader,
    cases: int,
    seed: int = 0,
    *,
    timeout_s: float = 10.0,
    folder: Path | None = None,
    on_case: Callable[[int, str], None] | None = None,
) -> Tally:
    """``cases`` mutated inputs for ``reader``, case ``n`` drawn from ``Random(seed, n)``."""
    tally = Tally(reader.name)
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{reader.name}-") as scratch:
        base = Path(folder or scratch)
        sample, pristine = reader.make(base)
        session = base / "session.taillens" if pristine is not None else None
        baseline = ""
        fresh = True
        write_case = reader.write_case or _write
        for n in range(cases):
            rng = random.Random(f"{seed}:{reader.name}:{n}")
            data = mutate(sample, rng) if reader.write_case is not _pack_write else sample
            case_dir = base / f"case-{n}"
            case_dir.mkdir()
            path = case_dir / f"input{reader.suffix}"
            if session is not None and (fresh or n % 200 == 0):
                for old in base.glob("session.taillens*"):
                    old.unlink()
                shutil.copy(pristine, session)  # type: ignore[arg-type]
                baseline = session_digest(session)
                fresh = False
            outcome = "ok"
            try:
                write_case(path, data, rng)
                with _limit(timeout_s):
                    reader.read(path, session)
                tally.ok += 1
            except Hang:
                tally.hangs.append(n)
                outcome = "hang"
                fresh = True
            except (UserFacingError, *reader.refusals) as error:
                tally.refused += 1
                outcome = "refused"
                if "\n" in str(error).strip():
                    tally.multiline.append(n)
            except Exception:  # a bug: kept to reproduce
                tally.tracebacks.append((n, traceback.format_exc(limit=6)))
                outcome = "traceback"
                fresh = True
            tally.cases += 1
            if session is not None:
                after = session_digest(session)
                if outcome == "refused" and after != baseline:
                    tally.changed.append(n)
                    fresh = True
                baseline = after
            shutil.rmtree(case_dir, ignore_errors=True)
            if on_case is not None:
                on_case(n, outcome)
    return tally
