"""The Scores panel on a real session: table, sorting, colour scale, detail, jobs.

The session is tests/fixtures/scoring_session.py (two units, gold and silver references, a
template run with en+it texts and an external run with en texts); the scores are made by
the real scoring job (esa, hallucination, bleu: no model is loaded;
test_scores_panel_bertscore.py scores BERTScore from the panel).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from core.metrics import MetricOptions
from core.metrics.scoring import ScoringRequest
from tests.fixtures.scoring_session import TEXTS
from widgets.scores import (
    HALLUCINATION_COLOUR,
    MENTION_COLOUR,
    ScoreDialog,
    ScoreTableModel,
    ScoreTableRow,
    highlighted_html,
)


def _column(model: ScoreTableModel, title: str) -> int:
    for c in range(model.columnCount()):
        if model.headerData(c, Qt.Orientation.Horizontal) == title:
            return c
    raise AssertionError(f"no column {title!r}")


def _values(model: ScoreTableModel, column: int) -> list:
    return [model.index(r, column).data(Qt.ItemDataRole.UserRole) for r in range(model.rowCount())]


def test_table_has_a_row_per_text_and_the_metric_columns(scores_window) -> None:
    _window, _controller, panel, _ids = scores_window
    model = panel.table_model
    assert model.rowCount() == len(TEXTS) == 6
    assert model.metric_columns == ["bleu:gold", "bleu:silver", "esa", "hallucination"]
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())] == [
        "unit",
        "model",
        "lang",
        "#",
        "tier",
        "bleu gold",
        "bleu silver",
        "esa",
        "hallucination",
        "text",
    ]
    assert "6 texts" in panel.count_label.text()
    # BLEU against silver references exists only for unit 1's English texts (two runs).
    assert sum(v is not None for v in _values(model, model.column_of("bleu:silver"))) == 2
    # Nothing scored with BERTScore or similarity: no note about their models (it was
    # shown, bold, "NOT rescaled", on every session); the column tips and the Score…
    # dialog say what the default would be.
    assert panel.notes.texts() == [] and panel.notes.isHidden()


def test_sorting_orders_values_and_keeps_missing_last(scores_window) -> None:
    _window, _controller, panel, _ids = scores_window
    model = panel.table_model
    esa = model.column_of("esa")
    panel.table.sortByColumn(esa, Qt.SortOrder.AscendingOrder)
    values = _values(model, esa)
    assert values == sorted(values)
    panel.table.sortByColumn(esa, Qt.SortOrder.DescendingOrder)
    assert _values(model, esa) == sorted(values, reverse=True)
    silver = model.column_of("bleu:silver")
    for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
        panel.table.sortByColumn(silver, order)
        got = _values(model, silver)
        assert got[2:] == [None] * 4 and None not in got[:2]


def test_colour_scale_differs_between_low_and_high(scores_window) -> None:
    _window, _controller, panel, _ids = scores_window
    model = panel.table_model
    for name, lower_better in (("esa", False), ("hallucination", True)):
        column = model.column_of(name)
        values = _values(model, column)
        low, high = values.index(min(values)), values.index(max(values))
        assert values[low] != values[high], name
        low_bg = model.index(low, column).data(Qt.ItemDataRole.BackgroundRole)
        high_bg = model.index(high, column).data(Qt.ItemDataRole.BackgroundRole)
        assert low_bg is not None and high_bg is not None and low_bg != high_bg
        # Green is the better end: high ESA, few hallucination candidates.
        better, worse = (low_bg, high_bg) if lower_better else (high_bg, low_bg)
        assert better.green() > better.red() and worse.red() > worse.green()
    # The key columns carry no colour.
    assert model.index(0, 0).data(Qt.ItemDataRole.BackgroundRole) is None


def _fragments(document) -> list[tuple[str, str]]:
    """(text, background colour name) of every fragment of a QTextDocument."""
    out = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            brush = fragment.charFormat().background()
            colour = brush.color().name() if brush.style() != Qt.BrushStyle.NoBrush else ""
            out.append((fragment.text(), colour))
            it += 1
        block = block.next()
    return out


def test_selecting_a_row_shows_mentions_missing_and_hallucinations(scores_window) -> None:
    _window, _controller, panel, ids = scores_window
    # "Augusta Ada King was a mathematician from London." (external run, unit 1, en):
    # the alias is a mention of Ada Lovelace, the date is missing, London matches nothing.
    vid = ids.verbalisations[(2, 1, "en")]
    assert panel.select_text(vid)
    detail = panel.shown_detail
    assert detail is not None and detail.text == TEXTS[(2, 1, "en")]
    mentioned = {detail.text[s.start : s.end] for s in detail.mentions}
    assert {"Augusta Ada King", "mathematician"} <= mentioned
    assert detail.missing == ["10 December 1815"]
    assert [s.label for s in detail.hallucinations] == ["London"]
    fragments = _fragments(panel.text_view.document())
    assert ("Augusta Ada King", MENTION_COLOUR) in fragments
    assert ("London", HALLUCINATION_COLOUR) in fragments
    plain = panel.text_view.toPlainText()
    assert "Missing entities (1)" in plain and "10 December 1815" in plain
    assert "entity mention (ESA)" in plain and "hallucination candidate" in plain  # legend
    unit = panel.unit_view.toPlainText()
    assert "Unit triples (en)" in unit and "date of birth" in unit and "occupation" in unit
    assert "gold" in unit and "silver" in unit
    assert "Ada Lovelace was a mathematician born in 1815." in unit  # the silver reference
    # Italian text: Italian triples, the Italian gold reference, no silver one.
    assert panel.select_text(ids.verbalisations[(1, 1, "it")])
    unit = panel.unit_view.toPlainText()
    assert "data di nascita" in unit and "date of birth" not in unit
    assert "nata il 10 dicembre 1815" in unit and "silver" not in unit


def test_highlighting_escapes_and_marks_overlaps() -> None:
    from widgets.scores import Span

    out = highlighted_html("A<b> & Rome", [Span(0, 4, "A<b>")], [Span(7, 11, "Rome")])
    assert "A&lt;b&gt;" in out and "&amp;" in out and "<b>" not in out
    assert f"background-color:{MENTION_COLOUR}" in out
    assert f"background-color:{HALLUCINATION_COLOUR}" in out


def test_filters_narrow_table_and_summary(qtbot, scores_window) -> None:
    _window, _controller, panel, ids = scores_window
    panel.lang_combo.setCurrentIndex(panel.lang_combo.findData("it"))
    model = panel.table_model
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=5_000)
    assert {model.index(r, 2).data() for r in range(model.rowCount())} == {"it"}
    summary = panel.summary_model
    assert {summary.index(r, 1).data() for r in range(summary.rowCount())} == {"it"}
    panel.lang_combo.setCurrentIndex(0)
    panel.run_combo.setCurrentIndex(panel.run_combo.findData(ids.runs[1]))
    panel.tier_combo.setCurrentIndex(panel.tier_combo.findData("head"))
    qtbot.waitUntil(lambda: model.rowCount() == 1, timeout=5_000)
    assert model.rowCount() == 1 and model.row_at(0).key == ids.verbalisations[(2, 2, "en")]
    assert "1 of 6 texts" in panel.count_label.text()


def test_summary_by_model_language_and_tier(scores_window) -> None:
    _window, _controller, panel, _ids = scores_window
    summary = panel.summary_model
    keys = {
        tuple(summary.index(r, c).data(Qt.ItemDataRole.UserRole) for c in range(3))
        for r in range(summary.rowCount())
    }
    assert keys == {
        ("template", "en", "long_tail"),
        ("template", "en", "head"),
        ("template", "it", "long_tail"),
        ("template", "it", "head"),
        ("other", "en", "long_tail"),
        ("other", "en", "head"),
    }
    esa = summary.column_of("esa")
    row = next(
        r for r in range(summary.rowCount()) if summary.row_at(r).key == ("other", "en", "head")
    )
    # "Paris is a city." mentions neither Rome nor Italy.
    assert summary.index(row, esa).data(Qt.ItemDataRole.UserRole) == 0.0
    assert summary.index(row, esa).data(Qt.ItemDataRole.ToolTipRole).endswith(", 1 text")
    # Tiers read as in every panel; the code stays the cell's value.
    tail = next(r for r in range(summary.rowCount()) if summary.row_at(r).key[2] == "long_tail")
    tier_column = summary.key_headers.index("tier")
    assert summary.index(tail, tier_column).data() == "long tail"
    assert summary.index(tail, tier_column).data(Qt.ItemDataRole.UserRole) == "long_tail"


def test_scoring_from_the_panel_runs_a_job_and_refreshes(qtbot, scores_window) -> None:
    _window, controller, panel, ids = scores_window
    assert "rougeL" not in panel.table_model.metric_columns
    panel.select_text(ids.verbalisations[(1, 2, "en")])
    panel.score_requested.emit(
        ScoringRequest(
            metrics=("rougeL", "chrf++"),
            run_ids=(ids.runs[0],),
            langs=("en",),
            options=MetricOptions(esa_distance=0.4),
        )
    )
    handle = controller.scores.handle
    assert handle is not None and handle.job.kind == "metrics.score"
    assert panel.progress_box.isVisibleTo(panel) and not panel.score_button.isEnabled()
    qtbot.waitUntil(lambda: panel.score_button.isEnabled(), timeout=30_000)
    # The refresh after the job reads the table in a job of its own.
    qtbot.waitUntil(lambda: "rougeL:gold" in panel.table_model.metric_columns, timeout=5_000)
    assert "chrf++:gold" in panel.table_model.metric_columns
    column = panel.table_model.column_of("rougeL:gold")
    scored = [
        panel.table_model.row_at(r).key
        for r in range(panel.table_model.rowCount())
        if panel.table_model.index(r, column).data(Qt.ItemDataRole.UserRole) is not None
    ]
    assert sorted(scored) == sorted(
        [ids.verbalisations[(1, 1, "en")], ids.verbalisations[(1, 2, "en")]]
    )
    assert "Scored 2 texts" in panel.progress_label.text()
    assert panel.score_button.isEnabled() and not panel.progress_box.isVisibleTo(panel)
    # The selection survived the refresh, and its detail lists the new scores.
    assert panel.selected_key() == ids.verbalisations[(1, 2, "en")]
    assert "rougeL gold" in panel.text_view.toPlainText()


def test_bad_request_is_a_message_and_nothing_runs(qtbot, scores_window) -> None:
    window, controller, panel, _ids = scores_window
    # Start-up jobs of other panels (unit lists, counts) may still be running: wait them out,
    # so what is checked is that the bad request itself started nothing.
    qtbot.waitUntil(lambda: not controller.runner.active, timeout=30_000)
    assert controller.scores.score(ScoringRequest(metrics=("nonsense",))) is None
    assert "unknown metric" in window.last_message.text()
    assert not controller.runner.active, [h.title for h in controller.runner.active.values()]


def test_cancel_stops_the_scoring_job(qtbot, scores_window, monkeypatch) -> None:
    import threading

    from core.metrics.esa.metric import EntityAdequacy

    _window, controller, panel, _ids = scores_window
    started, release = threading.Event(), threading.Event()
    real = EntityAdequacy.sentence_scores

    def slow(self, items):  # hold the job inside its first chunk until cancelled
        started.set()
        release.wait(10)
        return real(self, items)

    monkeypatch.setattr(EntityAdequacy, "sentence_scores", slow)
    panel.score_requested.emit(ScoringRequest(metrics=("esa", "bleu")))
    assert started.wait(10)
    panel.cancel_button.click()
    release.set()
    qtbot.waitUntil(lambda: panel.score_button.isEnabled(), timeout=30_000)
    assert controller.scores.handle.outcome.__class__.__name__ == "JobWasCancelled"
    assert "cancelled" in panel.progress_label.text()
    assert panel.score_button.isEnabled()
    assert panel.table_model.rowCount() == 6  # old scores still shown


def test_score_dialog_offers_the_registry_and_says_the_bertscore_model(
    qtbot, scores_window
) -> None:
    _window, controller, panel, ids = scores_window
    panel.score_button.click()
    # The choices (local models: a scan of the Hugging Face cache) are found in a job.
    qtbot.waitUntil(lambda: panel._dialog is not None, timeout=10_000)
    dialog = panel._dialog
    assert isinstance(dialog, ScoreDialog)
    from core.local_models.placement import accelerator_likely
    from core.metrics import ALL_METRICS, machine_defaults
    from core.metrics.meteor import wordnet_status

    assert list(dialog.metric_checks) == list(ALL_METRICS)
    # The defaults of this machine (WordNet, a GPU: tests/app/test_score_defaults.py).
    checked, _why = machine_defaults(
        wordnet_found=wordnet_status().found, accelerator=accelerator_likely()
    )
    assert {n for n, c in dialog.metric_checks.items() if c.isChecked()} == set(checked)
    assert "NOT rescaled" in dialog.bertscore_note.text()
    assert "all-MiniLM-L6-v2" in dialog.bertscore_note.text()
    assert "packaged all-MiniLM-L6-v2" in dialog.encoder_combo.currentText()
    for name, check in dialog.metric_checks.items():
        check.setChecked(name == "esa")
    dialog.runs_list.item(1).setCheckState(Qt.CheckState.Unchecked)
    dialog.lang_checks["it"].setChecked(False)
    request = dialog.request()  # core's own request, no dict
    assert request.metrics == ("esa",) and request.run_ids == (ids.runs[0],)
    assert request.langs == ("en",) and request.options.bertscore_model is None
    assert request.options.encoder is None and request.options.esa_distance == 0.4
    assert request.options.esa_config == "paper"  # the ESA paper's rules by default
    dialog.esa_config_combo.setCurrentIndex(dialog.esa_config_combo.findData("taillens"))
    assert dialog.request().options.esa_config == "taillens"
    with qtbot.waitSignal(panel.score_requested) as asked:
        dialog.accept()
    assert isinstance(asked.args[0], ScoringRequest) and asked.args[0].metrics == ("esa",)
    qtbot.waitUntil(lambda: panel.score_button.isEnabled(), timeout=30_000)


def test_splitter_stacks_when_narrow_and_sits_side_by_side_when_wide(qtbot, scores_window) -> None:
    _window, _controller, panel, _ids = scores_window
    panel.setParent(None)
    qtbot.addWidget(panel)
    panel.resize(340, 700)
    panel.show()
    qtbot.waitUntil(lambda: panel.splitter.orientation() == Qt.Orientation.Vertical)
    panel.resize(1400, 700)
    qtbot.waitUntil(lambda: panel.splitter.orientation() == Qt.Orientation.Horizontal)


def test_table_model_sort_keeps_the_selection() -> None:
    model = ScoreTableModel(("k",))
    rows = [
        ScoreTableRow(key=i, cells=(f"r{i}",), scores={"esa": v})
        for i, v in enumerate([0.5, None, 0.1, 1.0])
    ]
    model.set_rows(rows, ["esa"])
    from PySide6.QtCore import QPersistentModelIndex

    kept = QPersistentModelIndex(model.index(3, 1))  # key 3, esa 1.0
    model.sort(1, Qt.SortOrder.AscendingOrder)
    assert [model.row_at(r).key for r in range(4)] == [2, 0, 3, 1]
    assert kept.row() == 2


def test_a_finished_verbalise_job_refreshes_the_table(qtbot, scores_window) -> None:
    from core.verbalise import open_verbaliser
    from core.verbalise.job import verbalise_job

    _window, controller, panel, _ids = scores_window
    job = verbalise_job(controller.store, open_verbaliser("template"), "all", ["en"])
    handle = controller.run_job(job)
    qtbot.waitUntil(lambda: handle.done, timeout=30_000)
    qtbot.waitUntil(lambda: panel.table_model.rowCount() == 8, timeout=5_000)
    new = [
        panel.table_model.row_at(r)
        for r in range(8)
        if not any(v is not None for v in panel.table_model.row_at(r).scores.values())
    ]
    assert len(new) == 2 and "2 of" not in panel.count_label.text()
    assert panel.run_combo.count() == 4  # all runs + three runs


def test_refresh_reads_a_page_and_aggregates_off_the_ui_thread(
    qtbot, scores_window, monkeypatch
) -> None:
    """A refresh never reads every text: the choices, then one page with the figures and
    the summary (read_scores), each once and in a job; a filter change reads the page and
    figures again, not the choices."""
    import threading

    import app.scores.controller as wiring
    import app.scores.reads as reads_module
    import core.local_models.loader
    import core.metrics.scoring as scoring

    _window, controller, panel, _ids = scores_window
    reads: list[tuple[str, threading.Thread]] = []
    # The job may start at once on its own thread: it waits until the test has looked.
    looked = threading.Event()

    def spy(name, real, wait=False):
        def read(*args, **kwargs):
            if wait:
                looked.wait(10)
            reads.append((name, threading.current_thread()))
            return real(*args, **kwargs)

        return read

    def every_text(*_args, **_kwargs):
        raise AssertionError("the panel must not read every text")

    monkeypatch.setattr(
        reads_module, "read_overview", spy("choices", reads_module.read_overview, True)
    )
    monkeypatch.setattr(scoring, "corpus_scores", spy("corpus", scoring.corpus_scores))
    monkeypatch.setattr(wiring, "read_scores", spy("page", wiring.read_scores))
    monkeypatch.setattr(scoring, "sentence_score_table", every_text)
    monkeypatch.setattr(scoring, "summary_by_group", every_text)
    handle = controller.scores.refresh()
    assert handle is not None and handle.title == "Load scores"
    assert reads == []  # nothing read before the job runs
    looked.set()
    qtbot.waitUntil(lambda: handle.done and controller.scores.loading is None, timeout=10_000)
    assert handle.outcome.__class__.__name__ == "JobSucceeded", handle.outcome
    assert [what for what, _thread in reads] == ["choices", "corpus", "page"]
    assert all(thread is not threading.main_thread() for _what, thread in reads)
    assert panel.table_model.rowCount() == 6 and panel.summary_model.rowCount() == 6

    # A filter change reads page 1 and the figures again (in SQL), not the choices.
    reads.clear()
    panel.lang_combo.setCurrentIndex(panel.lang_combo.findData("it"))
    qtbot.waitUntil(lambda: panel.table_model.rowCount() == 2, timeout=5_000)
    assert [what for what, _thread in reads] == ["page"]
    assert all(thread is not threading.main_thread() for _what, thread in reads)
    assert {
        panel.summary_model.index(r, 1).data() for r in range(panel.summary_model.rowCount())
    } == {"it"}

    # The Score… dialog: the model scan runs in a job, the runs are the ones read.
    reads.clear()
    scans: list[threading.Thread] = []
    monkeypatch.setattr(
        core.local_models.loader,
        "discover_models",
        lambda *a, **k: scans.append(threading.current_thread()) or [],
    )
    panel.score_button.click()
    qtbot.waitUntil(lambda: panel._dialog is not None, timeout=10_000)
    assert len(scans) == 1 and scans[0] is not threading.main_thread()
    assert reads == []
    assert panel._dialog.runs_list.count() == 2
    panel._dialog.reject()


def test_a_stale_refresh_result_is_dropped(qtbot, scores_window, monkeypatch) -> None:
    import threading
    from dataclasses import replace

    import app.scores.reads as wiring

    _window, controller, panel, _ids = scores_window
    scores = controller.scores

    def superseded_while(blocked_in: str) -> tuple:
        """An older refresh held in ``blocked_in`` until a newer one has been shown; the
        older one then returns a table of one text."""
        real = wiring.read_overview
        real_view = type(scores).build_view
        started, release = threading.Event(), threading.Event()
        calls: list[int] = []

        def overview(store):
            calls.append(1)
            read = real(store)
            if len(calls) == 1 and blocked_in == "read":
                started.set()
                release.wait(10)
            return read

        def build_view(self, data, chosen, sort=None):
            if len(calls) == 1 and blocked_in == "view":
                started.set()
                release.wait(10)
                view = real_view(self, data, chosen, sort)
                return replace(view, rows=view.rows[:1], table=view.table[:1])
            return real_view(self, data, chosen, sort)

        monkeypatch.setattr(wiring, "read_overview", overview)
        monkeypatch.setattr(type(scores), "build_view", build_view)
        older = scores.refresh()
        assert started.wait(10)
        newer = scores.refresh()
        qtbot.waitUntil(lambda: newer.done and scores.loading is None, timeout=10_000)
        assert panel.table_model.rowCount() == 6
        release.set()
        qtbot.waitUntil(lambda: older.done, timeout=10_000)
        qtbot.wait(50)
        monkeypatch.setattr(wiring, "read_overview", real)
        monkeypatch.setattr(type(scores), "build_view", real_view)
        return older

    # Superseded during its read or its view (app.session_io.ViewReads): the newer
    # request cancelled it, and its one-text result is dropped, never shown.
    for blocked_in in ("read", "view"):
        older = superseded_while(blocked_in)
        assert older.outcome.__class__.__name__ == "JobWasCancelled"
        assert panel.table_model.rowCount() == 6 and "6 texts" in panel.count_label.text()
    assert len(scores.rows) == 6 and scores.data.total == 6


# -- sorting in the job: rows arrive sorted, the UI thread does not sort again ---------------


def _reference_order(values: list, descending: bool) -> list[int]:
    """The table's sort as first written (Python's stable sort, missing last both ways)."""
    present = [(v, i) for i, v in enumerate(values) if v is not None]
    absent = [i for i, v in enumerate(values) if v is None]

    def key(pair: tuple) -> tuple:
        v = pair[0]
        return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))

    present.sort(key=key, reverse=descending)
    return [i for _v, i in present] + absent


def test_sort_ranks_match_the_stable_sort_with_missing_last() -> None:
    import random

    from widgets.scores import MISSING_RANK, column_sort_ranks, sort_order

    # Hand-worked: ties keep their order, None is last in both directions.
    ranks = column_sort_ranks([0.5, None, 0.1, 1.0, 0.5])
    assert ranks.tolist() == [1, MISSING_RANK, 0, 2, 1]
    assert sort_order(ranks, False).tolist() == [2, 0, 4, 3, 1]
    assert sort_order(ranks, True).tolist() == [3, 0, 4, 2, 1]
    # Mixed cells: numbers (by value) before text (by its string).
    mixed = column_sort_ranks(["b", 3, None, "a", 1.0])
    assert sort_order(mixed, False).tolist() == [4, 1, 3, 0, 2]
    assert sort_order(mixed, True).tolist() == [0, 3, 1, 4, 2]
    # Against the reference sort on random columns with many ties and gaps.
    rng = random.Random(7)
    for _ in range(30):
        pool = [
            rng.choice(
                [
                    None,
                    rng.randint(0, 5),
                    rng.randint(0, 5) / 2,
                    rng.choice(["u1", "u10", "u2", "", "é"]),
                ]
            )
            for _ in range(rng.randint(0, 40))
        ]
        numeric = [None if v is None or isinstance(v, str) else float(v) for v in pool]
        for values in (pool, numeric):
            for descending in (False, True):
                got = sort_order(column_sort_ranks(values), descending).tolist()
                assert got == _reference_order(values, descending), (values, descending)


def test_presorted_rows_need_no_ranking_on_a_header_click(monkeypatch) -> None:
    import widgets.scores.ranking as scores_widgets  # where the table model looks it up
    from widgets.scores import SortSpec, presort_rows

    rows = [
        ScoreTableRow(key=i, cells=(f"u{9 - i}",), scores={"esa": v})
        for i, v in enumerate([0.5, None, 0.1, 1.0, 0.5])
    ]
    ordered = presort_rows(
        rows, ["esa"], SortSpec("esa", descending=True), key_headers=("k",), tail_headers=()
    )
    assert [r.key for r in ordered.rows] == [3, 0, 4, 2, 1]
    assert ordered.sorted_by == SortSpec("esa", True)
    assert (
        presort_rows(
            rows, ["esa"], SortSpec("bleu:gold"), key_headers=("k",), tail_headers=()
        ).sorted_by
        is None
    )  # a column that is not there
    model = ScoreTableModel(("k",))
    model.set_rows(ordered.rows, ["esa"], sort_keys=ordered.keys)
    assert [model.row_at(r).key for r in range(5)] == [3, 0, 4, 2, 1]  # as handed in

    def no_ranking(_values):
        raise AssertionError("the ranks came from the job")

    monkeypatch.setattr(scores_widgets, "column_sort_ranks", no_ranking)
    model.sort(0, Qt.SortOrder.AscendingOrder)  # by k: u5 … u9
    assert [model.row_at(r).key for r in range(5)] == [4, 3, 2, 1, 0]
    model.sort(1, Qt.SortOrder.AscendingOrder)  # ties (0.5) keep the k order: 4 then 0
    assert [model.row_at(r).key for r in range(5)] == [2, 4, 0, 3, 1]
    with pytest.raises(ValueError, match="one rank per row"):
        model.set_rows(rows[:2], ["esa"], sort_keys=ordered.keys)


def test_refresh_and_filter_rows_arrive_sorted_and_are_not_sorted_again(
    qtbot, scores_window, monkeypatch
) -> None:
    from widgets.scores import SortSpec

    _window, controller, panel, ids = scores_window
    model = panel.table_model
    header = panel.table.horizontalHeader()
    panel.table.sortByColumn(model.column_of("esa"), Qt.SortOrder.DescendingOrder)
    chosen = ids.verbalisations[(1, 2, "en")]
    assert panel.select_text(chosen)
    sorts: list[tuple] = []
    real_sort = ScoreTableModel.sort
    monkeypatch.setattr(
        ScoreTableModel, "sort", lambda self, *a: sorts.append(a) or real_sort(self, *a)
    )

    handle = controller.scores.refresh()
    qtbot.waitUntil(lambda: handle.done and controller.scores.loading is None, timeout=10_000)
    view = handle.outcome.result
    assert view.sorted_by == SortSpec("esa", descending=True)
    esa = [r.scores.get("esa") for r in view.table]  # sorted in the job
    assert None not in esa and esa == sorted(esa, reverse=True) and len(esa) == 6
    assert sorts == []  # the hand-off showed them as they came
    assert [model.row_at(r).key for r in range(6)] == [r.key for r in view.table]
    assert header.sortIndicatorSection() == model.column_of("esa")
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    assert panel.selected_key() == chosen  # the selection followed its row

    # A filter drops bleu:silver (only English texts have it): esa moves one column left,
    # the rows still come sorted by esa and the indicator follows it.
    before = model.column_of("esa")
    panel.lang_combo.setCurrentIndex(panel.lang_combo.findData("it"))
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=5_000)
    assert model.column_of("esa") == before - 1 and "bleu:silver" not in model.metric_columns
    assert header.sortIndicatorSection() == model.column_of("esa")
    values = _values(model, model.column_of("esa"))
    assert values == sorted(values, reverse=True)
    assert sorts == []

    # Sorted by a column the filter removes: the rows keep the job's order, no indicator.
    panel.lang_combo.setCurrentIndex(0)
    qtbot.waitUntil(lambda: model.rowCount() == 6, timeout=5_000)
    panel.table.sortByColumn(model.column_of("bleu:silver"), Qt.SortOrder.AscendingOrder)
    sorts.clear()
    panel.lang_combo.setCurrentIndex(panel.lang_combo.findData("it"))
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=5_000)
    assert header.sortIndicatorSection() == -1 and sorts == []


def test_rows_sorted_for_another_order_are_sorted_on_hand_off(scores_window) -> None:
    """A header click while the job ran: the hand-off sorts by what the table shows now."""
    from widgets.scores import SortSpec, presort_rows

    _window, controller, panel, _ids = scores_window
    model = panel.table_model
    columns = list(model.metric_columns)
    rows = [model.row_at(r) for r in range(model.rowCount())]
    stale = presort_rows(rows, columns, SortSpec("esa"))  # asked for: esa ascending
    panel.table.sortByColumn(model.column_of("bleu:gold"), Qt.SortOrder.DescendingOrder)
    expected = _reference_order_values(stale.rows, "bleu:gold")
    assert [r.scores.get("bleu:gold") for r in stale.rows] != expected  # not sorted yet
    panel.show_rows(
        stale.rows, columns, {}, len(rows), sort_keys=stale.keys, sorted_by=stale.sorted_by
    )
    assert _values(model, model.column_of("bleu:gold")) == expected
    assert expected[-1] is None and expected[:-1] == sorted(expected[:-1], reverse=True)


def _reference_order_values(rows: list, column: str) -> list:
    values = [r.scores.get(column) for r in rows]
    return [values[i] for i in _reference_order(values, descending=True)]


@pytest.mark.parametrize("wordnet_here", [True, False])
def test_score_dialog_says_where_wordnet_is_or_why_meteor_is_absent(
    qtbot, scores_window, tmp_path: Path, monkeypatch, wordnet_here: bool
) -> None:
    from tests.fixtures.tiny_wordnet import write_tiny_wordnet

    _window, controller, panel, ids = scores_window
    monkeypatch.setattr("core.metrics.meteor.DEBIAN_FOLDER", tmp_path / "no-debian")
    monkeypatch.setattr("core.metrics.meteor._nltk_data_folders", lambda: [])
    if wordnet_here:
        monkeypatch.setenv("TAILLENS_WORDNET", str(write_tiny_wordnet(tmp_path / "wn")))
    else:
        monkeypatch.delenv("TAILLENS_WORDNET", raising=False)
    panel.score_button.click()
    qtbot.waitUntil(lambda: panel._dialog is not None, timeout=10_000)
    dialog = panel._dialog
    note = dialog.wordnet_note.text()
    if wordnet_here:
        assert note == f"WordNet for METEOR: {tmp_path / 'wn'} (TAILLENS_WORDNET)"
    else:
        assert note.startswith("METEOR is absent: no WordNet database folder was found")
        assert "apt-get install wordnet-base" in note
    for name, check in dialog.metric_checks.items():
        check.setChecked(name in ("meteor", "ter"))
    dialog.exclude_empty_check.setChecked(True)
    request = dialog.request()
    assert request.metrics == ("ter", "meteor")
    assert (request.exclude_empty, request.exclude_unparsed, request.options.wordnet) == (
        True,
        False,
        None,
    )
    with qtbot.waitSignal(panel.score_requested):
        dialog.accept()
    qtbot.waitUntil(lambda: panel.score_button.isEnabled(), timeout=30_000)
    message = " ".join([panel.progress_label.text(), *panel.notes.texts()])
    assert ("METEOR is absent" in message) is not wordnet_here
    from core.metrics.scoring import corpus_scores

    metrics = {c.metric for c in corpus_scores(controller.store)}
    assert ("meteor" in metrics) is wordnet_here and "ter" in metrics


def test_score_dialog_descriptions_do_not_overlap(qtbot) -> None:
    from widgets.scores import ModelChoice, ScoreChoices

    choice = [ModelChoice("packaged all-MiniLM-L6-v2", None)]
    dialog = ScoreDialog(
        ScoreChoices(
            runs=[(1, "run 1")],
            langs=["en"],
            bertscore_models=choice,
            encoders=choice,
            ppl_models=choice,
        )
    )
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    image = dialog.grab()  # as a screenshot of the dialog would show it
    assert not image.isNull()
    notes = list(dialog.metric_notes.values())
    for label in notes:  # the whole text shows: no squeezed or cut description
        assert label.height() >= label.sizeHint().height(), label.text()
        assert label.width() >= label.sizeHint().width(), label.text()
    for upper, lower in zip(notes, notes[1:], strict=False):
        assert upper.geometry().bottom() < lower.geometry().top(), (upper.text(), lower.text())
    assert "causal model" in dialog.metric_notes["ppl"].text()


# -- paging: the table holds a page of the texts, the next comes on scrolling -------------


def test_panel_shows_page_one_and_fetches_the_next_on_scrolling(qtbot, scores_window) -> None:
    from PySide6.QtCore import QModelIndex

    from core.metrics.score_pages import ScoreSort, read_page

    _window, controller, panel, _ids = scores_window
    scores, model = controller.scores, panel.table_model
    scores.page_size = 4
    handle = scores.refresh()
    qtbot.waitUntil(lambda: handle.done and scores.loading is None, timeout=10_000)
    # Page 1: four of the six texts; the count, the colour scale and the summary are of all.
    assert model.rowCount() == 4 and model.total == 6 and not model.complete
    assert "6 texts (4 loaded; scroll for more)" in panel.count_label.text()
    esa = [v for r in scores.rows if (v := r.scores.get("esa")) is not None]
    assert model._ranges["esa"] == (0.0, 1.0) and max(esa) - min(esa) <= 1.0
    assert panel.summary_model.rowCount() == 6
    assert model.canFetchMore(QModelIndex())
    # Qt's view asks for the next page from a timer its row count starts, even while
    # hidden; a hidden table's request reads nothing (page 1 stays as it is).
    model.fetchMore(QModelIndex())
    assert scores.fetching is None and model.rowCount() == 4

    # Scrolled to the end, the view asks for the next page: a job reads it.
    panel.setParent(None)
    qtbot.addWidget(panel)
    panel.resize(700, 300)
    panel.show()
    qtbot.waitExposed(panel)
    panel.table.scrollToBottom()
    qtbot.waitUntil(lambda: model.rowCount() == 6, timeout=10_000)
    assert model.complete and not model.canFetchMore(QModelIndex())
    assert "6 texts ·" in panel.count_label.text() and "loaded" not in panel.count_label.text()
    assert [model.row_at(r).key for r in range(6)] == [
        r.verbalisation_id for r in read_page(controller.store, limit=10)
    ]
    assert [r.verbalisation_id for r in scores.rows] == [model.row_at(r).key for r in range(6)]

    # A header click on a table that holds only page 1 reads page 1 in that order (SQL).
    panel.hide()  # hidden, the table asks for no page: it keeps page 1 here
    handle = scores.refresh()
    qtbot.waitUntil(lambda: handle.done and scores.loading is None, timeout=10_000)
    assert model.rowCount() == 4
    panel.table.sortByColumn(model.column_of("esa"), Qt.SortOrder.DescendingOrder)
    sorting = scores.loading
    assert sorting is not None  # no sort of four rows here: a job asks the session
    qtbot.waitUntil(lambda: sorting.done and scores.loading is None, timeout=10_000)
    expected = read_page(controller.store, sort=ScoreSort("esa", True), limit=10)
    assert [model.row_at(r).key for r in range(4)] == [r.verbalisation_id for r in expected[:4]]
    assert sorting.outcome.result.sorted_by == ScoreSort("esa", True)
    panel.show()
    panel.table.scrollToBottom()
    qtbot.waitUntil(lambda: model.rowCount() == 6, timeout=10_000)
    assert [model.row_at(r).key for r in range(6)] == [r.verbalisation_id for r in expected]
    # Every row here now: a header click sorts in the model, no job.
    panel.table.sortByColumn(model.column_of("esa"), Qt.SortOrder.AscendingOrder)
    assert scores.loading is None
    values = _values(model, model.column_of("esa"))
    assert values == sorted(values)


def test_search_narrows_the_table_in_the_session(qtbot, scores_window) -> None:
    _window, controller, panel, ids = scores_window
    model = panel.table_model
    panel.search_edit.setText("italy")  # asked for a moment after the last key
    qtbot.waitUntil(lambda: model.rowCount() == 1, timeout=5_000)
    assert model.row_at(0).key == ids.verbalisations[(1, 2, "en")]
    assert "1 of 6 texts" in panel.count_label.text()
    assert controller.scores.view.chosen.search == "italy"
    panel.search_edit.clear()
    qtbot.waitUntil(lambda: model.rowCount() == 6, timeout=5_000)


def test_panel_fits_a_laptops_side_dock_with_long_names(qtbot) -> None:
    """A long run name or count does not widen the dock (a 1024 px
    window's side dock is about 400 px); at that width nothing is squeezed."""
    from widgets.scores import ScoresPanel

    panel = ScoresPanel()
    qtbot.addWidget(panel)
    panel.set_filter_choices(
        [(1, "run 1: meta-llama/Llama-3.1-8B-Instruct (12,915)"), (2, "run 2: other (3)")],
        ["en", "it", "es"],
        ["head", "long_tail", "torso"],
    )
    assert panel.tier_combo.itemText(2) == "long tail"
    assert panel.tier_combo.itemData(2) == "long_tail"
    panel.run_combo.setCurrentIndex(1)
    panel.show_rows([], ["bleu:gold", "esa"], {}, 12_915, matching=12_915, scored=12_000)
    assert "12,915 texts" in panel.count_label.text()
    assert panel.minimumSizeHint().width() <= 400
    panel.resize(400, 700)
    panel.show()
    qtbot.waitExposed(panel)
    for widget in (
        panel.score_button,
        panel.synonyms_button,
        panel.retrieval_button,
        panel.run_combo,
        panel.lang_combo,
        panel.tier_combo,
        panel.search_edit,
    ):
        assert widget.width() >= widget.minimumSizeHint().width(), widget
    assert panel.lang_combo.width() >= panel.lang_combo.fontMetrics().horizontalAdvance("Language")
    assert panel.count_label.height() >= panel.count_label.heightForWidth(panel.count_label.width())


def test_export_texts_writes_the_per_text_table_as_a_job(
    qtbot, scores_window, tmp_path, monkeypatch
):
    """ "Export texts…": the file asked for (format by suffix, the filter's when none),
    written by a core job; the open session is refused with a message."""
    window, controller, panel, _ids = scores_window
    chosen = tmp_path / "texts"  # no suffix: the JSON Lines filter names it
    monkeypatch.setattr(
        "widgets.save_dialog.QFileDialog.getSaveFileName",
        lambda *_args, **_kw: (str(chosen), "JSON Lines (*.jsonl)"),
    )
    with qtbot.waitSignal(panel.export_texts_requested, timeout=5_000) as asked:
        panel.export_texts_button.click()
    assert asked.args == [str(tmp_path / "texts.jsonl")]
    qtbot.waitUntil(lambda: (tmp_path / "texts.jsonl").exists(), timeout=30_000)
    qtbot.waitUntil(lambda: not controller.runner.active, timeout=30_000)
    import json

    rows = [json.loads(line) for line in (tmp_path / "texts.jsonl").read_text().splitlines()]
    assert sum(row["kind"] == "output" for row in rows) == len(TEXTS)
    assert {"bleu:gold", "esa", "esa:undetected_entities"} <= set(rows[0])
    assert (tmp_path / "texts.jsonl.signatures.json").exists()
    # Confirmed as every export is: the message with Open and Show in folder.
    qtbot.waitUntil(lambda: window.last_message is not None, timeout=5_000)
    assert not window.message_area.isHidden()
    assert window.message_bar.windowTitle() == "Export finished"
    assert "texts.jsonl" in window.message_bar.text()
    assert [b.text() for b in window.message_bar.action_buttons] == ["Open", "Show in folder"]
    errors = []
    monkeypatch.setattr(window, "show_error", lambda title, text: errors.append(text))
    assert controller.scores.export_texts(Path(controller.store.path)) is None
    assert errors and "it is the session being read" in errors[0]
