"""Build the bundle and the release artefacts from it.

    python packaging/build.py [--dist dist] [--work DIR] [--no-release]

What ``./dev package`` runs (after setting up the virtual environment) and what
tests/test_bundle.py runs. Into ``DIST``:

* ``taillens/``: the bundle, ``packaging/taillens.spec`` built with PyInstaller;
* ``taillens-VERSION-linux-x86_64.tar.gz`` (the bundle in a ``taillens-VERSION/`` folder)
  and ``….tar.gz.sha256`` (``sha256sum -c`` reads it);
* ``taillens_VERSION_amd64.deb``: the bundle under ``/opt/taillens``, the ``taillens``
  command (``/usr/bin/taillens``, a link), the desktop entry, icon and the
  ``*.taillens`` file type under ``/usr/share``, and the system libraries it needs as
  dependencies (Qt's xcb libraries as ``app.qt_deps`` lists them, SQLite, the C/C++
  runtime, glibc from ``glibc_floor``, and Debian's ``wordnet-base`` for METEOR). No
  maintainer scripts: the desktop, MIME and icon caches follow from dpkg's triggers.

PyInstaller's intermediate files and its cache of processed libraries stay between
builds in ``~/.cache/taillens-build/CHECKOUT`` (``--work``; ``PYINSTALLER_CONFIG_DIR``),
outside the repository and one per checkout, so a second build reuses them. Prints the
build time, the bundle's size and file count, the oldest glibc it runs on, and each
artefact's size.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(REPOSITORY))

from glibc_floor import floor  # noqa: E402

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "taillens-build"
# One cache per checkout: two checkouts building at once never share a work folder.
CHECKOUT_CACHE = CACHE / hashlib.sha256(str(REPOSITORY).encode()).hexdigest()[:12]
ARCH = "x86_64"
# What the bundle takes from the system besides Qt's xcb libraries (app.qt_deps): the C++
# runtime and expat (left out of the bundle on purpose, packaging/taillens.spec), SQLite
# (Python's sqlite3 links the system's), zlib, and WordNet for METEOR
# (core/metrics/meteor.py finds Debian's /usr/share/wordnet).
DEB_DEPENDS = ("libstdc++6", "libgcc-s1", "libexpat1", "libsqlite3-0", "zlib1g", "wordnet-base")


def size(folder: Path) -> tuple[int, int]:
    """Bytes and number of files under ``folder`` (links not followed)."""
    files = [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()]
    return sum(p.stat().st_size for p in files), len(files)


def version() -> str:
    text = (REPOSITORY / "pyproject.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["project"]["version"]


def build(dist: Path, work: Path) -> Path:
    started = time.perf_counter()
    env = dict(os.environ)
    env.setdefault("PYINSTALLER_CONFIG_DIR", str(CHECKOUT_CACHE / "pyinstaller"))
    subprocess.run(
        [
            sys.executable,
            *("-m", "PyInstaller", "--noconfirm", "--log-level", "WARN"),
            *("--distpath", str(dist), "--workpath", str(work)),
            str(HERE / "taillens.spec"),
        ],
        cwd=REPOSITORY,
        env=env,
        check=True,
    )
    seconds = time.perf_counter() - started
    bundle = dist / "taillens"
    total, count = size(bundle)
    highest, elves = floor(bundle)
    print(
        f"build: {bundle} in {seconds:.0f} s: {total / 2**20:.0f} MB, {count} files; "
        f"needs glibc {'.'.join(map(str, highest))} or newer ({len(elves)} ELF files)",
        flush=True,
    )
    return bundle


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tarball(bundle: Path, dist: Path, release: str, level: int = 6) -> Path:
    """``taillens-VERSION-linux-ARCH.tar.gz`` holding ``taillens-VERSION/`` and its
    ``.sha256`` file in ``sha256sum`` format."""
    out = dist / f"taillens-{release}-linux-{ARCH}.tar.gz"
    with tarfile.open(out, "w:gz", compresslevel=level) as archive:
        archive.add(bundle, arcname=f"taillens-{release}", filter=_owned_by_root)
    (dist / f"{out.name}.sha256").write_text(f"{sha256(out)}  {out.name}\n", encoding="utf-8")
    return out


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def deb_depends(bundle: Path) -> str:
    from app.qt_deps import XCB_PACKAGES

    glibc = ".".join(map(str, floor(bundle)[0]))
    return ", ".join([f"libc6 (>= {glibc})", *sorted(set(XCB_PACKAGES.values())), *DEB_DEPENDS])


def deb_control(bundle: Path, release: str, installed_kb: int) -> str:
    return (
        "Package: taillens\n"
        f"Version: {release}\n"
        "Architecture: amd64\n"
        "Maintainer: TailLens developers <taillens@localhost>\n"
        f"Installed-Size: {installed_kb}\n"
        f"Depends: {deb_depends(bundle)}\n"
        "Section: science\n"
        "Priority: optional\n"
        "Description: explore how language models verbalise knowledge-graph facts\n"
        " TailLens browses Wikidata by category, splits entities into head and long\n"
        " tail, verbalises data units with templates or OpenAI-compatible servers,\n"
        " scores them with every metric that needs no model weights, and compares\n"
        " head against tail. The local-model stack (torch) is not part of this package.\n"
    )


def deb_tree(bundle: Path, root: Path, release: str) -> Path:
    """The package's files under ``root`` (``root/DEBIAN/control`` included)."""
    from core.desktop.integration import MARKER, mime_xml
    from resources import resource_path

    shutil.copytree(bundle, root / "opt" / "taillens", symlinks=True)
    (root / "usr" / "bin").mkdir(parents=True)
    (root / "usr" / "bin" / "taillens").symlink_to("/opt/taillens/taillens")
    share = root / "usr" / "share"
    (share / "applications").mkdir(parents=True)
    shutil.copyfile(HERE / "taillens.desktop", share / "applications" / "taillens.desktop")
    icon = resource_path("icons", "taillens.svg")
    icons = share / "icons" / "hicolor" / "scalable"
    for folder, name in (("apps", "taillens"), ("mimetypes", "application-x-taillens-session")):
        (icons / folder).mkdir(parents=True)
        shutil.copyfile(icon, icons / folder / f"{name}.svg")
    (share / "mime" / "packages").mkdir(parents=True)
    # The file type as `taillens desktop install` declares it, without its marker comment
    # (that marks the per-user copy that `desktop uninstall` may remove).
    mime = "\n".join(line for line in mime_xml().splitlines() if MARKER not in line) + "\n"
    (share / "mime" / "packages" / "taillens.xml").write_text(mime, encoding="utf-8")
    kb = sum(p.lstat().st_size for p in root.rglob("*") if not p.is_dir()) // 1024
    (root / "DEBIAN").mkdir()
    (root / "DEBIAN" / "control").write_text(deb_control(bundle, release, kb), encoding="utf-8")
    return root


