"""The bundle (issue 20): packaging/build.py (what ``./dev package`` runs) builds it with
PyInstaller, and packaging/smoke.py runs it from another folder with a fresh HOME:
``--version``, ``gui --screenshot``, import of TailNLG, template verbalise, ``score`` with
the default metrics (model metrics a one-line note), ``report --html`` with SVG and PDF
figures. Also: the glibc floor script reads ELF version needs as the tools do."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGING = ROOT / "packaging"


def _packaging_module(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, PACKAGING / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_bundle_builds_and_passes_the_smoke_from_another_folder(tmp_path: Path) -> None:
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.skip("PyInstaller is not installed (the dev extra brings it)")
    dist, work = tmp_path / "dist", tmp_path / "work"
    built = subprocess.run(
        [sys.executable, str(PACKAGING / "build.py"), "--dist", str(dist), "--work", str(work)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert built.returncode == 0, built.stdout[-5000:] + built.stderr[-5000:]
    print(built.stdout)
    bundle = dist / "taillens"
    shutil.rmtree(work)  # the build's intermediate files: not part of the bundle
    # Left out: this machine's C++ runtime and expat (the target's are used), tests, caches.
    names = {p.name for p in bundle.rglob("*")}
    assert not {n for n in names if n.startswith(("libstdc++", "libgcc_s", "libexpat"))}
    assert "__pycache__" not in names and "sample_data" not in names
    assert not any(n.startswith(("torch", "transformers")) for n in names)

    smoke = subprocess.run(
        [sys.executable, str(PACKAGING / "smoke.py"), str(bundle), "--data", "small"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    print(smoke.stdout)
    assert smoke.returncode == 0, smoke.stdout[-8000:] + smoke.stderr[-3000:]
    assert "every step passed" in smoke.stdout


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
