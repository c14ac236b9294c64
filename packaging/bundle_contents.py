"""What the bundle leaves out, derived from pyproject.toml rather than listed by hand.

    python packaging/bundle_contents.py     # prints the modules left out, and why

The bundle is the base install: ``[project] dependencies`` and everything they require,
all of it kept. Left out is what only the optional extras (``models``, ``lora``, ``dev``)
bring: each extra's distributions and their own requirements, followed through the
installed distributions' metadata, minus anything the base install also requires. A
base dependency (pyarrow, scipy, matplotlib, ...) can therefore never be left out, and a
new extra is left out without touching the recipe. Each distribution left out is turned
into the top-level modules it installs (``packages_distributions``), the names
PyInstaller's ``excludes`` takes.

Standard library plus ``packaging`` (which PyInstaller itself requires).
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _project() -> dict:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]


def _requires(distribution: str, extras: frozenset[str]) -> list[Requirement]:
    """What an installed distribution requires with these extras (none if not installed)."""
    try:
        lines = metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        return []
    wanted = []
    for line in lines:
        requirement = Requirement(line)
        marker = requirement.marker
        if marker is None or any(marker.evaluate({"extra": extra}) for extra in extras or {""}):
            wanted.append(requirement)
    return wanted


def closure(requirements: list[str]) -> set[str]:
    """Canonical names of these requirements and of all they require, transitively."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        requirement = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonical(requirement.name)
        key = name + "[" + ",".join(sorted(requirement.extras)) + "]"
        if key in seen:
            continue
        seen.add(key)
        todo.extend(_requires(name, frozenset(requirement.extras)))
    return {key.partition("[")[0] for key in seen}


def base_distributions() -> set[str]:
    return closure(_project()["dependencies"])


def extra_only_distributions() -> dict[str, set[str]]:
    """Each extra's distributions that the base install does not need."""
    base = base_distributions() | {"taillens"}
    extras = _project().get("optional-dependencies", {})
    return {extra: closure(list(requirements)) - base for extra, requirements in extras.items()}


def modules_of(distributions: set[str]) -> set[str]:
    """The top-level modules these distributions install (a distribution that is not
    installed here: its own name as a module name, e.g. sentence_transformers)."""
    by_module = metadata.packages_distributions()
    modules = {
        module
        for module, owners in by_module.items()
        if any(canonical(owner) in distributions for owner in owners)
        and module.isidentifier()
        and not module.startswith("_")
    }
    installed = {canonical(owner) for owners in by_module.values() for owner in owners}
    modules |= {d.replace("-", "_") for d in distributions if d not in installed}
    return modules


def left_out() -> dict[str, set[str]]:
    """Module name -> the extras that bring it (only modules no base dependency needs)."""
    keep = modules_of(base_distributions())
    found: dict[str, set[str]] = {}
    for extra, distributions in extra_only_distributions().items():
        for module in modules_of(distributions) - keep:
            found.setdefault(module, set()).add(extra)
    return found


def left_out_distributions() -> set[str]:
    """Canonical names of the distributions only the extras bring."""
    return set().union(*extra_only_distributions().values())


def excluded_modules() -> list[str]:
    return sorted(left_out())


def main() -> int:
    for module, extras in sorted(left_out().items()):
        print(f"{module:<32} {', '.join(sorted(extras))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
