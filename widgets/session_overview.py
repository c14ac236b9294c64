"""Central widget: what the open session holds."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from core.session_info import SessionInfo

# Tables shown to users, in their words; internal bookkeeping tables are left out.
_TABLE_NAMES: dict[str, str] = {
    "categories": "Categories",
    "entities": "Entities",
    "claims": "Claims",
    "terms": "Labels, descriptions, aliases",
    "data_units": "Data units",
    "unit_triples": "Unit triples",
    "unit_references": "References",
    "model_runs": "Model runs",
    "verbalisations": "Verbalisations",
    "scores": "Scores",
    "annotators": "Annotators",
    "annotations": "Annotations",
}


class SessionOverview(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setWordWrap(True)
        self.label.setContentsMargins(16, 8, 16, 8)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        self.show_info(None)

    def show_info(self, info: SessionInfo | None) -> None:
        if info is None:
            self.label.setText(
                "<h2>No session open</h2><p>Use <b>File ▸ New session</b> or "
                "<b>File ▸ Open</b>. A session is one file; every change is saved as you "
                "make it.</p>"
            )
            return
        tables = info.get("tables", {})
        rows = "".join(
            f"<tr><td>{html.escape(title)}</td><td align='right'>{tables.get(key, 0):,}</td></tr>"
            for key, title in _TABLE_NAMES.items()
        )
        created = html.escape(str(info.get("created_at") or "—"))
        self.label.setText(
            f"<h2>Session</h2><p><b>{html.escape(str(info['path']))}</b></p>"
            f"<p>Schema revision {html.escape(str(info.get('schema_revision')))} · "
            f"created {created} with TailLens {html.escape(str(info.get('created_with') or '?'))}"
            "<br>Every change is saved as you make it.</p>"
            f"<table cellspacing='0' cellpadding='3'>{rows}</table>"
        )
