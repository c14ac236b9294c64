"""The Browser panel driven end to end: demo source, live fetch into the session, inspector."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures import browser_window

# fake_endpoint is a fixture (of tests/core/wikidata too); importing it makes it usable here.
from tests.fixtures.fake_sparql_endpoint import (  # noqa: F401
    JSON_HEADERS,
    FakeEndpoint,
    Reply,
    fake_endpoint,
    good_body,
)
from tests.fixtures.jobs import is_fetch
from tests.fixtures.reads import settle_reads

wired = browser_window.wired  # registers the fixture here


def test_fetch_builds_up_the_view_and_inspects(qtbot, wired) -> None:
    window, controller, browser = wired
    panel = browser.panel
    assert "DEMO DATA" in panel.source_badge.text()
    panel.category_combo.setCurrentText("Monument")
    settle_reads(qtbot, controller)
    panel.limit_spin.setValue(300)
    sizes: list[int] = []
    controller.runner.job_started.connect(
        lambda handle: handle.progressed.connect(lambda _p: sizes.append(len(panel.model.columns)))
    )
    with qtbot.waitSignal(controller.runner.job_finished, timeout=30_000, check_params_cb=is_fetch):
        panel.fetch_button.click()
    settle_reads(qtbot, controller)  # the members, read again off the UI thread
    qtbot.waitUntil(lambda: len(panel.model.columns) == 300, timeout=5000)
    assert panel.summary is not None and panel.summary.n == 300
    assert controller.store.info()["tables"]["category_members"] == 300

    panel.table.selectRow(0)  # the entity with most statements
    qid = panel.selected_qid()
    qtbot.waitUntil(
        lambda: panel.inspector.details is not None and panel.inspector.details.qid == qid,
        timeout=30_000,
    )
    assert panel.inspector.claims_model.rowCount() > 0

    history = controller.store.job_history()
    assert any(h["kind"] == "wikidata.fetch" and h["status"] == "done" for h in history)


def test_tiers_and_settings_are_saved_and_restored(qtbot, wired) -> None:
    from core.tiers.stored import load_member_tiers, load_tier_settings

    _window, controller, browser = wired
    panel = browser.panel
    panel.category_combo.setCurrentText("Food")
    settle_reads(qtbot, controller)
    panel.limit_spin.setValue(200)
    with qtbot.waitSignal(controller.runner.job_finished, timeout=30_000, check_params_cb=is_fetch):
        panel.fetch_button.click()
    settle_reads(qtbot, controller)  # the members, read again off the UI thread
    panel.split_combo.setCurrentIndex(1)  # head–tail threshold
    panel.fraction_spin.setValue(0.3)
    qtbot.waitUntil(
        lambda: load_tier_settings(controller.store, "Food").fraction == 0.3, timeout=10_000
    )
    settings = load_tier_settings(controller.store, "Food")
    assert settings.split_by == "head_tail"
    shown = sorted(
        q for q, code in zip(panel.model.columns.qids, panel.model.tiers, strict=True) if code == 0
    )

    def heads() -> list[str]:
        saved = load_member_tiers(controller.store, "Food")
        return sorted(q for q, (tier, _sub) in saved.items() if tier == "head")

    # Saved through the session writer, on its thread (app.session_io).
    qtbot.waitUntil(lambda: controller.writer.idle and heads() == shown, timeout=10_000)
    assert 0 < len(shown) < 200

    # Another category, then back: the saved choice comes back with it.
    panel.category_combo.setCurrentText("City")
    settle_reads(qtbot, controller)
    assert panel.split_combo.currentData() == "pareto"
    panel.category_combo.setCurrentText("Food")
    settle_reads(qtbot, controller)
    assert panel.split_combo.currentData() == "head_tail"
    assert panel.fraction_spin.value() == 0.3


def test_bad_endpoint_url_is_refused_with_a_message(wired) -> None:
    window, _controller, browser = wired
    browser.use_source("endpoint", "not a url")
    assert window.last_message is not None
    assert "unknown source" in window.last_message.text()
    assert browser.source_kind == "embedded"  # unchanged


def test_categories_are_added_and_patterns_edited_with_confirmation(qtbot, wired) -> None:
    from core.wikidata.cache import fetched_count
    from core.wikidata.categories import Category

    window, controller, browser = wired
    panel = browser.panel
    capital = Category("Capital", "Q515", "P31", "?item wdt:P31 wd:Q515 .")
    assert browser.save_category(capital)
    settle_reads(qtbot, controller)  # the saved category is shown once read
    assert panel.category_combo.currentText() == "Capital"
    assert "Capital" in panel.categories
    panel.limit_spin.setValue(40)
    with qtbot.waitSignal(controller.runner.job_finished, timeout=30_000, check_params_cb=is_fetch):
        panel.fetch_button.click()
    settle_reads(qtbot, controller)  # the members, read again off the UI thread
    assert fetched_count(controller.store, "Capital") == 40

    narrower = Category("Capital", "Q515", "P31", "?item wdt:P31 wd:Q515 ; wdt:P17 ?c .")
    questions: list[str] = []
    assert not browser.save_category(narrower, confirm=lambda q: questions.append(q) or False)
    assert "40 members" in questions[0]
    assert fetched_count(controller.store, "Capital") == 40  # nothing lost on "no"
    assert browser.save_category(narrower, confirm=lambda q: True)
    assert fetched_count(controller.store, "Capital") == 0

    bad = Category("Broken", "Q515", "P31", "?item wdt:P31 wd:Q515 . FILTER(")
    assert not browser.save_category(bad)
    assert "Category not saved" in window.error_log.model.entries[-1].source


def start_fetch(panel, controller):  # -> JobHandle of the fetch the button started
    panel.fetch_button.click()
    return next(h for h in controller.runner.active.values() if h.job.kind == "wikidata.fetch")


def test_retry_after_counts_down_in_the_status_bar(
    qtbot,
    wired,
    fake_endpoint: FakeEndpoint,  # noqa: F811 - the imported fixture
) -> None:
    import re

    from core.wikidata.cache import fetched_count

    window, controller, browser = wired
    panel = browser.panel
    browser.use_source("endpoint", fake_endpoint.url)
    assert browser.source_kind == "endpoint"
    messages: list[str] = []
    window.statusBar().messageChanged.connect(messages.append)

    def countdown() -> list[int]:
        return [
            int(m)
            for m in re.findall(
                r"HTTP 429 \(too many requests\)[^\n]*: retrying in "
                r"(\d+) s",
                "\n".join(messages),
            )
        ]

    # A 429 asking for 2 s, then the page: the wait is shown second by second, then done.
    fake_endpoint.replies = [
        Reply(429, b"slow down", {"Retry-After": "2"}),
        Reply(200, good_body(["Q101", "Q102"]), JSON_HEADERS),
    ]
    panel.category_combo.setCurrentText("City")
    settle_reads(qtbot, controller)
    panel.limit_spin.setValue(2)
    fetch = start_fetch(panel, controller)
    qtbot.waitUntil(lambda: fetch.id not in controller.runner.active, timeout=30_000)
    seen = countdown()
    assert seen[0] == 2 and 1 in seen and seen == sorted(seen, reverse=True), messages
    assert 0 not in seen, messages  # rounded up: never "retrying in 0 s" while waiting
    assert fetched_count(controller.store, "City") == 2
    assert "done in" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: len(panel.model.columns) == 2, timeout=5000)

    # A long Retry-After: cancelling during the countdown stops at once, caching nothing.
    messages.clear()
    fake_endpoint.replies = [Reply(429, b"slow down", {"Retry-After": "30"})]
    panel.category_combo.setCurrentText("Food")
    settle_reads(qtbot, controller)
    fetch = start_fetch(panel, controller)
    qtbot.waitUntil(lambda: 30 in countdown(), timeout=10_000)
    asked = len(fake_endpoint.requests)
    window.job_status.cancel_requested.emit(fetch.id)  # the status bar's cancel button
    # The job ends during the 30 s countdown: the endpoint is never asked again, and
    # the last countdown seen is still far from its end (no wait ran it out).
    qtbot.waitUntil(lambda: fetch.id not in controller.runner.active, timeout=10_000)
    assert len(fake_endpoint.requests) == asked
    assert min(countdown()) > 1, messages
    assert window.statusBar().currentMessage().endswith(": cancelled")
    assert fetched_count(controller.store, "Food") == 0
    assert any(
        h["kind"] == "wikidata.fetch"
        and h["params"]["category"] == "Food"
        and h["status"] == "cancelled"
        for h in controller.store.job_history()
    )


def test_airport_drag_save_reopen_and_cli_agree(qtbot, wired, tmp_path: Path, capsys) -> None:
    """A Pareto line dragged to 3.3 statements on Airport."""
    import json

    import numpy as np

    from app.cli import main
    from core.tiers.cutoffs import Distribution
    from core.tiers.stored import load_member_tiers

    _window, controller, browser = wired
    panel = browser.panel
    panel.category_combo.setCurrentText("Airport")
    settle_reads(qtbot, controller)
    panel.limit_spin.setValue(400)
    with qtbot.waitSignal(controller.runner.job_finished, timeout=30_000, check_params_cb=is_fetch):
        panel.fetch_button.click()
    settle_reads(qtbot, controller)  # the members, read again off the UI thread
    counts = np.asarray(panel.model.columns.statements)
    at_least_four = int((counts >= 4).sum())
    share_of_four = Distribution(counts).statement_share_at_or_above(4)
    panel.plots.line_moved.emit("pareto", 3.3)
    assert panel.lines["pareto"] == 4 and panel.summary.tiers[0].size == at_least_four
    shown_share = panel.tier_settings().share
    qtbot.waitUntil(
        lambda: (
            sum(t == "head" for t, _ in load_member_tiers(controller.store, "Airport").values())
            == at_least_four
        ),
        timeout=10_000,
    )
    path = controller.store.path
    assert controller.new_session(tmp_path / "other.taillens")  # "quit"
    assert controller.open_session(path)  # and reopen
    settle_reads(qtbot, controller)
    panel.category_combo.setCurrentText("Airport")
    settle_reads(qtbot, controller)
    qtbot.waitUntil(
        lambda: panel.category == "Airport" and panel.summary is not None, timeout=10_000
    )
    assert panel.lines["pareto"] == 4 and panel.summary.tiers[0].size == at_least_four
    assert panel.tier_settings().share == shown_share
    # The CLI given the share the panel shows: the same line and head.
    assert (
        main(
            [
                "distribution",
                "Airport",
                "--session",
                str(path),
                "--source",
                "cache",
                "--share",
                repr(shown_share),
                "--json",
                "--quiet",
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["cutoffs"]["pareto_value"] == 4
    assert result["tiers"]["by_pareto_cutoff"]["head"]["size"] == at_least_four
    assert shown_share <= share_of_four


def test_live_wikidata_asks_once_for_a_contact_and_sends_it(qtbot, wired, monkeypatch) -> None:
    window, controller, browser = wired
    monkeypatch.delenv("TAILLENS_CONTACT", raising=False)
    asked: list[object] = []

    def ask(parent: object) -> str:
        asked.append(parent)
        return "lab@example.org"

    browser.ask_contact = ask
    browser.use_source("live", "")
    assert browser.source.kind == "live" and asked == [window]
    assert "(lab@example.org)" in browser.source.user_agent
    browser.use_source("embedded", "")
    browser.use_source("live", "")
    assert len(asked) == 1 and "(lab@example.org)" in browser.source.user_agent
    assert window.settings.value("network/contact") == "lab@example.org"


def test_the_demo_data_loads_in_the_first_fetch_not_at_start_up(qtbot, tmp_path: Path) -> None:
    from PySide6.QtCore import QSettings

    from app.gui import build_window
    from core.wikidata.open_source import LazyDemoSource, _load_demo_source

    _load_demo_source.cache_clear()  # as in a new process
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    browser = controller.browser
    assert controller.new_session(tmp_path / "lazy.taillens")
    qtbot.waitUntil(lambda: not browser.start_up_pending, timeout=10_000)
    settle_reads(qtbot, controller)
    # Chosen, badge shown, nothing loaded: a window that fetches nothing never pays it.
    assert isinstance(browser.source, LazyDemoSource) and browser.source_kind == "embedded"
    assert "DEMO DATA" in browser.panel.source_badge.text()
    assert not browser.source.loaded

    notes: list[str] = []
    controller.runner.job_started.connect(
        lambda handle: handle.progressed.connect(lambda p: notes.append(p.message))
    )
    browser.panel.category_combo.setCurrentText("Monument")
    settle_reads(qtbot, controller)
    browser.panel.limit_spin.setValue(50)
    with qtbot.waitSignal(controller.runner.job_finished, timeout=60_000, check_params_cb=is_fetch):
        browser.panel.fetch_button.click()
    assert browser.source.loaded
    assert any("loading the demo snapshot" in note for note in notes)
    assert controller.store.info()["tables"]["category_members"] == 50
    controller.shutdown()
