"""Units panel: build a data unit from real claims, see it in en/it/es, save it.

Top: the units the session holds (:class:`UnitsTable`), with a QID to start from and the
Sample units… and Search… commands. Below: the unit being built (:class:`DraftEditor`).
What the user chose (the table's filters and sort, the claim filters) is the panel's
:class:`UnitsPanelState`, which the widgets are bound to.

The panel keeps no truth of its own: ``app.units.UnitsController`` hands it the draft,
the candidates and the rendering (all computed by ``core.units.builder``) and answers its
requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDialog, QLineEdit, QPushButton, QSplitter, QVBoxLayout, QWidget

from core.desktop.dialog_memory import DialogMemory
from core.units.builder.panel_state import UnitsPanelState
from core.units.claim_filters import ClaimFilterSettings
from widgets.units.dialogs import SampleDialog
from widgets.units.draft import DraftEditor
from widgets.units.table import UNIT_COLUMNS, UnitsTable

# The signals of the table and the draft editor the panel passes on as its own (what
# app/units.py connects to).
_TABLE_SIGNALS = ("unit_selected", "more_units_requested", "units_shown")
_DRAFT_SIGNALS = (
    "focus_requested",
    "claim_added",
    "claims_added",
    "triple_moved",
    "triple_removed",
    "override_requested",
    "save_requested",
    "discard_requested",
)


class UnitsPanel(QWidget):
    unit_selected = Signal(int)  # a saved unit to show
    more_units_requested = Signal(object)  # the last unit id shown: the next page is wanted
    units_shown = Signal()  # the session's units (page one) are in the table
    focus_requested = Signal(str)  # show the claims of this entity (root or a followed object)
    claim_added = Signal(int)  # index into the current candidates
    claims_added = Signal(list)  # several indices into the current candidates, one action
    triple_moved = Signal(int, int)  # from, to
    triple_removed = Signal(int)
    override_requested = Signal(str, int, str, object, bool)  # see DraftEditor
    save_requested = Signal()
    discard_requested = Signal()
    start_requested = Signal(str)  # a QID typed by the user
    sample_requested = Signal(object)  # core.units.sampler.SampleRequest (with the claim filters)

    # Where the Sample… dialog keeps its choices (set by app.gui; None: not kept).
    dialog_memory: DialogMemory | None = None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = UnitsPanelState()
        self.units = UnitsTable(self.state)
        self.draft = DraftEditor(self.state)
        for name in (*_TABLE_SIGNALS, *_DRAFT_SIGNALS):
            source = self.units if name in _TABLE_SIGNALS else self.draft
            getattr(source, name).connect(getattr(self, name))
        self._expose_parts()
        self._build_commands()
        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(self.units)
        outer.addWidget(self.draft)
        outer.setStretchFactor(0, 2)  # the units table and its references keep room
        outer.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(outer)

    def _expose_parts(self) -> None:
        """The parts the controller, the window's checks and the tests reach, under the
        panel's names."""
        units, draft = self.units, self.draft
        self.units_model, self.units_proxy, self.units_view = (
            units.units_model,
            units.units_proxy,
            units.units_view,
        )
        self.unit_filters, self.units_label = units.unit_filters, units.units_label
        self.references_view, self.references_scroll = (
            units.references_view,
            units.references_scroll,
        )
        self.show_units, self.add_units = units.show_units, units.add_units
        self.last_unit_id, self.show_references = units.last_unit_id, units.show_references
        self.title, self.structure_label = draft.title, draft.structure_label
        self.focus_combo, self.rules_button = draft.focus_combo, draft.rules_button
        self.rule_checks = draft.rule_checks
        self.candidates_model, self.candidates_view = draft.candidates_model, draft.candidates_view
        self.counts_label = draft.counts_label
        self.triples_model, self.triples_view = draft.triples_model, draft.triples_view
        self.save_button = draft.save_button
        self.show_draft, self.show_stored = draft.show_draft, draft.show_stored
        self.clear_draft, self.show_candidates = draft.clear_draft, draft.show_candidates
        self.selected_candidates = draft.selected_candidates

    def _build_commands(self) -> None:
        """A QID to start from, Sample units… and Search…, beside the units' count (the
        two buttons are also Actions menu commands: widgets/panels.py's COMMANDS)."""
        self.qid_edit = QLineEdit()
        self.qid_edit.setPlaceholderText("Start from a QID, e.g. Q42")
        self.qid_edit.returnPressed.connect(self._on_qid_entered)
        self.sample_button = QPushButton("Sample units…")
        self.sample_button.setToolTip(
            "Build N units per entity of the Browser's category, by shape and "
            "size, reproducibly (seeded)"
        )
        self.sample_button.clicked.connect(self._ask_sample)
        # Knowledge beam search (widgets/unit_search.py); app/units.py opens its dialog.
        self.search_button = QPushButton("Search…")
        self.search_button.setToolTip(
            "Find units by knowledge beam search: a template "
            "filled from the graph, guided by a model's likelihood"
        )
        for widget in (self.qid_edit, self.sample_button, self.search_button):
            self.units.top_row.addWidget(widget)

    # -- the user's choices ------------------------------------------------------------------
    def filter_settings(self) -> ClaimFilterSettings:
        return self.state.claim_filters

    def unit_filter(self) -> dict[str, str]:
        return self.state.unit_filter()

    def view_state(self) -> dict[str, Any]:
        """The filters and the sort of the units table, as plain values (kept across
        restarts by ``app.window_state``)."""
        return self.state.saved()

    def restore_view_state(self, saved: Mapping[str, Any]) -> None:
        """Filters and sort as :meth:`view_state` gave them: the state takes them and the
        widgets follow (a filter value no unit read yet has is offered all the same)."""
        self.state.restore(saved, len(UNIT_COLUMNS))

    def _on_qid_entered(self) -> None:
        qid = self.qid_edit.text().strip().upper()
        if qid:
            self.start_requested.emit(qid)

    def _ask_sample(self) -> None:
        dialog = SampleDialog(self, self.dialog_memory)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.sample_requested.emit(replace(dialog.request(), filters=self.filter_settings()))
