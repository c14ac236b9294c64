"""The template verbaliser: hand-checked sentences in en, it and es."""

from __future__ import annotations

import pytest

from core.verbalise.base import GenerationParams, VerbaliseRequest
from core.verbalise.template import TemplateVerbaliser, render_object, verbalise_triples

UNIT = (
    ("Paris", "country", "France"),
    ("Paris", "mayor", "Anne Hidalgo"),
    ("Anne Hidalgo", "date of birth", "+1959-06-19T00:00:00Z"),
    ("Paris", "population", "+2102650"),
)


def test_english_aggregates_triples_sharing_a_subject() -> None:
    assert verbalise_triples(UNIT, "en") == (
        "Paris has France as its country, Anne Hidalgo as its mayor and 2102650 as its "
        "population. Anne Hidalgo has 19 June 1959 as its date of birth."
    )


def test_italian() -> None:
    triples = (("Parigi", "paese", "Francia"), ("Parigi", "sindaco", "Anne Hidalgo"))
    assert verbalise_triples(triples, "it") == (
        "Parigi ha come paese Francia e come sindaco Anne Hidalgo."
    )


def test_spanish_with_a_date_and_a_decimal() -> None:
    triples = (("río Tajo", "longitud", "+1007.50"), ("río Tajo", "fecha", "1900-05-00"))
    assert verbalise_triples(triples, "es") == (
        "Río Tajo tiene como longitud 1007,5 y como fecha mayo de 1900."
    )


def test_one_triple_is_one_sentence() -> None:
    assert verbalise_triples((("Rome", "country", "Italy"),), "en") == (
        "Rome has Italy as its country."
    )


@pytest.mark.parametrize(
    ("value", "lang", "shown"),
    [
        ("+1871-05-12T00:00:00Z", "it", "12 maggio 1871"),
        ("1871-00-00", "en", "1871"),
        ("-0044-03-15T00:00:00Z", "en", "15 March 44 BC"),
        ("+12", "en", "12"),
        ("Earth-616", "en", "Earth-616"),  # a label that looks numeric is left alone
        ("2003 UJ296", "en", "2003 UJ296"),
    ],
)
def test_raw_literals_use_the_unit_value_templates(value: str, lang: str, shown: str) -> None:
    assert render_object(value, lang) == shown


def test_verbaliser_gives_one_deterministic_candidate() -> None:
    verbaliser = TemplateVerbaliser(GenerationParams(candidates=3))
    assert verbaliser.params.candidates == 1
    request = VerbaliseRequest((1, "en"), "en", UNIT[:1], verbaliser.prompt_for(UNIT[:1], "en"))
    [[candidate]] = verbaliser.verbalise([request])
    assert candidate.parse_ok
    assert candidate.text == candidate.raw == "Paris has France as its country."
    assert verbaliser.fingerprint() == TemplateVerbaliser().fingerprint()
