"""Shared fixtures. Real things only: real session files, real Qt widgets (offscreen)."""

from __future__ import annotations

import os

# Must be set before any Qt import: tests never need a display. The virtual screen is
# desktop-sized (Qt's offscreen default, 800x800, is narrower than the main window's
# minimum, and restoring a saved geometry clamps the window to the screen).
_SCREEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "offscreen_screen.json")
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={_SCREEN}"

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

pytest_plugins = [
    "tests.fixtures.tiny_models",
    "tests.fixtures.hub_server",
    "tests.fixtures.scoring_session",
    "tests.fixtures.scores_window",
    "tests.fixtures.tiny_sentence_encoder",
    "tests.fixtures.leaks",
    "tests.fixtures.worker_memory",
]


# The cache folder (what the app can always rebuild: the demo data's on-disk store) is one
# for the whole run, shared by the xdist workers, the files' own processes and the CLI
# processes tests start, which inherit it: each test's home is fresh, but building the demo
# store once per test would cost seconds each. Made by the process that starts the run,
# before any worker, and removed by it at the end.
_RUN_CACHE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    if "TAILLENS_CACHE" not in os.environ:
        import tempfile

        _RUN_CACHE.append(tempfile.mkdtemp(prefix="taillens-test-cache-"))
        os.environ["TAILLENS_CACHE"] = _RUN_CACHE[0]


def pytest_unconfigure(config: pytest.Config) -> None:
    if _RUN_CACHE:
        import shutil

        shutil.rmtree(_RUN_CACHE.pop(), ignore_errors=True)
        os.environ.pop("TAILLENS_CACHE", None)


@pytest.fixture(autouse=True)
def taillens_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point every user folder (data, config, logs) at a fresh temporary folder."""
    home = tmp_path_factory.mktemp("taillens-home")
    monkeypatch.setenv("TAILLENS_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def _restore_log_handlers() -> Iterator[None]:
    """Log handlers a test attaches (pointing into its temp home) are removed after it."""
    import logging

    logger = logging.getLogger("taillens")
    before = list(logger.handlers)
    yield
    for handler in logger.handlers[:]:
        if handler not in before:
            logger.removeHandler(handler)
            handler.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files holding a test marked ``slow`` run first, in their own order, the whole-tree
    checks at the top level of tests/ (the bundle, the wheels, the type check: the
    longest) before the rest. In a parallel run (``./dev test`` uses pytest-xdist) the
    longest tests then start while other work can fill the other workers, instead of
    starting last and ending the run alone; a file stays together, so its module-scoped
    fixtures are built once."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    tests = Path(__file__).resolve().parent

    def order(item: pytest.Item) -> tuple[bool, bool]:
        return item.path not in slow_files, item.path.parent != tests

    items.sort(key=order)
