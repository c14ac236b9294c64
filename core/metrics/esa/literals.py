"""Dates and numbers as ESA reads them (METHODS §7): a date in any en/it/es form or ISO
is one date; a number is compared as a number (``610.0`` is "610", "3.500" in Italian)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.surface import surface
from core.units.shapes import MONTH_NAMES

MONTH_NUMBERS: dict[str, int] = {}
for _month_names in (
    # The full names in en, it and es (core.units.shapes writes values with them), lower-cased.
    *(tuple(name.lower() for name in names) for names in MONTH_NAMES.values()),
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
):
    for _number, _name in enumerate(_month_names, start=1):
        MONTH_NUMBERS.setdefault(_name, _number)
MONTH_NUMBERS["sept"] = 9
MONTH_NUMBERS["setiembre"] = 9
_MONTH = "|".join(sorted(MONTH_NUMBERS, key=len, reverse=True))
_ORDINAL = r"(?:st|nd|rd|th|º|°|o)?"
# Order matters: the most specific forms claim their characters first.
_DATE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<![\w+-])([+-]?\d{1,4})-(\d{1,2})-(\d{1,2})(?:T[\d:]+Z?)?(?!\w)"), "ymd"),
    (
        re.compile(
            rf"(?<!\w)(\d{{1,2}}){_ORDINAL}\s+(?:de\s+|of\s+)?({_MONTH})\.?,?\s+"
            rf"(?:de\s+|del\s+)?(\d{{1,4}})(?!\w)",
            re.IGNORECASE,
        ),
        "dmy",
    ),
    (
        re.compile(
            rf"(?<!\w)({_MONTH})\.?\s+(\d{{1,2}}){_ORDINAL},?\s+(\d{{1,4}})(?!\w)", re.IGNORECASE
        ),
        "mdy",
    ),
    (
        re.compile(
            rf"(?<!\w)({_MONTH})\.?,?\s+(?:de\s+|del\s+|of\s+)?(\d{{3,4}})(?!\w)", re.IGNORECASE
        ),
        "my",
    ),
    (re.compile(r"(?<![\w/])(\d{4})/(\d{1,2})/(\d{1,2})(?![\w/])"), "ymd"),
    (re.compile(r"(?<![\w/.])(\d{1,2})[/.](\d{1,2})[/.](\d{4})(?![\w/])"), "dmy_numeric"),
)


@dataclass(frozen=True)
class DateMention:
    year: int
    month: int | None
    day: int | None
    start: int
    end: int

    @property
    def key(self) -> tuple[int, int | None, int | None]:
        return (self.year, self.month, self.day)


def find_dates(text: str) -> list[DateMention]:
    """Dates written in the text, in any of the en/it/es forms or ISO, with char spans."""
    found: list[DateMention] = []
    taken: list[tuple[int, int]] = []
    for pattern, form in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < e and s < end for s, e in taken):
                continue
            groups = match.groups()
            try:
                if form == "ymd":
                    year, month, day = int(groups[0]), int(groups[1]), int(groups[2])
                elif form == "dmy":
                    day, month, year = (
                        int(groups[0]),
                        MONTH_NUMBERS[groups[1].lower()],
                        int(groups[2]),
                    )
                elif form == "mdy":
                    month, day, year = (
                        MONTH_NUMBERS[groups[0].lower()],
                        int(groups[1]),
                        int(groups[2]),
                    )
                elif form == "my":
                    month, day, year = MONTH_NUMBERS[groups[0].lower()], 0, int(groups[1])
                else:
                    day, month, year = int(groups[0]), int(groups[1]), int(groups[2])
                    if month > 12 >= day:  # 11/18/1923: the American order
                        day, month = month, day
            except (KeyError, ValueError):
                continue
            if not 1 <= month <= 12 or not 0 <= day <= 31:
                if form == "ymd" and month == 0:  # Wikidata year precision: +1990-00-00
                    found.append(DateMention(year, None, None, start, end))
                    taken.append((start, end))
                continue
            found.append(DateMention(year, month, day or None, start, end))
            taken.append((start, end))
    return sorted(found, key=lambda d: d.start)


def date_of_label(label: str) -> tuple[int, int | None, int | None] | None:
    """The date a label states, when the whole label is one date; else None."""
    dates = find_dates(label.strip())
    if len(dates) == 1 and dates[0].start == 0 and dates[0].end == len(label.strip()):
        return dates[0].key
    return None


# --- numbers --------------------------------------------------------------------------------

# 610, 610.0, 3,500, 3,500.25, -6.5 (not part of a date, a word or a longer number)
_NUMBER_IN_TEXT = re.compile(
    r"(?<![\w.,/-])[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w/]|[.,]\d)"
)
# Italian and Spanish: 3.500 and 3.500,25 (a point between thousands, a decimal comma)
_NUMBER_IN_TEXT_COMMA = re.compile(
    r"(?<![\w.,/-])[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d+)?(?![\w/]|[.,]\d)"
)
DECIMAL_COMMA = frozenset({"it", "es", "fr", "de", "pt", "nl"})
_NUMBER_LABEL = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$|^[+-]?\.\d+$")


def number_of_label(label: str) -> float | None:
    """The number a label states, when the whole surface form is one number; else None."""
    text = surface(label)
    if not _NUMBER_LABEL.match(text):
        return None
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


@dataclass(frozen=True)
class NumberMention:
    values: tuple[float, ...]  # what the digits may mean (3.500 in Italian: 3500, or 3.5)
    start: int
    end: int


def find_numbers(text: str, lang: str = "en") -> list[NumberMention]:
    """Numbers written in digits, thousands separators allowed: ``3,500.0`` is 3500; in a
    decimal-comma language (it, es, ...) ``3.500,5`` is 3500.5, and a number written the
    English way (as models often do) still reads as such."""
    found: dict[tuple[int, int], list[float]] = {}
    patterns = [(_NUMBER_IN_TEXT, ",", ".")]
    if lang in DECIMAL_COMMA:
        patterns.insert(0, (_NUMBER_IN_TEXT_COMMA, ".", ","))
    for pattern, thousands, decimal in patterns:
        for match in pattern.finditer(text):
            try:
                value = float(match.group().replace(thousands, "").replace(decimal, "."))
            except ValueError:
                continue
            values = found.setdefault(match.span(), [])
            if value not in values:
                values.append(value)
    return [
        NumberMention(tuple(values), start, end) for (start, end), values in sorted(found.items())
    ]
