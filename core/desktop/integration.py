"""Desktop integration on Linux and other XDG desktops: a menu entry, an icon and the
``*.taillens`` file type, so a session opens with a double click.

``install()`` writes, under the user's data folder (``$XDG_DATA_HOME``, else
``~/.local/share``), the files the freedesktop.org specifications read:

* ``applications/taillens.desktop`` (Desktop Entry Specification), whose ``Exec``
  names whichever ``taillens`` is running: the bundle's executable, the virtual
  environment's ``taillens`` script, or ``python -m taillens`` as a last resort;
* ``icons/hicolor/scalable/apps/taillens.svg`` and the same icon for the file type
  (Icon Theme Specification);
* ``mime/packages/taillens.xml`` (shared-mime-info) declaring
  ``application/x-taillens-session`` for ``*.taillens``.

It then refreshes the caches that desktops read (``update-mime-database``,
``update-desktop-database``, ``gtk-update-icon-cache``) where those programs exist.
``uninstall()`` removes exactly the files that ``install()`` wrote, and only those
carrying TailLens's marker, so a file of the same name written by someone else stays.
Qt-free; the ``taillens desktop`` command is its front end.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from core import APP_NAME
from core.errors import UserFacingError
from core.io.atomic import write_text_atomically

MIME_TYPE = "application/x-taillens-session"
APP_ID = "taillens"
# Written into every file install() makes; uninstall() removes only files carrying it.
MARKER = "X-TailLens-Installed"

_DESKTOP_ENTRY = """\
[Desktop Entry]
Type=Application
Name={name}
GenericName=Knowledge-graph verbalisation explorer
Comment=Explore how language models verbalise Wikidata facts, head and long tail
TryExec={try_exec}
Exec={exec_line}
Icon={icon}
Terminal=false
Categories=Science;DataVisualization;
MimeType={mime};
Keywords=Wikidata;NLG;verbalisation;long tail;language model;
StartupWMClass={name}
{marker}=true
"""

_MIME_XML = """\
<?xml version="1.0" encoding="UTF-8"?>
<!-- {marker}: written by 'taillens desktop install'; removed by 'taillens desktop uninstall'. -->
<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
  <mime-type type="{mime}">
    <comment>TailLens session</comment>
    <sub-class-of type="application/vnd.sqlite3"/>
    <generic-icon name="{mime_icon}"/>
    <glob pattern="*.taillens" weight="80"/>
  </mime-type>
</mime-info>
"""


class DesktopError(UserFacingError):
    """The desktop files could not be written or removed."""


@dataclass(frozen=True)
class Launcher:
    """How a desktop starts this TailLens: the argv before the file argument."""

    argv: tuple[str, ...]
    kind: str  # "bundle", "script" or "module"

    def exec_line(self) -> str:
        """The ``Exec`` value: each argument quoted as the Desktop Entry spec asks."""
        return " ".join(_quote_exec(arg) for arg in self.argv) + " %f"


@dataclass
class DesktopReport:
    """What install()/uninstall() did, for the command's output."""

    written: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)  # same name, not ours: left alone
    refreshed: list[str] = field(default_factory=list)  # cache programs run
    launcher: Launcher | None = None

    def lines(self) -> list[str]:
        out = [f"wrote {path}" for path in self.written]
        out += [f"removed {path}" for path in self.removed]
        out += [f"left {path} (not written by TailLens)" for path in self.kept]
        if self.launcher is not None:
            out.append(f"opens sessions with: {shlex.join(self.launcher.argv)} FILE")
        if self.refreshed:
            out.append("refreshed: " + ", ".join(self.refreshed))
        return out


