"""The bundle and the release artefacts: packaging/build.py (what ``./dev package`` runs)
builds the bundle with PyInstaller, a tarball with its SHA-256 file and a Debian package;
the .deb is installed into a scratch root (``dpkg --root``, no container) and
packaging/smoke.py runs every base feature from there with a fresh HOME; removing the
package leaves nothing behind. Also: what the bundle leaves out is derived from the
optional extras (packaging/bundle_contents.py), and the glibc floor script reads ELF
version needs as the tools do.

The build runs once per test run, whichever tests need it and however many pytest-xdist
workers run them: a session fixture builds under the run's shared temporary root, behind
a file lock, and the other workers reuse what the first one built. PyInstaller's work
folder and cache stay between runs in ~/.cache/taillens-build (one per checkout)."""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGING = ROOT / "packaging"


def _packaging_module(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, PACKAGING / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dist folder of one build (bundle, tarball, .deb), shared by every worker."""
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.skip("PyInstaller is not installed (the dev extra brings it)")
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    dist = shared / "taillens-release"
    build = _packaging_module("build")
    cache = build.CHECKOUT_CACHE
    with _locked(shared / "taillens-release.lock"):
        if not (dist / "built").is_file():
            shutil.rmtree(dist, ignore_errors=True)
            with _locked(cache / "lock"):
                done = subprocess.run(
                    [sys.executable, str(PACKAGING / "build.py")]
                    + ["--dist", str(dist), "--work", str(cache / "work"), "--level", "1"],
                    cwd=ROOT,
                    env={**os.environ, "PYINSTALLER_CONFIG_DIR": str(cache / "pyinstaller")},
                    capture_output=True,
                    text=True,
                    timeout=1800,
                )
            assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
            print(done.stdout)
            (dist / "built").write_text(done.stdout, encoding="utf-8")
    return dist


def _smoke(bundle: Path, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(PACKAGING / "smoke.py"), str(bundle), "--data", "small"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )
    print(done.stdout)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-3000:]
    assert "every step passed" in done.stdout
    return done.stdout


@pytest.mark.slow
def test_the_bundle_holds_the_base_install_and_no_dangling_link(release: Path) -> None:
    bundle = release / "taillens"
    names = {p.name for p in bundle.rglob("*")}
    # Left out: this machine's C++ runtime and expat (the target's are used), caches,
    # and what only the optional extras bring.
    assert not {n for n in names if n.startswith(("libstdc++", "libgcc_s", "libexpat"))}
    assert "__pycache__" not in names and "sample_data" not in names
    assert not any(n.startswith(("torch", "transformers", "pytest")) for n in names)
    internal = bundle / "_internal"
    assert (internal / "pyarrow").is_dir()  # a base dependency: Parquet
    assert [str(p) for p in bundle.rglob("*") if p.is_symlink() and not p.exists()] == []


@pytest.mark.slow
def test_the_tarball_is_the_bundle_with_its_checksum(release: Path, tmp_path: Path) -> None:
    build = _packaging_module("build")
    version = build.version()
    tarball = release / f"taillens-{version}-linux-x86_64.tar.gz"
    checksum = (release / f"{tarball.name}.sha256").read_text(encoding="utf-8")
    assert checksum == f"{build.sha256(tarball)}  {tarball.name}\n"
    with tarfile.open(tarball) as archive:
        archive.extractall(tmp_path, filter="tar")
    unpacked = tmp_path / f"taillens-{version}"
    bundle = release / "taillens"
    listing = sorted(str(p.relative_to(bundle)) for p in bundle.rglob("*"))
    assert sorted(str(p.relative_to(unpacked)) for p in unpacked.rglob("*")) == listing
    shown = subprocess.run(
        [str(unpacked / "taillens"), "--version"],
        cwd=tmp_path,
        env={**os.environ, "HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0 and shown.stdout.strip() == f"taillens {version}"


def _dpkg(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["dpkg", f"--root={root}", "--force-not-root", "--force-depends", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_the_deb_installs_runs_the_smoke_and_leaves_nothing_when_purged(
    release: Path, tmp_path: Path
) -> None:
    if shutil.which("dpkg") is None:
        pytest.skip("no dpkg on this machine")
    build = _packaging_module("build")
    package = release / f"taillens_{build.version()}_amd64.deb"
    fields = subprocess.run(
        ["dpkg-deb", "--field", str(package), "Depends"], capture_output=True, text=True
    ).stdout
    for needed in ("libxcb-cursor0", "libxkbcommon-x11-0", "libsqlite3-0", "wordnet-base"):
        assert needed in fields
    # A scratch root with an empty dpkg database: dpkg installs and removes as on a system.
    root = tmp_path / "root"
    database = root / "var" / "lib" / "dpkg"
    for folder in ("info", "updates", "triggers"):
        (database / folder).mkdir(parents=True)
    (database / "status").write_text("", encoding="utf-8")
    before = {p for p in root.rglob("*")}
    installed = _dpkg(root, "--install", str(package))
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert os.readlink(root / "usr" / "bin" / "taillens") == "/opt/taillens/taillens"
    share = root / "usr" / "share"
    assert (share / "applications" / "taillens.desktop").is_file()
    assert (share / "icons" / "hicolor" / "scalable" / "apps" / "taillens.svg").is_file()
    mime = (share / "mime" / "packages" / "taillens.xml").read_text(encoding="utf-8")
    assert "application/x-taillens-session" in mime and "*.taillens" in mime
    _smoke(root / "opt" / "taillens", tmp_path)

    purged = _dpkg(root, "--purge", "taillens")
    assert purged.returncode == 0, purged.stdout + purged.stderr
    left = {
        p
        for p in root.rglob("*")
        if p not in before and database not in p.parents and p != database
    }
    assert sorted(map(str, left)) == []


def test_what_the_bundle_leaves_out_comes_from_the_extras() -> None:
    contents = _packaging_module("bundle_contents")
    left_out = contents.left_out()
    # The model stack and the test tools: only the extras bring them.
    for module in ("torch", "transformers", "sentence_transformers", "bert_score", "pytest"):
        assert module in left_out, module
    assert "models" in left_out["transformers"] and "dev" in left_out["pytest"]
    # Every base dependency stays, with what it requires.
    for module in ("pyarrow", "scipy", "matplotlib", "nltk", "sacrebleu", "numpy", "PySide6"):
        assert module not in left_out, module


def test_the_smoke_asks_for_every_model_free_metric_and_export_format() -> None:
    from core.formats import EXPORT_FORMATS
    from core.metrics import ALL_METRICS, METEOR, MODEL_METRICS
    from core.metrics.base import BERTSCORE, SIMILARITY

    smoke = _packaging_module("smoke")
    model_free = set(ALL_METRICS) - set(MODEL_METRICS) - {BERTSCORE, SIMILARITY, METEOR}
    assert set(smoke.MODEL_FREE_METRICS) == model_free  # METEOR: where WordNet is
    assert [name for name, _ in smoke.EXPORT_FORMATS] == list(EXPORT_FORMATS)


def test_glibc_floor_reads_the_versions_an_elf_file_needs() -> None:
    glibc_floor = _packaging_module("glibc_floor")
    python = Path(sys.executable).resolve()
    needs = glibc_floor.glibc_needs(python)
    objdump = shutil.which("objdump")
    if objdump is not None:
        listed = subprocess.run(
            [objdump, "-p", str(python)], capture_output=True, text=True, check=True
        ).stdout
        expected = {
            tuple(int(n) for n in word.removeprefix("GLIBC_").split("."))
            for word in listed.split()
            if word.startswith("GLIBC_") and word[6:7].isdigit()
        }
        assert needs == expected
    else:
        assert needs and all(version[0] == 2 for version in needs)
    assert glibc_floor.glibc_needs(Path(__file__)) == set()
