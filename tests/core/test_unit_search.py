"""Knowledge beam search (LINK): template parsing, the rerank order and beam bounds, the
graph as critic on the embedded demo snapshot, saving with provenance, cancel."""

from __future__ import annotations

import math
import zlib
from pathlib import Path

import pytest

from core.jobs import CancelToken, JobSucceeded, JobWasCancelled, run_job
from core.store import SessionStore
from core.units.beam_search import (
    Candidate,
    Graph,
    SearchError,
    SearchRequest,
    beam_search,
    class_category,
    parse_template,
    rank,
    search_job,
    verbalise,
)
from core.units.builder.saved import list_units
from core.wikidata.open_source import load_demo_source

CHAIN = "?x P17 ?a . ?a P36 ?b"
ENTITY = "http://www.wikidata.org/entity/"


def stub_score(text: str) -> float:
    """A known, deterministic score per text (no model)."""
    return -1.0 - (zlib.crc32(text.encode()) % 10_000) / 1000


def stub_scorer(texts):  # noqa: ANN001, ANN201
    return [stub_score(t) for t in texts]


@pytest.fixture(scope="module")
def demo():  # noqa: ANN201
    return load_demo_source()


def is_claim(source, s: str, pid: str, o: str) -> bool:  # noqa: ANN001
    query = f"ASK {{ <{ENTITY}{s}> <http://www.wikidata.org/prop/direct/{pid}> <{ENTITY}{o}> }}"
    return bool(source.store.query(query))


# --- templates ---------------------------------------------------------------------------


def test_chain_and_sibling_templates_parse() -> None:
    chain = parse_template("?x P19 ?a . ?a wdt:P17 ?b .")
    assert [(p.subject, p.pid, p.obj) for p in chain.patterns] == [
        ("x", "P19", "a"),
        ("a", "P17", "b"),
    ]
    assert chain.variables == ("x", "a", "b")
    sibling = parse_template("?x P106 ?o.?x P27 ?c".replace(".", ". "))
    assert [(p.subject, p.obj) for p in sibling.patterns] == [("x", "o"), ("x", "c")]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("?x P19", "pattern 1 at position 1"),
        ("?x P19 ?a . ?a P17", "pattern 2 at position 13"),
        ("?x P19x ?a", "position 4: 'P19x' is not a property id"),
        ("?x P19\n ?a", None),  # a newline is only a separator: parses
        ("?x Q19 ?a", "is not a property id"),
        ("?x P0 ?a", "is not a property id"),
        ("x P19 ?a", "subject must be a variable"),
        ("?x P19 wd:Q5", "object must be a variable"),
        ("?x P19 ?a . ?b P17 ?c", "?b is not bound"),
        ("?x P19 ?a . ?a P17 ?x", "?x is already bound"),
    ],
)
def test_bad_templates_name_the_pattern_and_position(text: str, words: str | None) -> None:
    if words is None:
        assert parse_template(text).patterns[0].pid == "P19"
        return
    with pytest.raises(SearchError) as error:
        parse_template(text)
    assert words in str(error.value)


def test_a_template_larger_than_a_unit_is_refused() -> None:
    text = " . ".join(f"?v{i} P17 ?v{i + 1}" for i in range(8))
    with pytest.raises(SearchError, match="at most 7"):
        parse_template(text)


# --- the rerank order and the beam bounds ---------------------------------------------------


def _cands(scores: list[float]) -> list[Candidate]:
    return [Candidate((f"Q{i + 1}",), (), (s,)) for i, s in enumerate(scores)]


def test_tail_keeps_the_lowest_and_head_the_highest_three_quarters() -> None:
    scores = [-3.0, -1.0, -5.0, -2.0, -4.0, -0.5, -6.0, -2.5]
    tail = rank(_cands(scores), "tail", 0.75, 200)
    head = rank(_cands(scores), "head", 0.75, 200)
    assert len(tail) == len(head) == math.ceil(0.75 * len(scores))
    assert [c.scores[-1] for c in tail] == sorted(scores)[:6]
    assert [c.scores[-1] for c in head] == sorted(scores, reverse=True)[:6]


