"""The Verbalise panel and its controller on a real session, with tiny real models."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, QSettings
from sqlalchemy import func, select

from app.gui import build_window
from core.local_models.loader import configured_model_folders
from core.store.models import ModelRun, Verbalisation
from core.verbalise.local import CausalVerbaliser
from core.verbalise.template import TemplateVerbaliser
from tests.fixtures.reads import settle_reads
from tests.fixtures.verbalise_units import add_units

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models


@pytest.fixture
def wired(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # An empty hub cache: the picker must not list whatever this machine has cached.
    (tmp_path / "hub").mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("TAILLENS_MODEL_DIRS", raising=False)
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.new_session(tmp_path / "v.taillens")
    ids = add_units(controller.store, 5)
    controller.verbalise.session_opened()  # the units were added behind its back
    settle_reads(qtbot, controller)  # the picker and the preview are view reads
    yield window, controller, ids
    controller.shutdown()


def counts(controller) -> tuple[int, int]:
    with controller.store.unit_of_work() as db:
        return (
            db.scalar(select(func.count(ModelRun.id))),
            db.scalar(select(func.count(Verbalisation.id))),
        )


def combo_specs(panel) -> list[str]:
    return [panel.model_combo.itemData(i)["spec"] for i in range(panel.model_combo.count())]


def add_model(qtbot, controller, folder: Path, *, working: bool = True) -> None:
    panel = controller.verbalise.panel
    panel.add_folder_requested.emit(str(folder.parent))
    assert panel.model_spec() == str(folder)
    if working:
        # The preview loads the tokenizer as a job: let it finish, so no test leaves a
        # job behind or overlaps it with its own.
        qtbot.waitUntil(lambda: "<|assistant|>" in panel.preview.toPlainText(), timeout=30_000)


def test_picker_lists_the_template_verbaliser_and_a_configured_model(
    qtbot, wired, tiny_causal_lm: Path
) -> None:
    window, controller, _ids = wired
    panel = controller.verbalise.panel
    assert panel.model_spec() == "template"  # the default
    assert combo_specs(panel) == ["template", "server"]
    add_model(qtbot, controller, tiny_causal_lm)
    assert combo_specs(panel) == ["template", str(tiny_causal_lm), "server"]
    label = panel.model_combo.currentText()
    assert label.startswith("tiny-llama · causal · ") and label.endswith("KB")
    assert tiny_causal_lm.parent in configured_model_folders()  # remembered
    assert panel.error_label.isHidden() and not panel.error_label.text()
    assert panel.local_box.isEnabled() and not panel.server_box.isEnabled()


def test_a_reopened_session_loads_its_models_tokenizer_only_once_the_panel_is_seen(
    qtbot, wired, tmp_path: Path, tiny_causal_lm: Path
) -> None:
    window, controller, _ids = wired
    add_model(qtbot, controller, tiny_causal_lm)  # a folder added: loaded at once
    controller.verbalise.save_settings()  # the session keeps the model chosen
    qtbot.waitUntil(lambda: controller.writer.idle, timeout=10_000)
    path = controller.store.path
    controller.shutdown()

    window2, controller2 = build_window(
        QSettings(str(tmp_path / "s2.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window2)
    assert controller2.open_session(path)
    settle_reads(qtbot, controller2)
    verbalise, panel = controller2.verbalise, controller2.verbalise.panel
    assert panel.model_spec() == str(tiny_causal_lm)
    # The window is not shown: nobody sees the preview, no tokenizer is loaded for it.
    assert not verbalise._tokenizer_jobs and not verbalise._tokenizer_ready
    assert "once this panel is in view" in panel.preview_note.text()
    assert "[Paris0, country, France]" in panel.preview.toPlainText()  # the plain prompt
    assert verbalise.dock is not None
    verbalise.dock.visibilityChanged.emit(True)  # the panel comes into view
    qtbot.waitUntil(lambda: "<|assistant|>" in panel.preview.toPlainText(), timeout=30_000)
    controller2.shutdown()


def test_preview_shows_the_exact_prompt_and_follows_the_template(
    qtbot, wired, tiny_causal_lm: Path
) -> None:
    window, controller, ids = wired
    verbalise, panel = controller.verbalise, controller.verbalise.panel
    # The template verbaliser previews its input and its sentence.
    assert "[Paris0, country, France]" in panel.preview.toPlainText()
    assert "Paris0 has France as its country." in panel.preview.toPlainText()

    add_model(qtbot, controller, tiny_causal_lm, working=False)
    assert "Loading the tokenizer" in panel.preview_note.text()
    # The tokenizer loads as a job; the chat template then wraps the user turn.
    qtbot.waitUntil(lambda: "<|assistant|>" in panel.preview.toPlainText(), timeout=30_000)
    text = panel.preview.toPlainText()
    # The default preset: TailNLG's Appendix H, verbatim, the triples after it.
    assert text.startswith("<|user|>\nIn English, structured data is commonly represented")
    assert "[Paris0, country, France]" in text
    assert panel.prompt_preset() == "tailnlg"
    # The other preset: unedited templates follow it, and the run records it.
    panel.preset_combo.setCurrentIndex(panel.preset_combo.findData("taillens"))
    assert panel.preview.toPlainText().startswith("<|user|>\nYou are given facts")
    assert panel.edited_templates() == {} and panel.settings()["prompt_preset"] == "taillens"

    panel.template_edits["en"].setPlainText("Facts:\n{triples}\nSay it.")
    assert panel.preview.toPlainText() == (
        "<|user|>\nFacts:\n[Paris0, country, France]\nSay it.\n<|assistant|>\n"
    )
    assert panel.template_tabs.tabText(0) == "en *"

    controller.units.panel.unit_selected.emit(ids[1])  # the Units panel's selection
    settle_reads(qtbot, controller)  # its triples are a view read
    assert "[Paris1, mayor, Anne Hidalgo]" in panel.preview.toPlainText()
    panel.template_tabs.setCurrentIndex(1)  # it
    settle_reads(qtbot, controller)
    assert "[Parigi1, sindaco, Anne Hidalgo]" in panel.preview.toPlainText()

    panel.template_tabs.setCurrentIndex(0)
    panel.template_edits["en"].setPlainText("No placeholder")
    assert panel.preview.toPlainText() == ""
    assert "must contain {triples} exactly once" in panel.preview_note.text()
    panel.reset_button.click()
    assert "You are given facts" in panel.preview.toPlainText()
    assert panel.edited_templates() == {} and verbalise.unit_id == ids[1]


def test_template_run_stores_verbalisations_and_shows_the_summary(qtbot, wired) -> None:
    window, controller, ids = wired
    panel = controller.verbalise.panel
    panel.lang_checks["es"].setChecked(False)
    handle = controller.verbalise.run()
    assert handle is not None and not panel.run_button.isEnabled()
    qtbot.waitUntil(lambda: handle.done, timeout=20_000)
    settle_reads(qtbot, controller)  # the run list and outputs, read off the UI thread
    assert counts(controller) == (1, 10)  # 5 units x en, it; one candidate each
    summary = panel.summary_label.text()
    assert "<b>Run 1</b> finished" in summary and "10 texts for 5 units" in summary
    assert "0 unparsable" in summary
    assert panel.run_button.isEnabled() and not panel.cancel_button.isEnabled()
    row = [panel.runs_model.item(0, c).text() for c in range(5)]
    assert row == ["1", "template", "template", "finished", "10"]
    # The selected unit's outputs: parsed text, raw reply beside it.
    assert panel.outputs_model.rowCount() == 2
    assert panel.outputs_model.item(0, 2).text() == "Paris0 has France as its country."
    assert panel.outputs_model.item(1, 0).text() == "it"
    assert panel.raw_view.toPlainText() == "Paris0 has France as its country."
    # The settings are kept in the session.
    controller.verbalise.save_settings()
    assert '"langs": ["en", "it"]' in controller.store.get_meta("verbalise:settings")


def test_a_tiny_causal_run_completes_off_the_ui_thread(
    qtbot, wired, tiny_causal_lm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window, controller, _ids = wired
    panel = controller.verbalise.panel
    threads: list[threading.Thread] = []
    original = CausalVerbaliser.verbalise

    def recording(self, requests):
        threads.append(threading.current_thread())
        return original(self, requests)

    monkeypatch.setattr(CausalVerbaliser, "verbalise", recording)
    add_model(qtbot, controller, tiny_causal_lm)
    template = "Facts:\n{triples}\nThe final verbalization is: [ ... ]"
    panel.template_edits["en"].setPlainText(template)
    panel.device.setCurrentText("cpu")
    panel.candidates.setValue(2)
    panel.max_new_tokens.setValue(3)
    panel.batch_size.setValue(2)
    for lang in ("it", "es"):
        panel.lang_checks[lang].setChecked(False)
    panel.scope_radios["tier"].setChecked(True)
    panel.tier_combo.setCurrentIndex(panel.tier_combo.findData("head"))
    handle = controller.verbalise.run()
    assert handle is not None
    qtbot.waitUntil(lambda: handle.done, timeout=60_000)
    settle_reads(qtbot, controller)  # the run list and outputs, read off the UI thread
    assert threads and all(t is not threading.main_thread() for t in threads)
    summary = controller.verbalise.summary
    assert (summary.units, summary.texts, summary.unparsable) == (3, 6, 6)
    assert "tokens/s" in panel.summary_label.text()
    with controller.store.unit_of_work() as db:
        run = db.scalars(select(ModelRun)).one()
        assert (run.kind, run.status, run.model_id) == ("causal", "finished", str(tiny_causal_lm))
        assert run.prompt_templates == {"en": template}  # the edited template, as used
        assert run.parameters["max_new_tokens"] == 3 and run.parameters["units"] == "tier:head"
        assert run.parameters["prompt_preset"] == "tailnlg"  # the preset edits start from
    # Unparsable replies are flagged, the raw reply is kept.
    assert panel.outputs_model.rowCount() == 2
    assert panel.outputs_model.item(0, 2).text().startswith("unparsable")


def test_cancel_keeps_what_was_done_and_resume_finishes_it(
    qtbot, wired, monkeypatch: pytest.MonkeyPatch
) -> None:
    window, controller, _ids = wired
    panel = controller.verbalise.panel
    original = TemplateVerbaliser.verbalise

    def slow(self, requests):
        time.sleep(0.05)
        return original(self, requests)

    monkeypatch.setattr(TemplateVerbaliser, "verbalise", slow)
    panel.batch_size.setValue(1)
    handle = controller.verbalise.run()
    qtbot.waitUntil(
        lambda: handle.last_progress is not None and handle.last_progress.done >= 2, timeout=10_000
    )
    panel.cancel_button.click()
    qtbot.waitUntil(lambda: handle.done, timeout=10_000)
    settle_reads(qtbot, controller)  # the run list and outputs, read off the UI thread
    runs, texts = counts(controller)
    assert runs == 1 and 2 <= texts < 15
    assert "<b>Run 1</b> cancelled" in panel.summary_label.text()
    assert panel.runs_model.item(0, 3).text() == "cancelled"
    assert panel.run_button.isEnabled()

    assert panel.resume_check.isChecked()  # resuming is the default
    handle = controller.verbalise.run()
    qtbot.waitUntil(lambda: handle.done, timeout=10_000)
    settle_reads(qtbot, controller)  # the run list and outputs, read off the UI thread
    assert counts(controller) == (1, 15)
    assert "<b>Run 1</b> finished (resumed)" in panel.summary_label.text()
    assert f"{texts:,} already done" in panel.summary_label.text()


def test_a_broken_model_folder_shows_the_error_and_starts_no_run(
    qtbot, wired, tiny_causal_lm: Path, tmp_path: Path
) -> None:
    window, controller, _ids = wired
    panel = controller.verbalise.panel
    broken = tmp_path / "models" / "broken-llama"
    shutil.copytree(tiny_causal_lm, broken)
    weights = broken / "model.safetensors"
    data = weights.read_bytes()
    header = 8 + int.from_bytes(data[:8], "little")
    weights.write_bytes(data[: header + 100])  # a download cut short after the header
    add_model(qtbot, controller, broken, working=False)
    assert not panel.error_label.isHidden()
    assert "model.safetensors is truncated" in panel.error_label.text()
    panel.error_label.clear()
    assert controller.verbalise.run() is None
    assert "model.safetensors is truncated" in panel.error_label.text()
    # Panels' housekeeping jobs (loading scores, demo data) may still run on a busy
    # machine; what matters is that no verbalise job was started.
    assert not [h for h in controller.runner.active.values() if h.job.kind == "verbalise"]
    assert counts(controller) == (0, 0)
    assert panel.run_button.isEnabled()


def test_summary_says_when_a_live_run_was_not_resumed() -> None:
    from core.verbalise.outcome import VerbaliseSummary
    from core.verbalise.run_text import summary_html

    summary = VerbaliseSummary(
        run_id=5,
        requests=2,
        units=2,
        texts=6,
        not_resumed=[(3, "still running in process 42 on <host>")],
    )
    text = summary_html(summary, "finished", error_colour="red")
    assert "Run 3 was not resumed (still running in process 42 on &lt;host&gt;)" in text
    assert "this is a new run" in text
    assert "not resumed" not in summary_html(
        VerbaliseSummary(run_id=5), "finished", error_colour="red"
    )


def test_seq2seq_task_prefix_field_previews_and_is_recorded(
    qtbot, wired, tiny_seq2seq: Path
) -> None:
    window, controller, ids = wired
    panel = controller.verbalise.panel
    add_model(qtbot, controller, tiny_seq2seq, working=False)  # no chat template to load
    assert panel.task_prefix.isEnabled()
    # WDV's prefix by default, before the <H> <R> <T> triples.
    assert panel.preview.toPlainText() == (
        "translate from Graph to Text: <H> Paris0 <R> country <T> France"
    )
    panel.task_prefix.setText("translate Graph to {language}: ")
    assert panel.preview.toPlainText().startswith("translate Graph to English: <H> Paris0")
    panel.device.setCurrentText("cpu")
    panel.candidates.setValue(1)
    panel.num_beams.setValue(1)
    panel.max_new_tokens.setValue(2)
    for lang in ("it", "es"):
        panel.lang_checks[lang].setChecked(False)
    panel.scope_radios["tier"].setChecked(True)
    panel.tier_combo.setCurrentIndex(panel.tier_combo.findData("head"))
    handle = controller.verbalise.run()
    assert handle is not None
    qtbot.waitUntil(lambda: handle.done, timeout=60_000)
    settle_reads(qtbot, controller)  # the run list and outputs, read off the UI thread
    with controller.store.unit_of_work() as db:
        run = db.scalars(select(ModelRun)).one()
        assert run.parameters["task_prefix"] == "translate Graph to {language}: "
        assert run.prompt_templates == {"en": "translate Graph to English: "}
    # The setting is kept with the session's panel settings.
    controller.verbalise.save_settings()
    assert '"seq2seq_prefix": "translate Graph to {language}: "' in (
        controller.store.get_meta("verbalise:settings") or ""
    )


def test_the_unit_picker_reads_a_page_and_more_on_scroll_and_on_search(qtbot, wired) -> None:
    """The picker holds one page of units; scrolling its drop-down reads the next pages,
    a search reads the first page of its matches; the counts come from SQL."""
    window, controller, ids = wired
    verbalise, panel = controller.verbalise, controller.verbalise.panel
    verbalise.page_size = 2
    verbalise.refresh_units()
    picker = panel.unit_picker
    assert panel.preview_unit.count() == 2 and picker.units.matching == 5
    assert picker.matches_label.text() == "5 units"
    assert panel.scope_radios["all"].text() == "All units (5)"
    # The unit shown stays the Units panel's choice, whether its page is read or not.
    controller.units.panel.unit_selected.emit(ids[4])
    assert panel.preview_unit.currentIndex() == -1
    assert panel.preview_unit.placeholderText().startswith("u4 · City")
    assert panel.preview_unit_id() == ids[4] and "Now: u4" in panel.selected_label.text()
    settle_reads(qtbot, controller)  # the preview's triples are a view read
    assert "[Paris4, country, France]" in panel.preview.toPlainText()

    panel.tabs.setCurrentIndex(1)  # the Prompt tab
    window.show()
    panel.preview_unit.showPopup()
    view = panel.preview_unit.view()
    for _ in range(10):  # each scroll to the end reads the next page
        view.scrollToBottom()
        qtbot.wait(10)
    qtbot.waitUntil(lambda: panel.preview_unit.count() == 5, timeout=10_000)
    panel.preview_unit.hidePopup()
    data = [panel.preview_unit.itemData(i) for i in range(5)]
    assert data == ids and not picker.units.canFetchMore(QModelIndex())
    assert panel.preview_unit.currentIndex() == 4  # its page is read now

    # A search: its first page, its count; a pick in it previews that unit.
    picker.search.setText("LONG_TAIL")
    qtbot.waitUntil(lambda: picker.matches_label.text() == "2 matching", timeout=5_000)
    assert [panel.preview_unit.itemData(i) for i in range(2)] == [ids[1], ids[3]]
    assert panel.preview_unit_id() == ids[4]  # the previewed unit did not change
    panel.preview_unit.setCurrentIndex(1)  # a click on the second match
    panel.preview_unit.activated.emit(1)
    settle_reads(qtbot, controller)
    assert verbalise.unit_id == ids[3]
    assert "[Paris3, mayor, Anne Hidalgo]" in panel.preview.toPlainText()
    picker.search.setText("no such unit")
    qtbot.waitUntil(lambda: picker.matches_label.text() == "0 matching", timeout=5_000)
    assert panel.preview_unit.count() == 0 and panel.preview_unit_id() == ids[3]
    assert not picker.units.canFetchMore(QModelIndex())
    # Clearing the search lists every unit again, from the first page.
    picker.search.clear()
    qtbot.waitUntil(lambda: picker.matches_label.text() == "5 units", timeout=5_000)
    assert [panel.preview_unit.itemData(i) for i in range(2)] == ids[:2]


def test_a_run_over_all_units_or_a_tier_takes_every_match_not_the_pickers_page(
    qtbot, wired
) -> None:
    """The run's scope is resolved in SQL when it starts: all units (or all of a tier),
    whether or not the picker has read their page."""
    window, controller, ids = wired
    verbalise, panel = controller.verbalise, controller.verbalise.panel
    verbalise.page_size = 2
    for lang in ("it", "es"):
        panel.lang_checks[lang].setChecked(False)
    verbalise.refresh_units()
    # The units are chosen as the run starts, with the picker holding its first page.
    assert panel.preview_unit.count() == 2
    handle = verbalise.run()
    assert handle is not None
    qtbot.waitUntil(lambda: handle.done, timeout=20_000)
    settle_reads(qtbot, controller)  # the run list and outputs, read off the UI thread
    assert verbalise.summary.units == 5 and verbalise.summary.unit_ids == set(ids)
    panel.scope_radios["tier"].setChecked(True)
    panel.tier_combo.setCurrentIndex(panel.tier_combo.findData("long_tail"))
    panel.resume_check.setChecked(False)
    verbalise.refresh_units()
    assert panel.preview_unit.count() == 2
    handle = verbalise.run()
    assert handle is not None
    qtbot.waitUntil(lambda: handle.done, timeout=20_000)
    settle_reads(qtbot, controller)  # the run list and outputs, read off the UI thread
    assert verbalise.summary.unit_ids == {ids[1], ids[3]}


def test_the_settings_are_undone_and_redone_from_the_edit_menu(qtbot, wired) -> None:
    window, controller, _ids = wired
    verbalise = controller.verbalise
    form = verbalise.panel.scope_form
    form.lang_checks["it"].setChecked(not form.lang_checks["it"].isChecked())
    first = form.lang_checks["it"].isChecked()
    verbalise.save_settings()
    qtbot.waitUntil(lambda: controller.writer.idle, timeout=10_000)
    form.lang_checks["it"].setChecked(not first)
    verbalise.save_settings()
    qtbot.waitUntil(lambda: controller.writer.idle, timeout=10_000)
    assert window.action_undo.text() == "&Undo the Verbalise settings"

    window.action_undo.trigger()
    qtbot.waitUntil(lambda: form.lang_checks["it"].isChecked() == first, timeout=10_000)
    qtbot.wait(1000)  # past the panel's save delay: showing them saved nothing
    assert window.action_redo.isEnabled()
    window.action_redo.trigger()
    qtbot.waitUntil(lambda: form.lang_checks["it"].isChecked() != first, timeout=10_000)
    import json

    saved = json.loads(controller.store.get_meta("verbalise:settings"))
    assert ("it" in saved["langs"]) != first
