"""core.annotation is a package: every name callers import from it resolves to
the object its module defines, and importing the package loads no session code."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import core.annotation as annotation

ROOT = Path(__file__).resolve().parents[2]


def test_every_exported_name_is_its_modules_object() -> None:
    modules = {}
    for name in annotation.__all__:
        value = getattr(annotation, name)
        owner = getattr(value, "__module__", None)
        if owner and owner.startswith("core.annotation."):
            modules[name] = owner
            assert getattr(importlib.import_module(owner), name) is value, name
    # The session-side names (loaded on first use) are among them.
    for name in ("build_queue", "save_rating", "aggregate_annotations", "golden_accuracy"):
        assert modules[name] != "core.annotation.types"


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        annotation.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("no AttributeError")


@pytest.mark.parametrize(
    ("library", "name"),
    [
        # The session's modules load SQLAlchemy when first used.
        ("sqlalchemy", "build_queue"),
        # `taillens --version` and every CLI command's registration import core.annotation
        # (through the WDV format): numpy (about 90 ms) waits for Krippendorff's alpha.
        ("numpy", "krippendorff_alpha"),
    ],
)
def test_the_package_imports_a_heavy_library_only_when_a_name_needs_it(
    library: str, name: str
) -> None:
    code = (
        "import sys, core.annotation as a\n"
        f"print({library!r} in sys.modules)\n"
        f"a.{name}\n"
        f"print({library!r} in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True"]
