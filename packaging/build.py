"""Build the bundle: ``packaging/taillens.spec`` with PyInstaller into ``DIST/taillens``.

    python packaging/build.py [--dist dist] [--work build]

What ``./dev package`` runs (after setting up the virtual environment) and what
tests/test_bundle.py runs. Prints the build time, the bundle's size and file count, and
the oldest glibc it runs on (packaging/glibc_floor.py).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent
sys.path.insert(0, str(HERE))

from glibc_floor import floor  # noqa: E402


def size(folder: Path) -> tuple[int, int]:
    """Bytes and number of files under ``folder`` (links not followed)."""
    files = [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()]
    return sum(p.stat().st_size for p in files), len(files)


def build(dist: Path, work: Path) -> Path:
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            *("-m", "PyInstaller", "--noconfirm", "--log-level", "WARN"),
            *("--distpath", str(dist), "--workpath", str(work)),
            str(HERE / "taillens.spec"),
        ],
        cwd=REPOSITORY,
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", type=Path, default=REPOSITORY / "dist")
    parser.add_argument("--work", type=Path, default=REPOSITORY / "build")
    args = parser.parse_args()
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        print("build: PyInstaller is not installed (pip install 'pyinstaller>=6.10')")
        return 2
    try:
        build(args.dist.resolve(), args.work.resolve())
    except subprocess.CalledProcessError as error:
        print(f"build: PyInstaller failed (exit {error.returncode})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
