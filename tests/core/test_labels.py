"""The words users see for counts and tiers, from one place."""

from __future__ import annotations

from core.labels import plural, tier_label
from core.tiers.cutoffs import SubTier, Tier


def test_plural_counts() -> None:
    assert plural(1, "unit") == "1 unit"
    assert plural(0, "unit") == "0 units"
    assert plural(2, "unit") == "2 units"
    assert plural(1, "entity") == "1 entity" and plural(1234, "entity") == "1,234 entities"
    assert plural(1, "entry") == "1 entry" and plural(3, "entry") == "3 entries"


def test_every_tier_code_has_display_words_without_underscores() -> None:
    assert tier_label("long_tail") == "long tail"
    assert tier_label("long_tail_it") == "long tail · it only"
    assert tier_label("head") == "head" and tier_label(None) == "no tier"
    for code in [*Tier, *SubTier]:
        assert "_" not in tier_label(code.value)
