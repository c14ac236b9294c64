"""A small real session for scoring tests: two units, references, two runs.

Unit 1 (Ada Lovelace, en + it): a date claim and an item object with an alias in
``terms``; gold and silver English references, a gold Italian one.
Unit 2 (Rome, en + it): English gold reference only, no Italian reference at all.
Run 1 ("template"): en and it texts for both units. Run 2 ("external"): en only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.store import SessionStore
from core.store.models import (
    Claim,
    DataUnit,
    ModelRun,
    Term,
    UnitReference,
    UnitTriple,
    Verbalisation,
)

REFS = {
    (1, "en", "gold"): [
        "Ada Lovelace, born on 10 December 1815, was a mathematician.",
        "Ada Lovelace was an English mathematician born on 10 December 1815.",
    ],
    (1, "en", "silver"): ["Ada Lovelace was a mathematician born in 1815."],
    (1, "it", "gold"): ["Ada Lovelace, nata il 10 dicembre 1815, era una matematica."],
    (2, "en", "gold"): ["Rome is in Italy, and Rome is the capital of Italy."],
}
TEXTS = {
    (1, 1, "en"): "Ada Lovelace was born on December 10, 1815 and worked as a mathematician.",
    (1, 1, "it"): "Ada Lovelace è nata il 10 dicembre 1815 ed era una matematica.",
    (1, 2, "en"): "Rome lies in Italy. It is the capital of Italy.",
    (1, 2, "it"): "Roma si trova in Italia.",
    (2, 1, "en"): "Augusta Ada King was a mathematician from London.",
    (2, 2, "en"): "Paris is a city.",
}


@dataclass(frozen=True)
class Ids:
    units: tuple[int, int]
    runs: tuple[int, int]
    verbalisations: dict[tuple[int, int, str], int]


def build_session(path: Path) -> Ids:
    with SessionStore.create(path) as store, store.unit_of_work() as db:
        birth = Claim(
            subject_qid="Q7259",
            property_pid="P569",
            value="+1815-12-10T00:00:00Z",
            value_type="time",
        )
        job = Claim(
            subject_qid="Q7259", property_pid="P106", value="Q170790", value_type="wikibase-item"
        )
        db.add_all([birth, job])
        db.add_all(
            [
                Term(item_id="Q7259", lang="en", kind="alias", text="Augusta Ada King", ordinal=0),
                Term(item_id="Q7259", lang="en", kind="label", text="Ada Lovelace", ordinal=0),
            ]
        )
        ada = DataUnit(
            uid="ada", root_qid="Q7259", shape="sibling", size=2, tier="long_tail", origin="test"
        )
        rome = DataUnit(
            uid="rome", root_qid="Q220", shape="chain", size=2, tier="head", origin="test"
        )
        db.add_all([ada, rome])
        db.flush()
        db.add_all(
            [
                UnitTriple(
                    unit_id=ada.id,
                    lang="en",
                    position=0,
                    subject="Ada Lovelace",
                    predicate="date of birth",
                    object="10 December 1815",
                    subject_qid="Q7259",
                    claim_id=birth.id,
                    object_value="+1815-12-10T00:00:00Z",
                ),
                UnitTriple(
                    unit_id=ada.id,
                    lang="en",
                    position=1,
                    subject="Ada Lovelace",
                    predicate="occupation",
                    object="mathematician",
                    subject_qid="Q7259",
                    object_value="Q170790",
                    claim_id=job.id,
                ),
                UnitTriple(
                    unit_id=ada.id,
                    lang="it",
                    position=0,
                    subject="Ada Lovelace",
                    predicate="data di nascita",
                    object="10 dicembre 1815",
                    subject_qid="Q7259",
                    claim_id=birth.id,
                ),
                UnitTriple(
                    unit_id=ada.id,
                    lang="it",
                    position=1,
                    subject="Ada Lovelace",
                    predicate="occupazione",
                    object="matematico",
                    object_override="matematica",
                    subject_qid="Q7259",
                    claim_id=job.id,
                ),
                UnitTriple(
                    unit_id=rome.id,
                    lang="en",
                    position=0,
                    subject="Rome",
                    predicate="country",
                    object="Italy",
                ),
                UnitTriple(
                    unit_id=rome.id,
                    lang="en",
                    position=1,
                    subject="Italy",
                    predicate="capital",
                    object="Rome",
                ),
                UnitTriple(
                    unit_id=rome.id,
                    lang="it",
                    position=0,
                    subject="Roma",
                    predicate="paese",
                    object="Italia",
                ),
                UnitTriple(
                    unit_id=rome.id,
                    lang="it",
                    position=1,
                    subject="Italia",
                    predicate="capitale",
                    object="Roma",
                ),
            ]
        )
        units = {1: ada.id, 2: rome.id}
        for (unit, lang, quality), texts in REFS.items():
            db.add_all(
                UnitReference(unit_id=units[unit], lang=lang, text=t, quality=quality)
                for t in texts
            )
        template = ModelRun(
            kind="template",
            model_id="template",
            system_name="template",
            status="finished",
            prompt_templates={},
        )
        external = ModelRun(
            kind="external", model_id="other", system_name="other", status="finished"
        )
        db.add_all([template, external])
        db.flush()
        runs = {1: template.id, 2: external.id}
        made = {}
        for (run, unit, lang), text in TEXTS.items():
            v = Verbalisation(
                run_id=runs[run],
                unit_id=units[unit],
                lang=lang,
                candidate_index=0,
                raw_output=text,
                text=text,
                parse_ok=True,
            )
            db.add(v)
            db.flush()
            made[(run, unit, lang)] = v.id
        return Ids((ada.id, rome.id), (template.id, external.id), made)
