"""The unit being built (the *draft*): the claims of the entity in focus (dropped ones
greyed with the reason, counts per rule, the METHODS §4 rules as switches bound to the
panel's state), and the draft's triples side by side in English, Italian and Spanish
(missing labels in red, manual overrides in italics), its shape, size and Save.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QFont, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.labels import plural, tier_label
from core.units.builder.panel_state import UnitsPanelState
from core.units.claim_filters import RULES
from core.vocab import LANGUAGES
from widgets.binding import bind
from widgets.theme import themed_text, tone
from widgets.units.dialogs import PARTS, OverrideDialog
from widgets.units.table import RED, item, table

if TYPE_CHECKING:
    from core.units.builder.candidates import Candidates
    from core.units.builder.draft import UnitDraft
    from core.units.builder.render import RenderedTriple
    from core.units.builder.saved import StoredUnit
    from core.units.shapes import UnitStructure

NO_DRAFT = (
    "No unit being built: choose an entity in the Browser and press <b>Start a data unit</b>."
)


class DraftEditor(QWidget):
    """The draft's title over a splitter: the claims to pick from, then the triples."""

    focus_requested = Signal(str)  # show the claims of this entity (root or a followed object)
    claim_added = Signal(int)  # index into the current candidates
    claims_added = Signal(list)  # several indices into the current candidates, one action
    triple_moved = Signal(int, int)  # from, to
    triple_removed = Signal(int)
    # lang, position, part, text | None, keep for the session; the words name the entity
    # wherever it appears in the unit
    override_requested = Signal(str, int, str, object, bool)
    save_requested = Signal()
    discard_requested = Signal()

    def __init__(self, state: UnitsPanelState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self._editable = False
        self._rendered: Mapping[str, Sequence[RenderedTriple]] = {}
        self.title = QLabel(NO_DRAFT)
        self.title.setWordWrap(True)
        self.structure_label = QLabel()
        editor = QSplitter(Qt.Orientation.Vertical)
        editor.addWidget(self._build_picker())
        editor.addWidget(self._build_triples())
        editor.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(editor, 1)

    # -- building --------------------------------------------------------------------------
    def _build_rules(self) -> QPushButton:
        """One switch per METHODS §4 rule, in a menu (compact in a narrow dock), each bound
        to the state's claim filters; the draft's candidates follow (app/units.py)."""
        # A push button with a menu: the style keeps room for the menu arrow (a tool
        # button's arrow was drawn over the text's last letters).
        self.rules_button = QPushButton("Claim filters")
        self.rules_button.setToolTip("Which METHODS §4 rules drop claims (all on by default)")
        rules_menu = QMenu(self.rules_button)
        self.rule_checks: dict[str, QAction] = {}
        for rule, title in RULES:
            action = rules_menu.addAction(f"Drop: {title}")
            action.setCheckable(True)
            bind(
                self.state,
                "claim_filters",
                action,
                to_widget=lambda settings, r=rule: getattr(settings, r),
                from_widget=lambda on, r=rule: self.state.with_rule(r, on),
            )
            self.rule_checks[rule] = action
        self.rules_button.setMenu(rules_menu)
        return self.rules_button

    def _build_picker(self) -> QWidget:
        self.focus_combo = QComboBox()
        self.focus_combo.setToolTip(
            "Whose claims to pick from: the root, or an object in the "
            "unit to follow (this makes chains)"
        )
        self.focus_combo.activated.connect(
            lambda _i: self.focus_requested.emit(self.focus_combo.currentData())
        )
        self.candidates_model = QStandardItemModel(0, 4)
        self.candidates_model.setHorizontalHeaderLabels(["property", "value", "rank", "dropped"])
        self.candidates_view = table(self.candidates_model)
        self.candidates_view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.candidates_view.setToolTip(
            "Select several claims (Ctrl or Shift) and press Add to unit, or double-click one"
        )
        self.candidates_view.doubleClicked.connect(self._on_candidate_activated)
        self.counts_label = QLabel()
        self.counts_label.setWordWrap(True)
        add = QPushButton("Add to unit")
        add.setToolTip("Add every selected claim")
        add.clicked.connect(self._add_selected)
        box = QWidget()
        pick = QVBoxLayout(box)
        pick.setContentsMargins(0, 0, 0, 0)
        focus_row = QHBoxLayout()
        focus_row.addWidget(QLabel("Claims of"))
        focus_row.addWidget(self.focus_combo, 1)
        focus_row.addWidget(self._build_rules())
        focus_row.addWidget(add)
        pick.addLayout(focus_row)
        pick.addWidget(self.candidates_view, 1)
        pick.addWidget(self.counts_label)
        return box

    def _build_triples(self) -> QWidget:
        self.triples_model = QStandardItemModel(0, len(LANGUAGES))
        self.triples_model.setHorizontalHeaderLabels(list(LANGUAGES))
        self.triples_view = table(self.triples_model, stretch=True)
        self.triples_view.setWordWrap(True)
        self.triples_view.doubleClicked.connect(self._on_triple_activated)
        self.triples_view.setToolTip("Double-click a cell to override its words in that language")
        up, down, remove = QPushButton("Up"), QPushButton("Down"), QPushButton("Remove")
        up.clicked.connect(lambda: self._move(-1))
        down.clicked.connect(lambda: self._move(+1))
        remove.clicked.connect(self._remove)
        self.save_button = QPushButton("Save unit")
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(self.save_requested)
        discard = QPushButton("Discard draft")
        discard.clicked.connect(self.discard_requested)
        box = QWidget()
        draft = QVBoxLayout(box)
        draft.setContentsMargins(0, 0, 0, 0)
        draft.addWidget(self.structure_label)
        draft.addWidget(self.triples_view, 1)
        buttons = QHBoxLayout()
        for button in (up, down, remove):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(discard)
        buttons.addWidget(self.save_button)
        draft.addLayout(buttons)
        return box

    # -- what the controller shows ---------------------------------------------------------
    def show_draft(
        self,
        draft: UnitDraft,
        root_label: str,
        structure: UnitStructure,
        rendered: Mapping[str, Sequence[RenderedTriple]],
        focus: Sequence[tuple[str, str]],
        current_focus: str | None,
    ) -> None:
        """The draft being built (``UnitDraft``, ``UnitStructure``, rendering per language)."""
        self._editable = True
        tier = draft.sub_tier or draft.tier
        where = ", ".join(x for x in (draft.category, tier_label(tier) if tier else "") if x)
        self.title.setText(
            f"Building a unit from <b>{root_label}</b> ({draft.root_qid})"
            + (f" · {where}" if where else "")
        )
        self._show_structure(structure)
        self.save_button.setEnabled(structure.valid)
        self._show_rendered(rendered)
        self.focus_combo.clear()
        for qid, label in focus:
            self.focus_combo.addItem(f"{label} ({qid})", qid)
        if current_focus is not None:
            self.focus_combo.setCurrentIndex(max(0, self.focus_combo.findData(current_focus)))

    def show_stored(self, unit: StoredUnit) -> None:
        """A saved unit: its triples per language; overrides can still be edited."""
        self._editable = False
        self.title.setText(
            f"Unit <b>{unit.uid}</b> · {unit.origin}" + (f" · {unit.source}" if unit.source else "")
        )
        self.structure_label.setText(
            f"{unit.shape or '?'}, {plural(unit.size, 'triple')} · parallel in: "
            f"{', '.join(sorted(unit.parallel)) or 'none'}"
        )
        self.save_button.setEnabled(False)
        self._show_rendered(unit.triples)
        self.candidates_model.removeRows(0, self.candidates_model.rowCount())
        self.counts_label.clear()
        self.focus_combo.clear()

    def clear_draft(self) -> None:
        self._editable = False
        self.title.setText(NO_DRAFT)
        for model in (self.triples_model, self.candidates_model):
            model.removeRows(0, model.rowCount())
        self.structure_label.clear()
        self.counts_label.clear()
        self.focus_combo.clear()
        self.save_button.setEnabled(False)

    def show_candidates(
        self, candidates: Candidates, labels: Mapping[str, str], rule_names: Mapping[str, str]
    ) -> None:
        """``core.units.builder.candidates.Candidates`` of the entity in focus."""
        self.candidates_model.removeRows(0, self.candidates_model.rowCount())
        for index, row in enumerate(candidates.claims):
            claim = row.claim
            dropped = row.reason is not None or row.in_unit
            value = labels.get(claim.value or "", claim.value or claim.snak_type)
            cells = [
                item(
                    f"{labels.get(claim.property_pid, claim.property_pid)} ({claim.property_pid})",
                    data=index,
                    grey=dropped,
                ),
                item(str(value), grey=dropped),
                item(claim.rank, grey=dropped),
                item("in the unit" if row.in_unit else (row.reason or ""), grey=dropped),
            ]
            self.candidates_model.appendRow(cells)
        counts = candidates.counts
        dropped = ", ".join(
            f"{rule_names.get(rule, rule)}: {n}" for rule, n in counts.by_rule.items() if n
        )
        self.counts_label.setText(
            f"{plural(counts.kept, 'claim')} kept"
            + (f"; dropped by rule: {dropped}" if dropped else "")
        )

    def _show_structure(self, structure: UnitStructure) -> None:
        if structure.valid:
            text = (
                f"<b>{structure.shape.value}</b>, {structure.size} triple"
                f"{'s' if structure.size != 1 else ''}, connected"
            )
            themed_text(self.structure_label, lambda: text)
        else:
            problems = "; ".join(structure.problems)
            themed_text(
                self.structure_label,
                lambda: f"<span style='color:{tone('error')}'>Cannot be saved: {problems}</span>",
            )

    def _show_rendered(self, rendered: Mapping[str, Sequence[RenderedTriple]]) -> None:
        self._rendered = rendered
        self.triples_model.removeRows(0, self.triples_model.rowCount())
        rows = max((len(v) for v in rendered.values()), default=0)
        italic = QFont()
        italic.setItalic(True)
        for position in range(rows):
            cells = []
            for lang in LANGUAGES:
                triples = rendered.get(lang, ())
                if position >= len(triples):
                    cells.append(item("—", grey=True))
                    continue
                triple = triples[position]
                cell = item(" | ".join(triple.display), data=(lang, position))
                if triple.label_missing:
                    cell.setForeground(RED)
                    cell.setToolTip(
                        "A label is missing in this language: the unit is not "
                        "parallel here. Double-click to give the words by hand."
                    )
                if any(getattr(triple, f"{p}_override") is not None for p in PARTS):
                    cell.setFont(italic)
                    cell.setToolTip(
                        "Words set by hand; Wikidata's label is kept apart: "
                        + " | ".join((triple.subject, triple.predicate, triple.object))
                    )
                cells.append(cell)
            self.triples_model.appendRow(cells)
        self.triples_view.resizeRowsToContents()

    # -- the user's edits --------------------------------------------------------------------
    def _on_candidate_activated(self, index: QModelIndex) -> None:
        if index.isValid() and self._editable:
            cell = self.candidates_model.item(index.row(), 0)
            self.claim_added.emit(int(cell.data(Qt.ItemDataRole.UserRole)))

    def selected_candidates(self) -> list[int]:
        """Indices of the selected candidate claims, in their order in the list."""
        rows = sorted(
            {index.row() for index in self.candidates_view.selectionModel().selectedRows()}
        )
        return [int(self.candidates_model.item(r, 0).data(Qt.ItemDataRole.UserRole)) for r in rows]

    def _add_selected(self) -> None:
        chosen = self.selected_candidates()
        if not chosen:
            index = self.candidates_view.currentIndex()
            chosen = (
                [int(self.candidates_model.item(index.row(), 0).data(Qt.ItemDataRole.UserRole))]
                if index.isValid()
                else []
            )
        if chosen and self._editable:
            self.claims_added.emit(chosen)

    def _selected_position(self) -> int | None:
        index = self.triples_view.currentIndex()
        return index.row() if index.isValid() else None

    def _move(self, step: int) -> None:
        position = self._selected_position()
        if position is None or not self._editable:
            return
        target = position + step
        if 0 <= target < self.triples_model.rowCount():
            self.triple_moved.emit(position, target)
            self.triples_view.selectRow(target)

    def _remove(self) -> None:
        position = self._selected_position()
        if position is not None and self._editable:
            self.triple_removed.emit(position)

    def _on_triple_activated(self, index: QModelIndex) -> None:
        data = self.triples_model.itemFromIndex(index).data(Qt.ItemDataRole.UserRole)
        if not data:
            return
        lang, position = data
        triple = self._rendered[lang][position]
        dialog = OverrideDialog(triple, lang, self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            part, text, keep = dialog.values()
            self.override_requested.emit(lang, position, part, text, keep)
