"""Structured text and lock files from outside, read within bounds: every refusal is one
line naming the file, never a traceback, a hang or memory without end."""

from __future__ import annotations

import json
import os
import random
import struct
from pathlib import Path

import pytest

from core.errors import UserFacingError
from core.io import bounded, files

HOSTILE_JSON = {
    "deep": "[" * 100_000 + "]" * 100_000,
    "deep_object": '{"a":' * 50_000 + "1" + "}" * 50_000,
    "huge_float": '{"score": 1e400}',
    "long_int": '{"score": ' + "7" * 5000 + "}",
    "long_float": '{"score": 0.' + "1" * 5000 + "}",
    "nan": '{"score": NaN}',
    "minus_infinity": "[-Infinity]",
    "surrogate": '{"text": "a\\ud800b"}',
    "surrogate_key": '{"\\udfff": 1}',
    "not_json": "{'single': 'quotes'}",
    "bom_then_garbage": "\ufeff\x00\x01",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_JSON))
def test_hostile_json_is_one_line_naming_the_file(name: str) -> None:
    with pytest.raises(bounded.BoundedTextError) as caught:
        bounded.loads_json(HOSTILE_JSON[name], name="x.json", what="the file")
    text = str(caught.value)
    assert text.startswith("Cannot read the file x.json: ") and "\n" not in text


def test_json_within_the_bounds_reads_as_usual() -> None:
    assert bounded.loads_json('{"a": [1, 2.5, "é", null, true]}', name="x") == {
        "a": [1, 2.5, "é", None, True]
    }


@pytest.mark.parametrize("name", sorted(HOSTILE_JSON))
def test_a_judgments_file_with_hostile_json_is_a_judgment_error(tmp_path: Path, name: str) -> None:
    from core.formats.webnlg.human_eval import JudgmentError, read_judgment_file

    path = tmp_path / "primary.json"
    path.write_text(HOSTILE_JSON[name], encoding="utf-8", errors="surrogatepass")
    with pytest.raises(JudgmentError) as caught:
        read_judgment_file(path)
    assert "primary.json" in str(caught.value) and "\n" not in str(caught.value)


def test_a_judgments_file_over_its_limit_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.formats.webnlg.human_eval import JudgmentError, read_judgment_file

    monkeypatch.setattr(files, "JUDGMENTS_LIMIT", 1000)
    path = tmp_path / "big.json"
    path.write_text("[" + ",".join(["1"] * 2000) + "]", encoding="utf-8")
    with pytest.raises(JudgmentError, match="too large"):
        read_judgment_file(path)


def _alias_bomb(levels: int = 9) -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    previous = "a"
    for n in range(levels - 1):
        name = f"l{n}"
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "text",
    [
        _alias_bomb(),
        "a: " + "9" * 5000 + "\n",
        "a: 2024-13-45\n",
        "- " * 500 + "x\n",
        "a: !!python/object/apply:os.system ['echo hi']\n",
        "a: [\n",
        "&x [*x]\n",
    ],
)
def test_hostile_yaml_is_one_line(text: str) -> None:
    with pytest.raises(bounded.BoundedTextError) as caught:
        bounded.loads_yaml(text, name="README.md", what="the model card")
    assert "\n" not in str(caught.value)


def test_a_model_card_alias_bomb_lists_the_model_without_its_card(tmp_path: Path) -> None:
    from core.local_models import installed

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}), encoding="utf-8")
    card = "---\n" + _alias_bomb(7) + "language: [en]\n---\n# x\n"
    (folder / "README.md").write_text(card, encoding="utf-8")
    # The card stands for millions of values: it is refused whole (its language too),
    # while the model is still listed from its config.
    (model,) = installed.list_models([tmp_path])
    assert model.languages == () and model.kind in installed.KINDS


@pytest.mark.parametrize(
    "config",
    ["[" * 100_000 + "]" * 100_000, '{"num_hidden_layers": 1e400}', '{"x": "\\ud800"}'],
)
def test_a_model_config_out_of_bounds_is_a_model_error(tmp_path: Path, config: str) -> None:
    from core.local_models.loader import ModelError, read_config

    (tmp_path / "config.json").write_text(config, encoding="utf-8")
    with pytest.raises(ModelError):
        read_config(tmp_path)


def test_a_safetensors_header_out_of_bounds_is_a_damaged_header(tmp_path: Path) -> None:
    from core.local_models.loader import ModelError, _safetensors_header
    from core.local_models.placement import parameter_count

    header = ("[" * 50_000 + "]" * 50_000).encode()
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 16)
    assert parameter_count(tmp_path) is None
    with pytest.raises(ModelError, match="damaged header"):
        _safetensors_header(path)


