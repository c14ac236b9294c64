"""Unit shapes and connectivity (METHODS §5) and value templates (§4), hand-made cases."""

from __future__ import annotations

import pytest

from core.units.shapes import (
    Shape,
    Triple,
    render_quantity,
    render_time,
    render_value,
    unit_structure,
)


def t(s: str, o: str, p: str = "P1") -> Triple:
    return Triple(s, p, o)


@pytest.mark.parametrize(
    ("triples", "root", "shape"),
    [
        ([t("A", "B")], None, Shape.SIBLING),
        ([t("A", "B"), t("A", "C", "P2"), t("A", "D", "P3")], None, Shape.SIBLING),
        ([t("A", "B"), t("B", "C"), t("C", "D")], None, Shape.CHAIN),
        # Order does not decide the shape: the same chain given backwards.
        ([t("C", "D"), t("B", "C"), t("A", "B")], "A", Shape.CHAIN),
        ([t("A", "B"), t("A", "C", "P2"), t("B", "D")], None, Shape.MIXED),
        ([t("A", "B"), t("B", "C"), t("B", "D", "P2")], None, Shape.MIXED),
        # Seven triples, the maximum.
        ([t("A", f"B{i}", f"P{i}") for i in range(7)], None, Shape.SIBLING),
    ],
)
def test_shapes(triples: list[Triple], root: str | None, shape: Shape) -> None:
    structure = unit_structure(triples, root)
    assert structure.valid, structure.problems
    assert structure.connected and structure.shape == shape
    assert structure.size == len(triples)


def test_broken_units() -> None:
    disconnected = unit_structure([t("A", "B"), t("C", "D")])
    assert not disconnected.connected and disconnected.shape is None
    assert disconnected.unreachable == (1,)
    assert "triple 2 cannot be reached from A" in disconnected.problems[0]
    # Reachable only against the direction of the triple: not connected.
    backwards = unit_structure([t("A", "B"), t("C", "A")], "A")
    assert not backwards.connected
    assert not unit_structure([]).valid
    too_big = unit_structure([t("A", f"B{i}", f"P{i}") for i in range(8)])
    assert not too_big.valid and "at most 7" in too_big.problems[0]
    duplicated = unit_structure([t("A", "B"), t("A", "B")])
    assert "twice" in duplicated.problems[0]


@pytest.mark.parametrize(
    ("value", "precision", "lang", "expected"),
    [
        ("+1871-05-12T00:00:00Z", 11, "en", "12 May 1871"),
        ("+1871-05-12T00:00:00Z", 11, "it", "12 maggio 1871"),
        ("+1871-05-12T00:00:00Z", 11, "es", "12 de mayo de 1871"),
        ("+1871-05-00T00:00:00Z", 10, "es", "mayo de 1871"),
        ("+1871-05-12T00:00:00Z", 10, "en", "May 1871"),
        ("+1871-00-00T00:00:00Z", 9, "it", "1871"),
        ("+1500-01-01T00:00:00Z", 7, "en", "1500"),  # century precision: the year
        ("-0044-03-15T00:00:00Z", 11, "en", "15 March 44 BC"),
        ("not a date", 11, "en", "not a date"),
    ],
)
def test_dates_at_their_precision(value: str, precision: int, lang: str, expected: str) -> None:
    assert render_time(value, precision, lang) == expected


def test_quantities_and_other_values() -> None:
    assert render_quantity("+1234.50", "metre", "en") == "1234.5 metre"
    assert render_quantity("+1234.50", "metro", "it") == "1234,5 metro"
    assert render_quantity("+42", None, "en") == "42"
    labels = {"Q11573": "metre", "Q38": "Italy"}
    assert render_value("+3", "quantity", {"unit": "Q11573"}, "en", labels) == "3 metre"
    assert render_value("Q38", "wikibase-item", None, "en", labels) == "Italy"
    assert render_value("Q99", "wikibase-item", None, "en", labels) is None  # not parallel
    assert render_value("Ab12", "string", None, "it", labels) == "Ab12"
    assert render_value("+1900-01-01T00:00:00Z", "time", {"precision": 9}, "es", {}) == "1900"
