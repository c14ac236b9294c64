"""The Browser's shared state, through the real window: tier edits saved for the category
they were made in (on switch, session change and quit), the inspector and the Likelihood
tab following the shared state, Compare with on a category not fetched yet."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt

from app.browser import SAVE_DELAY_MS
from core.store import SessionStore
from core.tiers.cutoffs import TIER_BY_CODE, TierSettings
from core.tiers.stored import load_member_tiers, load_tier_settings

# The window with a session and the demo source (tests/fixtures/browser_window.py).
from tests.fixtures.browser_window import wired  # noqa: F401
from tests.fixtures.likelihood_session import CITIES, seed_city_session
from tests.fixtures.reads import settle_reads

EDITED = TierSettings("head_tail", fraction=0.35)


def fetch(qtbot, controller, panel, name: str, limit: int) -> None:
    panel.category_combo.setCurrentText(name)
    settle_reads(qtbot, controller)
    panel.limit_spin.setValue(limit)
    with qtbot.waitSignal(controller.runner.job_finished, timeout=30_000):
        panel.fetch_button.click()
    settle(qtbot, controller)


def settle(qtbot, controller) -> None:
    """Every job done and no save waiting for its debounce."""
    timer = controller.browser._save_timer
    qtbot.waitUntil(lambda: not controller.runner.active and not timer.isActive(), timeout=30_000)


def edit_tiers(panel) -> None:
    """The user switches to the head–tail threshold and sets the head fraction."""
    panel.split_combo.setCurrentIndex(panel.split_combo.findData("head_tail"))
    panel.fraction_spin.setValue(EDITED.fraction)
    assert panel.tier_settings() == EDITED


def shown_tiers(panel) -> dict[str, str]:
    """qid -> tier as the Browser's table shows it."""
    qids, codes = panel.model.columns.qids, panel.model.tiers
    return {q: TIER_BY_CODE[int(c)].value for q, c in zip(qids, codes, strict=True)}


def test_a_tier_edit_is_saved_for_its_category_when_another_is_picked_at_once(
    qtbot,
    wired,  # noqa: F811 - the imported fixture
) -> None:
    _window, controller, browser = wired
    panel, store = browser.panel, controller.store
    fetch(qtbot, controller, panel, "City", 40)
    fetch(qtbot, controller, panel, "Food", 60)
    city_before = load_tier_settings(store, "City")
    edit_tiers(panel)
    shown = shown_tiers(panel)
    panel.category_combo.setCurrentText("City")  # well within the 0.8 s debounce
    settle_reads(qtbot, controller)
    assert panel.category == "City"
    qtbot.wait(SAVE_DELAY_MS + 400)  # any debounced save has run by now
    settle(qtbot, controller)
    assert load_tier_settings(store, "Food") == EDITED
    assert {q: t for q, (t, _sub) in load_member_tiers(store, "Food").items()} == shown
    assert load_tier_settings(store, "City") == city_before  # not Food's edit, not rewritten


def test_a_tier_edit_is_saved_when_the_session_changes_or_the_app_quits(
    qtbot,
    wired,  # noqa: F811 - the imported fixture
    tmp_path: Path,
) -> None:
    _window, controller, browser = wired
    panel = browser.panel
    first = controller.store.path
    fetch(qtbot, controller, panel, "Food", 60)
    edit_tiers(panel)
    assert controller.new_session(tmp_path / "other.taillens")  # at once
    with SessionStore.open(first) as store:
        assert load_tier_settings(store, "Food") == EDITED

    # Quitting right after an edit: the session holds it.
    second = controller.store.path
    fetch(qtbot, controller, panel, "Airport", 50)
    panel.share_spin.setValue(0.6)
    controller.shutdown()
    with SessionStore.open(second) as store:
        assert load_tier_settings(store, "Airport").share == 0.6


def test_the_inspector_follows_the_selection_across_categories(
    qtbot,
    wired,  # noqa: F811 - the imported fixture
) -> None:
    _window, controller, browser = wired
    panel = browser.panel
    fetch(qtbot, controller, panel, "City", 30)
    panel.table.selectRow(0)
    qid = panel.selected_qid()
    qtbot.waitUntil(
        lambda: panel.inspector.details is not None and panel.inspector.details.qid == qid,
        timeout=30_000,
    )
    panel.category_combo.setCurrentText("Airport")
    settle_reads(qtbot, controller)
    assert panel.inspector.details is None  # no City entity under Airport
    assert panel.selected_qid() is None
    assert not panel.table.selectionModel().hasSelection()
    panel.category_combo.setCurrentText("City")
    settle_reads(qtbot, controller)
    assert panel.inspector.details is None  # nothing picked since