@pytest.mark.parametrize(
    "text",
    [
        "Rome\tRoma\rit\n",
        "Rome\tRo\rma\n",
        '"Rome\tRoma\n',
        "Rome\tRoma\x00\n",
        "Rome\t" + "x" * 200_000 + "\n",
        "Rome\rRoma\r\rParis\tParigi\r",
    ],
)
def test_a_synonym_table_with_bare_carriage_returns_or_bad_fields_is_one_line(
    tmp_path: Path, text: str
) -> None:
    from core.metrics.esa.synonyms import SynonymError, read_file

    path = tmp_path / "synonyms.tsv"
    path.write_bytes(text.encode("utf-8"))
    try:
        rows = read_file(path)
    except SynonymError as error:
        assert "synonyms.tsv" in str(error) and "\n" not in str(error)
    else:
        assert all("\r" not in r.synonym and "\r" not in r.entity for r in rows)


@pytest.mark.parametrize("size", ["99999999999999999999", "-1", "1e3", "0x10", "٣", " 2 "])
def test_an_xml_size_attribute_that_is_no_count_of_triples_rejects_its_entry(
    tmp_path: Path, size: str
) -> None:
    from core.formats import import_webnlg
    from core.store import SessionStore
    from tests.fixtures.webnlg_xml import HEAD, TAIL, entry, write

    with SessionStore.create(tmp_path / "s.taillens") as store:
        path = write(tmp_path, "sizes.xml", HEAD + entry("A1") + entry("B1", size=size) + TAIL)
        report = import_webnlg(store, path)
    if size == " 2 ":
        return  # an integer with spaces around it is still one (the entry has 1 triple)
    assert report.units == 1, report.summary_line()
    assert any("size" in e.reason for e in report.errors)


# -- lock files ---------------------------------------------------------------------------


def _hostile_locks(lock: Path) -> dict[str, object]:
    return {
        "fifo": lambda: os.mkfifo(lock),
        "dev_zero": lambda: lock.symlink_to("/dev/zero"),
        "link_to_file": lambda: lock.symlink_to(lock.with_name("elsewhere.json")),
        "folder": lambda: lock.mkdir(),
        "huge_pid": lambda: lock.write_text(
            json.dumps({"pid": 2**70, "host": "h", "user": "u", "since": "s"})
        ),
        "bool_pid": lambda: lock.write_text(
            json.dumps({"pid": True, "host": "h", "user": "u", "since": "s"})
        ),
        "deep": lambda: lock.write_text("[" * 100_000 + "]" * 100_000),
        "big": lambda: lock.write_bytes(b" " * (files.LOCK_LIMIT + 10) + b"{}"),
        "list_host": lambda: lock.write_text(
            json.dumps({"pid": 1, "host": ["h"], "user": "u", "since": "s"})
        ),
    }


@pytest.mark.parametrize("kind", sorted(_hostile_locks(Path("x"))))
def test_a_session_lock_that_is_not_a_lock_is_taken_over_without_waiting(
    tmp_path: Path, kind: str
) -> None:
    from core.io.session_lock import SessionLock, lock_path, read_holder, read_holder_at

    session = tmp_path / "s.taillens"
    session.write_bytes(b"")
    lock = lock_path(session)
    (tmp_path / "elsewhere.json").write_text(
        json.dumps({"pid": 1, "host": "other", "user": "u", "since": "s"})
    )
    _hostile_locks(lock)[kind]()  # type: ignore[operator]
    assert read_holder(session) is None and read_holder_at(lock) is None
    if kind == "folder":
        return  # a folder is not removed: the session opens without a lock file
    held = SessionLock.acquire(session)
    try:
        assert held.owned and not lock.is_symlink() and lock.is_file()
        holder = read_holder(session)
        assert holder is not None and holder.is_this_process()
    finally:
        held.release()
    assert Path("/dev/zero").exists() and (tmp_path / "elsewhere.json").is_file()


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "link_to_file"])
def test_a_folder_lock_that_is_not_a_regular_file_is_one_line(tmp_path: Path, kind: str) -> None:
    from core.io.folder_lock import LOCK_NAME, FolderBusy, FolderLock

    lock = tmp_path / LOCK_NAME
    (tmp_path / "elsewhere.json").write_text("{}")
    _hostile_locks(lock)[kind]()  # type: ignore[operator]
    with pytest.raises(FolderBusy, match="cannot be used"), FolderLock(tmp_path, "training"):
        pass
    assert (tmp_path / "elsewhere.json").read_text() == "{}"


def test_every_refusal_is_a_user_facing_error() -> None:
    assert issubclass(bounded.BoundedTextError, UserFacingError)


