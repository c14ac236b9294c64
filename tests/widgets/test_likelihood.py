"""The Browser's Likelihood tab: scatter, Spearman, draggable cut-off, disagreement list;
alone on scores read from a real session, and wired into the window end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from sqlalchemy import select

from core.jobs import JobSucceeded, run_job
from core.store import SessionStore
from core.store.models import CategoryMember, Entity
from core.tiers.likelihood import LikelihoodRequest, likelihood_job, model_key
from core.tiers.model_tail import (
    LikelihoodView,
    correlations,
    disagreements,
    load_cutoff,
    load_likelihood_table,
    matched_cutoff,
    scored_models,
)
from tests.fixtures.likelihood_session import CITIES, seed_city_session
from tests.fixtures.reads import settle_reads
from widgets.likelihood import LikelihoodPanel

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models


@pytest.fixture
def scored_view(tmp_path: Path, tiny_causal_lm: Path) -> LikelihoodView:
    path = seed_city_session(tmp_path / "cities.taillens")
    with SessionStore.open(path) as store:
        outcome = run_job(
            likelihood_job(store, LikelihoodRequest("City", tiny_causal_lm, "en", device="cpu"))
        )
        assert isinstance(outcome, JobSucceeded)
        table = load_likelihood_table(store, "City", model_key(tiny_causal_lm), "en")
        return LikelihoodView(table, scored_models(store, "City"), None)


def test_panel_plots_both_signals_and_lists_disagreements(qtbot, scored_view) -> None:
    panel = LikelihoodPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 600)
    panel.show()
    panel.show_view(scored_view)
    table = scored_view.table
    assert len(panel.scatter.points()) == len(CITIES)
    rho = correlations(table, "label")[0].rho
    assert f"ρ = {rho:+.3f}" in panel.correlation_label.text()
    # The default cut-off makes the model's tail as large as the Wikidata long tail.
    assert panel.cutoff == matched_cutoff(table) and panel.line.value() == panel.cutoff
    expected = disagreements(table, panel.cutoff)
    assert [panel.list.item(r, 0).text() for r in range(panel.list.rowCount())] == [
        d.qid for d in expected
    ]
    highlighted = {p.data() for p in panel.scatter.points() if p.size() == 8}
    assert highlighted == {d.qid for d in expected}

    # Dragging the line below every likelihood: no model tail, so every Wikidata long-tail
    # entity is "tail by counts, head by model"; dropping it asks to store the sub-tier.
    lowest = float(np.nanmin(table.label_loglik)) - 1
    with qtbot.waitSignal(panel.cutoff_changed) as stored:
        panel.line.setValue(lowest)
        panel.line.sigPositionChangeFinished.emit(panel.line)
    assert stored.args[0].cutoff == pytest.approx(lowest)
    assert stored.args[0].model == table.model and stored.args[0].signal == "label"
    assert panel.list.rowCount() == table.tiers.count("long_tail")
    assert "0 model_tail" in panel.list_label.text()

    with qtbot.waitSignal(panel.entity_requested) as asked:
        panel.list.cellDoubleClicked.emit(0, 1)
    assert asked.args == [panel.found[0].qid]


def test_panel_without_scores_says_what_to_do(qtbot) -> None:
    panel = LikelihoodPanel()
    qtbot.addWidget(panel)
    panel.show_view(None)
    assert "score the members" in panel.correlation_label.text()
    assert not panel.line.isVisible() and panel.list.rowCount() == 0


def test_tab_scores_and_stores_the_cutoff_in_the_window(qtbot, tmp_path, tiny_causal_lm) -> None:
    from app.gui import build_window
    from app.report import REPORT_TOPICS
    from core.changes import Topic

    path = seed_city_session(tmp_path / "cities.taillens")
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    try:
        assert controller.open_session(path)
        settle_reads(qtbot, controller)
        controller.browser.show_category("City")
        settle_reads(qtbot, controller)
        tabs = controller.browser.panel.plots.tabs
        likelihood = controller.likelihood
        assert tabs.tabText(likelihood.tab_index) == "Likelihood"
        tabs.setCurrentIndex(likelihood.tab_index)
        qtbot.waitUntil(
            lambda: "score the members" in likelihood.panel.correlation_label.text(), timeout=10_000
        )

        heard: list[frozenset[Topic]] = []
        controller.changes.changed.connect(heard.append)
        likelihood.panel.model_edit.setText(str(tiny_causal_lm))
        likelihood.panel.score_button.click()
        qtbot.waitUntil(
            lambda: (
                likelihood.panel.view is not None
                and likelihood.panel.view.table.scored == len(CITIES)
            ),
            timeout=60_000,
        )
        # The tab shows the scores because the job announced what it wrote.
        assert heard == [frozenset({Topic.LIKELIHOOD})]
        panel = likelihood.panel
        cutoff = float(np.nanmedian(panel.view.table.label_loglik))
        panel.line.setValue(cutoff)
        # Stored through the session writer, on its thread (it rewrites every member).
        panel.line.sigPositionChangeFinished.emit(panel.line)
        qtbot.waitUntil(lambda: controller.writer.idle, timeout=10_000)
        store = controller.store
        assert load_cutoff(store, "City").cutoff == pytest.approx(cutoff)
        # The model_tail sub-tier changed: the Report (its "Model likelihood" dimension)
        # and the tab follow the announcement.
        qtbot.waitUntil(lambda: len(heard) == 2, timeout=10_000)
        assert heard[1] == frozenset({Topic.LIKELIHOOD})
        assert Topic.LIKELIHOOD in REPORT_TOPICS
        with store.unit_of_work() as db:
            tiers = dict(
                db.execute(
                    select(Entity.qid, CategoryMember.model_tier).join(
                        CategoryMember, CategoryMember.entity_id == Entity.id
                    )
                ).all()
            )
        values = dict(zip(panel.view.table.qids, panel.view.table.label_loglik, strict=True))
        assert tiers == {q: "model_tail" if v < cutoff else "model_head" for q, v in values.items()}
        # The Browser's "Export plot…" exports the shown tab: this one.
        exported = controller.browser.panel.plots.export(tmp_path / "likelihood.svg")
        assert "Likelihood against popularity" in exported.read_text(encoding="utf-8")
        # A bad model folder gets a message, and nothing runs.
        shown: list[str] = []
        window.show_error = lambda title, text: shown.append(text)
        panel.model_edit.setText(str(tmp_path))
        panel.score_button.click()
        assert shown and "config.json" in shown[0]
    finally:
        controller.shutdown()
