"""ESA, ESI@n and hallucination candidates on hand-worked cases (METHODS §7)."""

from __future__ import annotations

import random

import pytest

from core.metrics.base import EntityInfo, ScoringItem
from core.metrics.esa.detect import entities_of_triples, esa_of_text, synonym_index
from core.metrics.esa.hallucination import HallucinationCandidates
from core.metrics.esa.literals import find_dates
from core.metrics.esa.metric import EntityAdequacy
from core.metrics.esa.text import (
    levenshtein,
    multi_search,
    normalised_distance,
    pattern_masks,
    search_scores,
)

ADA = (
    EntityInfo("Ada Lovelace", qid="Q7259", is_root=True, aliases=("Augusta Ada King",)),
    EntityInfo("10 December 1815", value_type="time"),
    EntityInfo("mathematician"),
    EntityInfo("London"),
)


def _dp(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def test_levenshtein_matches_the_textbook_recurrence() -> None:
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3 and levenshtein("abc", "") == 3
    assert normalised_distance("roma", "rome") == 0.25
    rng = random.Random(7)
    for _ in range(2000):
        a = "".join(rng.choice("abc ") for _ in range(rng.randint(0, 70)))
        b = "".join(rng.choice("abc ") for _ in range(rng.randint(0, 70)))
        assert levenshtein(a, b) == _dp(a, b)


@pytest.mark.parametrize(
    "text",
    [
        "born 1815-12-10",
        "on 10 December 1815",
        "on December 10, 1815",
        "il 10 dicembre 1815",
        "el 10 de diciembre de 1815",
        "il 10º dicembre 1815",
        "+1815-12-10T00:00:00Z",
    ],
)
def test_dates_in_every_form_normalise_to_one(text: str) -> None:
    assert [d.key for d in find_dates(text)] == [(1815, 12, 10)]


def test_month_precision_is_not_a_day() -> None:
    assert [d.key for d in find_dates("in December 1815")] == [(1815, 12, None)]
    text = "Ada Lovelace, a mathematician, was born in December 1815."
    assert "10 December 1815" in esa_of_text(text, ADA, "en").missing


def test_esa_labels_aliases_dates_and_missing_entities() -> None:
    text = "Augusta Ada King was born on December 10, 1815 and was a mathematician."
    result = esa_of_text(text, ADA, "en")
    assert result.esa == pytest.approx(3 / 4)
    assert result.missing == ("London",)
    spans = {m.entity: (text[m.start : m.end], m.via) for m in result.mentions}
    assert spans == {
        "Ada Lovelace": ("Augusta Ada King", "alias"),
        "10 December 1815": ("December 10, 1815", "date"),
        "mathematician": ("mathematician", "label"),
    }


def test_fuzzy_threshold_is_normalised_levenshtein_0_4() -> None:
    entities = (EntityInfo("Maidarzhavyn Ganzorig", is_root=True),)
    # one edit in 21 characters: detected
    assert esa_of_text("Maidarzhavyn Gansorig flew.", entities, "en").esa == 1.0
    # "oslo" vs "olso": 2 edits / 4 = 0.5 > 0.4, missed; "roma" vs "rome": 0.25, found
    assert esa_of_text("Olso is cold.", (EntityInfo("Oslo"),), "en", pronouns=False).esa == 0.0
    assert esa_of_text("Roma is old.", (EntityInfo("Rome"),), "en", pronouns=False).esa == 1.0
    # exactly 0.4 counts: "paris" vs "parma" is 2 edits over 5
    assert esa_of_text("Parma", (EntityInfo("Paris"),), "en", pronouns=False).esa == 1.0
    # accents and case do not count as edits
    assert (
        esa_of_text("CITTÀ DI CASTELLO", (EntityInfo("Città di Castello"),), "it")
        .mentions[0]
        .distance
        == 0.0
    )


def test_pronouns_stand_for_the_root() -> None:
    entities = (EntityInfo("Ada Lovelace", is_root=True), EntityInfo("mathematician"))
    found = esa_of_text("She was a mathematician.", entities, "en")
    assert found.esa == 1.0 and found.mentions[0].via == "pronoun"
    assert (found.mentions[0].start, found.mentions[0].end) == (0, 3)
    assert esa_of_text("A mathematician.", entities, "en").missing == ("Ada Lovelace",)
    # Spanish: "él" is a pronoun, the article "el" is not
    es = (EntityInfo("Pedro Sánchez", is_root=True), EntityInfo("político"))
    assert esa_of_text("Él es político.", es, "es").esa == 1.0
    assert esa_of_text("El político.", es, "es").esa == 0.5
    # Italian
    it = (EntityInfo("Ada Lovelace", is_root=True), EntityInfo("matematica"))
    assert esa_of_text("Lei era una matematica.", it, "it").esa == 1.0


def test_repeated_entities_count_once() -> None:
    entities = (
        EntityInfo("Rome", is_root=True),
        EntityInfo("Italy"),
        EntityInfo("Italy"),
        EntityInfo("Rome"),
    )
    result = esa_of_text("Rome is in France.", entities, "en", pronouns=False)
    assert result.entities == 2 and result.esa == 0.5 and result.missing == ("Italy",)


def test_corpus_esi_and_the_three_means() -> None:
    entities = (EntityInfo("A", is_root=True), EntityInfo("Bee"), EntityInfo("Cow"))
    texts = ["A Bee Cow", "A Bee", "A", "A Bee Cow"]  # 0, 1, 2, 0 undetected
    items = [ScoringItem(t, "en", entities=entities) for t in texts]
    metric = EntityAdequacy()
    values = metric.sentence_scores(items)
    assert [v.value for v in values] == pytest.approx([1, 2 / 3, 1 / 3, 1])
    corpus = metric.corpus_score(items)
    assert corpus is not None
    assert corpus.value == pytest.approx((1 + 2 / 3 + 1 / 3 + 1) / 4)
    assert corpus.details["esi@1"] == pytest.approx(2 / 4)
    assert corpus.details["esi@2"] == pytest.approx(1 / 4)
    assert corpus.details["esa_mean_ge1"] == pytest.approx(0.5)
    assert corpus.details["esa_mean_ge2"] == pytest.approx(1 / 3)
    assert corpus.details["n"] == 4


def test_hallucination_candidates_are_unknown_names_and_numbers() -> None:
    item = ScoringItem(
        "The mathematician Ada Lovelace, born on 10 December 1815 in Paris, met Charles "
        "Babbage in 1833.",
        "en",
        entities=ADA,
        triples=(("Ada Lovelace", "date of birth", "10 December 1815"),),
    )
    value = HallucinationCandidates().sentence_scores([item])[0]
    spans = [(s["text"], item.text[s["start"] : s["end"]]) for s in value.details["spans"]]
    assert [text for text, _ in spans] == ["Paris", "Charles Babbage", "1833"]
    assert all(a == b for a, b in spans)
    assert value.value == 3.0


def test_hallucination_spans_keep_connectors_and_match_partial_names() -> None:
    entities = (
        EntityInfo("Mongolian People's Republic"),
        EntityInfo("Maidarzhavyn Ganzorig", is_root=True),
    )
    item = ScoringItem(
        "Ganzorig was a citizen of the Mongolian Republic and of the Republic of China.",
        "en",
        entities=entities,
    )
    spans = HallucinationCandidates().sentence_scores([item])[0].details["spans"]
    assert [s["text"] for s in spans] == ["Republic of China"]


def test_italian_and_spanish_sentence_starters_are_not_candidates() -> None:
    entities = (EntityInfo("Roma", is_root=True), EntityInfo("Italia"))
    item = ScoringItem(
        "Il fiume scorre a Roma. In Italia. Nel 1990 Milano.", "it", entities=entities
    )
    spans = HallucinationCandidates().sentence_scores([item])[0].details["spans"]
    assert [s["text"] for s in spans] == ["1990 Milano"]


# --- the ESA paper's rules and what TailLens adds ----------------------------------------------


def _spans(text: str, result) -> list[tuple[str, str, str]]:
    return [(m.entity, text[m.start : m.end], m.via) for m in result.mentions]


def test_dbpedia_identifiers_are_matched_by_their_surface_form() -> None:
    entities = entities_of_triples(
        [
            (
                "Bootleg_Series_Volume_1:_The_Quine_Tapes",
                "precededBy",
                "Squeeze_(The_Velvet_Underground_album)",
            ),
            ("Bootleg_Series_Volume_1:_The_Quine_Tapes", "recordLabel", "\"''Polydor\"@en"),
        ]
    )
    text = (
        "Bootleg Series Volume 1: The Quine Tapes was preceded by Squeeze and came out on Polydor."
    )
    result = esa_of_text(text, entities, "en")
    assert result.esa == 1.0
    assert {(m.entity, m.distance) for m in result.mentions} == {
        ("Bootleg Series Volume 1: The Quine Tapes", 0.0),
        ("Squeeze (The Velvet Underground album)", 0.0),
        ("Polydor", 0.0),
    }


def test_every_mention_is_found_and_overlaps_go_to_the_closest_then_longest() -> None:
    entities = entities_of_triples(
        [
            ("Abilene_Regional_Airport", "cityServed", "Abilene,_Texas"),
            ("Abilene,_Texas", "isPartOf", "Texas"),
        ]
    )
    text = "Abilene, Texas is served by Abilene Regional Airport; Abilene is in Texas."
    found = _spans(text, esa_of_text(text, entities, "en", pronouns=False))
    # "Abilene, Texas" (exact, longest) beats "Abilene" and "Texas" inside it;
    # "Abilene Regional Airport" beats the variant "Abilene" at its start.
    assert found == [
        ("Abilene, Texas", "Abilene, Texas", "label"),
        ("Abilene Regional Airport", "Abilene Regional Airport", "label"),
        ("Abilene, Texas", "Abilene", "label"),
        ("Texas", "Texas", "label"),
    ]


def test_a_lower_distance_wins_over_a_longer_span() -> None:
    entities = (EntityInfo("Alan Bean", is_root=True), EntityInfo("Alan B. Bean Jr"))
    text = "Alan Bean flew."
    found = _spans(text, esa_of_text(text, entities, "en", pronouns=False))
    assert found == [("Alan Bean", "Alan Bean", "label")]


def test_remaining_pronouns_all_go_to_the_root() -> None:
    entities = entities_of_triples(
        [("Alan_Bean", "birthPlace", "Wheeler,_Texas"), ("Alan_Bean", "occupation", "Test_pilot")]
    )
    text = "Alan Bean was born in Wheeler, Texas. He was a test pilot and his crew liked him."
    found = _spans(text, esa_of_text(text, entities, "en"))
    assert [f for f in found if f[2] == "pronoun"] == [
        ("Alan Bean", "He", "pronoun"),
        ("Alan Bean", "his", "pronoun"),
        ("Alan Bean", "him", "pronoun"),
    ]
    assert esa_of_text(text, entities, "en", pronouns=False).esa == 1.0


def test_the_root_is_the_subject_of_most_triples() -> None:
    entities = entities_of_triples([("A", "p", "B"), ("B", "p", "C"), ("B", "q", "D")])
    assert [e.label for e in entities if e.is_root] == ["B", "B", "B"]


@pytest.mark.parametrize(
    ("label", "text", "written"),
    [
        ("610.0", "It is 610 metres high.", "610 metres"),
        ('"610.0"^^xsd:double', "It is 610.00 m high.", "610.00 m"),
        ("3500", "The runway is 3,500 feet long.", "3,500 feet"),
        ("1,200", "It seats 1200 people.", "1200 people"),
        ("-6.0", "It lies -6 metres below sea level.", "-6 metres"),
    ],
)
def test_numbers_are_compared_as_numbers(label: str, text: str, written: str) -> None:
    result = esa_of_text(
        text, (EntityInfo("X", is_root=True), EntityInfo(label)), "en", pronouns=False
    )
    assert [(t, via) for _, t, via in _spans(text, result)] == [(written, "number")]


def test_a_different_number_is_not_a_mention() -> None:
    for text in ("It is 611 metres high.", "Flight 610.5 left.", "Call 1-610-555."):
        result = esa_of_text(text, (EntityInfo("610.0"),), "en", pronouns=False)
        assert result.esa == 0.0, text


@pytest.mark.parametrize(
    "text",
    [
        "18 November 1923",
        "November 18th, 1923",
        "18/11/1923",
        "1923-11-18",
        "the 18th of November 1923",
        "Nov. 18, 1923",
        "11/18/1923",
        "1923/11/18",
        "18.11.1923",
    ],
)
def test_dates_in_common_written_forms_match_a_quoted_iso_literal(text: str) -> None:
    result = esa_of_text(f"Born on {text}.", (EntityInfo('"1923-11-18"'),), "en", pronouns=False)
    assert result.esa == 1.0 and result.mentions[0].via == "date"


def test_synonyms_are_names_both_ways_and_per_language() -> None:
    table = synonym_index(
        [("Spain", "Spanish", ""), ("Texas", "TX", "en"), ("English language", "English", "")]
    )
    entities = (EntityInfo("Spain"), EntityInfo("Texas"), EntityInfo("English"))
    text = "A Spanish dish from Austin, TX, written in English language."
    result = esa_of_text(text, entities, "en", pronouns=False, synonyms=table)
    assert result.esa == 1.0
    assert {(e, t, v) for e, t, v in _spans(text, result)} == {
        ("Spain", "Spanish", "synonym"),
        ("Texas", "TX", "synonym"),
        ("English", "English language", "synonym"),
    }
    assert esa_of_text(text, entities, "it", pronouns=False, synonyms=table).missing == (
        "Texas",
    )  # TX is an English-only row
    # abbreviations are matched as written, never approximately: "TV" is not "TX"
    assert (
        esa_of_text("On TV.", (EntityInfo("Texas"),), "en", pronouns=False, synonyms=table).esa
        == 0.0
    )
    assert esa_of_text(text, entities, "en", pronouns=False).esa == pytest.approx(1 / 3)


def test_signature_names_the_synonym_table() -> None:
    plain = EntityAdequacy().signature()
    with_table = EntityAdequacy(synonyms=[("Spain", "Spanish", "")]).signature()
    assert plain["synonyms"] == "0" and with_table["synonyms"].startswith("1@")
    assert (
        EntityAdequacy(synonyms=[("Spain", "Spanish", "")])
        .sentence_scores([ScoringItem("Spanish food", "en", entities=(EntityInfo("Spain"),))])[0]
        .value
        == 1.0
    )


def test_search_scores_bound_every_ngram_from_below() -> None:
    rng = random.Random(3)
    for _ in range(300):
        pattern = "".join(rng.choice("ab c") for _ in range(rng.randint(1, 12))).strip() or "a"
        text = "".join(rng.choice("ab c") for _ in range(rng.randint(1, 40)))
        scores = search_scores(pattern, pattern_masks(pattern), text)
        for end in range(1, len(text) + 1):
            best = min(_dp(pattern, text[start:end]) for start in range(end + 1))
            assert scores[end - 1] == best


def test_one_pass_search_of_many_patterns_equals_each_alone() -> None:
    rng = random.Random(11)
    for _ in range(200):
        patterns = [
            "".join(rng.choice("ab c") for _ in range(rng.randint(1, 9))) or "a"
            for _ in range(rng.randint(1, 6))
        ]
        text = "".join(rng.choice("ab cd") for _ in range(rng.randint(1, 50)))
        at = sorted(rng.sample(range(len(text)), rng.randint(1, len(text))))
        packed = multi_search(patterns, text, at)
        for pattern, row in zip(patterns, packed, strict=True):
            alone = search_scores(pattern, pattern_masks(pattern), text)
            assert row == [alone[j] for j in at]
            assert row == [min(_dp(pattern, text[s : j + 1]) for s in range(j + 2)) for j in at]


def test_a_synonym_mention_is_no_hallucination_candidate() -> None:
    item = ScoringItem(
        "The Spanish capital has a WebNLG airport.",
        "en",
        entities=(EntityInfo("Spain", is_root=True),),
        triples=(("Madrid_Airport", "country", "Spain"),),
    )
    plain = HallucinationCandidates().sentence_scores([item])[0]
    table = HallucinationCandidates(synonyms=[("Spain", "Spanish", "")])
    assert [s["text"] for s in plain.details["spans"]] == ["Spanish", "WebNLG"]
    assert [s["text"] for s in table.sentence_scores([item])[0].details["spans"]] == ["WebNLG"]
    assert "synonyms:1@" in str(table.signature())


@pytest.mark.parametrize("metric", [EntityAdequacy, HallucinationCandidates])
def test_changing_the_synonyms_changes_the_signature(metric) -> None:
    """Both metrics' scores follow the synonym table (tests above), so their signatures
    name it: the same number of rows with another synonym is another signature."""
    spanish = metric(synonyms=[("Spain", "Spanish", "")]).signature()
    iberian = metric(synonyms=[("Spain", "Iberian", "")]).signature()
    italian = metric(synonyms=[("Spain", "Spanish", "it")]).signature()
    assert len({metric().signature(), spanish, iberian, italian}) == 4
    # A table's rows in another order, or repeated, are the same table.
    rows = [("Spain", "Spanish", ""), ("Texas", "TX", "en")]
    assert metric(synonyms=rows).signature() == metric(synonyms=rows[::-1] * 2).signature()


def test_identifiers_and_numbers_in_the_unit_are_no_hallucination_candidates() -> None:
    item = ScoringItem(
        "Abilene Regional Airport serves Abilene; its runway is 2,194 feet.",
        "en",
        entities=entities_of_triples(
            [
                ("Abilene_Regional_Airport", "cityServed", "Abilene,_Texas"),
                ("Abilene_Regional_Airport", "runwayLength", '"2194.0"^^xsd:double'),
            ]
        ),
        triples=(
            ("Abilene_Regional_Airport", "cityServed", "Abilene,_Texas"),
            ("Abilene_Regional_Airport", "runwayLength", '"2194.0"^^xsd:double'),
        ),
    )
    assert HallucinationCandidates().sentence_scores([item])[0].value == 0.0
    other = ScoringItem(
        "Abilene Regional Airport has 2,195 feet.",
        "en",
        entities=item.entities,
        triples=item.triples,
    )
    assert [
        s["text"] for s in HallucinationCandidates().sentence_scores([other])[0].details["spans"]
    ] == ["2,195"]


def test_a_mention_spans_its_article_possessive_and_unit_only_where_they_are() -> None:
    entities = (EntityInfo("Aarhus Airport", is_root=True), EntityInfo("2702.0"))
    text = "The Aarhus Airport's runway is 2702 metres; 2702 in all."
    found = [t for _, t, _ in _spans(text, esa_of_text(text, entities, "en"))]
    assert found == ["The Aarhus Airport's", "2702 metres", "2702"]
    bare = esa_of_text(text, entities, "en", noun_phrases=False)
    assert [t for _, t, _ in _spans(text, bare)] == ["Aarhus Airport", "2702", "2702"]
    # "soothe" ends in "the" but is no article
    assert (
        _spans("Soothe Aarhus Airport.", esa_of_text("Soothe Aarhus Airport.", entities[:1], "en"))[
            0
        ][1]
        == "Aarhus Airport"
    )


@pytest.mark.parametrize(
    ("lang", "text", "written"),
    [
        ("it", "La pista è lunga 3.500 metri.", "3.500"),
        ("es", "La pista mide 3.500,0 metros.", "3.500,0"),
        ("it", "La pista è lunga 3500.0 metri.", "3500.0"),  # written the English way
        ("en", "The runway is 3,500 feet long.", "3,500"),
    ],
)
def test_numbers_in_decimal_comma_languages(lang: str, text: str, written: str) -> None:
    result = esa_of_text(text, (EntityInfo("3500.0"),), lang, pronouns=False, noun_phrases=False)
    assert [t for _, t, _ in _spans(text, result)] == [written]
    # 3.500 in an English text is three and a half
    assert esa_of_text("It is 3.500 km.", (EntityInfo("3500.0"),), "en", pronouns=False).esa == 0.0
    assert esa_of_text("It is 3.500 km.", (EntityInfo("3.5"),), "en", pronouns=False).esa == 1.0


# --- ESA v3: what the enriched WebNLG dev set showed ESA v2 missing ------------------------


def test_an_entity_named_inside_a_longer_entitys_span_is_found() -> None:
    # WebNLG's Acharya Institute of Technology: the address contains the city.
    triples = [
        (
            "Acharya_Institute_of_Technology",
            "address",
            '"In Soldevanahalli, Acharya Dr. Sarvapalli Radhakrishnan Road, Hessarghatta Main '
            'Road, Bangalore – 560090."@en',
        ),
        ("Acharya_Institute_of_Technology", "city", "Bangalore"),
    ]
    text = (
        "The Acharya Institute of Technology is at In Soldevanahalli, Acharya Dr. Sarvapalli "
        "Radhakrishnan Road, Hessarghatta Main Road, Bangalore – 560090."
    )
    entities = entities_of_triples(triples)
    before = esa_of_text(text, entities, "en", second_chance=False)
    assert before.missing == ("Bangalore",)
    after = esa_of_text(text, entities, "en")
    assert after.missing == () and after.esa == 1.0
    nested = next(m for m in after.mentions if m.entity == "Bangalore")
    assert text[nested.start : nested.end] == "Bangalore"
    # Only exactly as written: an approximate name inside another's is no mention.
    journal = entities_of_triples([("Acta_Mathematica_Hungarica", "discipline", "Mathematics")])
    result = esa_of_text("The Acta Mathematica Hungarica is a journal.", journal, "en")
    assert result.missing == ("Mathematics",)


def test_words_naming_two_entities_go_to_the_one_found_nowhere_else() -> None:
    from core.metrics.esa.synonyms import starter_rows

    synonyms = synonym_index(starter_rows())
    triples = [("Arròs_negre", "country", "Spain"), ("Spain", "language", "Spanish_language")]
    text = "Arros negre is a dish from Spain, where they speak Spanish."
    entities = entities_of_triples(triples)
    before = esa_of_text(text, entities, "en", synonyms=synonyms, second_chance=False)
    after = esa_of_text(text, entities, "en", synonyms=synonyms)
    assert before.missing == ("Spanish language",)
    assert after.missing == ()
    spans = {m.entity: text[m.start : m.end] for m in after.mentions}
    assert spans["Spain"] == "Spain" and spans["Spanish language"] == "Spanish"
    # Words that are the only mention of both stay with the closer, longer match.
    alone = esa_of_text("They speak Spanish.", entities[2:], "en", synonyms=synonyms)
    assert len(alone.missing) == 1


@pytest.mark.parametrize(
    ("label", "text"),
    [
        ("Turkish_people", "Ahmet Ertegun was a Turkish national."),
        ("Filipinos_in_Japan", "One of the ethnic groups of Japan is the Filipinos."),
        ("Native_Americans_in_the_United_States", "Native Americans are a group there."),
        ("Indian_people", "Bhajji comes from India, the country of Indians."),
    ],
)
def test_a_group_of_people_is_found_by_its_head(label: str, text: str) -> None:
    entities = entities_of_triples([("Somewhere", "ethnicGroup", label)])
    assert esa_of_text(text, entities, "en", group_names=False).missing
    found = esa_of_text(text, entities, "en")
    assert found.detected[-1] == label.replace("_", " ")
    assert any(m.via == "group" for m in found.mentions)


def test_group_heads_only_for_group_labels() -> None:
    from core.metrics.esa.detect import group_head

    assert group_head("Turkish people") == "Turkish"
    assert group_head("Brazilians in Japan") == "Brazilians"
    assert group_head("University of Texas at Austin") is None
    assert group_head("Battle of Salamis") is None
    assert group_head("Peoples Party") is None
