"""One home for qualities, languages and model names (core/vocab.py): an ``ast`` scan of
core/, app/, widgets/ and benchmarks/ finds no other module that writes its own list of qualities or
languages, its own table of language names or its own model-name rule, or that imports
those words from anywhere but core.vocab."""

from __future__ import annotations

import ast
from pathlib import Path

from core import vocab

ROOT = Path(__file__).resolve().parent.parent
HOME = ROOT / "core" / "vocab.py"
NAMES = frozenset(
    {"QUALITIES", "QUALITY_ORDER", "GOLD", "SILVER", "DEFAULT_QUALITY"}
    | {"LANGUAGES", "LANG_ORDER", "LANGUAGE_NAMES"}
)


def _strings(nodes: list[ast.expr | None]) -> set[str]:
    return {n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _problems(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    where = path.relative_to(root).as_posix()
    found: list[str] = []
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    for node in ast.walk(tree):
        line = f"{where}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.ImportFrom) and node.module != "core.vocab":
            for alias in node.names:
                if alias.name in NAMES:
                    found.append(f"{line} imports {alias.name} from {node.module}")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in NAMES:
                    found.append(f"{line} defines {target.id}")
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            strings = _strings(list(node.elts))
            if set(vocab.QUALITIES) <= strings:
                found.append(f"{line} lists the qualities")
            if set(vocab.LANGUAGES) <= strings:
                found.append(f"{line} lists the languages")
        elif isinstance(node, ast.Dict):
            if set(vocab.QUALITIES) <= _strings(node.keys):
                found.append(f"{line} keys a dict by the qualities")
            for key, value in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and isinstance(value, ast.Constant)
                    and key.value in vocab.LANGUAGE_NAMES
                    and vocab.LANGUAGE_NAMES[key.value] == value.value
                ):
                    found.append(f"{line} names the language {key.value!r}")
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            names = [
                v.attr if isinstance(v, ast.Attribute) else getattr(v, "id", None)
                for v in node.values
            ]
            if names[:2] == ["system_name", "model_id"]:
                found.append(f"{line} names a run itself (core.vocab.run_name)")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "models--" in node.value
            and id(node) not in docstrings
        ):
            found.append(f"{line} spells a hub folder (core.vocab.hub_folder_name)")
    return found


def _modules() -> list[Path]:
    return [
        path
        for folder in ("core", "app", "widgets", "benchmarks")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != HOME
    ]


def test_no_module_but_core_vocab_defines_qualities_languages_or_model_names() -> None:
    problems = [problem for path in _modules() for problem in _problems(path)]
    assert problems == []


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    """The scan itself, on code written the way the old modules were."""
    # Written in a tmp tree, never in core/: tests running beside this one scan and
    # import core/.
    old = tmp_path / "core" / "_old_vocab_probe.py"
    old.parent.mkdir()
    source = (
        "from core.groups import LANGUAGES\n"
        'QUALITY_ORDER = ("gold", "silver")\n'
        'LANGS = ["en", "it", "es"]\n'
        'NAMES = {"en": "English"}\n'
        "def name(r):\n"
        "    return r.system_name or r.model_id\n"
        'HUB = f"models--{1}"\n'
    )
    old.write_text(source, encoding="utf-8")
    problems = _problems(old, tmp_path)
    assert len(problems) == 7, problems


def test_vocab_words() -> None:
    assert vocab.QUALITIES == ("gold", "silver") and vocab.DEFAULT_QUALITY == "gold"
    assert vocab.LANGUAGES == ("en", "it", "es")
    assert vocab.language_name("it") == "Italian" and vocab.language_name("de") == "de"
    assert vocab.run_name("WDV", "x") == "WDV" and vocab.run_name(None, "org/m") == "org/m"
    assert vocab.run_name(None, None) == vocab.UNKNOWN
    assert vocab.short_model_name("google-bert/bert-base-multilingual-cased") == (
        "bert-base-multilingual-cased"
    )
    assert vocab.hub_folder_name("org/name") == "models--org--name"
    assert vocab.repo_id_of_hub_folder("models--org--name") == "org/name"
