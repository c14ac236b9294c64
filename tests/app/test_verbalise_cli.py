"""``taillens verbalise`` and ``taillens models`` on a small session and tiny models."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.cli import main
from core.store import SessionStore
from core.store.models import ModelRun, Verbalisation
from tests.fixtures.verbalise_units import add_units

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.taillens"
    with SessionStore.create(path) as store:
        add_units(store, 3)
    return path


def counts(session: Path) -> tuple[int, int]:
    with SessionStore.open(session) as store, store.unit_of_work() as db:
        return (
            db.scalar(select(func.count(ModelRun.id))),
            db.scalar(select(func.count(Verbalisation.id))),
        )


def test_template_by_default_with_a_summary_table(
    capsys: pytest.CaptureFixture[str], session: Path
) -> None:
    status, out, err = run(capsys, "verbalise", "--session", str(session), "--langs", "en,es")
    assert status == 0, err
    table = dict(line.split(None, 1) for line in out.strip().splitlines())
    assert table["run"] == "1"
    assert table["model"] == "template (template)"
    assert (table["units"], table["texts"], table["unparsable"]) == ("3", "6", "0")
    assert "Verbalise with template" in err  # progress on stderr
    assert counts(session) == (1, 6)


def test_causal_model_with_an_edited_template_as_json(
    capsys: pytest.CaptureFixture[str], session: Path, tiny_causal_lm: Path, tmp_path: Path
) -> None:
    template = tmp_path / "en.txt"
    template.write_text("Facts:\n{triples}\nThe final verbalization is: [ ... ]")
    args = (
        "verbalise",
        "--session",
        str(session),
        "--model",
        str(tiny_causal_lm),
        "--langs",
        "en",
        "--candidates",
        "2",
        "--max-new-tokens",
        "3",
        "--batch-size",
        "2",
        "--device",
        "cpu",
        "--units",
        "tier:head",
        "--prompt-template",
        f"en={template}",
        "--json",
        "--quiet",
    )
    status, out, err = run(capsys, *args)
    assert status == 0, err
    result = json.loads(out)
    assert (result["kind"], result["units"], result["texts"]) == ("causal", 2, 4)
    assert result["unparsable"] == 4 and result["tokens"] > 0
    with SessionStore.open(session) as store, store.unit_of_work() as db:
        run_row = db.get(ModelRun, result["run_id"])
        assert run_row.prompt_templates == {"en": template.read_text()}
        assert run_row.parameters["units"] == "tier:head"
        # How the model was placed is recorded with the run and printed.
        assert run_row.parameters["placement"] == result["placement"]
    assert result["placement"]["device"] == "cpu" and result["placement"]["threads"] >= 1


def test_an_unfinished_run_is_resumed_by_default(
    capsys: pytest.CaptureFixture[str], session: Path
) -> None:
    args = ("verbalise", "--session", str(session), "--langs", "en", "--json", "--quiet")
    status, out, _ = run(capsys, *args)
    run_id = json.loads(out)["run_id"]
    with SessionStore.open(session) as store, store.unit_of_work() as db:
        db.get(ModelRun, run_id).status = "cancelled"  # as if Ctrl+C came after two units
        last = db.scalar(select(func.max(Verbalisation.id)))
        db.delete(db.get(Verbalisation, last))
    status, out, _ = run(capsys, *args)
    result = json.loads(out)
    assert status == 0
    assert (result["run_id"], result["resumed"]) == (run_id, True)
    assert (result["skipped_done"], result["texts"]) == (2, 1)
    status, out, _ = run(capsys, *args, "--new-run")
    assert json.loads(out)["run_id"] != run_id
    assert counts(session) == (2, 6)


def test_broken_model_fails_before_any_work(
    capsys: pytest.CaptureFixture[str], session: Path, tiny_causal_lm: Path, tmp_path: Path
) -> None:
    broken = shutil.copytree(tiny_causal_lm, tmp_path / "broken")
    (broken / "model.safetensors").write_bytes(b"\x00" * 10)
    status, _, err = run(capsys, "verbalise", "--session", str(session), "--model", str(broken))
    assert status == 2
    assert "model.safetensors is not a valid safetensors file" in err
    status, _, err = run(
        capsys, "verbalise", "--session", str(session), "--model", str(tmp_path / "nothing")
    )
    assert status == 2 and "no model folder at" in err
    assert counts(session) == (0, 0)  # no run row, no output


def test_a_placement_this_machine_cannot_give_fails_before_any_work(
    capsys: pytest.CaptureFixture[str], session: Path, tiny_causal_lm: Path
) -> None:
    common = ("verbalise", "--session", str(session), "--model", str(tiny_causal_lm))
    status, _, err = run(capsys, *common, "--device", "cpu", "--quantize", "8bit")
    assert status == 2 and "8bit loading needs a CUDA GPU" in err, err
    assert counts(session) == (0, 0)  # no run row, no output


def test_bad_settings_are_user_errors(capsys: pytest.CaptureFixture[str], session: Path) -> None:
    for args, message in [
        (("--candidates", "0"), "candidates must be 1..32"),
        (("--top-p", "1.5"), "top-p must be in (0, 1]"),
        (("--langs", "de"), "languages must be among"),
        (("--units", "ids:77"), "no unit(s) 77"),
        (("--prompt-template", "en"), "LANG=FILE"),
        (("--resume", "5"), "no run 5 to resume"),
    ]:
        status, _, err = run(capsys, "verbalise", "--session", str(session), *args)
        assert status == 2 and message in err, (args, err)


def test_models_lists_folders(
    capsys: pytest.CaptureFixture[str],
    tiny_causal_lm: Path,
    tiny_seq2seq: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.delenv("TAILLENS_MODEL_DIRS", raising=False)
    status, out, _ = run(
        capsys,
        "models",
        "--folder",
        str(tiny_causal_lm.parent),
        "--folder",
        str(tiny_seq2seq),
        "--json",
    )
    assert status == 0
    listed = {m["name"]: m for m in json.loads(out)}
    assert listed["tiny-llama"]["type"] == "causal"
    assert listed["tiny-t5"]["type"] == "seq2seq"
    assert listed["tiny-llama"]["size_bytes"] > 10_000
    status, out, _ = run(capsys, "models", "--folder", str(tiny_seq2seq))
    assert "tiny-t5" in out and "seq2seq" in out and out.strip().endswith("1 model")


def test_prompt_preset_and_seq2seq_prefix_are_recorded_with_the_run(
    capsys: pytest.CaptureFixture[str], session: Path, tiny_causal_lm: Path, tiny_seq2seq: Path
) -> None:
    from core.verbalise.prompts import default_template

    common = (
        "verbalise",
        "--session",
        str(session),
        "--langs",
        "it",
        "--candidates",
        "1",
        "--max-new-tokens",
        "2",
        "--device",
        "cpu",
        "--units",
        "tier:head",
        "--json",
        "--quiet",
    )
    status, out, err = run(capsys, *common, "--model", str(tiny_causal_lm))
    assert status == 0, err
    default_run = json.loads(out)["run_id"]
    status, out, err = run(
        capsys, *common, "--model", str(tiny_causal_lm), "--prompt-preset", "taillens"
    )
    assert status == 0, err
    taillens_run = json.loads(out)["run_id"]
    status, out, err = run(
        capsys,
        *common,
        "--model",
        str(tiny_seq2seq),
        "--beams",
        "1",
        "--seq2seq-prefix",
        "translate Graph to {language}: ",
    )
    assert status == 0, err
    seq2seq_run = json.loads(out)["run_id"]
    with SessionStore.open(session) as store, store.unit_of_work() as db:
        first, second, third = (
            db.get(ModelRun, i) for i in (default_run, taillens_run, seq2seq_run)
        )
        assert first.parameters["prompt_preset"] == "tailnlg"
        assert first.prompt_templates == {"it": default_template("it", "tailnlg")}
        assert second.parameters["prompt_preset"] == "taillens"
        assert second.prompt_templates == {"it": default_template("it", "taillens")}
        assert third.parameters["task_prefix"] == "translate Graph to {language}: "
        assert third.prompt_templates == {"it": "translate Graph to Italian: "}
        prompt = db.scalar(
            select(Verbalisation.prompt).where(Verbalisation.run_id == third.id).limit(1)
        )
        assert prompt.startswith("translate Graph to Italian: <H> ")
    with pytest.raises(SystemExit) as stopped:
        run(capsys, *common, "--model", str(tiny_causal_lm), "--prompt-preset", "other")
    assert stopped.value.code == 2 and "invalid choice" in capsys.readouterr().err
