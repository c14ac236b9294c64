"""WDV JSON records: import into a session, export back unchanged, refuse broken files."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from core.formats import EXPORT_FORMATS, IMPORT_FORMATS, FormatError, detect_format
from core.formats.wdv import aggregates, export_wdv, import_wdv, item_id, majority
from core.store import SessionStore
from core.store.models import Annotation, Annotator, DataUnit, ModelRun, UnitTriple, Verbalisation
from tests.core.formats.conftest import table_digest


def _record(claim: str, subject: str, obj: Any, verbalisation: str, fluency: list[int],
            adequacy: list[int], **extra: Any) -> dict[str, Any]:
    agg = aggregates(fluency, adequacy)
    return {
        "claim_id": claim,
        "rank": "normal",
        "subject_id": subject,
        "property_id": "P17",
        "subject_label": "Gubbio",
        "property_label": "country",
        "object_label": "Italy",
        "subject_desc": "Italian comune",
        "property_desc": "sovereign state of this item",
        "object_desc": "country in southern Europe",
        "subject_alias": ["Iguvium"],
        "property_alias": "no-alias",
        "object_alias": ["Italia", "Italian Republic"],
        "object_datatype": "wikibase-item",
        "object": obj,
        "theme_root_class_id": "Q515",
        "theme_label": "City",
        "verbalisation": verbalisation,
        "verbalisation_unk_replaced": verbalisation,
        "sampling_weight": 3.25,
        "annotations": {
            "fluency_scores": fluency,
            "fluency_mean": agg["fluency_mean"],
            "fluency_median": agg["fluency_median"],
            "adequacy_scores": adequacy,
            "adequacy_majority_voted": agg["adequacy_majority_voted"],
            "adequacy_percentage": agg["adequacy_percentage"],
        },
        **extra,
    }


def wdv_records() -> list[dict[str, Any]]:
    item = {"value": {"entity-type": "item", "numeric-id": 38, "id": "Q38"},
            "type": "wikibase-entityid"}
    quantity = {"value": {"amount": "+31000", "unit": "1"}, "type": "quantity"}
    second = _record("Q2158$ABC-2", "Q2158", quantity, "Gubbio has 31,000 inhabitants.",
                     [5, 4, 4, 3, 5], [0, 1, 0, 2, 0])
    second.update(property_id="P1082", property_label="population", object_label="31,000",
                  object_datatype="quantity", rank="preferred")
    return [
        _record("Q2158$ABC-1", "Q2158", item, "Gubbio is in Italy.",
                [5, 5, 4, 5, 4], [0, 0, 0, 0, 1]),
        second,
        # Integer aggregates and an extra field are kept as written.
        _record("Q90$XYZ", "Q90", {"entity-type": "item", "id": "Q142"},
                "Paris is a city in France.", [4, 4, 4], [0, 0, 2], note="extra field")
        | {"subject_label": "Paris", "object_label": "France"},
    ]


def write_wdv(path: Path, records: list[Any]) -> Path:
    path.write_text(json.dumps(records, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


@pytest.fixture
def wdv_file(tmp_path: Path) -> Path:
    records = wdv_records()
    records[2]["annotations"]["fluency_mean"] = 4
    records[2]["annotations"]["fluency_median"] = 4
    return write_wdv(tmp_path / "wdv.json", records)


def test_import_maps_records(store: SessionStore, wdv_file: Path) -> None:
    report = import_wdv(store, wdv_file)
    assert (report.entries, report.units, report.errors) == (3, 3, [])
    with store.unit_of_work() as db:
        unit = db.scalars(select(DataUnit).where(DataUnit.uid == "wdv:Q2158$ABC-1")).one()
        assert (unit.root_qid, unit.size, unit.shape, unit.origin) == (
            "Q2158", 1, "sibling", "imported")
        assert "verbalisation" not in unit.attributes["record"]
        assert unit.attributes["record"]["sampling_weight"] == 3.25
        triples = db.scalars(select(UnitTriple).order_by(UnitTriple.id)).all()
        assert [(t.subject, t.predicate, t.object, t.object_value) for t in triples] == [
            ("Gubbio", "country", "Italy", "Q38"),
            ("Gubbio", "population", "31,000", None),
            ("Paris", "country", "France", "Q142"),
        ]
        assert {(t.lang, t.subject_qid) for t in triples} == {("en", "Q2158"), ("en", "Q90")}
        runs = db.scalars(select(ModelRun)).all()
        assert [(r.kind, r.system_name) for r in runs] == [("external", "WDV")]
        texts = db.scalars(select(Verbalisation.text).order_by(Verbalisation.id)).all()
        assert texts[0] == "Gubbio is in Italy."
        workers = db.scalars(select(Annotator).order_by(Annotator.id)).all()
        assert [(w.name, w.is_anonymous) for w in workers] == [
            (f"wdv-worker-{i}", True) for i in range(1, 6)]
        assert len(db.scalars(select(Annotation)).all()) == 13


def test_roundtrip_is_exact(store: SessionStore, wdv_file: Path, tmp_path: Path) -> None:
    import_wdv(store, wdv_file)
    out = tmp_path / "out.json"
    assert export_wdv(store, out) == 3
    exported = json.loads(out.read_text(encoding="utf-8"))
    original = json.loads(wdv_file.read_text(encoding="utf-8"))
    assert exported == original
    assert [list(r) for r in exported] == [list(r) for r in original]
    # A second import of another file reuses the workers and adds one run.
    records = copy.deepcopy(original)
    for record in records:
        record["claim_id"] += "-b"
    import_wdv(store, write_wdv(tmp_path / "b.json", records))
    with store.unit_of_work() as db:
        assert len(db.scalars(select(Annotator)).all()) == 5
        assert len(db.scalars(select(ModelRun)).all()) == 2


def test_export_recomputes_aggregates(store: SessionStore, tmp_path: Path) -> None:
    records = wdv_records()[:1]
    records[0]["annotations"]["fluency_mean"] = 1.0  # inconsistent with the scores
    import_wdv(store, write_wdv(tmp_path / "w.json", records))
    with store.unit_of_work() as db:
        annotator = Annotator(name="alice")
        db.add(annotator)
        db.flush()
        verbalisation = db.scalars(select(Verbalisation)).one()
        db.add(Annotation(annotator_id=annotator.id, verbalisation_id=verbalisation.id,
                          fluency=2, adequacy=1))
    out = tmp_path / "out.json"
    export_wdv(store, out)
    annotations = json.loads(out.read_text())[0]["annotations"]
    assert annotations["fluency_scores"] == [5, 5, 4, 5, 4, 2]
    assert annotations["fluency_mean"] == pytest.approx(25 / 6)
    assert annotations["fluency_median"] == 4.5
    assert annotations["adequacy_scores"] == [0, 0, 0, 0, 1, 1]
    assert annotations["adequacy_majority_voted"] == 0
    assert annotations["adequacy_percentage"] == pytest.approx(4 / 6)


def test_bad_records_are_listed_and_skipped(store: SessionStore, tmp_path: Path) -> None:
    good = wdv_records()[0]
    no_label = {k: v for k, v in good.items() if k != "object_label"} | {"claim_id": "c2"}
    bad_type = good | {"claim_id": "c3", "subject_label": 7}
    bad_scores = copy.deepcopy(good) | {"claim_id": "c4"}
    bad_scores["annotations"]["adequacy_scores"] = [0, 3]
    report = import_wdv(store, write_wdv(tmp_path / "w.json",
                                         [good, no_label, bad_type, bad_scores, 5, good]))
    assert (report.entries, report.units) == (6, 1)
    reasons = [str(e) for e in report.errors]
    assert "missing field(s): object_label" in reasons[0]
    assert "must be strings: subject_label" in reasons[1]
    assert "other than 0, 1 or 2" in reasons[2]
    assert "expected a JSON object" in reasons[3]
    assert "already in the session" in reasons[4]


def test_malformed_json_changes_nothing(store: SessionStore, tmp_path: Path) -> None:
    before = table_digest(store)
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"claim_id": "x",\n  "rank": }\n]\n')
    with pytest.raises(FormatError, match=r"not valid JSON: .* at line 3, column 11"):
        import_wdv(store, broken)
    not_array = tmp_path / "object.json"
    not_array.write_text('{"claim_id": "x"}')
    with pytest.raises(FormatError, match="expected an array"):
        import_wdv(store, not_array)
    assert table_digest(store) == before


def test_failure_mid_import_rolls_back(store: SessionStore, wdv_file: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import core.formats.wdv as wdv

    before = table_digest(store)

    def boom(db: Any, count: int) -> list[int]:
        raise RuntimeError("boom")

    monkeypatch.setattr(wdv, "_workers", boom)
    with pytest.raises(RuntimeError):
        import_wdv(store, wdv_file)
    assert table_digest(store) == before


def test_helpers_and_registry(wdv_file: Path) -> None:
    assert item_id("Q5") == "Q5" and item_id({"id": "P31", "entity-type": "property"}) is None
    assert item_id({"entity-type": "item", "numeric-id": 7}) == "Q7"
    assert item_id("+31000") is None and item_id(None) is None
    assert majority([1, 0, 1, 0]) == 0 and majority([]) is None
    assert aggregates([], [])["fluency_mean"] is None
    assert detect_format(wdv_file) == "wdv"
    assert IMPORT_FORMATS["wdv"].file_filter == "WDV JSON (*.json)"
    assert {"wdv", "turtle", "ntriples", "csv"} <= set(EXPORT_FORMATS)
