"""The default category table of METHODS §2 and category validation."""

from __future__ import annotations

import re

import pytest

from core.errors import UserFacingError
from core.wikidata.categories import Category, category_by_name, default_categories


def test_default_table_matches_methods() -> None:
    categories = default_categories()
    assert len(categories) == 23
    by_name = {c.name: c for c in categories}
    assert by_name["City"].class_qid == "Q515" and by_name["City"].membership_property == "P31"
    assert by_name["Politician"].membership_property == "P106"
    assert by_name["Politician"].pattern == "?item wdt:P106/wdt:P279* wd:Q82955 ."
    occupations = {c.name for c in categories if c.membership_property == "P106"}
    assert occupations == {"Artist", "Astronaut", "Athlete", "Model", "Politician"}


def test_lookup_is_case_insensitive_and_unknown_names_are_explained() -> None:
    assert category_by_name("city").class_qid == "Q515"
    with pytest.raises(UserFacingError) as error:
        category_by_name("Cities")
    assert "no category named 'Cities'" in str(error.value)
    assert "City" in str(error.value)


@pytest.mark.parametrize(
    ("class_qid", "prop", "pattern", "message"),
    [
        ("515", "P31", "?item wdt:P31 wd:Q515 .", "not a Wikidata item id"),
        ("Q515", "31", "?item wdt:P31 wd:Q515 .", "not a property id"),
        ("Q515", "P31", "?x wdt:P31 wd:Q515 .", "must bind ?item"),
        ("Q5'}", "P31", "?item wdt:P31 wd:Q515 .", "not a Wikidata item id"),
    ],
)
def test_invalid_categories_are_refused(
    class_qid: str, prop: str, pattern: str, message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Category("Mine", class_qid, prop, pattern)
