"""ESA, ESI@n and hallucination candidates on hand-worked cases (METHODS §7)."""

from __future__ import annotations

import random

import pytest

from core.metrics.base import EntityInfo, ScoringItem
from core.metrics.esa import (
    EntityAdequacy,
    HallucinationCandidates,
    esa_of_text,
    find_dates,
    levenshtein,
    normalised_distance,
)

ADA = (EntityInfo("Ada Lovelace", qid="Q7259", is_root=True, aliases=("Augusta Ada King",)),
       EntityInfo("10 December 1815", value_type="time"),
       EntityInfo("mathematician"),
       EntityInfo("London"))


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


@pytest.mark.parametrize("text", [
    "born 1815-12-10", "on 10 December 1815", "on December 10, 1815", "il 10 dicembre 1815",
    "el 10 de diciembre de 1815", "il 10º dicembre 1815", "+1815-12-10T00:00:00Z",
])
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
    spans = {m.entity: (text[m.start:m.end], m.via) for m in result.mentions}
    assert spans == {"Ada Lovelace": ("Augusta Ada King", "alias"),
                     "10 December 1815": ("December 10, 1815", "date"),
                     "mathematician": ("mathematician", "label")}


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
    assert esa_of_text("CITTÀ DI CASTELLO", (EntityInfo("Città di Castello"),), "it").mentions[
        0].distance == 0.0


def test_pronouns_stand_for_the_root_only_when_it_is_missing() -> None:
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
    entities = (EntityInfo("Rome", is_root=True), EntityInfo("Italy"), EntityInfo("Italy"),
                EntityInfo("Rome"))
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
        "Babbage in 1833.", "en", entities=ADA,
        triples=(("Ada Lovelace", "date of birth", "10 December 1815"),))
    value = HallucinationCandidates().sentence_scores([item])[0]
    spans = [(s["text"], item.text[s["start"]:s["end"]]) for s in value.details["spans"]]
    assert [text for text, _ in spans] == ["Paris", "Charles Babbage", "1833"]
    assert all(a == b for a, b in spans)
    assert value.value == 3.0


def test_hallucination_spans_keep_connectors_and_match_partial_names() -> None:
    entities = (EntityInfo("Mongolian People's Republic"), EntityInfo("Maidarzhavyn Ganzorig",
                                                                      is_root=True))
    item = ScoringItem("Ganzorig was a citizen of the Mongolian Republic and of the Republic "
                       "of China.", "en", entities=entities)
    spans = HallucinationCandidates().sentence_scores([item])[0].details["spans"]
    assert [s["text"] for s in spans] == ["Republic of China"]


def test_italian_and_spanish_sentence_starters_are_not_candidates() -> None:
    entities = (EntityInfo("Roma", is_root=True), EntityInfo("Italia"))
    item = ScoringItem("Il fiume scorre a Roma. In Italia. Nel 1990 Milano.", "it",
                       entities=entities)
    spans = HallucinationCandidates().sentence_scores([item])[0].details["spans"]
    assert [s["text"] for s in spans] == ["1990 Milano"]
