"""Units panel: build a data unit from real claims, see it in en/it/es, save it.

Top: the units the session holds. Below: the unit being built (the *draft*): the claims
of the entity in focus (dropped ones greyed with the reason, counts per rule), the
draft's triples side by side in English, Italian and Spanish (missing labels in red,
manual overrides shown in italics), its shape, size and connectivity, and Save.

The panel keeps no truth of its own: ``app.units.UnitsController`` hands it the draft,
the candidates and the rendering (all computed by ``core.units.builder``) and answers its
requests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QAction, QBrush, QColor, QFont, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.desktop.dialog_memory import DialogMemory
from core.groups import order_key, subtier_group, tier_group
from core.labels import plural, tier_label
from core.tiers.cutoffs import SubTier, Tier
from core.units.claim_filters import RULES, ClaimFilterSettings
from core.vocab import LANGUAGES, QUALITIES
from widgets.dialogs import FittedDialog
from widgets.theme import TONES, muted_colour, themed_text, tone

if TYPE_CHECKING:
    from core.tiers.stored import TierChange
    from core.units.builder.candidates import Candidates
    from core.units.builder.draft import UnitDraft
    from core.units.builder.render import RenderedTriple
    from core.units.builder.saved import StoredUnit
    from core.units.sampler import SampleRequest
    from core.units.shapes import UnitStructure

_GREY = QBrush(QColor(TONES["muted"][0]))  # the style draws it in the theme's variant


def _tier_words(tier: str | None, sub_tier: str | None = None) -> str:
    """A unit's tier in the words every panel uses (Annotate's filter, the Report's
    groups): TailNLG's top_head is "head", its rare_claims "rare claims", a long-tail
    unit's language sub-tier "long tail · en only"."""
    return tier_label(subtier_group(tier, sub_tier)) if tier else ""


def _tier_groups(tier: str | None, sub_tier: str | None) -> list[str]:
    """The tier filter's values a unit matches: its tier and its sub-tier group (a
    long_tail_en unit is in "long tail" and in "long tail · en only")."""
    if not tier:
        return [NO_TIER]
    return list(dict.fromkeys((tier_group(tier), subtier_group(tier, sub_tier))))


NO_TIER = "none"


def _tier_sort_key(tier: str | None, sub_tier: str | None) -> str:
    """Sorting the tier column goes head to tail (a string: Qt compares it)."""
    if not tier:
        return "99"
    rank, code = order_key("subtier", subtier_group(tier, sub_tier))
    return f"{rank:02d} {code}"


_RED = QBrush(QColor(TONES["error"][0]))
UNIT_COLUMNS = (
    "uid",
    "shape",
    "size",
    "tier",
    "languages",
    "parallel",
    "origin",
    "references",
)
SORT_ROLE = Qt.ItemDataRole.UserRole + 1  # what a column sorts by (sizes as numbers)
ANY = "All"  # a filter that lets every unit through
PARTS = ("subject", "predicate", "object")


def _item(text: str, *, data: Any = None, grey: bool = False) -> QStandardItem:
    item = QStandardItem(text)
    item.setEditable(False)
    if data is not None:
        item.setData(data, Qt.ItemDataRole.UserRole)
    if grey:
        item.setForeground(_GREY)
    return item


