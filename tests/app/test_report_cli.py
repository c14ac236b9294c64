"""``taillens report``, ``taillens annotations`` and ``taillens annotators`` on the fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from core.store import SessionStore
from tests.fixtures import report_session as fixture_module
from tests.fixtures.report_session import ReportSession

report_session = fixture_module.report_session  # registers the fixture here


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_report_prints_tables(
    capsys: pytest.CaptureFixture[str], report_session: ReportSession
) -> None:
    status, out, _ = run(
        capsys, "report", "--session", str(report_session.path), "--correction", "none"
    )
    assert status == 0
    assert "== Study table (gold references) ==" in out and "== Comparison by tier ==" in out
    study = out.split("== Study table")[1].split("==")[1]
    assert any(
        line.split()[:6] == ["model-a", "long_tail", "en", "25.00*", "35.00*", "70.00*"]
        for line in study.splitlines()
    )


def test_report_json_by_several_dimensions(
    capsys: pytest.CaptureFixture[str], report_session: ReportSession
) -> None:
    status, out, _ = run(
        capsys,
        "report",
        "--session",
        str(report_session.path),
        "--by",
        "lang",
        "model",
        "--metrics",
        "ppl",
        "--repetitions",
        "3",
        "--seed",
        "4",
        "--json",
    )
    assert status == 0
    payload = json.loads(out)
    assert payload["by"] == ["lang", "model"] and payload["metrics"] == ["ppl"]
    assert payload["settings"]["repetitions"] == 3 and payload["settings"]["seed"] == 4
    tables = {t["name"]: t for t in payload["tables"]}
    lang = tables["compare_lang"]
    row = dict(zip(lang["columns"], lang["rows"][0], strict=True))
    assert (row["metric"], row["group_a"], row["group_b"], row["n_a"]) == ("ppl", "en", "it", 8)
    assert len(tables["compare_model"]["rows"]) == 2  # en and it


def test_report_writes_csv_and_html(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, report_session: ReportSession
) -> None:
    status, out, _ = run(
        capsys,
        "report",
        "--session",
        str(report_session.path),
        "--by",
        "subtier",
        "--groups",
        "head",
        "long_tail_it",
        "--csv",
        str(tmp_path / "csv"),
        "--html",
        str(tmp_path / "r.html"),
    )
    assert status == 0 and "CSV files" in out and "plots)" in out
    assert (tmp_path / "csv" / "compare_subtier.csv").read_text().count("long_tail_it") > 0
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<svg " in html and "<table>" in html


def test_report_on_an_empty_session_says_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "empty.taillens"
    SessionStore.create(path).close()
    status, _, err = run(capsys, "report", "--session", str(path))
    assert status == 2 and "Nothing to compare" in err
    status, _, err = run(capsys, "annotations", "--session", str(path), "--aggregate")
    assert status == 2 and "no ratings to aggregate" in err


def test_report_refuses_unknown_metric(
    capsys: pytest.CaptureFixture[str], report_session: ReportSession
) -> None:
    status, _, err = run(
        capsys, "report", "--session", str(report_session.path), "--metrics", "meteor"
    )
    assert status == 2 and "no scores for meteor" in err


def test_annotations_aggregate_with_agreement(
    capsys: pytest.CaptureFixture[str], report_session: ReportSession
) -> None:
    status, out, _ = run(
        capsys,
        "annotations",
        "--session",
        str(report_session.path),
        "--aggregate",
        "--by",
        "tier",
        "--agreement",
        "--golden",
        "--json",
    )
    assert status == 0
    payload = json.loads(out)
    groups = {g["label"]: g for g in payload["groups"]}
    assert groups["tier=long_tail"]["fluency_mean"] == pytest.approx(2.25)
    assert groups["tier=long_tail"]["pooled_fluency_mean"] == pytest.approx(2.2)
    assert payload["overall"]["alpha_fluency"] is not None
    golden = {g["annotator"]: g for g in payload["golden"]}
    assert golden["ben"]["adequacy_accuracy"] == 0.0
    status, out, _ = run(
        capsys,
        "annotations",
        "--session",
        str(report_session.path),
        "--by",
        "model",
        "tier",
        "--items",
        "--golden",
    )
    assert status == 0 and "model=model-a, tier=head" in out and "golden: ana" in out


def test_annotators_list_and_add(
    capsys: pytest.CaptureFixture[str], report_session: ReportSession
) -> None:
    path = str(report_session.path)
    status, out, _ = run(capsys, "annotators", "--session", path, "--add", "Eve")
    assert status == 0 and "added annotator Eve" in out
    status, _, err = run(capsys, "annotators", "--session", path, "--add", "Eve")
    assert status == 2 and "already an annotator named 'Eve'" in err
    status, out, _ = run(capsys, "annotators", "--session", path, "--json")
    names = [a["name"] for a in json.loads(out)]
    assert status == 0 and names == ["ana", "ben", "cleo", "dora", "Eve"]


def test_annotations_weighted_flag(
    capsys: pytest.CaptureFixture[str], report_session: ReportSession
) -> None:
    path = str(report_session.path)
    status, out, _ = run(capsys, "annotations", "--session", path, "--json")
    plain = json.loads(out)
    status, out, _ = run(capsys, "annotations", "--session", path, "--weighted", "--json")
    weighted = json.loads(out)
    # No unit of the fixture has a sampling weight: every item counts 1, figures agree.
    assert status == 0 and weighted["weighted"] and not plain["weighted"]
    assert weighted["overall"]["adequacy_yes"] == pytest.approx(plain["overall"]["adequacy_yes"])
    status, out, _ = run(capsys, "annotations", "--session", path, "--weighted")
    assert status == 0 and "weighted by its sampling weight" in out


def test_report_study_references_and_datasets(
    capsys: pytest.CaptureFixture[str], report_session: ReportSession
) -> None:
    path = str(report_session.path)
    status, out, _ = run(
        capsys, "report", "--session", path, "--study-references", "split", "--json"
    )
    assert status == 0
    tables = {t["name"]: t for t in json.loads(out)["tables"]}
    assert tables["study_split"]["columns"][:4] == ["model", "type", "lang", "refs"]
    status, out, _ = run(capsys, "report", "--session", path, "--study-references", "pooled")
    assert status == 0 and "== Study table (gold and silver references pooled) ==" in out
    # Every unit of the fixture was built in the app: one dataset, nothing to compare.
    status, out, _ = run(capsys, "report", "--session", path, "--by", "dataset")
    assert status == 0 and "by dataset: nothing to compare; the session has only Wikidata" in out


def test_report_metrics_filter_every_table(
    capsys: pytest.CaptureFixture[str], report_session: ReportSession
) -> None:
    status, out, _ = run(capsys, "report", "--session", str(report_session.path), "--json")
    everything = {t["name"]: t for t in json.loads(out)["tables"]}
    all_metrics = {row[0] for row in everything["counts"]["rows"]}
    assert status == 0 and len(all_metrics) > 1 and "ppl" in all_metrics
    status, out, _ = run(
        capsys, "report", "--session", str(report_session.path), "--metrics", "ppl", "--json"
    )
    tables = {t["name"]: t for t in json.loads(out)["tables"]}
    assert status == 0 and [row[0] for row in tables["counts"]["rows"]] == ["ppl"]
    study = tables.get("study")
    if study is not None:  # the study table's metric columns are the chosen ones only
        others = all_metrics - {"ppl"}
        assert not any(m in col for col in study["columns"] for m in others), study["columns"]
    for name, table in tables.items():
        if "metric" in table["columns"]:
            at = table["columns"].index("metric")
            assert {row[at] for row in table["rows"]} <= {"ppl"}, name


def test_report_html_follows_the_umask(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, report_session: ReportSession
) -> None:
    import os

    old = os.umask(0o022)
    try:
        status, _, _ = run(
            capsys,
            "report",
            "--session",
            str(report_session.path),
            "--html",
            str(tmp_path / "r.html"),
        )
        os.umask(0o027)
        status2, _, _ = run(
            capsys,
            "report",
            "--session",
            str(report_session.path),
            "--html",
            str(tmp_path / "new.html"),
        )
    finally:
        os.umask(old)
    assert status == status2 == 0
    assert (tmp_path / "r.html").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "new.html").stat().st_mode & 0o777 == 0o640


def test_report_writes_every_plot_as_figures_in_the_formats_asked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, report_session: ReportSession
) -> None:
    from core.report import build_report, plot_specs

    with SessionStore.open_read_only(report_session.path) as store:
        plots = len(plot_specs(build_report(store)))
    folder = tmp_path / "figures"
    args = ("report", "--session", str(report_session.path), "--figures", str(folder))
    status, out, _ = run(capsys, *args, "--figure-format", "svg,PDF")
    assert status == 0 and f"wrote {2 * plots} figures to {folder}" in out
    written = sorted(p.name for p in folder.iterdir())
    assert len(written) == 2 * plots and written[0].startswith("01-")
    assert {Path(n).suffix for n in written} == {".svg", ".pdf"}
    assert (folder / written[0]).read_bytes().startswith(b"%PDF")
    assert b"<svg" in (folder / written[1]).read_bytes()

    # An unknown format is refused in one line before anything is built or written.
    other = tmp_path / "other"
    status, out, err = run(
        capsys, "report", "--session", str(report_session.path), "--figures", str(other),
        "--figure-format", "svg,gif",
    )  # fmt: skip
    assert status == 2 and err.strip().startswith("taillens: figure formats are png, svg")
    assert "gif" in err and not other.exists()
