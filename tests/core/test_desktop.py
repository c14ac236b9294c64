"""Desktop integration: ``taillens desktop install|uninstall`` against a temporary
XDG_DATA_HOME, in a real process, with the freedesktop tools where they exist."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from core.desktop import integration as desktop

ROOT = Path(__file__).resolve().parents[2]


def cli(data_home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_DATA_HOME": str(data_home), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "app", "desktop", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def read_entry(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path, encoding="utf-8")
    return dict(parser["Desktop Entry"])


def unescape(value: str) -> str:
    """A desktop file's string value as the spec reads it (\\s, \\n, \\t, \\r, \\\\)."""
    out, chars = [], iter(value)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            out.append({"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}.get(nxt, nxt))
        else:
            out.append(ch)
    return "".join(out)


def exec_argv(entry: dict[str, str]) -> list[str]:
    """The Exec line's arguments as the Desktop Entry spec reads them: the string value
    unescaped, then split on spaces outside double quotes, where a backslash escapes
    one of " ` $ \\; field codes dropped and %% read as %."""
    words: list[str] = []
    word: list[str] | None = None
    quoted = False
    chars = iter(unescape(entry["Exec"]))
    for ch in chars:
        if quoted and ch == "\\":
            word = (word or []) + [next(chars)]
        elif ch == '"':
            quoted = not quoted
            word = word or []
        elif ch == " " and not quoted:
            if word is not None:
                words.append("".join(word))
            word = None
        else:
            word = (word or []) + [ch]
    if word is not None:
        words.append("".join(word))
    return [w.replace("%%", "%") for w in words if w not in ("%f", "%F", "%u", "%U")]


def test_install_writes_entry_icon_and_file_type_that_start_this_taillens(
    tmp_path: Path,
) -> None:
    home = tmp_path / "share"
    done = cli(home, "install")
    assert done.returncode == 0, done.stderr
    files = desktop.planned_files(home)
    for path in files.values():
        assert path.is_file(), path
        assert f"wrote {path}" in done.stdout
    entry = read_entry(files["entry"])
    assert entry["MimeType"] == "application/x-taillens-session;"
    assert entry["Icon"] == "taillens"
    assert entry["Exec"].endswith(" %f")
    # The Exec line starts this very TailLens: run it with --version.
    argv = exec_argv(entry)
    assert Path(argv[0]).is_file()
    version = subprocess.run(
        [*argv, "--version"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert version.returncode == 0 and version.stdout.startswith("taillens "), version
    # shared-mime-info: the type and its glob.
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    mime = ET.parse(files["mime"]).getroot().find("m:mime-type", ns)
    assert mime is not None and mime.get("type") == "application/x-taillens-session"
    glob = mime.find("m:glob", ns)
    assert glob is not None and glob.get("pattern") == "*.taillens"
    assert files["icon"].read_text(encoding="utf-8").lstrip().startswith(("<?xml", "<!--"))
    ET.parse(files["icon"])  # still a well-formed SVG with the marker comment


@pytest.mark.skipif(
    shutil.which("update-mime-database") is None, reason="shared-mime-info is not installed"
)
def test_the_mime_database_maps_session_files_after_install_and_not_after_uninstall(
    tmp_path: Path,
) -> None:
    home = tmp_path / "share"
    assert cli(home, "install").returncode == 0
    globs = (home / "mime" / "globs2").read_text(encoding="utf-8")
    assert "application/x-taillens-session:*.taillens" in globs
    done = cli(home, "uninstall")
    assert done.returncode == 0, done.stderr
    assert not any(path.exists() for path in desktop.planned_files(home).values())
    globs = (home / "mime" / "globs2").read_text(encoding="utf-8")
    assert "x-taillens-session" not in globs


@pytest.mark.skipif(
    shutil.which("desktop-file-validate") is None, reason="desktop-file-utils is not installed"
)
@pytest.mark.parametrize("which", ["installed", "packaging"])
def test_desktop_entries_pass_desktop_file_validate(tmp_path: Path, which: str) -> None:
    if which == "installed":
        desktop.install(tmp_path, desktop.Launcher(("/opt/My Apps/taillens",), "bundle"))
        path = desktop.planned_files(tmp_path)["entry"]
    else:
        path = ROOT / "packaging" / "taillens.desktop"
    done = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error" not in done.stdout.lower()


def test_exec_quotes_a_path_with_spaces_and_reserved_characters(tmp_path: Path) -> None:
    odd = '/opt/My Apps/tail$lens "v2"/taillens'
    launcher = desktop.Launcher((odd,), "bundle")
    desktop.install(tmp_path, launcher)
    entry = read_entry(desktop.planned_files(tmp_path)["entry"])
    assert exec_argv(entry) == [odd]
    assert unescape(entry["TryExec"]) == odd


def test_the_packaged_entry_says_what_install_writes() -> None:
    packaged = read_entry(ROOT / "packaging" / "taillens.desktop")
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(desktop.desktop_entry(desktop.Launcher(("taillens",), "script")))
    written = dict(parser["Desktop Entry"])
    for key in ("TryExec", desktop.MARKER):
        written.pop(key)
    assert packaged == written


def test_uninstall_leaves_files_that_taillens_did_not_write(tmp_path: Path) -> None:
    mime = desktop.planned_files(tmp_path)["mime"]
    mime.parent.mkdir(parents=True)
    mime.write_text("<mime-info/>", encoding="utf-8")
    installed = desktop.install(tmp_path)
    assert installed.kept == [mime] and mime.read_text(encoding="utf-8") == "<mime-info/>"
    removed = desktop.uninstall(tmp_path)
    assert mime.exists() and removed.kept == [mime]
    assert desktop.planned_files(tmp_path)["entry"] in removed.removed


def test_a_pipe_or_a_link_where_a_file_goes_is_kept_unopened(tmp_path: Path) -> None:
    import os

    # A pipe's open waits for a writer: install must not open it. A link (dangling or
    # not) is someone else's: neither replaced nor followed.
    files = desktop.planned_files(tmp_path)
    files["mime"].parent.mkdir(parents=True)
    os.mkfifo(files["mime"])
    files["entry"].parent.mkdir(parents=True)
    victim = tmp_path / "victim.desktop"
    victim.write_text("[Desktop Entry]\nName=mine\n", encoding="utf-8")
    files["entry"].symlink_to(victim)
    files["icon"].parent.mkdir(parents=True)
    files["icon"].symlink_to(tmp_path / "nowhere.svg")
    installed = desktop.install(tmp_path)
    assert sorted(installed.kept) == sorted([files["mime"], files["entry"], files["icon"]])
    assert victim.read_text(encoding="utf-8") == "[Desktop Entry]\nName=mine\n"
    assert files["entry"].is_symlink() and files["icon"].is_symlink()
    removed = desktop.uninstall(tmp_path)
    assert files["mime"].exists() and files["entry"].is_symlink() and files["icon"].is_symlink()
    assert set(removed.kept) >= {files["mime"], files["entry"], files["icon"]}


def test_launcher_is_the_bundle_when_frozen(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    exe = tmp_path / "taillens"
    exe.write_text("")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(exe))
    launcher = desktop.current_launcher()
    assert launcher.kind == "bundle" and launcher.argv == (str(exe.resolve()),)


def test_an_unwritable_data_folder_gets_a_message(tmp_path: Path) -> None:
    blocker = tmp_path / "share"
    blocker.write_text("a file where the data folder should be")
    done = cli(blocker, "install")
    assert done.returncode == 2
    assert done.stderr.startswith("taillens: could not write ") and "Traceback" not in done.stderr
