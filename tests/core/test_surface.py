"""One surface-form rule for knowledge-graph identifiers (METHODS §7)."""

from __future__ import annotations

import pytest

from core.surface import predicate_words, surface, surface_triple, variants


@pytest.mark.parametrize(
    ("identifier", "text"),
    [
        ("Abilene,_Texas", "Abilene, Texas"),
        ("St._Louis,_Missouri", "St. Louis, Missouri"),
        ("Squeeze_(The_Velvet_Underground_album)", "Squeeze (The Velvet Underground album)"),
        ("Bootleg_Series_Volume_1:_The_Quine_Tapes", "Bootleg Series Volume 1: The Quine Tapes"),
        ("\"''Alvinegro\"@en", "Alvinegro"),
        ('"x"@en', "x"),
        ('"230.05"^^xsd:double', "230.05"),
        ('"5.5"^^<http://dbpedia.org/datatype/squareKilometre>', "5.5"),
        ('"1923-11-18"', "1923-11-18"),
        ("230.05", "230.05"),
        ("  Rome  ", "Rome"),
    ],
)
def test_identifiers_become_text(identifier: str, text: str) -> None:
    assert surface(identifier) == text


@pytest.mark.parametrize(
    "label",
    [
        "Abilene",
        "New York City",
        "place of birth",
        "O'Brien",
        "Città di Castello",
        "1,000",
        "AC/DC",
        "the my_var flag",
    ],
)
def test_wikidata_labels_pass_unchanged(label: str) -> None:
    assert surface(label) == label
    assert variants(label)[0] == label


@pytest.mark.parametrize(
    ("identifier", "expected"),
    [
        (
            "Squeeze_(The_Velvet_Underground_album)",
            ("Squeeze (The Velvet Underground album)", "Squeeze"),
        ),
        ("Abilene,_Texas", ("Abilene, Texas", "Abilene")),
        ("St._Louis,_Missouri", ("St. Louis, Missouri", "St. Louis")),
        ("Ardmore_Airport_(New_Zealand)", ("Ardmore Airport (New Zealand)", "Ardmore Airport")),
        ("1,000", ("1,000",)),
        ("Texas", ("Texas",)),
        ("", ()),
    ],
)
def test_qualifier_is_kept_as_a_variant(identifier: str, expected: tuple[str, ...]) -> None:
    assert variants(identifier) == expected


@pytest.mark.parametrize(
    ("predicate", "words"),
    [
        ("cityServed", "city served"),
        ("ISBN_number", "ISBN number"),
        ("runwayLength", "runway length"),
        ("elevationAboveTheSeaLevel_(in_metres)", "elevation above the sea level (in metres)"),
        ("LCCN_number", "LCCN number"),
        ("country", "country"),
        ("place of birth", "place of birth"),  # a Wikidata property label: unchanged
        ("IMDb ID", "IMDb ID"),
    ],
)
def test_predicates_become_words(predicate: str, words: str) -> None:
    assert predicate_words(predicate) == words


def test_a_triple_as_text() -> None:
    assert surface_triple(("Abilene_Regional_Airport", "cityServed", "Abilene,_Texas")) == (
        "Abilene Regional Airport",
        "city served",
        "Abilene, Texas",
    )


WEBNLG = (
    ("Abilene_Regional_Airport", "cityServed", "Abilene,_Texas"),
    ("Squeeze_(The_Velvet_Underground_album)", "ISBN_number", "\"''Alvinegro\"@en"),
    ("Abilene_Regional_Airport", "runwayLength", '"2194.0"^^xsd:double'),
)


def test_surface_forms_where_labels_meet_text() -> None:
    from core.metrics.similarity import linearise
    from core.verbalise.prompts import linearise_graph, triple_lines
    from core.verbalise.template import verbalise_triples

    assert triple_lines(WEBNLG[:1]) == "[Abilene Regional Airport, city served, Abilene, Texas]"
    assert linearise_graph(WEBNLG[:1]) == (
        "<H> Abilene Regional Airport <R> city served <T> Abilene, Texas"
    )
    assert linearise(WEBNLG[1:2]) == (
        "[S] Squeeze (The Velvet Underground album) [P] ISBN number [O] Alvinegro"
    )
    text = verbalise_triples(WEBNLG, "en")
    assert text.startswith(
        "Abilene Regional Airport has Abilene, Texas as its city served and "
        "2194.0 as its runway length."
    )
    assert "_" not in text and '"' not in text and "@en" not in text
    # Wikidata labels are words already: untouched
    assert triple_lines([("Rome", "country", "Italy")]) == "[Rome, country, Italy]"