class _PagedUnitsModel(QStandardItemModel):
    """The saved units, read a page at a time: the view asks for more (``fetchMore``) as
    it scrolls, the panel asks its controller (``more_units_requested``), which answers
    with ``UnitsPanel.add_units``."""

    def __init__(self, panel: UnitsPanel) -> None:
        super().__init__(0, len(UNIT_COLUMNS))
        self._panel = panel
        self.total = 0  # units in the session, whether read yet or not
        self.asked_after: int | None = None  # the last unit id a page was asked after

    def canFetchMore(self, parent: QModelIndex = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and self.rowCount() < self.total

    def fetchMore(self, parent: QModelIndex = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent):
            after = self._panel.last_unit_id()
            if after is not None and after == self.asked_after:
                return  # that page is on its way (read off the UI thread)
            self.asked_after = after
            self._panel.more_units_requested.emit(after)


class _UnitFilter(QSortFilterProxyModel):
    """The units shown: sorted by any column, filtered by shape, size, tier, language and
    whether they have references (``wanted``: column -> the value a unit must have)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.wanted: dict[int, str] = {}
        self.setSortRole(SORT_ROLE)

    def set_wanted(self, wanted: Mapping[int, str]) -> None:
        self.wanted = {c: v for c, v in wanted.items() if v != ANY}
        self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:
        source = self.sourceModel()
        for column, value in self.wanted.items():
            cell = str(source.index(row, column, parent).data(FILTER_ROLE) or "")
            if value not in cell.split("|"):
                return False
        return True


FILTER_ROLE = Qt.ItemDataRole.UserRole + 2  # the values a unit's cell matches, "|"-joined
# (column, what the combo offers first): the filters above the units table.
UNIT_FILTERS = (
    ("shape", "Shape"),
    ("size", "Size"),
    ("tier", "Tier"),
    ("languages", "Language"),
    ("references", "References"),
)


class UnitsPanel(QWidget):
    unit_selected = Signal(int)  # a saved unit to show
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
    start_requested = Signal(str)  # a QID typed by the user
    filters_changed = Signal(object)  # ClaimFilterSettings
    sample_requested = Signal(object)  # core.units.sampler.SampleRequest (with the claim filters)
    more_units_requested = Signal(object)  # the last unit id shown: the next page is wanted
    units_shown = Signal()  # the session's units (page one) are in the table
    view_changed = Signal()  # the user changed a units filter or the sort

    # Where the Sample… dialog keeps its choices (set by app.gui; None: not kept).
    dialog_memory: DialogMemory | None = None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # -- saved units --
        self.units_model = _PagedUnitsModel(self)
        self._tier_changes: Mapping[int, TierChange] = {}
        self._reading_all = False  # a sort or filter is reading the remaining pages
        self._asking = False  # inside _read_every_page's loop
        self.units_model.setHorizontalHeaderLabels(list(UNIT_COLUMNS))
        # Sorted and filtered in the view; a sort or a filter reads every page first.
        self.units_proxy = _UnitFilter(self)
        self.units_proxy.setSourceModel(self.units_model)
        self.units_view = _table(self.units_proxy)
        self.units_view.setSortingEnabled(True)
        self.units_view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.units_view.horizontalHeader().sortIndicatorChanged.connect(
            lambda *_a: (self._read_every_page(), self.view_changed.emit())
        )
        _fit_unit_columns(self.units_view)
        # At least five rows of units, whatever the editor below asks for (one row showed
        # at 1024 x 640 once the filters and references took their lines).
        view = self.units_view
        view.setMinimumHeight(
            5 * view.verticalHeader().defaultSectionSize()
            + view.horizontalHeader().sizeHint().height()
            + view.horizontalScrollBar().sizeHint().height()
            + 2 * view.frameWidth()
        )
        self.units_view.selectionModel().currentRowChanged.connect(self._on_unit_row)
        self.unit_filters: dict[str, QComboBox] = {}
        self._units_words = ""
        for name, everything in UNIT_FILTERS:
            combo = QComboBox()
            combo.addItem(everything, ANY)
            combo.setToolTip(f"Only units with this {name}")
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            # Never narrower than its "Any …" words: what it shows when nothing is chosen.
            # Never narrower than its own name, what it shows when nothing is chosen (a
            # name alone: five boxes of "Any …" did not fit a 1024 px window).
            combo.setMinimumContentsLength(len(everything))
            combo.currentIndexChanged.connect(self._filter_units)
            self.unit_filters[name] = combo
        self._fill_filter("references", [*QUALITIES, "any", "none"])
        self.references_view = QLabel()  # the selected unit's reference texts
        self.references_view.setWordWrap(True)
        self.references_view.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.references_view.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.references_scroll = QScrollArea()
        self.references_scroll.setWidget(self.references_view)
        self.references_scroll.setWidgetResizable(True)
        self.references_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.references_scroll.setMaximumHeight(90)
        self.references_scroll.setVisible(False)
        self.units_label = QLabel()
        self.qid_edit = QLineEdit()
        self.qid_edit.setPlaceholderText("Start from a QID, e.g. Q42")
        self.qid_edit.returnPressed.connect(self._on_qid_entered)
        sample = QPushButton("Sample units…")
        sample.setToolTip(
            "Build N units per entity of the Browser's category, by shape and "
            "size, reproducibly (seeded)"
        )
        sample.clicked.connect(self._ask_sample)
        # Knowledge beam search (widgets/unit_search.py); app/units.py opens its dialog.
        self.search_button = QPushButton("Search…")
        self.search_button.setToolTip(
            "Find units by knowledge beam search: a template "
            "filled from the graph, guided by a model's likelihood"
        )
        # One switch per METHODS §4 rule, in a menu (compact in a narrow dock); the
        # draft's candidates follow at once.
        # A push button with a menu: the style keeps room for the menu arrow (a tool
        # button's arrow was drawn over the text's last letters).
        self.rules_button = QPushButton("Claim filters")
        self.rules_button.setToolTip("Which METHODS §4 rules drop claims (all on by default)")
        rules_menu = QMenu(self.rules_button)
        self.rule_checks: dict[str, QAction] = {}
        for rule, title in RULES:
            action = rules_menu.addAction(f"Drop: {title}")
            action.setCheckable(True)
            action.setChecked(True)
            action.toggled.connect(lambda _on: self.filters_changed.emit(self.filter_settings()))
            self.rule_checks[rule] = action
        self.rules_button.setMenu(rules_menu)

        # -- the draft --
        self.title = QLabel(
            "No unit being built: choose an entity in the Browser and press "
            "<b>Start a data unit</b>."
        )
        self.title.setWordWrap(True)
        self.structure_label = QLabel()
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
        self.candidates_view = _table(self.candidates_model)
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

        self.triples_model = QStandardItemModel(0, len(LANGUAGES))
        self.triples_model.setHorizontalHeaderLabels(list(LANGUAGES))
        self.triples_view = _table(self.triples_model, stretch=True)
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

        # -- layout --
        units_box = QWidget()
        units_layout = QVBoxLayout(units_box)
        units_layout.setContentsMargins(0, 0, 0, 0)
        top_row = QHBoxLayout()
        top_row.addWidget(self.units_label, 1)
        top_row.addWidget(self.qid_edit)
        top_row.addWidget(sample)
        top_row.addWidget(self.search_button)
        units_layout.addLayout(top_row)
        filter_row = QHBoxLayout()
        for combo in self.unit_filters.values():
            filter_row.addWidget(combo, 1)
        units_layout.addLayout(filter_row)
        units_layout.addWidget(self.units_view, 1)
        units_layout.addWidget(self.references_scroll)

        pick_box = QWidget()
        pick = QVBoxLayout(pick_box)
        pick.setContentsMargins(0, 0, 0, 0)
        focus_row = QHBoxLayout()
        focus_row.addWidget(QLabel("Claims of"))
        focus_row.addWidget(self.focus_combo, 1)
        focus_row.addWidget(self.rules_button)
        focus_row.addWidget(add)
        pick.addLayout(focus_row)
        pick.addWidget(self.candidates_view, 1)
        pick.addWidget(self.counts_label)

        draft_box = QWidget()
        draft = QVBoxLayout(draft_box)
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

        editor = QSplitter(Qt.Orientation.Vertical)
        editor.addWidget(pick_box)
        editor.addWidget(draft_box)
        editor.setStretchFactor(1, 2)
        editor_box = QWidget()
        editor_layout = QVBoxLayout(editor_box)
        editor_layout.setContentsMargins(0, 0, 0, 0)
        editor_layout.addWidget(self.title)
        editor_layout.addWidget(editor, 1)
        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(units_box)
        outer.addWidget(editor_box)
        outer.setStretchFactor(0, 2)  # the units table and its references keep room
        outer.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(outer)
        self._editable = False
        self._rendered: Mapping[str, Sequence[RenderedTriple]] = {}

    # -- what the controller shows -------------------------------------------------------
    def show_units(
        self,
        units: Sequence[StoredUnit],
        tier_changes: Mapping[int, TierChange] | None = None,
        total: int | None = None,
        references: Mapping[int, Mapping[str, int]] | None = None,
    ) -> None:
        """``core.units.builder.saved.StoredUnit``s; ``tier_changes`` (unit id ->
        ``core.tiers.stored.TierChange``) marks units whose root has another tier now.
        With ``total`` (the session's count), ``units`` is the first page: the rest is
        asked for (``more_units_requested``) as the view scrolls."""
        self._tier_changes = tier_changes = tier_changes or {}
        self.units_model.removeRows(0, self.units_model.rowCount())
        self.units_model.asked_after = None
        self.units_model.total = len(units) if total is None else total
        self.add_units(units, references)
        changed = len(tier_changes)
        self._units_words = f"{plural(self.units_model.total, 'unit')} in the session" + (
            f" · {changed:,} built under another tier than their root's now" if changed else ""
        )
        self.units_label.setText(self._units_words)
        sorted_by = self.units_view.horizontalHeader().sortIndicatorSection()
        if sorted_by >= 0 or any(v != ANY for v in self.unit_filter().values()):
            self._filter_units(emit=False)  # a sort or filter in force works on every unit
        self.units_shown.emit()

    def add_units(
        self,
        units: Sequence[StoredUnit],
        references: Mapping[int, Mapping[str, int]] | None = None,
    ) -> None:
        """The next page of units (after those shown); ``references``: unit id ->
        {quality: texts} (``core.units.reference_counts.reference_counts``)."""
        references = references or {}
        if not units:
            self.units_model.total = self.units_model.rowCount()  # the session shrank
        for unit in units:
            tier = _item(_tier_words(unit.tier, unit.sub_tier))
            change = self._tier_changes.get(unit.id)
            if change is not None:
                tier.setText(
                    f"{tier.text() or 'no tier'} ⚠ now "
                    f"{_tier_words(change.now_tier, change.now_sub_tier)}"
                )
                tier.setToolTip(
                    f"This unit was {change.describe()} (the Browser's lines "
                    "moved since). The unit keeps its tier; the report groups it "
                    "by the tier at build time."
                )
                tier.setForeground(_RED)
            refs = references.get(unit.id, {})
            refs_text = " · ".join(f"{q} {n:,}" for q, n in sorted(refs.items()))
            row = [
                _item(unit.uid, data=unit.id),
                _item(unit.shape or ""),
                _item(str(unit.size)),
                tier,
                _item(" ".join(unit.languages)),
                _item(" ".join(sorted(unit.parallel))),
                _item(unit.origin),
                _item(refs_text, grey=not refs),
            ]
            sorts: tuple[Any, ...] = (
                unit.uid,
                unit.shape or "",
                unit.size,
                _tier_sort_key(unit.tier, unit.sub_tier),
                " ".join(unit.languages),
                " ".join(sorted(unit.parallel)),
                unit.origin,
                sum(refs.values()),
            )
            matches = {
                "shape": unit.shape or "",
                "size": str(unit.size),
                "tier": "|".join(_tier_groups(unit.tier, unit.sub_tier)),
                "languages": "|".join(unit.languages),
                "references": "|".join([*refs, "any"] if refs else ["none"]),
            }
            for column, (item, key) in enumerate(zip(row, sorts, strict=True)):
                item.setData(key, SORT_ROLE)
                name = UNIT_COLUMNS[column]
                if name in matches:
                    item.setData(matches[name], FILTER_ROLE)
            self.units_model.appendRow(row)
            for name in ("shape", "size", "languages"):
                self._fill_filter(name, matches[name].split("|"))
            self._fill_tier_filter(matches["tier"].split("|"))
        if self._reading_all:  # a sort or filter waits for every page: ask for the next
            self._read_every_page()
        if self._reading_all or any(v != ANY for v in self.unit_filter().values()):
            self._show_counts()

    def last_unit_id(self) -> int | None:
        rows = self.units_model.rowCount()
        if not rows:
            return None
        return int(self.units_model.item(rows - 1, 0).data(Qt.ItemDataRole.UserRole))

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
        self.title.setText(
            "No unit being built: choose an entity in the Browser and press "
            "<b>Start a data unit</b>."
        )
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
                _item(
                    f"{labels.get(claim.property_pid, claim.property_pid)} ({claim.property_pid})",
                    data=index,
                    grey=dropped,
                ),
                _item(str(value), grey=dropped),
                _item(claim.rank, grey=dropped),
                _item("in the unit" if row.in_unit else (row.reason or ""), grey=dropped),
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

    def filter_settings(self) -> ClaimFilterSettings:
        return ClaimFilterSettings(
            **{rule: check.isChecked() for rule, check in self.rule_checks.items()}
        )

    def show_filter_settings(self, settings: ClaimFilterSettings) -> None:
        for rule, check in self.rule_checks.items():
            check.blockSignals(True)
            check.setChecked(getattr(settings, rule))
            check.blockSignals(False)

    # -- internals ---------------------------------------------------------------------
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
                    cells.append(_item("—", grey=True))
                    continue
                triple = triples[position]
                cell = _item(" | ".join(triple.display), data=(lang, position))
                if triple.label_missing:
                    cell.setForeground(_RED)
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

    def _on_qid_entered(self) -> None:
        qid = self.qid_edit.text().strip().upper()
        if qid:
            self.start_requested.emit(qid)

    def _ask_sample(self) -> None:
        dialog = SampleDialog(self, self.dialog_memory)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.sample_requested.emit(replace(dialog.request(), filters=self.filter_settings()))

    def _on_unit_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            row = self.units_proxy.mapToSource(current).row()
            unit_id = self.units_model.item(row, 0).data(Qt.ItemDataRole.UserRole)
            self.unit_selected.emit(int(unit_id))

    def show_references(self, references: Sequence[tuple[str, str, str]]) -> None:
        """The selected unit's reference texts: (language, quality, text)."""
        themed_text(
            self.references_view,
            lambda: (
                "<br>".join(
                    f"<b>{escape(lang)}</b> <span style='color:{muted_colour()}'>"
                    f"{escape(quality)}</span> {escape(text)}"
                    for lang, quality, text in references
                )
                or "<i>No reference texts for this unit.</i>"
            ),
        )
        self.references_scroll.setVisible(True)

    def _fill_filter(self, name: str, values: Sequence[str]) -> None:
        combo = self.unit_filters[name]
        known = {combo.itemData(i) for i in range(combo.count())}
        for value in values:
            if value and value not in known:
                combo.addItem(value, value)
                known.add(value)

    def _fill_tier_filter(self, codes: Sequence[str]) -> None:
        """Tiers in the one vocabulary, head to tail (as Annotate's filter lists them)."""
        combo = self.unit_filters["tier"]
        for code in codes:
            if combo.findData(code) >= 0:
                continue
            key = order_key("subtier", code)
            at = 1  # after "Tier" (any tier)
            while at < combo.count() and order_key("subtier", combo.itemData(at)) <= key:
                at += 1
            combo.insertItem(at, tier_label(None if code == NO_TIER else code), code)

    def unit_filter(self) -> dict[str, str]:
        return {name: str(combo.currentData()) for name, combo in self.unit_filters.items()}

    def view_state(self) -> dict[str, Any]:
        """The filters and the sort of the units table, as plain values (kept across
        restarts by ``app.window_state``)."""
        header = self.units_view.horizontalHeader()
        return {
            "filters": self.unit_filter(),
            "sort": [header.sortIndicatorSection(), header.sortIndicatorOrder().value],
        }

    def restore_view_state(self, state: Mapping[str, Any]) -> None:
        """Filters and sort as :meth:`view_state` gave them; a filter value no unit read
        yet has is offered all the same (the filter reads every page)."""
        filters = state.get("filters")
        sort = state.get("sort")
        for combo in self.unit_filters.values():
            combo.blockSignals(True)
        try:
            if isinstance(filters, Mapping):
                for name, value in filters.items():
                    combo = self.unit_filters.get(str(name))
                    if combo is None or not isinstance(value, str):
                        continue
                    if combo.findData(value) < 0:
                        combo.addItem(value, value)
                    combo.setCurrentIndex(combo.findData(value))
        finally:
            for combo in self.unit_filters.values():
                combo.blockSignals(False)
        header = self.units_view.horizontalHeader()
        header.blockSignals(True)
        try:
            if (
                isinstance(sort, list)
                and len(sort) == 2
                and all(isinstance(v, int) for v in sort)
                and -1 <= sort[0] < len(UNIT_COLUMNS)
            ):
                order = Qt.SortOrder(1 if sort[1] else 0)
                if sort[0] >= 0:
                    self.units_view.sortByColumn(sort[0], order)
                else:
                    header.setSortIndicator(-1, order)
                    self.units_proxy.sort(-1)
        finally:
            header.blockSignals(False)
        self._filter_units(emit=False)

    def _filter_units(self, _index: int = 0, *, emit: bool = True) -> None:
        wanted = {UNIT_COLUMNS.index(name): value for name, value in self.unit_filter().items()}
        self.units_proxy.set_wanted(wanted)
        self._read_every_page()
        self._show_counts()
        if emit:
            self.view_changed.emit()

    def _show_counts(self) -> None:
        shown, loaded = self.units_proxy.rowCount(), self.units_model.rowCount()
        total = self.units_model.total
        reading = (
            f" (reading {loaded:,} of {total:,}…)" if self._reading_all and loaded < total else ""
        )
        self.units_label.setText(
            f"{shown:,} of {plural(total, 'unit')} match the filters{reading}"
            if shown != loaded or reading
            else self._units_words
        )

    def _read_every_page(self) -> None:
        """A sort or a filter works on every unit: the pages not read yet are asked for,
        one after another, until none is left. An answer that comes at once (through
        ``add_units``) is followed by the next question here; one that comes later (read
        off the UI thread) asks for the next from ``add_units``. The proxy sorts and
        filters the rows as they arrive."""
        model = self.units_model
        self._reading_all = model.canFetchMore(QModelIndex())
        if self._asking:
            return
        self._asking = True
        try:
            while model.canFetchMore(QModelIndex()):
                before = model.rowCount()
                model.fetchMore(QModelIndex())
                if model.rowCount() == before:  # answered later, off the UI thread (or never)
                    return
            self._reading_all = False
        finally:
            self._asking = False

    def _on_candidate_activated(self, index: QModelIndex) -> None:
        if index.isValid() and self._editable:
            item = self.candidates_model.item(index.row(), 0)
            self.claim_added.emit(int(item.data(Qt.ItemDataRole.UserRole)))

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


class OverrideDialog(FittedDialog):
    """A person's words for one part of a triple in one language; they name that entity
    wherever it appears in the unit, and may be kept for the session's new units."""

    def __init__(self, triple: RenderedTriple, lang: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Override ({lang})")
        self.setMinimumWidth(420)
        self.triple = triple
        self.part = QComboBox()
        self.part.addItems(list(PARTS))
        self.text = QLineEdit(triple.shown(PARTS[0]))
        self.text.setPlaceholderText("empty: back to the Wikidata label")
        self.part.currentTextChanged.connect(lambda part: self.text.setText(triple.shown(part)))
        self.keep = QCheckBox("Use these words for this entity in new units too")
        self.keep.setToolTip(
            "Kept for this session: units built from now on use them wherever the entity appears"
        )
        note = QLabel(
            "The words replace the label wherever this entity appears in the unit "
            "(as subject or object; a property: in every predicate), in "
            f"{lang} only. A date or number is only this cell."
        )
        note.setWordWrap(True)
        form = QFormLayout(self)
        form.addRow("Part", self.part)
        form.addRow("Words", self.text)
        form.addRow(note)
        form.addRow(self.keep)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def values(self) -> tuple[str, str | None, bool]:
        return self.part.currentText(), self.text.text().strip() or None, self.keep.isChecked()


# Every tier and sub-tier a unit can be sampled from or built under.
TIERS = tuple(tier.value for tier in (*Tier, *SubTier))
# The values each column of the units list shows at its widest (the tiers' display
# words, "long tail · en only" the longest); origin takes what is left.
_UNIT_COLUMN_SAMPLES: dict[str, tuple[str, ...]] = {
    "uid": ("WWWWWWW",),
    "shape": ("sibling",),
    "size": ("size",),
    "tier": tuple(tier_label(tier) for tier in TIERS),
    "languages": ("en es it",),
    "parallel": ("en es it",),
}


def _fit_unit_columns(view: QTableView) -> None:
    """Each column as wide as its widest value, on one line (no "long tail · en / only"
    wrapped over two lines)."""
    view.setWordWrap(False)
    metrics = view.fontMetrics()
    header_metrics = view.horizontalHeader().fontMetrics()
    for column, name in enumerate(UNIT_COLUMNS):
        samples = _UNIT_COLUMN_SAMPLES.get(name)
        if samples is None:
            continue
        width = max(
            *(metrics.horizontalAdvance(sample) for sample in samples),
            header_metrics.horizontalAdvance(name),
        )
        view.setColumnWidth(column, width + 16)


def _table(model: QStandardItemModel, stretch: bool = False) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.verticalHeader().setVisible(False)
    header = view.horizontalHeader()
    if stretch:
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
    else:
        header.setStretchLastSection(True)
    return view


class SampleDialog(FittedDialog):
    """How many units of which shape and size, from which tier, with which seed."""

    def __init__(self, parent: QWidget | None = None, memory: DialogMemory | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Sample units")
        self.shape = QComboBox()
        self.shape.addItems(["sibling", "chain", "mixed"])
        self.size_spin = _spin(1, 7, 2)
        self.per_entity = _spin(1, 20, 1)
        self.seed = _spin(0, 2**31 - 1, 0)
        self.tier = QComboBox()
        self.tier.addItem("all tiers", None)
        for tier in TIERS:
            self.tier.addItem(tier_label(tier), tier)
        self.limit = _spin(1, 1_000_000, 100)
        self.parallel = QCheckBox("Only parallel units (every label in en, it and es)")
        self.parallel.setToolTip(
            "As TailNLG's units are: a unit is kept only when every "
            "subject, predicate and object has a label in English, "
            "Italian and Spanish (METHODS §5)"
        )
        form = QFormLayout(self)
        form.addRow("Shape", self.shape)
        form.addRow("Size (triples)", self.size_spin)
        form.addRow("Units per entity", self.per_entity)
        form.addRow("Entities of tier", self.tier)
        form.addRow("At most entities", self.limit)
        form.addRow("Seed", self.seed)
        form.addRow(self.parallel)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        if memory is not None:
            self.restore(memory.load())
            self.accepted.connect(lambda: memory.save(self.remembered()))

    def remembered(self) -> dict[str, Any]:
        return {
            "shape": self.shape.currentText(),
            "size": self.size_spin.value(),
            "per_entity": self.per_entity.value(),
            "tier": self.tier.currentData(),
            "limit": self.limit.value(),
            "seed": self.seed.value(),
            "parallel": self.parallel.isChecked(),
        }

    def restore(self, values: dict[str, Any]) -> None:
        """Show ``values`` (:meth:`remembered`'s); what is missing keeps the default."""
        if isinstance(values.get("shape"), str) and self.shape.findText(values["shape"]) >= 0:
            self.shape.setCurrentText(values["shape"])
        for key, spin in (
            ("size", self.size_spin),
            ("per_entity", self.per_entity),
            ("limit", self.limit),
            ("seed", self.seed),
        ):
            if isinstance(values.get(key), int):
                spin.setValue(values[key])
        if "tier" in values and self.tier.findData(values["tier"]) >= 0:
            self.tier.setCurrentIndex(self.tier.findData(values["tier"]))
        if isinstance(values.get("parallel"), bool):
            self.parallel.setChecked(values["parallel"])

    def request(self) -> SampleRequest:
        """What the dialog asks for (the panel adds its claim filters)."""
        from core.units.sampler import SampleRequest

        tier = self.tier.currentData()
        return SampleRequest(
            shapes=(self.shape.currentText(),),
            sizes=(self.size_spin.value(),),
            per_entity=self.per_entity.value(),
            seed=self.seed.value(),
            tiers=(tier,) if tier else None,
            limit_entities=self.limit.value(),
            parallel=self.parallel.isChecked(),
        )


def _spin(low: int, high: int, value: int) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setValue(value)
    return spin
