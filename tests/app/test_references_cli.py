"""``taillens references`` on the real TailNLG benchmark: translate in a real process
(tiny random Marian), QE without comet, post-edit (tiny causal LM), sample, review,
report, and the export as TailNLG XML with gold and silver lex that round-trips."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from app.cli import main
from core.formats.webnlg.importer import import_webnlg
from core.formats.webnlg.writer import export_webnlg
from core.store import SessionStore
from core.store.models import Annotator, DataUnit, ReferenceDerivation, UnitReference
from tests.shared_data import TAILNLG, require

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models

REPO = Path(__file__).resolve().parents[2]


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def _references(store: SessionStore, uids: list[str]) -> dict[str, list[tuple[str, str, str]]]:
    with store.snapshot() as db:
        rows = db.execute(
            select(DataUnit.uid, UnitReference.lang, UnitReference.quality, UnitReference.text)
            .join(DataUnit, DataUnit.id == UnitReference.unit_id)
            .where(DataUnit.uid.in_(uids))
            .order_by(UnitReference.id)
        ).all()
    out: dict[str, list[tuple[str, str, str]]] = {u: [] for u in uids}
    for uid, lang, quality, text in rows:
        out[uid].append((lang, quality, text))
    return out


@pytest.mark.slow
def test_pipeline_on_tailnlg_round_trips_as_gold_and_silver_lex(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tiny_marian: Path, tiny_causal_lm: Path
) -> None:
    source = require(*TAILNLG)
    session = tmp_path / "tailnlg.taillens"
    with SessionStore.create(session) as store:
        import_webnlg(store, source, flavour="tailnlg")
        with store.unit_of_work() as db:
            gold = db.execute(
                select(DataUnit.uid, UnitReference.lang)
                .join(UnitReference, UnitReference.unit_id == DataUnit.id)
                .where(UnitReference.quality == "gold")
                .order_by(DataUnit.id)
            ).all()
            langs: dict[str, set[str]] = {}
            for uid, lang in gold:
                langs.setdefault(uid, set()).add(lang)
            # Units whose only gold text is English (as TailNLG wrote them).
            uids = [uid for uid, found in langs.items() if found == {"en"}][:2]
            assert len(uids) == 2
            db.add(Annotator(name="ann"))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [
        sys.executable,
        "-m",
        "app",
        "references",
        "translate",
        "--session",
        str(session),
        "--from",
        "en",
        "--to",
        "it,es",
        "--model",
        str(tiny_marian),
        "--units",
        ",".join(uids),
        "--device",
        "cpu",
        "--beams",
        "1",
        "--max-new-tokens",
        "6",
        "--quiet",
        "--json",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["translated"] == {"en→it": 2, "en→es": 2} and summary["family"] == "marian"

    status, out, _ = _cli(capsys, "references", "qe", "--session", str(session))
    assert status == 0 and out.startswith("no quality estimation: unbabel-comet is not installed")

    status, out, _ = _cli(
        capsys,
        "references",
        "postedit",
        "--session",
        str(session),
        "--model",
        str(tiny_causal_lm),
        "--device",
        "cpu",
        "--max-new-tokens",
        "4",
        "--quiet",
        "--json",
    )
    assert status == 0
    edited = json.loads(out)
    assert edited["edited"] + edited["unparsable"] == 4

    status, out, _ = _cli(capsys, "references", "sample", "--session", str(session), "--json")
    sample = json.loads(out)
    assert sample["per_pair"] == {"en→es": 2, "en→it": 2} and "quality band" in sample["note"]
    first = sample["items"][0]["reference_id"]
    status, out, _ = _cli(
        capsys,
        "references",
        "review",
        "--session",
        str(session),
        "--annotator",
        "ann",
        "--reference",
        str(first),
        "--accuracy",
        "mistranslation",
        "--corrected",
        "Corretto.",
    )
    assert status == 0 and "gold reference" in out
    status, out, _ = _cli(
        capsys, "references", "review-report", "--session", str(session), "--json"
    )
    (pair,) = json.loads(out)["pairs"]
    assert pair["reviews"] == 1 and pair["accuracy_mean"] == 4.0 and pair["fluency_mean"] == 5.0

    with SessionStore.open(session) as store:
        before = _references(store, uids)
        with store.snapshot() as db:
            assert len(db.scalars(select(ReferenceDerivation.id)).all()) == 4
        out_xml = tmp_path / "out.xml"
        export_webnlg(store, out_xml, flavour="tailnlg")
    assert sum(1 for refs in before.values() for lang, q, _ in refs if q == "silver") >= 4
    assert any(t == "Corretto." and q == "gold" for refs in before.values() for _, q, t in refs)
    with SessionStore.create(tmp_path / "again.taillens") as again:
        report = import_webnlg(again, out_xml, flavour="tailnlg")
        assert report.summary_line() == "615 entries, 615 units, 1850 references, 0 errors"
        assert _references(again, uids) == before


def test_bad_input_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tiny_marian: Path
) -> None:
    session = tmp_path / "s.taillens"
    SessionStore.create(session).close()
    status, _, err = _cli(
        capsys,
        "references",
        "translate",
        "--session",
        str(session),
        "--from",
        "en",
        "--to",
        "it,xx",
        "--model",
        str(tiny_marian),
    )
    assert status == 2 and err.strip().startswith("taillens: no translation language code for 'xx'")
    status, _, err = _cli(
        capsys,
        "references",
        "translate",
        "--session",
        str(session),
        "--from",
        "en",
        "--to",
        "it",
        "--model",
        str(tmp_path / "missing"),
    )
    assert status == 2 and err.strip() == f"taillens: no model folder at {tmp_path / 'missing'}"
    status, _, err = _cli(capsys, "references", "sample", "--session", str(session), "-n", "0")
    assert status == 2 and "at least one" in err