def test_the_beam_caps_what_is_kept_and_ties_go_by_values() -> None:
    kept = rank(_cands([-1.0] * 10), "tail", 0.75, 3)
    assert [c.values for c in kept] == [("Q1",), ("Q10",), ("Q2",)]  # string order of ids
    assert len(rank(_cands([-1.0]), "head", 0.75, 200)) == 1
    assert len(rank(_cands([-1.0] * 10), "head", 0.7, 200)) == 7  # not ceil(7.000…01)


def test_verbalisation_uses_labels_and_the_bound_triples_only() -> None:
    template = parse_template(CHAIN)
    labels = {"Q1": "Paris", "Q2": "France", "P17": "country", "P36": "capital"}
    assert verbalise(template, ["Q1"], labels) == "Paris"
    assert verbalise(template, ["Q1", "Q2"], labels) == "Paris country France."
    assert verbalise(template, ["Q1", "Q2", "Q1"], labels) == (
        "Paris country France. France capital Paris."
    )


# --- the search on the embedded snapshot ---------------------------------------------------


@pytest.mark.parametrize("direction", ["tail", "head"])
def test_every_step_is_reranked_and_bounded_and_every_triple_is_a_claim(
    demo, direction: str
) -> None:
    template = parse_template(CHAIN)
    graph = Graph(demo)
    roots = graph.roots(class_category("Q515"))
    calls: list[list[float]] = []

    def scorer(texts):  # noqa: ANN001, ANN202
        got = stub_scorer(texts)
        calls.append(got)
        return got

    result = beam_search(graph, template, roots, scorer, direction, beam=50, keep=0.75, units=50)
    assert len(result.steps) == 3 and len(calls) == 3
    assert result.steps[0]["candidates"] == len(roots) > 50
    for step in result.steps:
        assert step["kept"] == min(50, math.ceil(0.75 * step["candidates"]))
    # The final beam is the extreme of the last step's scores, in order.
    last = sorted(calls[-1]) if direction == "tail" else sorted(calls[-1], reverse=True)
    assert [c.scores[-1] for c in result.units] == last[: len(result.units)]
    for cand in result.units:
        x, a, b = cand.values
        assert is_claim(demo, x, "P17", a) and is_claim(demo, a, "P36", b)
        assert len(cand.scores) == 3 and all(st for st in cand.statements)


def test_the_session_cache_answers_like_the_embedded_source(demo, tmp_path: Path) -> None:
    from core.wikidata.cache import SessionCacheSource, store_entity

    roots = Graph(demo).roots(class_category("Q515"))[:5]
    with SessionStore.create(tmp_path / "c.taillens") as store:
        for qid in roots:
            store_entity(store, demo.entity(qid), demo.name)
        cached = Graph(SessionCacheSource(store)).values(roots, "P17")
        assert Graph(SessionCacheSource(store)).property_type("P17") == "wikibase-item"
    embedded = Graph(demo).values(roots, "P17")
    assert cached and {s: [v.qid for v in vs] for s, vs in cached.items()} == {
        s: [v.qid for v in vs] for s, vs in embedded.items()
    }


# --- the job: saving, provenance, cancel, bad input ---------------------------------------


