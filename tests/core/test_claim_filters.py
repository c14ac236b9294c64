"""Each claim filter rule of METHODS §4, on and off."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.units.claim_filters import ClaimFilterSettings, drop_reasons
from core.wikidata.records import ClaimRecord


def claim(
    pid: str,
    value: str | None = "Q1",
    *,
    rank: str = "normal",
    vtype: str = "wikibase-item",
    snak: str = "value",
) -> ClaimRecord:
    return ClaimRecord(None, "Q42", pid, value, vtype, rank=rank, snak_type=snak)


def test_plain_item_claim_is_kept() -> None:
    assert drop_reasons([claim("P19", "Q350")]) == [None]


def test_deprecated_and_non_truthy_values_are_dropped() -> None:
    claims = [
        claim("P1082", "100", rank="deprecated", vtype="quantity"),
        claim("P1082", "200", rank="preferred", vtype="quantity"),
        claim("P1082", "150", rank="normal", vtype="quantity"),
        claim("P17", "Q38", rank="normal"),  # no preferred P17: normal is truthy
    ]
    reasons = drop_reasons(claims)
    assert reasons[0] == "deprecated rank"
    assert reasons[1] is None
    assert reasons[2] is not None and "preferred value exists" in reasons[2]
    assert reasons[3] is None
    relaxed = drop_reasons(claims, ClaimFilterSettings(drop_deprecated=False, truthy_only=False))
    assert relaxed == [None, None, None, None]


@pytest.mark.parametrize("snak", ["novalue", "somevalue"])
def test_no_and_some_value(snak: str) -> None:
    assert drop_reasons([claim("P26", None, snak=snak)])[0] is not None
    off = ClaimFilterSettings(drop_no_or_some_value=False)
    assert drop_reasons([claim("P26", None, snak=snak)], off) == [None]


@pytest.mark.parametrize(
    "vtype",
    [
        "external-id",
        "url",
        "commonsMedia",
        "globe-coordinate",
        "math",
        "geo-shape",
        "tabular-data",
        "musical-notation",
    ],
)
def test_unreadable_value_types(vtype: str) -> None:
    reason = drop_reasons([claim("P214", "12345", vtype=vtype)])[0]
    assert reason is not None and vtype in reason
    assert drop_reasons(
        [claim("P214", "1", vtype=vtype)], ClaimFilterSettings(drop_unreadable_types=False)
    ) == [None]


# METHODS §4, one by one: instance of, subclass of, topic's main category, see also, image,
# Commons category, described by source, has list, category-for-... properties, model item,
# on focus list of Wikimedia project, topic has template.
@pytest.mark.parametrize(
    "pid",
    [
        "P31",
        "P279",
        "P910",
        "P1659",
        "P18",
        "P373",
        "P1343",
        "P2354",
        "P1753",
        "P4224",
        "P301",
        "P971",
        "P1464",
        "P1465",
        "P1791",
        "P1792",
        "P3876",
        "P4195",
        "P6112",
        "P7561",
        "P5869",
        "P5008",
        "P1424",
    ],
)
def test_ontology_properties(pid: str) -> None:
    assert drop_reasons([claim(pid, "Q5")])[0] is not None
    assert drop_reasons(
        [claim(pid, "Q5")], ClaimFilterSettings(drop_ontology_properties=False)
    ) == [None]


# said to be the same as, different from, related category, sex or gender, given name, part of
@pytest.mark.parametrize("pid", ["P460", "P1889", "P7084", "P21", "P735", "P361"])
def test_some_properties_only_within_the_unit(pid: str) -> None:
    part_of = claim(pid, "Q99")
    assert drop_reasons([part_of])[0] is not None
    assert drop_reasons([part_of], unit_subjects=frozenset({"Q42", "Q99"})) == [None]
    settings = replace(ClaimFilterSettings(), only_within_unit=False)
    assert drop_reasons([part_of], settings) == [None]
