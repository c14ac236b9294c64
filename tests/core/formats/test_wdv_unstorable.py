"""WDV records no session or standard JSON can hold: a
``sampling_weight`` of ``"heavy"``, ``NaN`` or ``Infinity`` imported silently and came
back out as non-standard JSON; a lone surrogate escape raised ``UnicodeEncodeError``.
Such a record is refused with its reason, like any record that breaks the format, and
the rest of the file is imported; exports are standard JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.formats.wdv.importer import import_wdv
from core.formats.wdv.writer import export_wdv
from core.store import SessionStore
from tests.fixtures.wdv_records import wdv_records

ROOT = Path(__file__).resolve().parents[3]


def _strict(text: str) -> object:
    """``json.loads`` as a standard JSON reader: NaN and Infinity refused."""

    def refuse(name: str) -> object:
        raise ValueError(f"not standard JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def _with_weight(path: Path, weight: str) -> Path:
    """The three test records, the second with ``"sampling_weight": WEIGHT`` as written."""
    text = json.dumps(wdv_records(), ensure_ascii=False, indent=1)
    assert text.count('"sampling_weight": 3.25') == 3
    head, _, tail = text.partition('"sampling_weight": 3.25')
    middle, _, rest = tail.partition('"sampling_weight": 3.25')
    path.write_text(
        head + '"sampling_weight": 3.25' + middle + f'"sampling_weight": {weight}' + rest,
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("weight", "reason"),
    [
        ('"heavy"', "sampling_weight must be a number, not 'heavy'"),
        ("NaN", "sampling_weight is nan, not a finite number (not standard JSON)"),
        ("Infinity", "sampling_weight is inf, not a finite number (not standard JSON)"),
        ("-Infinity", "sampling_weight is -inf, not a finite number (not standard JSON)"),
        ("true", "sampling_weight must be a number, not True"),
    ],
)
def test_a_sampling_weight_that_is_not_a_finite_number_is_refused(
    store: SessionStore, tmp_path: Path, weight: str, reason: str
) -> None:
    report = import_wdv(store, _with_weight(tmp_path / "w.json", weight))
    assert (report.entries, report.units) == (3, 2)
    assert [(e.where, e.reason) for e in report.errors] == [
        ("record 2 (claim Q2158$ABC-2)", reason)
    ]
    out = tmp_path / "out.json"
    export_wdv(store, out)
    records = _strict(out.read_text(encoding="utf-8"))
    assert [r["claim_id"] for r in records] == ["Q2158$ABC-1", "Q90$XYZ"]  # type: ignore[index]
    assert all(r["sampling_weight"] == 3.25 for r in records)  # type: ignore[index]


def test_a_non_finite_number_anywhere_in_a_record_is_refused(
    store: SessionStore, tmp_path: Path
) -> None:
    text = json.dumps(wdv_records(), indent=1).replace('"note": "extra field"', '"note": [1, NaN]')
    path = tmp_path / "nan.json"
    path.write_text(text, encoding="utf-8")
    report = import_wdv(store, path)
    assert report.units == 2
    assert report.errors[0].reason == "note[1] is nan, not a finite number (not standard JSON)"


def test_a_lone_surrogate_is_refused_with_its_field(store: SessionStore, tmp_path: Path) -> None:
    text = json.dumps(wdv_records(), indent=1)
    text = text.replace('"Paris is a city in France."', '"Paris \\ud800 is a city."', 1)
    text = text.replace('"Q2158$ABC-2"', '"Q2158$\\udfff"', 1)
    path = tmp_path / "surrogate.json"
    path.write_text(text, encoding="ascii")
    report = import_wdv(store, path)
    assert report.units == 1
    assert [(e.where, e.reason) for e in report.errors] == [
        (
            "record 2 (claim Q2158$\\udfff)",
            "claim_id holds a lone surrogate escape (half of a UTF-16 pair, not a "
            "character): 'Q2158$\\udfff'",
        ),
        (
            "record 3 (claim Q90$XYZ)",
            "verbalisation holds a lone surrogate escape (half of a UTF-16 pair, not a "
            "character): 'Paris \\ud800 is a city.'",
        ),
    ]
    # A proper pair (an emoji written as two escapes) is text and imports.
    pair = tmp_path / "pair.json"
    pair.write_text(text.replace("\\ud800", "\\ud83d\\ude00"), encoding="ascii")
    with SessionStore.create(tmp_path / "other.taillens") as other:
        assert import_wdv(other, pair).units == 2


def test_the_cli_names_the_records_and_exports_standard_json(tmp_path: Path) -> None:
    text = json.dumps(wdv_records(), indent=1)
    text = text.replace('"sampling_weight": 3.25', '"sampling_weight": Infinity', 1)
    text = text.replace('"Paris is a city in France."', '"Paris \\ud800"', 1)
    source = tmp_path / "bad.json"
    source.write_text(text, encoding="ascii")
    session, out = tmp_path / "s.taillens", tmp_path / "out.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def taillens(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app", *map(str, args)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    done = taillens("import", "--session", session, "--format", "wdv", "--quiet", source)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "record 1 (claim Q2158$ABC-1): sampling_weight is inf" in done.stderr
    assert "record 3 (claim Q90$XYZ): verbalisation holds a lone surrogate" in done.stderr
    done = taillens("export", "--session", session, "--format", "wdv", "--quiet", out)
    assert done.returncode == 0, done.stderr
    records = _strict(out.read_text(encoding="utf-8"))
    assert [r["claim_id"] for r in records] == ["Q2158$ABC-2"]  # type: ignore[index]
