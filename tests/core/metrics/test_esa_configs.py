"""ESA's two named configurations: ``paper`` (the ESA paper's rules and nothing else, the
default) and ``taillens`` (its rules plus the second chance and group heads, dates and
numbers by value only); each has its own signature, chosen with ``score --esa-config``,
and the per-text table's signatures say which was used. The texts are WebNLG 2020
system outputs as published, where the two configurations disagree."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from app.cli import main
from core.errors import UserFacingError
from core.metrics import MetricOptions, create_metric
from core.metrics.base import ScoringItem
from core.metrics.esa.detect import entities_of_triples
from tests import shared_data

HALLMANN = entities_of_triples(
    [
        ("Piotr_Hallmann", "height", "175.26"),
        ("Piotr_Hallmann", "weight", "70.308"),
    ]
)
ATASOY = entities_of_triples(
    [
        ("Nurhan_Atasoy", "birthDate", "1934-01-01"),
        ("Nurhan_Atasoy", "nationality", "Turkish_people"),
    ]
)
# bt5 / TGen outputs for these entries (WebNLG 2020 submissions)
UNIT_GLUED = "Piotr Hallmann is 175.26m tall and weighs 70.308."
GROUP = "Nurhan Atasoy was born on the 1st January 1934 and is Turkish."


def _missing(config: str, text: str, entities) -> list[str]:
    metric = create_metric("esa", MetricOptions(esa_config=config))
    return list(
        metric.sentence_scores([ScoringItem(text, "en", entities=entities)])[0].details["missing"]
    )


def test_the_papers_rules_and_taillens_detection_differ_where_they_say() -> None:
    # The paper matches a literal as written too: "175.26m" is within 0.4 of "175.26".
    assert _missing("paper", UNIT_GLUED, HALLMANN) == []
    assert _missing("taillens", UNIT_GLUED, HALLMANN) == ["175.26"]
    # TailLens names a group by its head ("Turkish" for Turkish people); the paper does not.
    assert _missing("paper", GROUP, ATASOY) == ["Turkish people"]
    assert _missing("taillens", GROUP, ATASOY) == []


def test_each_configuration_has_its_own_signature_and_paper_is_the_default() -> None:
    paper = create_metric("esa").signature()
    ours = create_metric("esa", MetricOptions(esa_config="taillens")).signature()
    assert paper["config"] == "paper" and paper["second-chance"] == "off"
    assert paper["literals"] == "value+string" and paper["group-heads"] == "off"
    assert ours["config"] == "taillens" and ours["second-chance"] == "on"
    assert str(paper) != str(ours)
    with pytest.raises(
        UserFacingError, match="no ESA configuration 'v9' .choose paper or taillens"
    ):
        create_metric("esa", MetricOptions(esa_config="v9"))


@shared_data.needs(*shared_data.WEBNLG2020_EN)
def test_score_esa_config_and_the_per_text_table_say_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = str(tmp_path / "s.taillens")
    test = shared_data.require(*shared_data.WEBNLG2020_TEST)
    output = shared_data.require(*shared_data.WEBNLG2020_SUBMISSIONS, "bt5", "primary.en")
    assert main(["import", str(test), "--session", session]) == 0
    assert main(["import-outputs", str(output), "--system", "bt5", "--session", session]) == 0
    for config in ("taillens", "paper"):
        status = main(
            ["score", "--session", session, "--metrics", "esa", "--esa-config", config, "--quiet"]
        )
        assert status == 0
        table = tmp_path / f"{config}.csv"
        assert main(["export", "--texts", str(table), "--session", session, "--quiet"]) == 0
        signatures = json.loads(table.with_name(table.name + ".signatures.json").read_text())
        esa = " ".join(signatures["signatures"]["esa"])
        assert f"config:{config}" in esa
        with table.open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == 1779
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        main(["score", "--session", session, "--metrics", "esa", "--esa-config", "v9"])
    _, err = capsys.readouterr()
    assert refused.value.code == 2 and "invalid choice: 'v9'" in err
