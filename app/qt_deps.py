"""Which system libraries Qt's xcb platform plugin (the X11 window) lacks, and the Debian
packages that provide them. ``./dev start`` runs ``python -m app.qt_deps`` first: on a
fresh Debian/Ubuntu it names the packages (and, as root with apt-get, installs them)
instead of leaving the user with Qt's own "could not load the Qt platform plugin".

Nothing here imports Qt: the plugin is found on disk and read with ``ldd``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Shared libraries the xcb plugin (libqxcb.so, libQt6XcbQpa.so.6) loads, and the Debian /
# Ubuntu package of each (checked with ldd on PySide6 6.x's plugin). libxcb-cursor is
# dlopen'ed at start-up rather than linked, so ldd alone never reports it.
XCB_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libglib-2.0.so.0": "libglib2.0-0",
}
DLOPENED = ("libxcb-cursor.so.0",)


def qt_dir() -> Path | None:
    spec = importlib.util.find_spec("PySide6")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "Qt"


def missing_from_ldd(output: str) -> list[str]:
    """Library names ldd reported as ``not found``."""
    return sorted({line.split()[0] for line in output.splitlines() if "not found" in line})


def missing_libraries(
    qt: Path | None = None, ldconfig_output: str | None = None, ldd_output: str | None = None
) -> list[str]:
    """Libraries the xcb plugin needs that the system lacks (both outputs injectable)."""
    if ldd_output is None:
        qt = qt or qt_dir()
        candidates = (
            []
            if qt is None
            else [qt / "plugins" / "platforms" / "libqxcb.so", qt / "lib" / "libQt6XcbQpa.so.6"]
        )
        files = [str(f) for f in candidates if f.exists()]
        if not files or shutil.which("ldd") is None:
            return []
        ldd_output = subprocess.run(
            ["ldd", *files], capture_output=True, text=True, check=False
        ).stdout
    missing = set(missing_from_ldd(ldd_output))
    if ldconfig_output is None:
        ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
        try:
            ldconfig_output = subprocess.run(
                [ldconfig, "-p"], capture_output=True, text=True, check=False
            ).stdout
        except OSError:
            ldconfig_output = ""
    if ldconfig_output:
        missing |= {lib for lib in DLOPENED if lib not in ldconfig_output}
    return sorted(missing)


def packages_for(libraries: list[str]) -> list[str]:
    return sorted({XCB_PACKAGES.get(lib, lib) for lib in libraries})


def main() -> int:
    """Exit 0 when the window can open (or this is not Linux/X11), else say what to install;
    as root with apt-get, install it."""
    if not sys.platform.startswith("linux"):
        return 0
    missing = missing_libraries()
    if not missing:
        return 0
    packages = packages_for(missing)
    command = "apt-get install -y " + " ".join(packages)
    print(
        "dev: Qt's X11 (xcb) platform needs system libraries that are missing: "
        + ", ".join(missing),
        file=sys.stderr,
    )
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print(f"dev: installing them: {command}", file=sys.stderr)
        subprocess.run(["apt-get", "update", "-q"], check=False)
        done = subprocess.run(["apt-get", "install", "-y", "-q", *packages], check=False)
        if done.returncode == 0 and not missing_libraries():
            return 0
        print(
            "dev: the installation did not succeed; see apt-get's messages above.", file=sys.stderr
        )
        return 1
    print(
        f"dev: on Debian/Ubuntu install them with:\n    sudo {command}\n"
        "(other systems: the packages that provide these libraries). Or run without a "
        "window: ./dev start gui --screenshot out.png",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
