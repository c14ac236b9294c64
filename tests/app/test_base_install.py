"""The base install (no ``models`` extra) computes every metric that needs no model
weights, and a model metric says in one line what it needs. A real process
in which the model libraries cannot be imported, as in a base install or the bundle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.heavy import FULL_INSTALL
from tests.fixtures.base_install import base_cli
from tests.fixtures.scoring_session import build_session


@pytest.fixture
def session(tmp_path: Path) -> str:
    build_session(tmp_path / "s.taillens")
    return str(tmp_path / "s.taillens")


def test_metrics_without_weights_and_the_html_report_need_no_model_library(
    tmp_path: Path, session: str
) -> None:
    done = base_cli(
        tmp_path,
        "score", "--session", session, "--metrics", "bleu,chrf++,ter,rouge,esa,hallucination",
        "--json", "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "LOADED:\n" in done.stderr + "\n"  # no model library was even half imported
    metrics = {row["metric"] for row in json.loads(done.stdout)["corpus"]}
    assert {"bleu", "chrf++", "ter", "esa"} <= metrics and any("rouge" in m for m in metrics)
    html = tmp_path / "report.html"
    done = base_cli(tmp_path, "report", "--session", session, "--html", str(html))
    assert done.returncode == 0, done.stderr
    page = html.read_text(encoding="utf-8")
    assert "<svg" in page and "bleu" in page.lower()


@pytest.mark.parametrize("metric", ["bertscore", "similarity"])
def test_a_model_metric_says_in_one_line_that_it_needs_the_full_install(
    tmp_path: Path, session: str, metric: str
) -> None:
    """The scoring job notes it and scores the rest (the default set works)."""
    done = base_cli(
        tmp_path, "score", "--session", session, "--metrics", f"bleu,{metric}", "--json"
    )
    assert done.returncode == 0, done.stderr
    notes = json.loads(done.stdout)["notes"]
    assert any(note.startswith(f"{metric} {FULL_INSTALL}") for note in notes)
    assert "LOADED:\n" in done.stderr + "\n" and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("verbalise", "--model", "{tmp}", "--langs", "en"),
        ("retrieve", "--text", "Ada Lovelace", "--quiet"),
    ],
    ids=["local-model", "retrieval"],
)
def test_a_command_that_needs_a_model_library_fails_in_one_line(
    tmp_path: Path, session: str, args: tuple[str, ...]
) -> None:
    argv = [a.format(tmp=tmp_path) for a in args]
    done = base_cli(tmp_path, argv[0], "--session", session, *argv[1:])
    assert done.returncode == 2, done.stdout + done.stderr
    message = done.stderr.split("LOADED:")[0].strip()
    assert message.startswith("taillens: ") and FULL_INSTALL in message, done.stderr
    assert "\n" not in message and "Traceback" not in done.stderr
