"""Data units: shape, size and connectivity (METHODS §5), and value templates (§4).

A unit is an ordered set of 1 to 7 triples. Its shape does not depend on the order the
user gives the triples (order can be changed freely):

* **sibling**: every triple has the same subject (a one-triple unit is a sibling);
* **chain**: the triples form one directed path, the object of one being the subject
  of the next;
* **mixed**: both patterns occur.

A unit is **connected** when every triple can be reached from the root entity by
following triples from subject to object. A unit that is not connected has no shape
and cannot be saved.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import cast

MIN_SIZE, MAX_SIZE = 1, 7


class Shape(StrEnum):
    SIBLING = "sibling"
    CHAIN = "chain"
    MIXED = "mixed"


@dataclass(frozen=True)
class Triple:
    """A triple by identity: subject and object are QIDs or literal values, predicate a PID."""

    subject: str
    predicate: str
    object: str


@dataclass(frozen=True)
class UnitStructure:
    size: int
    root: str | None
    connected: bool
    shape: Shape | None  # None when empty or not connected
    unreachable: tuple[int, ...]  # positions of triples the root cannot reach
    problems: tuple[str, ...]  # why the unit cannot be saved; empty when it can

    @property
    def valid(self) -> bool:
        return not self.problems


def reachable_triples(triples: Sequence[Triple], root: str) -> set[int]:
    """Positions of the triples reachable from ``root`` going subject → object."""
    by_subject: dict[str, list[int]] = defaultdict(list)
    for i, triple in enumerate(triples):
        by_subject[triple.subject].append(i)
    seen_nodes, reached = {root}, set()
    queue = deque([root])
    while queue:
        node = queue.popleft()
        for i in by_subject.get(node, ()):
            reached.add(i)
            target = triples[i].object
            if target not in seen_nodes:
                seen_nodes.add(target)
                queue.append(target)
    return reached


def _is_chain(triples: Sequence[Triple]) -> bool:
    # With every triple reachable from the root (checked by the caller), "each node is
    # the subject of at most one triple" leaves exactly one path: a chain.
    subjects = [t.subject for t in triples]
    return len(set(subjects)) == len(subjects)


def unit_structure(triples: Sequence[Triple], root: str | None = None) -> UnitStructure:
    """Size, connectivity and shape of a unit; ``root`` defaults to the first subject."""
    size = len(triples)
    problems: list[str] = []
    if size == 0:
        return UnitStructure(0, root, False, None, (), ("a unit needs at least one triple",))
    root = root or triples[0].subject
    if size > MAX_SIZE:
        problems.append(f"a unit holds at most {MAX_SIZE} triples, this one has {size}")
    if len(set(triples)) != size:
        problems.append("the same triple appears twice")
    reached = reachable_triples(triples, root)
    unreachable = tuple(i for i in range(size) if i not in reached)
    connected = not unreachable
    if not connected:
        positions = ", ".join(str(i + 1) for i in unreachable)
        problems.append(f"not connected: triple {positions} cannot be reached from {root}")
        return UnitStructure(size, root, False, None, unreachable, tuple(problems))
    if all(t.subject == root for t in triples):
        shape = Shape.SIBLING
    elif _is_chain(triples):
        shape = Shape.CHAIN
    else:
        shape = Shape.MIXED
    return UnitStructure(size, root, True, shape, (), tuple(problems))


# --- values as text (METHODS §4) --------------------------------------------------------

# Month names by language, as values are written (ESA reads dates in them too).
MONTH_NAMES: dict[str, tuple[str, ...]] = {
    "en": (
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ),
    "it": (
        "gennaio",
        "febbraio",
        "marzo",
        "aprile",
        "maggio",
        "giugno",
        "luglio",
        "agosto",
        "settembre",
        "ottobre",
        "novembre",
        "dicembre",
    ),
    "es": (
        "enero",
        "febrero",
        "marzo",
        "abril",
        "mayo",
        "junio",
        "julio",
        "agosto",
        "septiembre",
        "octubre",
        "noviembre",
        "diciembre",
    ),
}
# Wikidata time precision: 9 year, 10 month, 11 day (coarser ones render as the year).
PRECISION_YEAR, PRECISION_MONTH, PRECISION_DAY = 9, 10, 11


def render_time(value: str, precision: int | None, lang: str) -> str:
    """A Wikidata time (``+1871-05-12T00:00:00Z``) at its precision, in ``lang``."""
    text = value.strip()
    negative = text.startswith("-")
    date = text.lstrip("+-").split("T", 1)[0]
    parts = date.split("-")
    if len(parts) < 3 or not all(p.isdigit() for p in parts[:3]):
        return value  # not a date we understand: shown as it is, never invented
    year, month, day = int(parts[0]), int(parts[1]), int(parts[2])
    year_text = str(year)
    if negative:
        year_text += " BC" if lang == "en" else " a.C."
    months = MONTH_NAMES.get(lang, MONTH_NAMES["en"])
    precision = PRECISION_DAY if precision is None else precision
    if precision <= PRECISION_YEAR or month == 0:
        return year_text
    of = " de " if lang == "es" else " "  # "mayo de 1871", "12 de mayo de 1871"
    month_text = f"{months[month - 1]}{of}{year_text}"
    if precision == PRECISION_MONTH or day == 0:
        return month_text
    return f"{day}{of}{month_text}"


def render_quantity(amount: str, unit_label: str | None, lang: str) -> str:
    """``+1234.50`` with unit label → ``1234.5 metres``; dimensionless → the number."""
    text = amount.strip().lstrip("+")
    try:
        number = float(text)
    except ValueError:
        return amount
    if "e" in text.lower():
        shown = text
    elif number.is_integer():
        shown = str(int(number))
    else:
        shown = text.rstrip("0") if "." in text else text  # the lexical form, minus padding
    if lang in ("it", "es"):
        shown = shown.replace(".", ",")
    return f"{shown} {unit_label}" if unit_label else shown


def render_value(
    value: str | None,
    value_type: str,
    value_json: Mapping[str, object] | None,
    lang: str,
    labels: Mapping[str, str],
) -> str | None:
    """A claim's value as text for a triple: item labels, dates at their precision,
    quantities with their unit label, strings as they are; None when there is no
    label for an item (the unit is then not parallel in ``lang``)."""
    if value is None:
        return None
    extra = value_json or {}
    if value_type == "wikibase-item":
        return labels.get(value)
    if value_type == "time":
        precision = extra.get("precision")
        digits = int(cast("int | str", precision)) if precision is not None else None
        return render_time(value, digits, lang)
    if value_type == "quantity":
        unit = extra.get("unit")
        unit_label = labels.get(str(unit)) if unit and unit != "1" else None
        return render_quantity(value, unit_label, lang)
    return value