def deb(bundle: Path, dist: Path, release: str, level: int = 6) -> Path | None:
    """``taillens_VERSION_amd64.deb`` with dpkg-deb (None where dpkg-deb is missing)."""
    if shutil.which("dpkg-deb") is None:
        print("build: no dpkg-deb on this machine: no .deb", flush=True)
        return None
    out = dist / f"taillens_{release}_amd64.deb"
    staging = dist / ".deb-root"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        deb_tree(bundle, staging, release)
        subprocess.run(
            ["dpkg-deb", "--root-owner-group", "-Zgzip", f"-z{level}"]
            + ["--build", str(staging), str(out)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out


def release_artefacts(bundle: Path, dist: Path, level: int = 6) -> list[Path]:
    started = time.perf_counter()
    release = version()
    made = [tarball(bundle, dist, release, level)]
    package = deb(bundle, dist, release, level)
    if package is not None:
        made.append(package)
    seconds = time.perf_counter() - started
    for path in made:
        print(f"build: {path} ({path.stat().st_size / 2**20:.0f} MB)", flush=True)
    print(f"build: release artefacts in {seconds:.0f} s", flush=True)
    return made


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", type=Path, default=REPOSITORY / "dist")
    parser.add_argument("--work", type=Path, default=CHECKOUT_CACHE / "work")
    parser.add_argument(
        "--no-release", action="store_true", help="the bundle only: no tarball, no .deb"
    )
    parser.add_argument(
        "--level",
        type=int,
        choices=range(1, 10),
        default=6,
        metavar="1-9",
        help="gzip level of the tarball and the .deb (default 6: 9 saved under 1%% and "
        "took longer; the tests take 1, the fastest)",
    )
    args = parser.parse_args()
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        print("build: PyInstaller is not installed (pip install 'pyinstaller>=6.10')")
        return 2
    try:
        bundle = build(args.dist.resolve(), args.work.resolve())
    except subprocess.CalledProcessError as error:
        print(f"build: PyInstaller failed (exit {error.returncode})", file=sys.stderr)
        return 1
    if not args.no_release:
        try:
            release_artefacts(bundle, args.dist.resolve(), args.level)
        except subprocess.CalledProcessError as error:
            print(f"build: dpkg-deb failed (exit {error.returncode})", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