def test_ticking_an_unfetched_category_says_so_and_fetches_it_on_request(
    qtbot,
    wired,  # noqa: F811 - the imported fixture
) -> None:
    _window, controller, browser = wired
    panel = browser.panel
    fetch(qtbot, controller, panel, "Monument", 40)
    panel.limit_spin.setValue(30)
    food = panel.compare_list.findItems("Food", Qt.MatchFlag.MatchExactly)[0]
    food.setCheckState(Qt.CheckState.Checked)
    settle_reads(qtbot, controller)  # its members, read off the UI thread
    assert not panel.compare_note.isHidden()
    assert "Food" in panel.compare_note.text() and "fetch:Food" in panel.compare_note.text()
    panel.compare_note.linkActivated.emit("fetch:Food")
    qtbot.waitUntil(lambda: "Food" in panel.overlays, timeout=30_000)
    settle(qtbot, controller)
    assert [s.name for s in panel.plots.series] == ["Monument", "Food"]
    assert panel.compare_note.isHidden()
    assert panel.category == "Monument" and len(panel.model.columns) == 40
    # The fetched category got its tiers in the session, as a fetch of the shown one does.
    assert all(t is not None for t, _sub in load_member_tiers(controller.store, "Food").values())


# --- the Likelihood tab -----------------------------------------------------------------

# Label log-likelihoods: Anne Hidalgo Town (60 statements) and San Fernando (50) are
# long tail by the Pareto cut-off (700) and below the matched model cut-off (-2.2).
LOGLIK = dict(
    zip(
        [c[0] for c in CITIES],
        [-2.0, -2.1, -2.2, -9.0, -3.0, -3.5, -4.0, -4.5, -5.0, -5.5],
        strict=True,
    )
)


@pytest.fixture
def city_window(qtbot, tmp_path: Path):
    from app.gui import build_window
    from core.store.models import Entity, EntityLikelihood

    path = seed_city_session(tmp_path / "cities.taillens")
    with SessionStore.open(path) as store, store.unit_of_work() as db:
        for entity in db.query(Entity).all():
            db.add(
                EntityLikelihood(
                    entity_id=entity.id,
                    model="tiny",
                    model_fingerprint="f",
                    lang="en",
                    label=entity.qid,
                    label_loglik=LOGLIK[entity.qid],
                    label_tokens=3,
                )
            )
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(path)
    settle_reads(qtbot, controller)
    yield window, controller
    controller.shutdown()


def test_the_likelihood_tab_follows_tier_changes_live(qtbot, city_window) -> None:
    _window, controller = city_window
    browser, likelihood = controller.browser, controller.likelihood
    panel = browser.panel
    panel.category_combo.setCurrentText("City")
    settle_reads(qtbot, controller)
    assert panel.category == "City" and panel.split_combo.currentData() == "pareto"
    panel.plots.tabs.setCurrentIndex(likelihood.tab_index)
    tab = likelihood.panel
    qtbot.waitUntil(lambda: tab.view is not None and tab.found is not None, timeout=10_000)
    qtbot.waitUntil(lambda: tab.cutoff is not None, timeout=10_000)
    assert tab.cutoff == pytest.approx(-2.2)
    assert [d.qid for d in tab.found if d.kind == "head_by_counts_tail_by_model"] == []

    # Head–tail threshold at half the entities: the head reaches San Fernando (50).
    panel.split_combo.setCurrentIndex(panel.split_combo.findData("head_tail"))
    panel.fraction_spin.setValue(0.5)
    shown = shown_tiers(panel)
    assert tab.view.table.tiers == [shown[q] for q in tab.view.table.qids]
    heads = [d.qid for d in tab.found if d.kind == "head_by_counts_tail_by_model"]
    assert heads == ["Q1004", "Q1005"]  # most striking (lowest likelihood) first
    assert tab.cutoff == pytest.approx(-2.2)  # the model's cut-off stays where it was

    # A point picked in the tab is the Browser's selection: its row and the inspector.
    tab.entity_requested.emit("Q1004")
    assert panel.selected_qid() == "Q1004"
    assert panel.table.selectionModel().hasSelection()