def test_job_saves_both_sets_with_provenance_and_delta(demo, tmp_path: Path) -> None:
    with SessionStore.create(tmp_path / "s.taillens") as store:
        job = search_job(
            store,
            demo,
            SearchRequest(CHAIN, "stub", class_qid="Q515", beam=40, units=5),
            scorer=stub_scorer,
        )
        outcome = run_job(job)
        assert isinstance(outcome, JobSucceeded), outcome
        summary = outcome.result
        units = list_units(store)
        # The saved units are one recorded edit: one undo takes all ten out, redo puts
        # them back under the same ids.
        from core.edits import history, redo_edit, undo_edit

        (entry,) = history(store, kinds=["unit"])
        assert entry.description.startswith("10 units found by the search")
        undo_edit(store, entry.id)
        assert list_units(store) == []
        redo_edit(store, entry.id)
        assert list_units(store) == units
    assert len(units) == len(summary.unit_ids) == 10
    by: dict[str, list[float]] = {"tail": [], "head": []}
    for unit in units:
        search = unit.attributes["search"]
        assert unit.origin == "search" and search["template"] == CHAIN
        assert len(search["step_scores"]) == 3
        by[search["direction"]].append(search["loglik"])
        en = unit.triples["en"]
        assert [(t.property_pid) for t in en] == ["P17", "P36"]
        text = " ".join(f"{t.subject} {t.predicate} {t.object}." for t in en)
        assert search["loglik"] == pytest.approx(stub_score(text))
        for t in en:
            assert is_claim(demo, t.subject_qid, t.property_pid, t.object_value)
    assert max(by["tail"]) <= min(by["head"])
    assert summary.delta == pytest.approx(sum(by["head"]) / 5 - sum(by["tail"]) / 5)


class _CancelOnCall:
    def __init__(self, token: CancelToken, call: int) -> None:
        self.token, self.call, self.calls = token, call, 0

    def __call__(self, texts):  # noqa: ANN001, ANN204
        self.calls += 1
        if self.calls == self.call:
            self.token.cancel()
        return stub_scorer(texts)


@pytest.mark.parametrize("call", [1, 5])  # during the search; at the very last step
def test_cancel_leaves_nothing_saved(demo, tmp_path: Path, call: int) -> None:
    token = CancelToken()
    with SessionStore.create(tmp_path / "s.taillens") as store:
        scorer = _CancelOnCall(token, call)
        job = search_job(
            store,
            demo,
            SearchRequest(CHAIN, "stub", class_qid="Q515", beam=20, units=3),
            scorer=scorer,
        )
        assert isinstance(run_job(job, token), JobWasCancelled)
        assert list_units(store) == []


@pytest.mark.parametrize(
    ("request_args", "words"),
    [
        ({"template": "?x P99999 ?a"}, "P99999 is not a property"),
        ({"template": "?x P569 ?a"}, "takes time values"),
        ({"template": "?x P17"}, "pattern 1"),
        ({"class_qid": "Q5x"}, "not a Wikidata item id"),
        ({"class_qid": None, "category": "NoSuch"}, "no category named"),
        ({"beam": 0}, "--beam"),
        ({"keep": 1.5}, "--keep"),
        ({"direction": "sideways"}, "--direction"),
    ],
)
def test_bad_input_is_refused_before_the_job(
    demo, tmp_path: Path, request_args, words: str
) -> None:
    fields = {"template": CHAIN, "model": "stub", "class_qid": "Q515", **request_args}
    with SessionStore.create(tmp_path / "s.taillens") as store:
        with pytest.raises(Exception) as error:  # noqa: PT011 - checked just below
            search_job(store, demo, SearchRequest(**fields), scorer=stub_scorer)
        assert words in str(error.value)
        from core.errors import UserFacingError

        assert isinstance(error.value, UserFacingError)
        assert list_units(store) == []


def test_the_new_queries_validate_their_parameters() -> None:
    from core.wikidata import queries

    text = queries.triple_values(["Q1", "Q2"], "P17", 10, 0)
    assert "VALUES ?s { wd:Q1 wd:Q2 }" in text and "wdt:P17" in text
    assert queries.parse_check(text) == text
    assert queries.parse_check(queries.item_labels(["Q1", "P17"], "it"))
    for bad in (
        lambda: queries.triple_values(["Q1"], "P17\n", 10, 0),
        lambda: queries.triple_values(["Q1 } ?s ?p ?o {"], "P17", 10, 0),
        lambda: queries.triple_values([f"Q{i + 1}" for i in range(201)], "P1", 1, 0),
        lambda: queries.triple_values(["Q1"], "P17", 10**9, 0),
        lambda: queries.item_labels(["Q1"], "de"),
    ):
        with pytest.raises(queries.QueryError):
            bad()
