"""The taillens CLI: version, session info, gui --screenshot, and bad input."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import COMMAND_MODULES, build_parser, main
from core import __version__
from core.store import SessionStore, head_revision

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, env_home: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TAILLENS_HOME=str(env_home), QT_QPA_PLATFORM="offscreen")
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_version(taillens_home: Path) -> None:
    result = run_cli("--version", env_home=taillens_home)
    assert result.returncode == 0
    assert result.stdout.strip() == f"taillens {__version__}"


def test_version_imports_neither_qt_nor_sqlalchemy() -> None:
    code = (
        "import sys\n"
        "from app.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "bad = [m for m in ('PySide6', 'sqlalchemy', 'alembic', 'torch') if m in sys.modules]\n"
        "print(bad)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_every_command_module_registers_a_handler() -> None:
    parser = build_parser()
    assert len(COMMAND_MODULES) >= 2
    assert parser.parse_args(["gui"]).handler
    assert parser.parse_args(["session", "info", "x.taillens"]).handler


def test_session_new_and_info(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.taillens"
    assert main(["session", "new", str(path)]) == 0
    capsys.readouterr()
    assert main(["session", "info", str(path)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["schema_revision"] == head_revision()
    assert info["tables"]["entities"] == 0
    assert "data_units" in info["tables"] and "annotations" in info["tables"]


def test_session_info_counts_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from core.store.models import Annotator

    path = tmp_path / "s.taillens"
    with SessionStore.create(path) as store, store.unit_of_work() as db:
        db.add_all([Annotator(name="ana"), Annotator(name="ben")])
    before = sha256(path)
    assert main(["session", "info", str(path)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["tables"]["annotators"] == 2
    assert sha256(path) == before  # info is read-only


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("missing.taillens", None, "does not exist"),
        ("notes.txt", b"just some notes\n", "not"),
        ("empty.taillens", b"", "empty"),
    ],
)
def test_session_info_bad_input_exits_nonzero_with_message(
    tmp_path: Path, name: str, content: bytes | None, expected: str, taillens_home: Path
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    result = run_cli("session", "info", str(path), env_home=taillens_home)
    assert result.returncode == 2
    assert result.stderr.startswith("taillens: ")
    assert name in result.stderr
    assert expected in result.stderr.lower()
    assert "Traceback" not in result.stderr
    if content is not None:
        assert path.read_bytes() == content


def test_gui_screenshot_writes_png(tmp_path: Path, taillens_home: Path) -> None:
    shot = tmp_path / "shot.png"
    session = tmp_path / "demo.taillens"
    SessionStore.create(session).close()
    result = run_cli("gui", str(session), "--screenshot", str(shot), env_home=taillens_home)
    assert result.returncode == 0, result.stderr
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 10_000  # a real rendered window, not an empty image


def test_gui_screenshot_waits_for_start_up_jobs_and_shows_a_panel(
    tmp_path: Path, taillens_home: Path
) -> None:
    shot = tmp_path / "units.png"
    session = tmp_path / "demo.taillens"
    SessionStore.create(session).close()
    result = run_cli(
        "gui",
        str(session),
        "--screenshot",
        str(shot),
        "--show",
        "units",
        "--wait-for-jobs",
        "60",
        env_home=taillens_home,
    )
    assert result.returncode == 0, result.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The start-up jobs (the session's reads) ran after the first paint and ended
    # before the grab; the demo data is not loaded by a window that fetches nothing.
    log = (taillens_home / "logs" / "taillens.log").read_text()
    started = log.count("' started")
    assert started and log.count("' done in") + log.count("' cancelled after") == started
    assert "demo" not in log.lower()


def test_gui_unknown_panel_is_refused(tmp_path: Path, taillens_home: Path) -> None:
    session = tmp_path / "demo.taillens"
    SessionStore.create(session).close()
    result = run_cli(
        "gui",
        str(session),
        "--screenshot",
        str(tmp_path / "x.png"),
        "--show",
        "nonsense",
        env_home=taillens_home,
    )
    assert result.returncode == 2
    assert "no panel 'nonsense'" in result.stderr


def test_gui_on_bad_session_exits_nonzero(tmp_path: Path, taillens_home: Path) -> None:
    bad = tmp_path / "bad.taillens"
    bad.write_bytes(b"PK\x03\x04 this is a zip, not a session")
    before = bad.read_bytes()
    shot = tmp_path / "shot.png"
    result = run_cli("gui", str(bad), "--screenshot", str(shot), env_home=taillens_home)
    assert result.returncode == 2
    assert bad.read_bytes() == before
    assert shot.exists()  # the window still opened (on the default session) with a message


def test_gui_without_a_display_says_so(taillens_home: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    env["TAILLENS_HOME"] = str(taillens_home)
    result = subprocess.run(
        [sys.executable, "-m", "app"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "no display" in result.stderr
    assert "--screenshot" in result.stderr


def test_a_window_option_first_opens_the_window_with_it(capsys) -> None:
    from app.cli import _starts_with_a_window_option

    parser = build_parser()
    assert _starts_with_a_window_option(parser, ["--theme", "light"])
    assert _starts_with_a_window_option(parser, ["--size=1024x640", "--screenshot", "x.png"])
    assert not _starts_with_a_window_option(parser, ["--version"])
    assert not _starts_with_a_window_option(parser, ["--no-such-option"])
    assert not _starts_with_a_window_option(parser, ["score", "--theme", "light"])
    # Parsed as the window's: its own choices are checked (gui's message, not "unrecognized").
    with pytest.raises(SystemExit) as stopped:
        main(["--theme", "purple"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "taillens gui" in err and "invalid choice: 'purple'" in err
