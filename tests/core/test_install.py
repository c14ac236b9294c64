"""Each kind of install gets a hint that works for it (core.desktop.install): the bundle and the
Debian package cannot take the model stack and say what can; a checkout runs ./dev
start, which chooses torch by TAILLENS_TORCH; a wheel installs a torch build, then the
models extra's packages (TailLens itself is on no package index, so never
'taillens[models]')."""

from __future__ import annotations

import tomllib
from pathlib import Path

from core.desktop import install
from core.heavy import FULL_INSTALL, ModelStackMissing

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_hint_installs_the_models_extra_of_pyproject_without_torch() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extra = project["optional-dependencies"]["models"]
    assert [r for r in extra if not r.startswith("torch")] == list(install.MODELS_EXTRA)


def test_this_checkout_is_a_checkout_and_its_messages_say_dev_start() -> None:
    assert install.install_kind() == "checkout"
    message = str(ModelStackMissing("bertscore"))
    assert message.startswith(f"bertscore {FULL_INSTALL} (torch, transformers): run ./dev start")
    assert "TAILLENS_TORCH" in message


def test_each_kind_names_what_works_for_it() -> None:
    hints = {kind: install.model_stack_hint(kind) for kind in ("bundle", "deb", "wheel")}
    assert "the bundle has no model stack" in hints["bundle"]
    assert "the Debian package has no model stack" in hints["deb"]
    for kind in ("bundle", "deb"):
        assert "OpenAI-compatible server" in hints[kind] and "./dev start" in hints[kind]
    assert "CPU" in hints["wheel"] and "CUDA" in hints["wheel"]
    assert "pip install 'transformers>=4.45'" in hints["wheel"]
    for hint in hints.values():
        assert "taillens[models]" not in hint
    assert install.pip_hint("peft", "checkout").startswith(".venv/bin/pip install peft")
    assert install.pip_hint("peft", "wheel") == "pip install peft"
    assert "cannot take more Python packages" in install.pip_hint("peft", "bundle")
