"""The User-Agent's contact: asked once in the GUI (kept in QSettings), told in the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.commands.wikidata import say_contact_notice
from app.contact import ASKED_KEY, CONTACT_KEY, contact_for_live
from core.wikidata.sources import SourceError


@pytest.fixture
def settings(tmp_path: Path, monkeypatch) -> QSettings:
    monkeypatch.delenv("TAILLENS_CONTACT", raising=False)
    return QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)


def test_asked_once_for_live_wikidata_and_kept(settings: QSettings) -> None:
    asked: list[object] = []

    def ask(parent: object) -> str:
        asked.append(parent)
        return " lab@example.org "

    assert contact_for_live(settings, "http://127.0.0.1:9/sparql", ask=ask) is None
    assert asked == []  # another endpoint: no question
    assert contact_for_live(settings, "live", ask=ask) == "lab@example.org"
    assert contact_for_live(settings, "live", ask=ask) == "lab@example.org"
    assert len(asked) == 1 and settings.value(CONTACT_KEY) == "lab@example.org"
    # the stored contact also goes to other endpoints
    assert contact_for_live(settings, "http://127.0.0.1:9/sparql", ask=ask) == "lab@example.org"


def test_declining_is_remembered_and_never_asked_again(settings: QSettings) -> None:
    asked: list[object] = []

    def ask(parent: object) -> None:
        asked.append(parent)

    assert contact_for_live(settings, "live", ask=ask) is None
    assert contact_for_live(settings, "live", ask=ask) is None
    assert len(asked) == 1 and settings.value(ASKED_KEY) in (True, "true")
    assert not settings.value(CONTACT_KEY, "")


def test_environment_contact_needs_no_question(settings: QSettings, monkeypatch) -> None:
    monkeypatch.setenv("TAILLENS_CONTACT", "env@example.org")

    def ask(parent: object) -> str:
        raise AssertionError("asked although TAILLENS_CONTACT is set")

    assert contact_for_live(settings, "live", ask=ask) == "env@example.org"


def test_an_answer_that_cannot_go_in_a_header_is_refused(settings: QSettings) -> None:
    with pytest.raises(SourceError, match="control character"):
        contact_for_live(settings, "live", ask=lambda parent: "a@b.org\r\nX-Evil: 1")
    assert not settings.value(CONTACT_KEY, "")


def test_cli_names_the_options_and_explains_why(capsys, monkeypatch) -> None:
    monkeypatch.delenv("TAILLENS_CONTACT", raising=False)
    say_contact_notice("live", None)
    err = capsys.readouterr().err
    assert "--contact" in err and "TAILLENS_CONTACT" in err and "User-Agent" in err
    assert "no contact given" in err
    for spec, contact in (("live", "me@example.org"), ("embedded", None), ("cache", None)):
        say_contact_notice(spec, contact)
        assert capsys.readouterr().err == ""
    monkeypatch.setenv("TAILLENS_CONTACT", "me@example.org")
    say_contact_notice("live", None)
    assert capsys.readouterr().err == ""
