"""The sampler: reproducible, shapes as asked, never an invalid unit, skips counted."""

from __future__ import annotations

import pytest

from core.units.builder.draft import claim_triple
from core.units.sampler import sample_units
from core.units.shapes import unit_structure
from core.wikidata.records import ClaimRecord, EntityDetails


def item(subject: str, pid: str, value: str, n: int) -> ClaimRecord:
    return ClaimRecord(f"{subject}${n}", subject, pid, value, "wikibase-item")


def literal(subject: str, pid: str, value: str, n: int) -> ClaimRecord:
    return ClaimRecord(f"{subject}${n}", subject, pid, value, "string")


def world() -> dict[str, EntityDetails]:
    """Ten rich roots linking into a small graph, one poor root, one with no claim kept."""
    details: dict[str, EntityDetails] = {}
    for i in range(10):
        qid = f"Q{i}"
        claims = [literal(qid, f"P{100 + k}", f"v{i}-{k}", k) for k in range(6)]
        claims += [item(qid, "P17", f"Q{100 + (i + k) % 5}", 10 + k) for k in range(3)]
        details[qid] = EntityDetails(qid, claims=tuple(claims))
    for j in range(5):
        qid = f"Q{100 + j}"
        claims = [literal(qid, f"P{200 + k}", f"w{j}-{k}", k) for k in range(4)]
        claims += [item(qid, "P36", f"Q{100 + (j + 1) % 5}", 9)]
        details[qid] = EntityDetails(qid, claims=tuple(claims))
    details["Q50"] = EntityDetails("Q50", claims=(literal("Q50", "P100", "x", 0),))
    details["Q51"] = EntityDetails(
        "Q51", claims=(ClaimRecord("Q51$0", "Q51", "P31", "Q5", "wikibase-item"),)
    )
    return details


ROOTS = [f"Q{i}" for i in range(10)]


def signature(result) -> list[tuple]:
    return [(d.root_qid, tuple(claim_triple(c) for c in d.claims)) for d in result.drafts]


def test_same_seed_same_drafts_and_another_seed_differs() -> None:
    details = world()
    first = sample_units(details, ROOTS, per_entity=2, seed=7)
    assert signature(first) == signature(sample_units(details, ROOTS, per_entity=2, seed=7))
    assert signature(first) != signature(sample_units(details, ROOTS, per_entity=2, seed=8))
    assert len(first.drafts) == 20
    assert all(len(first.by_entity[q]) == 2 for q in ROOTS)


@pytest.mark.parametrize("shape", ["sibling", "chain", "mixed"])
@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_the_shape_asked_is_the_shape_built_over_many_seeds(shape: str, size: int) -> None:
    details = world()
    for seed in range(15):
        result = sample_units(details, ROOTS, shapes=(shape,), sizes=(size,), seed=seed)
        for draft in result.drafts:
            built = unit_structure([claim_triple(c) for c in draft.claims], draft.root_qid)
            assert built.valid, built.problems
            assert built.shape == shape and built.size == size
        # The five linked items form a ring, so a chain holds at most 6 triples.
        if (shape, size) in (("chain", 1), ("mixed", 1), ("mixed", 2), ("chain", 7)):
            assert not result.drafts
        else:
            assert len(result.drafts) == len(ROOTS)


def test_chains_follow_items_present_in_the_details() -> None:
    result = sample_units(world(), ROOTS, shapes=("chain",), sizes=(4,), seed=3)
    for draft in result.drafts:
        for before, after in zip(draft.claims, draft.claims[1:], strict=False):
            assert before.value == after.subject_qid


def test_skipped_entities_are_counted_by_reason() -> None:
    details = world()
    result = sample_units(
        details, ["Q0", "Q50", "Q51", "Q404"], shapes=("sibling",), sizes=(3,), seed=0
    )
    assert result.skipped == {
        "too few claims": 1,
        "no claim kept by the filters": 1,
        "entity details not loaded": 1,
    }
    assert result.skipped_entities == {
        "Q50": "too few claims",
        "Q51": "no claim kept by the filters",
        "Q404": "entity details not loaded",
    }
    chain = sample_units(details, ["Q50"], shapes=("chain",), sizes=(3,), seed=0)
    assert chain.skipped == {"no chain of size 3": 1}
    # More distinct units asked than the entity can give: the extra ones are counted.
    many = sample_units(details, ["Q50"], shapes=("sibling",), sizes=(1,), per_entity=3)
    assert len(many.drafts) == 1 and many.skipped == {"no further distinct unit": 1}


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown shapes"):
        sample_units({}, [], shapes=("ring",))
    with pytest.raises(ValueError, match="sizes must be in"):
        sample_units({}, [], sizes=(8,))


def test_parallel_sampling_keeps_only_units_labelled_in_every_language() -> None:
    from core.units.builder.draft import UnitDraft
    from core.units.builder.render import parallel_languages, render_unit
    from core.units.sampler import NOT_PARALLEL
    from core.wikidata.records import Term

    def labels(item_id: str, langs: tuple[str, ...]) -> tuple[Term, ...]:
        return tuple(Term(item_id, lang, "label", f"{item_id}-{lang}") for lang in langs)

    everywhere = ("en", "it", "es")
    terms = (
        labels("Q1", everywhere)
        + labels("P100", everywhere)
        + labels("P101", everywhere)
        + labels("P102", ("en", "es"))
        + labels("Q2", ("en",))
        + labels("P100", ())
    )
    details = {
        "Q1": EntityDetails(
            "Q1",
            terms=terms,
            claims=tuple(literal("Q1", f"P{100 + k}", f"v{k}", k) for k in range(3)),
        ),
        "Q2": EntityDetails("Q2", terms=terms, claims=(literal("Q2", "P100", "w", 0),)),
    }
    free = [
        sample_units(
            details, ["Q1", "Q2"], shapes=("sibling",), sizes=(1,), per_entity=3, seed=seed
        )
        for seed in range(10)
    ]
    assert {d.claims[0].property_pid for r in free for d in r.drafts if d.root_qid == "Q1"} == {
        "P100",
        "P101",
        "P102",
    }
    assert all(any(d.root_qid == "Q2" for d in r.drafts) for r in free)
    reason = NOT_PARALLEL.format(langs="en, it, es")
    for seed in range(10):
        result = sample_units(
            details,
            ["Q1", "Q2"],
            shapes=("sibling",),
            sizes=(1,),
            per_entity=3,
            parallel=everywhere,
            seed=seed,
        )
        # P102 has no Italian label and Q2 only an English one: never in a parallel unit,
        # while Q1 always gives its parallel units.
        pids = {d.claims[0].property_pid for d in result.drafts}
        assert pids <= {"P100", "P101"} and {d.root_qid for d in result.drafts} == {"Q1"}
        assert result.skipped_entities == {"Q2": reason}
        assert result.skipped[reason] == 1
        for draft in result.drafts:
            assert parallel_languages(render_unit(draft, details)) == set(everywhere)
    assert parallel_languages(render_unit(UnitDraft("Q2", details["Q2"].claims), details)) == {"en"}
    with pytest.raises(ValueError, match="parallel languages"):
        sample_units(details, ["Q1"], parallel=("de",))
