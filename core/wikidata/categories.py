"""Categories: a name, a Wikidata class and a SPARQL membership pattern (METHODS §2)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from core.errors import UserFacingError
from resources import resource_path

QID_RE = re.compile(r"\AQ[1-9][0-9]*\Z")  # \Z: "$" would let "Q42\n" pass
PID_RE = re.compile(r"\AP[1-9][0-9]*\Z")
DEFAULT_LIMIT = 20_000


@dataclass(frozen=True)
class Category:
    name: str
    class_qid: str
    membership_property: str  # P31 for things, P106 for occupations (people)
    pattern: str  # SPARQL group pattern binding ?item; editable by the user

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a category needs a name")
        if not QID_RE.match(self.class_qid):
            raise ValueError(f"class id {self.class_qid!r} is not a Wikidata item id like Q515")
        if not PID_RE.match(self.membership_property):
            raise ValueError(
                f"membership property {self.membership_property!r} is not a property id like P31"
            )
        if "?item" not in self.pattern:
            raise ValueError("a membership pattern must bind ?item")


def default_pattern(class_qid: str, membership_property: str) -> str:
    return f"?item wdt:{membership_property}/wdt:P279* wd:{class_qid} ."


@lru_cache(maxsize=1)
def default_categories() -> tuple[Category, ...]:
    data = json.loads(resource_path("categories.json").read_text(encoding="utf-8"))
    return tuple(
        Category(row["name"], row["class_qid"], row["membership_property"], row["pattern"])
        for row in data["categories"]
    )


class UnknownCategoryError(UserFacingError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def category_by_name(name: str) -> Category:
    for category in default_categories():
        if category.name.lower() == name.lower():
            return category
    known = ", ".join(c.name for c in default_categories())
    raise UnknownCategoryError(f"no category named {name!r}; known categories: {known}")
