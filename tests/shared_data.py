"""Where the real data sets are: one resolver for the tests and the benchmarks.

The data (``tailnlg/``, ``webnlg2017-enriched/``, ``webnlg2020/``) is read in place, never
copied into the repository. Its folder is ``$TAILLENS_DATA`` when that is set, else
``shared/data`` beside the checkout (``<checkout>/../shared/data``). A test that needs a
file calls :func:`require` (or is marked with :func:`needs`) and skips, saying how to get
the data, where it is missing; a benchmark calls :func:`benchmark_input`, which exits with
the same words. Benchmarks import this module with ``PYTHONPATH=$PWD`` (the repository
root); it imports nothing beyond the standard library until a test asks to skip.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

ENV = "TAILLENS_DATA"
HOW_TO_GET = (
    f"set {ENV} to the folder holding tailnlg/, webnlg2017-enriched/ and webnlg2020/, "
    "or put shared/data beside the checkout"
)

# The files the tests and benchmarks read, relative to the data folder.
TAILNLG = ("tailnlg", "longTailWebNLG-v1.0.xml")
APPENDIX_H = ("tailnlg", "prompts-appendix-h.txt")
ENRICHED_EN = ("webnlg2017-enriched", "en")
ENRICHED_DEV = ("webnlg2017-enriched", "en", "dev")
# WebNLG 2020 English as the challenge published it: test set, 16 systems' primary outputs,
# the human evaluation folder (its README says which file is which).
WEBNLG2020_EN = ("webnlg2020", "en")
WEBNLG2020_TEST = ("webnlg2020", "en", "rdf-to-text-generation-test-data-with-refs-en.xml")
WEBNLG2020_SUBMISSIONS = ("webnlg2020", "en", "submissions")
WEBNLG2020_HUMAN = ("webnlg2020", "en", "human-evaluation")

_CHECKOUT = Path(__file__).resolve().parents[1]


def data_root() -> Path:
    """``$TAILLENS_DATA``, else ``shared/data`` in the folder that holds the checkout."""
    configured = os.environ.get(ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    return _CHECKOUT.parent / "shared" / "data"


def data_path(*parts: str) -> Path:
    """A path in the data folder, e.g. ``data_path(*TAILNLG)``; it need not exist."""
    return data_root().joinpath(*parts)


def missing_reason(*parts: str) -> str:
    return f"{Path(*parts).as_posix()} is not in the data folder ({data_root()}): {HOW_TO_GET}"


def require(*parts: str) -> Path:
    """The path, or skip the calling test with the reason (how to get the data)."""
    path = data_path(*parts)
    if not path.exists():
        import pytest

        pytest.skip(missing_reason(*parts))
    return path


def needs(*parts: str) -> Any:
    """A ``pytest.mark.skipif`` for a test (or a module, as ``pytestmark``) that reads it."""
    import pytest

    return pytest.mark.skipif(not data_path(*parts).exists(), reason=missing_reason(*parts))


def benchmark_input(*parts: str) -> Path:
    """The path for a benchmark, or exit with the reason (exit status 2)."""
    path = data_path(*parts)
    if not path.exists():
        print(f"benchmark: {missing_reason(*parts)}", file=sys.stderr)
        raise SystemExit(2)
    return path