def data_home() -> Path:
    """``$XDG_DATA_HOME`` if it is set to an absolute path, else ``~/.local/share``."""
    value = os.environ.get("XDG_DATA_HOME", "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / ".local" / "share"


def current_launcher() -> Launcher:
    """The command that starts the TailLens now running.

    A PyInstaller bundle is its own executable. Installed with pip, the ``taillens``
    console script sits beside the interpreter (a venv's ``bin``); failing that, the
    interpreter runs the ``app`` module.
    """
    if getattr(sys, "frozen", False):
        return Launcher((str(Path(sys.executable).resolve()),), "bundle")
    bindir = Path(sys.executable).parent
    for name in ("taillens", "taillens.exe"):
        script = bindir / name
        if script.is_file() and os.access(script, os.X_OK):
            return Launcher((str(script.absolute()),), "script")
    # No script: the interpreter runs the installed package (or, in a checkout, app).
    module = "taillens" if importlib.util.find_spec("taillens") is not None else "app"
    return Launcher((str(Path(sys.executable).absolute()), "-m", module), "module")


def desktop_entry(launcher: Launcher) -> str:
    """The text of ``taillens.desktop`` for ``launcher``."""
    return _DESKTOP_ENTRY.format(
        name=APP_NAME,
        try_exec=_escape_value(launcher.argv[0]),
        exec_line=_escape_value(launcher.exec_line()),
        icon=APP_ID,
        mime=MIME_TYPE,
        marker=MARKER,
    )


def mime_xml() -> str:
    return _MIME_XML.format(mime=MIME_TYPE, mime_icon=_mime_icon_name(), marker=MARKER)


def planned_files(home: Path | None = None) -> dict[str, Path]:
    """Where each file goes, by role."""
    base = home if home is not None else data_home()
    icons = base / "icons" / "hicolor" / "scalable"
    return {
        "entry": base / "applications" / f"{APP_ID}.desktop",
        "icon": icons / "apps" / f"{APP_ID}.svg",
        "mime_icon": icons / "mimetypes" / f"{_mime_icon_name()}.svg",
        "mime": base / "mime" / "packages" / f"{APP_ID}.xml",
    }


def install(home: Path | None = None, launcher: Launcher | None = None) -> DesktopReport:
    """Write the entry, icons and file type under ``home`` (default: data_home())."""
    from resources import resource_path

    base = home if home is not None else data_home()
    launcher = launcher or current_launcher()
    files = planned_files(base)
    icon = resource_path("icons", "taillens.svg").read_text(encoding="utf-8")
    marked_icon = _mark_svg(icon)
    texts = {
        "entry": desktop_entry(launcher),
        "icon": marked_icon,
        "mime_icon": marked_icon,
        "mime": mime_xml(),
    }
    report = DesktopReport(launcher=launcher)
    for role, path in files.items():
        if os.path.lexists(path) and not _is_ours(path):
            report.kept.append(path)
            continue
        _write(path, texts[role])
        report.written.append(path)
    report.refreshed = _refresh_caches(base)
    return report


def uninstall(home: Path | None = None) -> DesktopReport:
    """Remove what install() wrote (files carrying the marker), then refresh caches."""
    base = home if home is not None else data_home()
    report = DesktopReport()
    for path in planned_files(base).values():
        if not os.path.lexists(path):
            continue
        if not _is_ours(path):
            report.kept.append(path)
            continue
        try:
            path.unlink()
        except OSError as error:
            raise DesktopError(f"could not remove {path}: {error.strerror or error}") from error
        report.removed.append(path)
    report.refreshed = _refresh_caches(base)
    return report


# -- helpers ------------------------------------------------------------------------


def _mime_icon_name() -> str:
    return MIME_TYPE.replace("/", "-")


def _quote_exec(arg: str) -> str:
    """Quote one ``Exec`` argument (Desktop Entry spec, "The Exec key")."""
    reserved = set(" \t\n\"'\\><~|&;$*?#()`")
    if arg and not (set(arg) & reserved) and "%" not in arg and "=" not in arg:
        return arg
    inner = "".join("\\" + ch if ch in '"`$\\' else ch for ch in arg)
    return '"' + inner.replace("%", "%%") + '"'


def _escape_value(value: str) -> str:
    """Escape a string value for a desktop file (backslash is itself escaped there)."""
    return (
        value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    )


def _mark_svg(svg: str) -> str:
    comment = f"<!-- {MARKER}: written by 'taillens desktop install' -->\n"
    if svg.startswith("<?xml"):
        end = svg.index("?>") + 2
        return svg[:end] + "\n" + comment + svg[end:].lstrip("\n")
    return comment + svg


def _is_ours(path: Path) -> bool:
    """Whether ``path`` is a regular file holding the marker. Anything else is someone
    else's and kept: a link or a pipe is not opened (a pipe's open waits for a writer)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return False
        head = handle.read(4096)
    return MARKER.encode() in head


def _write(path: Path, text: str) -> None:
    """Write atomically (a temporary file beside it, then a rename)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(path, text)
    except OSError as error:
        raise DesktopError(
            f"could not write {path}: {error.strerror or error}. "
            "Check that the folder is writable, or set XDG_DATA_HOME to one that is."
        ) from error


def _holds_a_special_file(folder: Path, limit: int = 10_000) -> bool:
    """Whether ``folder`` holds a pipe, socket or device (at most ``limit`` entries
    looked at): an updater reading it would wait on it until its timeout (a pipe left
    where the MIME file goes held install for a minute)."""
    for seen, path in enumerate(folder.rglob("*")):
        if seen >= limit:
            return True  # not a folder the updaters should be run over unseen
        try:
            mode = path.lstat().st_mode
        except OSError:
            continue
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISBLK(mode) or stat.S_ISCHR(mode):
            return True
    return False


def _refresh_caches(base: Path) -> list[str]:
    """Run the cache updaters that exist; a missing or failing one is not an error
    (desktops also rescan on their own), so it is only left out of the report."""
    jobs = [
        ("update-mime-database", [str(base / "mime")], base / "mime"),
        ("update-desktop-database", [str(base / "applications")], base / "applications"),
        (
            "gtk-update-icon-cache",
            ["--force", "--ignore-theme-index", "--quiet", str(base / "icons" / "hicolor")],
            base / "icons" / "hicolor",
        ),
    ]
    ran = []
    for program, args, folder in jobs:
        executable = shutil.which(program)
        if executable is None or not folder.is_dir() or _holds_a_special_file(folder):
            continue
        try:
            done = subprocess.run([executable, *args], capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            ran.append(program)
    return ran
