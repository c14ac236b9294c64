"""``taillens train-verbaliser``: a real process killed mid-training, then the same
command resumes it; bad input exits 2 with one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli import main
from core.verbalise.training.folder import CHECKPOINT, RECORD
from tests.fixtures.train_data import build_webnlg_model, build_webnlg_session
from tests.shared_data import ENRICHED_DEV, needs

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = [needs(*ENRICHED_DEV), pytest.mark.loads_models]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def webnlg(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("webnlg-cli")
    session = build_webnlg_session(folder / "webnlg.taillens")
    return session, build_webnlg_model(session, folder / "tiny-t5")


def command(session: Path, base: Path, out: Path, *extra: str) -> list[str]:
    return [
        "train-verbaliser",
        "--session",
        str(session),
        "--base",
        str(base),
        "--out",
        str(out),
        "--lr",
        "3e-3",
        "--epochs",
        "200",
        "--max-steps",
        "40",
        "--eval-every",
        "2",
        "--eval-limit",
        "2",
        "--num-beams",
        "1",
        "--max-new-tokens",
        "4",
        "--patience",
        "0",
        "--device",
        "cpu",
        "--threads",
        "1",
        *extra,
    ]


@pytest.mark.slow
def test_a_killed_training_resumes_from_its_checkpoint(
    webnlg: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session, base = webnlg
    out = tmp_path / "model"
    args = command(session, base, out)
    process = subprocess.Popen(
        [sys.executable, "-m", "app", *args, "--quiet"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        step = 0
        while time.monotonic() < deadline and process.poll() is None:
            if (out / RECORD).is_file():
                try:
                    step = json.loads((out / RECORD).read_text(encoding="utf-8"))["steps"]
                except ValueError:
                    step = 0  # never: the record is renamed into place whole
            if step >= 4:
                break
            time.sleep(0.2)
        assert step >= 4, process.stderr.read().decode() if process.poll() is not None else ""
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    assert (out / CHECKPOINT).is_file() and not (out / "config.json").exists()
    killed_at = json.loads((out / RECORD).read_text(encoding="utf-8"))["steps"]
    # Other settings are refused; the same command resumes.
    status = main([*args, "--eval-every", "3", "--quiet"])
    assert status == 2 and "another setup" in capsys.readouterr().err
    status = main([*args, "--sampling", "all", "--quiet"])
    assert status == 2 and "sampling 'wdv' → 'all'" in capsys.readouterr().err
    status = main([*args, "--quiet", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert status == 0 and result["resumed_from"] >= killed_at >= 4
    assert result["steps"] == 40 and (out / "config.json").is_file()
    assert not (out / CHECKPOINT).exists()
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")], "no temporary left"


def test_bad_input_exits_2_with_one_line(
    webnlg: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session, base = webnlg
    status = main(command(session, base, base))
    err = capsys.readouterr().err
    assert status == 2 and "already holds a model" in err and "Traceback" not in err
    status = main(command(session, tmp_path / "nothing", tmp_path / "m"))
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("taillens: ") and not (tmp_path / "m").exists()
    status = main([*command(session, base, tmp_path / "m"), "--dev-share", "2"])
    assert status == 2 and "--dev-share" in capsys.readouterr().err
