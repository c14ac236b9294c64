"""Every file a command reads goes through one check (core.io.files): a missing path, a
folder, a device, a FIFO, a file over the limit for its kind, bytes that are not UTF-8
and an unreadable file each end in one line that says so (exit 2), never a traceback,
a hang or an unbounded read (``verbalise --prompt-template en=/dev/zero`` read 5.4 GB
and died with MemoryError; ``synonyms import /dev/zero`` said "no such file")."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli import main
from core.io import files
from core.store import SessionStore

ROOT = Path(__file__).resolve().parents[2]

# command -> (argv for a file F in session S, the size limit of its kind or None)
COMMANDS: dict[str, tuple[Callable[[str, str], list[str]], int | None]] = {
    "verbalise": (
        lambda s, f: ["verbalise", "--session", s, "--prompt-template", f"en={f}", "--quiet"],
        files.TEMPLATE_LIMIT,
    ),
    "synonyms import": (lambda s, f: ["synonyms", "import", "--session", s, f], files.TABLE_LIMIT),
    "import-outputs": (
        lambda s, f: ["import-outputs", f, "--session", s, "--system", "x"],
        files.OUTPUTS_LIMIT,
    ),
    "import-judgments": (
        lambda s, f: ["import-judgments", f, "--session", s],
        files.JUDGMENTS_LIMIT,
    ),
    "import": (lambda s, f: ["import", f, "--session", s, "--format", "webnlg"], None),
}


def _missing(tmp: Path, _limit: int | None) -> Path:
    return tmp / "missing.txt"


def _folder(tmp: Path, _limit: int | None) -> Path:
    (tmp / "folder").mkdir()
    return tmp / "folder"


def _fifo(tmp: Path, _limit: int | None) -> Path:
    os.mkfifo(tmp / "fifo")
    return tmp / "fifo"


def _device(_tmp: Path, _limit: int | None) -> Path:
    return Path("/dev/zero")


def _oversized(tmp: Path, limit: int | None) -> Path:
    path = tmp / "big.txt"
    with path.open("wb") as handle:  # sparse: nothing is written but the size
        handle.truncate((limit or 0) + 1)
    return path


def _latin1(tmp: Path, _limit: int | None) -> Path:
    path = tmp / "latin1.txt"
    path.write_bytes(b"Q1\tcaf\xe9\n")
    return path


CASES: dict[str, tuple[Callable[[Path, int | None], Path], str]] = {
    "missing": (_missing, "there is no such file"),
    "folder": (_folder, "it is a folder, not a file"),
    "fifo": (_fifo, "it is not a regular file (a device, pipe or socket)"),
    "device": (_device, "it is not a regular file (a device, pipe or socket)"),
    "oversized": (_oversized, "it is too large"),
    "not-utf8": (_latin1, "line 1 is not UTF-8 text (byte 0xe9"),
}


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.taillens"
    SessionStore.create(path).close()
    return path


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_reading_command_refuses_a_bad_file_in_one_line(
    capsys: pytest.CaptureFixture[str], session: Path, tmp_path: Path, command: str, case: str
) -> None:
    argv, limit = COMMANDS[command]
    make, expected = CASES[case]
    if command == "import" and case in ("oversized", "not-utf8"):
        pytest.skip("imports are streamed (no size limit) and decode XML by its declaration")
    if command in ("import", "import-judgments") and case == "folder":
        pytest.skip("this command reads the files in a folder")
    path = make(tmp_path, limit)
    before = session.read_bytes()
    status = main(argv(str(session), str(path)))
    err = capsys.readouterr().err
    assert status == 2, err
    assert expected in err and str(path) in err, err
    assert "Traceback" not in err
    assert session.read_bytes() == before


def test_the_size_named_is_the_limit_of_the_kind(
    capsys: pytest.CaptureFixture[str], session: Path, tmp_path: Path
) -> None:
    path = _oversized(tmp_path, files.TEMPLATE_LIMIT)
    status = main(["verbalise", "--session", str(session), "--prompt-template", f"en={path}"])
    err = capsys.readouterr().err
    assert status == 2
    assert "the prompt template" in err and "(1.0 MB; the limit is 1.0 MB)" in err, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file all the same")
def test_an_unreadable_file_is_permission_denied(
    capsys: pytest.CaptureFixture[str], session: Path, tmp_path: Path
) -> None:
    path = tmp_path / "secret.tsv"
    path.write_text("Q1\tx\n")
    path.chmod(0)
    try:
        status = main(["synonyms", "import", "--session", str(session), str(path)])
    finally:
        path.chmod(0o600)
    assert status == 2 and "permission denied" in capsys.readouterr().err


def test_a_read_stops_at_the_limit_whatever_the_reported_size(tmp_path: Path) -> None:
    # /proc files report size 0 and are regular: the read itself is bounded.
    status = Path("/proc/self/status")
    if not status.is_file():
        pytest.skip("no /proc on this system")
    with pytest.raises(files.UnreadableFileError, match="too large"):
        files.read_bytes(status, limit=16)


@pytest.mark.parametrize(
    "argv",
    [
        ["verbalise", "--prompt-template", "en=/dev/zero"],
        ["synonyms", "import", "/dev/zero"],
    ],
    ids=["verbalise-template", "synonyms-import"],
)
def test_dev_zero_in_a_real_process(session: Path, taillens_home: Path, argv: list[str]) -> None:
    env = dict(os.environ, TAILLENS_HOME=str(taillens_home), PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-m", "app", *argv, "--session", str(session)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [result.stderr.strip().splitlines()[0]]  # one line
    assert "/dev/zero: it is not a regular file (a device, pipe or socket)" in result.stderr