def _random_json(rng: random.Random, depth: int) -> object:
    """A random JSON value with the edges the bounds care about: nesting, brackets and
    escapes inside strings, surrogate escapes (paired and lone), long strings."""
    kind = rng.randrange(8 if depth < 6 else 4)
    if kind == 0:
        return rng.choice([0, -7, 1.5, 2e300, True, False, None])
    if kind == 1:
        pieces = ["a", "[", "{", "]", "}", '"', "\\", "\\u", "é", "\ud83d\ude00", "x" * 9]
        return "".join(rng.choice(pieces) for _ in range(rng.randrange(6)))
    if kind == 2:
        return "\\ud" + rng.choice(["800", "c00", "7ff"])  # text, not an escape
    if kind == 3:
        return rng.randrange(10**6)
    if kind in (4, 5):
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {
        str(_random_json(rng, depth + 1))[:8]: _random_json(rng, depth + 1)
        for _ in range(rng.randrange(4))
    }


def test_the_fast_screen_never_passes_json_the_walk_would_refuse() -> None:
    """loads_json skips the walk over the parsed value where the text alone shows the
    bounds hold: over random JSON (nested, brackets and escapes in strings, lone surrogate
    escapes spliced in) and tight bounds, every text the screen passes is one the walk
    passes, so loads_json says exactly what the walk would, and the screen passes most
    texts the walk passes within the default bounds (else it would save nothing)."""
    rng = random.Random(7)
    tight = [
        bounded.Limits(depth=d, string_chars=s, nodes=n)
        for d in (1, 2, 3, 5)
        for s in (4, 40, 10**6)
        for n in (5, 30, 10**6)
    ]
    passed = walked_fine = 0
    for i in range(1500):
        text = json.dumps(_random_json(rng, 0), ensure_ascii=i % 2 == 0)
        if i % 5 == 0:  # a lone surrogate escape at the start of the first string
            text = text.replace('"', '"\\ud800', 1)
        value = json.loads(text)
        for limits in tight + [bounded.DEFAULT]:
            walk = bounded.check_value(value, limits)
            screen = bounded._surely_within(text, limits)
            assert not (screen and walk is not None), (text, limits, walk)
            if limits is bounded.DEFAULT:
                walked_fine += walk is None
                passed += screen
            try:
                bounded.loads_json(text, name="t", limits=limits)
                said = None
            except bounded.BoundedTextError as error:
                said = str(error)
            assert said == (None if walk is None else f"Cannot read t: {walk}")
    # Paired surrogate escapes (an emoji written ASCII-only) are walked: about a third here.
    assert passed > walked_fine * 0.6


def test_the_fast_screen_counts_depth_outside_strings_only() -> None:
    limits = bounded.Limits(depth=2)
    assert bounded._surely_within('[["[[[[", "{{{{"], {"]": "\\"[[["}]', limits)
    assert not bounded._surely_within("[[[1]]]", limits)
    assert bounded.check_value(json.loads("[[[1]]]"), limits) is not None
    assert not bounded._surely_within('["\\ud800"]', bounded.DEFAULT)
    assert bounded._surely_within('["\\ud800"]', bounded.REPLY)


def test_a_short_text_parsed_without_number_hooks_reads_as_with_them() -> None:
    """A text no longer than a number may be needs no hook against long numbers, and one
    without an exponent none against infinite floats: over random short arrays of
    numbers (exponents up to e400, NaN, long mantissas), loads_json gives what the parser
    with every hook gives, value or refusal."""
    rng = random.Random(12)
    hooked = bounded._number_hooks(bounded.DEFAULT)  # every hook, whatever the text
    cases = 0
    for _ in range(3000):
        numbers = []
        for _ in range(rng.randrange(1, 5)):
            number = rng.choice(["", "-"]) + str(rng.randrange(10 ** rng.randrange(1, 40)))
            if rng.random() < 0.4:
                number += "." + str(rng.randrange(10**6))
            if rng.random() < 0.3:
                number += (
                    rng.choice("eE")
                    + rng.choice(["", "-", "+"])
                    + str(rng.choice([2, 30, 308, 309, 400]))
                )
            numbers.append(rng.choice([number, number, "NaN", "Infinity"]))
        text = "[" + ", ".join(numbers) + "]"
        try:
            expected: object = json.loads(text, **hooked)
        except bounded._Refused as refusal:
            expected = f"Cannot read t: {refusal}"
        try:
            got: object = bounded.loads_json(text, name="t")
        except bounded.BoundedTextError as error:
            got = str(error)
        assert got == expected, text
        cases += len(text) <= bounded.DEFAULT.number_chars and "e" not in text.lower()
    assert cases > 500  # the path without hooks was taken
    assert set(bounded._number_hooks(bounded.DEFAULT, "[31, 39, 2.5]")) == {"parse_constant"}
