"""The ESA synonym table: rows checked, stored in the session, seeded, imported whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.metrics.esa import synonyms
from core.metrics.esa.synonyms import SynonymError
from core.store import SessionStore


@pytest.fixture
def store(tmp_path: Path):
    with SessionStore.create(tmp_path / "s.taillens") as store:
        yield store


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("\tSpanish\n", "line 1: the row names no entity"),
        ("Spain\t\n", "line 1: the row for entity 'Spain' gives no synonym"),
        ("Spain\tspain\n", "is the entity's own name"),
        ("Spain\tSpanish\tSpanish\n", "'spanish' is not a language code"),
        ("# comment\nSpain Spanish\n", "line 2: expected entity and synonym separated by a tab"),
        ("Spain\tSpanish\ten\textra\n", "found 4 fields"),
    ],
)
def test_bad_rows_are_named_with_their_line(text: str, message: str) -> None:
    with pytest.raises(SynonymError) as error:
        synonyms.parse_rows(text, name="rows.tsv")
    assert message in str(error.value) and str(error.value).startswith("rows.tsv, line ")


def test_rows_comments_and_blank_lines() -> None:
    rows = synonyms.parse_rows("# countries\n\nSpain\tSpanish\nTexas\tTX\ten\n")
    assert [r.key() for r in rows] == [("Spain", "Spanish", ""), ("Texas", "TX", "en")]


def test_starter_set_has_the_frequent_patterns() -> None:
    rows = set(synonyms.starter_rows())
    for row in [
        ("Spain", "Spanish", "en"),
        ("Texas", "TX", "en"),
        ("United States", "U.S.", "en"),
        ("United States", "American", "en"),
        ("English language", "English", "en"),
        ("metres", "meters", "en"),
    ]:
        assert row in rows


def test_add_list_remove(store: SessionStore) -> None:
    assert synonyms.add_synonym(store, "Spain", "Spanish") is True
    assert synonyms.add_synonym(store, "Spain", "Spanish") is False  # already there
    assert synonyms.add_synonym(store, "Spain", "spagnolo", "it") is True
    assert [(r.entity, r.synonym, r.lang, r.source) for r in synonyms.list_synonyms(store)] == [
        ("Spain", "Spanish", "", "user"),
        ("Spain", "spagnolo", "it", "user"),
    ]
    assert synonyms.remove_synonym(store, "Spain", "Spanish") == 1
    with pytest.raises(SynonymError, match="no synonym 'Spanish' of 'Spain'"):
        synonyms.remove_synonym(store, "Spain", "Spanish")
    with pytest.raises(SynonymError, match="names no entity"):
        synonyms.add_synonym(store, "  ", "Spanish")
    assert synonyms.synonym_rows(store) == [("Spain", "spagnolo", "it")]


def test_seed_twice_adds_once(store: SessionStore) -> None:
    total, added = synonyms.seed(store)
    assert total == added > 200
    assert synonyms.seed(store) == (total, 0)
    assert {r.source for r in synonyms.list_synonyms(store)} == {"starter"}


def test_a_starter_row_removed_after_seeding_stays_out_of_what_esa_uses(
    store: SessionStore,
) -> None:
    entity, synonym, lang = synonyms.starter_rows()[0]
    assert (entity, synonym, lang) in synonyms.effective_rows(store)  # never seeded
    synonyms.seed(store)
    assert synonyms.ensure_seeded(store) == 0
    synonyms.remove_synonym(store, entity, synonym, lang)
    assert (entity, synonym, lang) not in synonyms.effective_rows(store)


def test_a_file_with_one_bad_row_stores_nothing(store: SessionStore, tmp_path: Path) -> None:
    good = tmp_path / "good.csv"
    good.write_text("Spain,Spanish\nTexas,TX,en\n", encoding="utf-8")
    assert synonyms.import_file(store, good) == (2, 2)
    bad = tmp_path / "bad.tsv"
    bad.write_text("Italy\tItalian\n\tGerman\n", encoding="utf-8")
    with pytest.raises(SynonymError, match=r"bad.tsv, line 2: the row names no entity"):
        synonyms.import_file(store, bad)
    assert len(synonyms.list_synonyms(store)) == 2  # Italy/Italian was not stored
    with pytest.raises(SynonymError, match="no such file"):
        synonyms.import_file(store, tmp_path / "missing.tsv")
    binary = tmp_path / "binary.tsv"
    binary.write_bytes(b"Spain\t\xff\xfe\n")
    with pytest.raises(SynonymError, match="not UTF-8"):
        synonyms.import_file(store, binary)


def test_a_session_is_seeded_once(store: SessionStore) -> None:
    synonyms.add_synonym(store, "Rome", "the Eternal City")
    assert set(synonyms.effective_rows(store)) == {
        ("Rome", "the Eternal City", ""),
        *synonyms.starter_rows(),
    }
    assert len(synonyms.list_synonyms(store)) == 1  # reading wrote nothing
    added = synonyms.ensure_seeded(store)
    assert added == len(synonyms.starter_rows())
    synonyms.remove_synonym(store, "Spain", "Spanish")
    assert synonyms.ensure_seeded(store) == 0  # a removed starter row stays removed
    assert ("Spain", "Spanish", "en") not in synonyms.synonym_rows(store)
    assert ("Spain", "Spanish", "en") not in synonyms.effective_rows(store)
