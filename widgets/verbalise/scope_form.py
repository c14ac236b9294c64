"""The Verbalise panel's Units tab: which units a run verbalises, in which languages."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from core.groups import order_key
from core.labels import tier_label
from core.verbalise.panel_state import SCOPES, VerbaliseState
from core.vocab import LANGUAGE_NAMES, LANGUAGES
from widgets.binding import Binding, bind
from widgets.theme import set_muted
from widgets.verbalise.common import combo, wrapping

_SCOPE_TEXTS = {
    "selected": "The selected unit",
    "tier": "A tier",
    "category": "A category",
    "all": "All units",
}


class ScopeForm(QWidget):
    """The run's scope (the selected unit, a tier, a category or all units: the controller
    resolves it in SQL when the run starts), its languages, and whether to resume; each
    bound to its field of the panel's :class:`VerbaliseState`."""

    def __init__(self, state: VerbaliseState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self._build_scope()
        self._build_langs()
        self._lay_out()
        self._bind()
        state.subscribe(
            lambda *_change: self._render_groups(), ["unit_total", "tiers", "categories"]
        )
        state.subscribe(lambda *_change: self._render_selected(), ["selected_unit"])
        self._render_groups()
        self._render_selected()

    def _build_scope(self) -> None:
        self.scope_buttons = QButtonGroup(self)
        self.scope_radios: dict[str, QRadioButton] = {}
        for index, scope in enumerate(SCOPES):
            radio = QRadioButton(_SCOPE_TEXTS[scope])
            self.scope_buttons.addButton(radio, index)
            self.scope_radios[scope] = radio
        self.tier_combo = combo()
        self.category_combo = combo()
        for box, scope in ((self.tier_combo, "tier"), (self.category_combo, "category")):
            # Picking a tier (or category) means running it.
            box.activated.connect(lambda _i, s=scope: setattr(self.state, "scope", s))
        self.selected_label = wrapping()
        set_muted(self.selected_label)

    def _build_langs(self) -> None:
        self.lang_checks: dict[str, QCheckBox] = {}
        for lang in LANGUAGES:
            self.lang_checks[lang] = QCheckBox(f"{lang} ({LANGUAGE_NAMES[lang]})")
        self.resume_check = QCheckBox("Resume the unfinished run with the same settings")
        self.resume_check.setToolTip(
            "Continue the newest cancelled or failed run made with "
            "the same model, parameters and prompts, skipping what "
            "it already holds; unticked, a new run starts"
        )

    def _lay_out(self) -> None:
        layout = QVBoxLayout(self)
        which = QGroupBox("Which units")
        which_layout = QVBoxLayout(which)
        which_layout.addWidget(self.scope_radios["selected"])
        which_layout.addWidget(self.selected_label)
        for scope, box in (("tier", self.tier_combo), ("category", self.category_combo)):
            row = QHBoxLayout()
            row.addWidget(self.scope_radios[scope])
            row.addWidget(box, 1)
            which_layout.addLayout(row)
        which_layout.addWidget(self.scope_radios["all"])
        layout.addWidget(which)
        langs = QGroupBox("Languages")
        langs_layout = QVBoxLayout(langs)
        for check in self.lang_checks.values():
            langs_layout.addWidget(check)
        layout.addWidget(langs)
        layout.addWidget(self.resume_check)
        layout.addStretch(1)

    def _bind(self) -> None:
        state = self.state
        for scope, radio in self.scope_radios.items():
            # A radio unticked by its neighbour says nothing: the ticked one names the scope.
            bind(
                state,
                "scope",
                radio,
                to_widget=lambda chosen, s=scope: chosen == s,
                from_widget=lambda on, s=scope: s if on else state.scope,
            )
        self._group_bindings: dict[str, Binding] = {
            "tier": bind(state, "tier", self.tier_combo),
            "category": bind(state, "category", self.category_combo),
        }
        for lang, check in self.lang_checks.items():
            bind(
                state,
                "langs",
                check,
                to_widget=lambda langs, lang=lang: lang in langs,
                from_widget=lambda on, lang=lang: state.with_lang(lang, on),
            )
        bind(state, "resume", self.resume_check)

    def _render_groups(self) -> None:
        """The tiers and categories (name, unit count) a run may choose from, and how many
        units the session holds."""
        state = self.state
        tiers = sorted(state.tiers, key=lambda row: order_key("subtier", row[0]))
        for name, rows, words in (
            ("tier", tiers, tier_label),  # the one vocabulary, head to tail
            ("category", list(state.categories), lambda n: n.replace("_", " ")),
        ):
            binding = self._group_bindings[name]
            box = binding.widget
            assert isinstance(box, QComboBox)
            binding.refill(lambda box=box, rows=rows, words=words: _fill(box, rows, words))
        self.scope_radios["all"].setText(f"All units ({state.unit_total:,})")
        for scope in ("tier", "category"):
            self.scope_radios[scope].setEnabled(state.scope_open(scope))

    def _render_selected(self) -> None:
        """The unit the "selected unit" scope runs (none: the scope is off)."""
        label = self.state.selected_unit
        self.selected_label.setText(
            f"Now: {label or 'none'} (pick it in the Units panel or on the Prompt tab)"
        )
        self.scope_radios["selected"].setEnabled(self.state.scope_open("selected"))


def _fill(box: QComboBox, rows: list[tuple[str, int]], words: Callable[[str], str]) -> None:
    box.clear()
    for name, count in rows:
        box.addItem(f"{words(name)} ({count:,})", name)
