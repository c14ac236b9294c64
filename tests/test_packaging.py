"""The wheel installs one top-level package, ``taillens``, and never collides with
another distribution that ships ``core``, ``app``, ``widgets`` or ``resources``:
real wheels, a fresh virtual environment, both install orders."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP = ("app", "core", "widgets", "resources")

pytestmark = pytest.mark.slow


def run(*argv: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{argv}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def build_wheel(project: Path, out: Path) -> Path:
    run(
        sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
        "--wheel-dir", out, project,
    )  # fmt: skip
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("wheels")
    dummy = base / "dummy"
    for name in TOP:
        (dummy / name).mkdir(parents=True)
        (dummy / name / "__init__.py").write_text(
            f"OWNER = 'dummy'\n__version__ = 'dummy-{name}'\n", encoding="utf-8"
        )
    (dummy / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [build-system]
            requires = ["setuptools>=68"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "dummy-core-app"
            version = "1.0"

            [tool.setuptools]
            packages = ["app", "core", "widgets", "resources"]
            """
        ),
        encoding="utf-8",
    )
    # A copy of the checkout (tracked and unignored files): the build writes nothing here.
    source = base / "taillens-src"
    files = run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT)
    files = files.split("\0")
    for name in filter(None, files):
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_file():
            target.write_bytes((ROOT / name).read_bytes())
    return {
        "taillens": build_wheel(source, base / "out-taillens"),
        "dummy": build_wheel(dummy, base / "out-dummy"),
    }


def test_the_wheel_holds_one_top_level_package(wheels: dict[str, Path]) -> None:
    with zipfile.ZipFile(wheels["taillens"]) as wheel:
        names = wheel.namelist()
        top_level = {name.split("/")[0] for name in names if ".dist-info/" not in name}
        assert top_level == {"taillens"}
        # The files the app reads at run time travel with it.
        for needed in (
            "taillens/core/store/migrations/script.py.mako",
            "taillens/core/store/migrations/versions/0001_initial_schema.py",
            "taillens/resources/demo/wikidata-demo.nt.gz",
            "taillens/resources/icons/taillens.svg",
            "taillens/resources/prompts/tailnlg_it.txt",
        ):
            assert needed in names
        info = next(n for n in names if n.endswith(".dist-info/top_level.txt"))
        assert wheel.read(info).decode().split() == ["taillens"]


def fresh_venv(path: Path) -> tuple[Path, dict[str, str]]:
    """A new venv whose dependencies come from this interpreter's site-packages, added as
    a plain path (its own .pth files, such as an editable TailLens, are not run)."""
    run(sys.executable, "-m", "venv", path)
    python = path / "bin" / "python"
    purelib = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    (Path(purelib.strip()) / "zz_dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["TAILLENS_HOME"] = str(path / "home")
    return python, env


def check_dummy(python: Path, env: dict[str, str], cwd: Path) -> None:
    code = (
        "import app, core, widgets, resources\n"
        "assert {m.OWNER for m in (app, core, widgets, resources)} == {'dummy'}\n"
        "print(core.__version__)"
    )
    assert run(python, "-c", code, cwd=cwd, env=env).strip() == "dummy-core"


def check_taillens(python: Path, env: dict[str, str], cwd: Path) -> None:
    bindir = python.parent
    assert run(bindir / "taillens", "--version", cwd=cwd, env=env).startswith("taillens ")
    session = cwd / "s.taillens"
    run(python, "-m", "taillens", "session", "new", session, cwd=cwd, env=env)
    assert session.stat().st_size > 0
    session.unlink()
    # Imported as a library: the short names are TailLens's once taillens is imported.
    code = (
        "import taillens, core\n"
        "from core.store import SessionStore\n"
        "assert not hasattr(core, 'OWNER'), core.__file__\n"
        "print(core.__file__)"
    )
    where = run(python, "-c", code, cwd=cwd, env=env).strip()
    assert "/site-packages/taillens/core/" in where
    # A "needs" message names what works for a wheel (core.desktop.install).
    code = "import taillens\nfrom core.desktop.install import install_kind\nprint(install_kind())"
    assert run(python, "-c", code, cwd=cwd, env=env).strip() == "wheel"


@pytest.mark.parametrize("order", [("taillens", "dummy"), ("dummy", "taillens")])
def test_taillens_and_a_distribution_shipping_core_live_side_by_side(
    wheels: dict[str, Path], tmp_path: Path, order: tuple[str, str]
) -> None:
    python, env = fresh_venv(tmp_path / "venv")
    work = tmp_path / "work"
    work.mkdir()
    for name in order:
        run(python, "-m", "pip", "install", "--quiet", "--no-deps", wheels[name], env=env)
    check_dummy(python, env, work)
    check_taillens(python, env, work)
    # Uninstalling the one installed first leaves the other whole.
    first, second = order
    run(python, "-m", "pip", "uninstall", "--yes", "--quiet",
        "taillens" if first == "taillens" else "dummy-core-app", env=env)  # fmt: skip
    (check_taillens if second == "taillens" else check_dummy)(python, env, work)
