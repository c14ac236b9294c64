"""Default categories edited in a session, user-defined ones, and checked patterns."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import UserFacingError
from core.store import SessionStore
from core.wikidata.cache import fetched_count, store_members_page
from core.wikidata.categories import Category, default_categories
from core.wikidata.category_store import find_category, save_category, session_categories
from core.wikidata.records import EntityRecord, MembersPage


@pytest.fixture
def store(tmp_path: Path):
    with SessionStore.create(tmp_path / "s.taillens") as store:
        yield store


def test_defaults_without_a_session() -> None:
    assert [c.name for c in session_categories(None)] == [c.name for c in default_categories()]


def test_user_category_is_saved_and_listed_after_defaults(store: SessionStore) -> None:
    lighthouse = Category("Lighthouse", "Q39715", "P31", "?item wdt:P31 wd:Q39715 .")
    assert save_category(store, lighthouse) == 0
    names = [c.name for c in session_categories(store)]
    assert names[-1] == "Lighthouse" and len(names) == 24
    assert find_category(store, "lighthouse") == lighthouse


def test_editing_a_pattern_drops_the_old_members(store: SessionStore) -> None:
    city = find_category(store, "City")
    page = MembersPage("City", 0, (EntityRecord("Q1", "A", 3, 1),))
    store_members_page(store, city, page, "test")
    assert fetched_count(store, "City") == 1
    narrower = Category("City", "Q515", "P31", "?item wdt:P31 wd:Q515 .")
    assert save_category(store, narrower) == 1
    assert fetched_count(store, "City") == 0
    assert find_category(store, "City").pattern == "?item wdt:P31 wd:Q515 ."
    assert save_category(store, narrower) == 0  # same pattern: nothing dropped


@pytest.mark.parametrize(
    "pattern",
    [
        "?item wdt:P31 wd:Q515 . } SELECT * WHERE { ?s ?p ?o",
        "?item wdt:P31 wd:Q515 . SERVICE <http://evil/> { ?item ?p ?o }",
        "?item wdt:P31 wd:Q515 . DELETE WHERE { ?s ?p ?o }",
        "?item wdt:P31 wd:Q515 . FILTER(",
        "?item wdt:P31 wd:Q515 . } LIMIT 1 #",
    ],
)
def test_bad_patterns_are_refused_before_saving(store: SessionStore, pattern: str) -> None:
    with pytest.raises(UserFacingError):
        save_category(store, Category("Bad", "Q515", "P31", pattern))
    assert "Bad" not in [c.name for c in session_categories(store)]


def test_unknown_name_is_explained(store: SessionStore) -> None:
    with pytest.raises(UserFacingError, match="known categories"):
        find_category(store, "Nope")


def test_a_trailing_comment_cannot_swallow_the_query(store: SessionStore) -> None:
    commented = Category("Commented", "Q515", "P31", "?item wdt:P31 wd:Q515 . # } LIMIT 1")
    assert save_category(store, commented) == 0  # the comment ends at its line


def test_a_session_file_is_described_with_its_categories(tmp_path: Path) -> None:
    from core.wikidata.cache import describe_session_file

    path = tmp_path / "d.taillens"
    with SessionStore.create(path) as store:
        assert describe_session_file(path)["categories"] == []  # none fetched yet
        page = MembersPage(
            "City", 0, (EntityRecord("Q1", "A", 3, 1), EntityRecord("Q2", "B", 1, 0))
        )
        store_members_page(store, find_category(store, "City"), page, "test")
        info = describe_session_file(path)
    assert info["path"] == str(path.resolve()) and info["tables"]["category_members"] == 2
    [city] = info["categories"] or []
    assert city["name"] == "City" and city["members"] == 2


def test_the_category_last_viewed_else_one_with_members_is_shown_first(
    store: SessionStore,
) -> None:
    from core.wikidata.category_store import category_to_show, remember_category

    names = [c.name for c in session_categories(store)]
    assert category_to_show(store, names) == names[0]  # nothing viewed, nothing fetched
    page = MembersPage("River", 0, (EntityRecord("Q1", "A", 3, 1),))
    store_members_page(store, find_category(store, "River"), page, "test")
    assert category_to_show(store, names) == "River"
    remember_category(store, "City")
    assert category_to_show(store, names) == "City"
    assert category_to_show(store, [n for n in names if n != "City"]) == "River"  # gone
