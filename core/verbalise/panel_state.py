"""What the Verbalise panel shows and what the user chose there, Qt-free.

:class:`VerbaliseState` holds the models offered (the template verbaliser first, the
server last), the session's tiers and categories a run may choose from, the prompt
presets, and every setting the panel keeps (:attr:`SETTING_KEYS`, the ``DEFAULTS``'
keys plus the edited templates). ``widgets.verbalise`` renders it and binds each input
to one field (``widgets.binding.bind``); ``app.verbalise`` fills what is offered and
reads :meth:`VerbaliseState.settings` to build the verbaliser and the run. Restoring
the panel (a reopened session, an undo of the settings) is :meth:`restore`. Tests drive
it without a window.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from core.state import Field, State
from core.vocab import LANGUAGES

DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("auto", "float32", "bfloat16", "float16")
SERVER = "server"  # the picker's entry for an OpenAI-compatible server
TEMPLATE = "template"
SCOPES = ("selected", "tier", "category", "all")
# METHODS §6 defaults (the same as core.verbalise.GenerationParams and the CLI).
DEFAULTS: dict[str, Any] = {
    "model": TEMPLATE,
    "server_url": "",
    "server_model": "",
    "device": "auto",
    "dtype": "auto",
    "candidates": 3,
    "temperature": 0.7,
    "top_p": 0.9,
    "max_new_tokens": 256,
    "num_beams": 3,
    "seed": 0,
    "batch_size": 8,
    "scope": "all",
    "tier": None,
    "category": None,
    "langs": list(LANGUAGES),
    "resume": True,
    "prompt_preset": "tailnlg",
    "seq2seq_prefix": "",
}
# Settings whose change asks for the model to be checked again (and the preview redone).
MODEL_KEYS = frozenset({"model", "server_url", "server_model", "device", "dtype"})
SETTING_KEYS = frozenset(DEFAULTS) | {"templates"}


class ModelChoice(NamedTuple):
    """One entry of the model picker: what it says, what a run names, which kind of
    verbaliser it is (template, causal, seq2seq, openai), and its tooltip."""

    label: str
    spec: str
    kind: str
    tooltip: str = ""


TEMPLATE_CHOICE = ModelChoice(
    "Template verbaliser (no weights)",
    TEMPLATE,
    "template",
    "Rule-based sentences in en/it/es; deterministic, one candidate",
)
SERVER_CHOICE = ModelChoice("OpenAI-compatible server…", SERVER, "openai")

Presets = Mapping[str, tuple[str, Mapping[str, str]]]  # name -> (label, template per language)
Groups = tuple[tuple[str, int], ...]  # (name, unit count)


class VerbaliseState(State):
    # -- what the panel offers -----------------------------------------------------------
    models: Field[tuple[ModelChoice, ...]] = Field((TEMPLATE_CHOICE, SERVER_CHOICE))
    unit_total: Field[int] = Field(0)
    tiers: Field[Groups] = Field(())
    categories: Field[Groups] = Field(())
    selected_unit: Field[str | None] = Field(None)  # the "selected unit" scope's unit, named
    presets: Field[dict[str, tuple[str, dict[str, str]]]] = Field(factory=dict)
    defaults: Field[dict[str, str]] = Field(factory=dict)  # the preset's bundled templates
    # Templates matter for causal models and servers; the note says why they are not
    # editable for the others.
    templates_editable: Field[bool] = Field(True)
    template_note: Field[str] = Field("")
    # -- what the user chose (the settings kept in the session) ----------------------------
    model: Field[str] = Field(DEFAULTS["model"])
    server_url: Field[str] = Field(DEFAULTS["server_url"])
    server_model: Field[str] = Field(DEFAULTS["server_model"])
    device: Field[str] = Field(DEFAULTS["device"])
    dtype: Field[str] = Field(DEFAULTS["dtype"])
    candidates: Field[int] = Field(DEFAULTS["candidates"])
    temperature: Field[float] = Field(DEFAULTS["temperature"])
    top_p: Field[float] = Field(DEFAULTS["top_p"])
    max_new_tokens: Field[int] = Field(DEFAULTS["max_new_tokens"])
    num_beams: Field[int] = Field(DEFAULTS["num_beams"])
    seed: Field[int] = Field(DEFAULTS["seed"])
    batch_size: Field[int] = Field(DEFAULTS["batch_size"])
    seq2seq_prefix: Field[str] = Field(DEFAULTS["seq2seq_prefix"])
    scope: Field[str] = Field(DEFAULTS["scope"])
    tier: Field[str | None] = Field(None)
    category: Field[str | None] = Field(None)
    langs: Field[tuple[str, ...]] = Field(LANGUAGES)
    resume: Field[bool] = Field(DEFAULTS["resume"])
    prompt_preset: Field[str] = Field(DEFAULTS["prompt_preset"])
    templates: Field[dict[str, str]] = Field(factory=lambda: dict.fromkeys(LANGUAGES, ""))

    # -- what the controller offers --------------------------------------------------------
    def show_models(self, found: Sequence[tuple[str, str, str, str]]) -> None:
        """(label, spec, kind, tooltip) for each model found: the template verbaliser
        comes first and the server last; the chosen model stays while it is listed."""
        rows = tuple(ModelChoice(*row) for row in found)
        self.models = (TEMPLATE_CHOICE, *rows, SERVER_CHOICE)

    def show_groups(
        self,
        total: int,
        tiers: Sequence[tuple[str, int]],
        categories: Sequence[tuple[str, int]],
    ) -> None:
        """How many units the session holds, and the tiers and categories (name, unit
        count) a run may choose from; a chosen one no longer held: the first listed."""
        self.update(
            unit_total=total,
            tiers=tuple((str(n), int(c)) for n, c in tiers),
            categories=tuple((str(n), int(c)) for n, c in categories),
        )

    def set_presets(self, presets: Presets, current: str) -> None:
        """The prompt presets; ``current`` is chosen and its templates fill the empty ones."""
        copied = {name: (label, dict(texts)) for name, (label, texts) in presets.items()}
        with self.batch():
            self.presets = copied
            self.defaults = dict(copied.get(current, ("", {}))[1])
            self.prompt_preset = current
            self._fill_empty_templates()

    def set_default_templates(self, templates: Mapping[str, str]) -> None:
        """The bundled templates ("Reset to default" goes back to them)."""
        with self.batch():
            self.defaults = dict(templates)
            self._fill_empty_templates()

    def _fill_empty_templates(self) -> None:
        self.templates = {
            lang: text or self.defaults.get(lang, "") for lang, text in self.templates.items()
        }

    # -- what is derived ---------------------------------------------------------------------
    @property
    def model_kind(self) -> str:
        return next((m.kind for m in self.models if m.spec == self.model), "template")

    def model_data(self, spec: str) -> dict[str, str]:
        """The picker's item data for ``spec`` (what its entry holds)."""
        kind = next((m.kind for m in self.models if m.spec == spec), "template")
        return {"spec": spec, "kind": kind}

    def scope_open(self, scope: str) -> bool:
        """Whether a run may take ``scope`` now (a unit picked, tiers or categories held)."""
        return {
            "selected": self.selected_unit is not None,
            "tier": bool(self.tiers),
            "category": bool(self.categories),
        }.get(scope, scope == "all")

    def edited_templates(self) -> dict[str, str]:
        """Only the templates that differ from the bundled ones."""
        return {
            lang: text for lang, text in self.templates.items() if text != self.defaults.get(lang)
        }

    def with_template(self, lang: str, text: str) -> dict[str, str]:
        """The templates with ``lang``'s replaced (what an editor writes)."""
        return {**self.templates, lang: text}

    def with_lang(self, lang: str, on: bool) -> tuple[str, ...]:
        """The languages with ``lang`` ticked or not, in the vocabulary's order."""
        return tuple(x for x in LANGUAGES if (on if x == lang else x in self.langs))

    def derive(self, changed: set[str]) -> None:
        specs = [m.spec for m in self.models]
        if self.model not in specs:
            self.model = TEMPLATE  # the picker's first entry
        # A tier or category no longer held: the first one listed (None when none is).
        for name, offered in (("tier", "tiers"), ("category", "categories")):
            names = [group for group, _count in getattr(self, offered)]
            if offered in changed and getattr(self, name) not in names:
                setattr(self, name, names[0] if names else None)
        if "prompt_preset" in changed and "defaults" not in changed:
            self._follow_preset()

    def _follow_preset(self) -> None:
        """Another preset: templates still at the old preset's text take the new one's;
        edited templates stay."""
        if self.prompt_preset not in self.presets:
            return
        old, new = self.defaults, self.presets[self.prompt_preset][1]
        self.templates = {
            lang: new[lang] if text == old.get(lang) and lang in new else text
            for lang, text in self.templates.items()
        }
        self.defaults = dict(new)

    # -- the settings ----------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        """What the session keeps and a run is built from (edited templates only)."""
        values = {key: getattr(self, key) for key in DEFAULTS}
        values["langs"] = list(self.langs)
        values["templates"] = self.edited_templates()
        return values

    def restore(self, settings: Mapping[str, Any]) -> None:
        """Show saved settings (unknown keys ignored, missing ones at their defaults): a
        tier or category no longer held and a scope that is off now (no tier, no unit)
        are left as they are shown, and the templates start from the saved preset."""
        values = {**DEFAULTS, **{k: v for k, v in settings.items() if v is not None}}
        with self.batch():
            for key in ("server_url", "server_model", "device", "dtype", "seq2seq_prefix"):
                setattr(self, key, str(values[key]))
            for key in ("candidates", "max_new_tokens", "num_beams", "seed", "batch_size"):
                setattr(self, key, int(values[key]))
            self.temperature = float(values["temperature"])
            self.top_p = float(values["top_p"])
            specs = [m.spec for m in self.models]
            self.model = str(values["model"]) if values["model"] in specs else TEMPLATE
            for key, groups in (("tier", self.tiers), ("category", self.categories)):
                if values[key] is not None and values[key] in [name for name, _ in groups]:
                    setattr(self, key, values[key])
            scope = values["scope"] if values["scope"] in SCOPES else "all"
            self.scope = scope if self.scope_open(scope) else "all"
            self.langs = tuple(lang for lang in LANGUAGES if lang in values["langs"])
            self.resume = bool(values["resume"])
            self._restore_templates(str(values["prompt_preset"]), settings.get("templates") or {})

    def _restore_templates(self, preset: str, templates: Mapping[str, Any]) -> None:
        if preset in self.presets:
            # Defaults first: the preset's change then finds nothing to carry over.
            self.defaults = dict(self.presets[preset][1])
            self.prompt_preset = preset
        self.templates = {
            lang: str(templates.get(lang, self.defaults.get(lang, ""))) for lang in LANGUAGES
        }
