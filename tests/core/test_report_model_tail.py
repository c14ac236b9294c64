"""The report compares groups by the model's likelihood too: the ``model_tail`` dimension
(the sub-tier the likelihood cut-off gave a unit's root entity in its category)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from core.groups import UNKNOWN
from core.report.compare import compare
from core.report.data import load_frame
from core.store import SessionStore
from core.store.models import Category, CategoryMember, Entity
from tests.fixtures.report_session import CATEGORY, UNITS, build_report_session

# u1..u8 have root entities Q101..Q108; u4 is left out of its category (no sub-tier).
MODEL_TIERS = {
    "u1": "model_tail",
    "u2": "model_head",
    "u3": "model_tail",
    "u5": "model_head",
    "u6": "model_tail",
    "u7": "model_head",
    "u8": "model_head",
}


def test_report_groups_by_model_tail(tmp_path: Path) -> None:
    built = build_report_session(tmp_path / "r.taillens", ratings=False)
    with SessionStore.open(built.path) as store:
        with store.unit_of_work() as db:
            categories = dict(db.execute(select(Category.name, Category.id)).all())
            for n, uid in enumerate(UNITS, start=1):
                if uid not in MODEL_TIERS:
                    continue
                entity_id = db.execute(
                    select(Entity.id).where(Entity.qid == f"Q{100 + n}")
                ).scalar_one()
                db.add(
                    CategoryMember(
                        category_id=categories[CATEGORY[uid]],
                        entity_id=entity_id,
                        model_tier=MODEL_TIERS[uid],
                    )
                )
        frame = load_frame(store, human=False)
    by_unit = {o.item.unit_id: o.group("model_tail") for o in frame.observations}
    expected = {built.units[uid]: MODEL_TIERS.get(uid, UNKNOWN) for uid in UNITS}
    assert by_unit == expected
    found = compare(frame, "model_tail", metrics=["entity_ppl"])
    pairs = {(c.group_a, c.group_b) for c in found}
    assert pairs == {("model_head", "model_tail")}
    entity_ppl = [o for o in frame.observations if o.metric == "entity_ppl"]
    for c in found:
        stratum = dict(c.stratum)
        mine = [o for o in entity_ppl if all(o.group(k) == v for k, v in stratum.items())]
        assert c.a.n == sum(o.group("model_tail") == "model_head" for o in mine)
        assert c.b.n == sum(o.group("model_tail") == "model_tail" for o in mine)
