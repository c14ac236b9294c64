"""File ▸ Annotation packs… (METHODS §13): the team's progress, a new pack for an
annotator, and merging the packs that come back.

The dialog decides nothing about the session: it shows ``core.annotation.packs``'
``TeamProgress`` and turns the form into a ``PackRequest``; the controller
(``app/packs.py``) reads and writes off the UI thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.annotation.packs import PackError, PackRequest, TeamProgress, parse_ids
from core.desktop.paths import SESSION_SUFFIX
from core.labels import plural
from core.vocab import LANGUAGES
from widgets.dialogs import FittedDialog
from widgets.save_dialog import ask_save_path
from widgets.theme import themed_style_sheet, tone

COLUMNS = (
    "Annotator",
    "Packs",
    "Handed out",
    "Done",
    "Left",
    "Golden items",
    "Golden adequacy",
    "Golden fluency",
    "Seconds per text",
)


def _figure(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


class PackForm(FittedDialog):
    """What goes into one annotator's pack; ``request()`` is the ``PackRequest``."""

    def __init__(self, annotators: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New annotation pack")
        self.setMinimumWidth(480)
        form = QFormLayout()
        self.annotator = QComboBox()
        self.annotator.setEditable(True)
        self.annotator.addItems(list(annotators))
        self.annotator.setCurrentText("")
        self.annotator.lineEdit().setPlaceholderText("who will rate (a new name is added)")
        form.addRow("Annotator", self.annotator)
        self.units = QLineEdit()
        self.units.setPlaceholderText("all, or unit ids such as 1-50,60")
        form.addRow("Units", self.units)
        self.runs = QLineEdit()
        self.runs.setPlaceholderText("all, or run ids such as 1,3")
        form.addRow("Runs", self.runs)
        langs = QHBoxLayout()
        self.langs = {lang: QCheckBox(lang) for lang in LANGUAGES}
        for box in self.langs.values():
            box.setChecked(True)
            langs.addWidget(box)
        langs.addStretch(1)
        form.addRow("Languages", langs)
        self.target = QComboBox()
        self.target.addItem("Model texts", "verbalisations")
        self.target.addItem("References", "references")
        form.addRow("Texts to rate", self.target)
        self.golden = QSpinBox()
        self.golden.setRange(0, 10_000)
        self.golden.setToolTip("Items with known answers mixed in to check the annotator")
        form.addRow("Golden items", self.golden)
        self.limit = QSpinBox()
        self.limit.setRange(0, 1_000_000)
        self.limit.setSpecialValueText("all")
        form.addRow("At most", self.limit)
        self.blind = QCheckBox("Hide model names, tiers and categories")
        form.addRow("Blind", self.blind)
        self.include_rated = QCheckBox("Also texts this annotator already rated")
        form.addRow("", self.include_rated)
        guide = QVBoxLayout()
        self.guidelines = QPlainTextEdit()
        self.guidelines.setPlaceholderText("Guidelines the annotator sees when opening the pack")
        self.guidelines.setMaximumHeight(90)
        load = QPushButton("Load from file…")
        load.clicked.connect(self._load_guidelines)
        guide.addWidget(self.guidelines)
        guide.addWidget(load, 0, Qt.AlignmentFlag.AlignLeft)
        form.addRow("Guidelines", guide)
        where = QHBoxLayout()
        self.out = QLineEdit()
        self.out.setPlaceholderText(f"the pack file to write (…{SESSION_SUFFIX})")
        browse = QPushButton("Choose…")
        browse.clicked.connect(self._choose_out)
        where.addWidget(self.out, 1)
        where.addWidget(browse)
        form.addRow("Save as", where)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        themed_style_sheet(self.problem, lambda p: f"color: {tone('error', p)};")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Make pack")
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self._request: PackRequest | None = None

    def _load_guidelines(self) -> None:
        from core.errors import UserFacingError
        from core.io.files import read_text

        path, _ = QFileDialog.getOpenFileName(self, "Guidelines", "", "Text (*.txt *.md);;All (*)")
        if not path:
            return
        try:
            self.guidelines.setPlainText(read_text(path, limit=1_000_000, what="the guidelines"))
        except UserFacingError as error:
            self.problem.setText(str(error))

    def _choose_out(self) -> None:
        name = self.annotator.currentText().strip() or "pack"
        path, _ = ask_save_path(
            self, "Save the pack as", f"{name}{SESSION_SUFFIX}", f"Pack (*{SESSION_SUFFIX})"
        )
        if path:
            self.out.setText(path)

    def request(self) -> PackRequest:
        """The form as a request, or a :class:`PackError` saying what to fix."""
        name = self.annotator.currentText().strip()
        if not name:
            raise PackError("Give the annotator's name.")
        out = self.out.text().strip()
        if not out:
            raise PackError("Choose where to save the pack.")
        langs = tuple(lang for lang, box in self.langs.items() if box.isChecked())
        if not langs:
            raise PackError("Tick at least one language.")
        path = Path(out).expanduser()
        if not path.suffix:
            path = path.with_suffix(SESSION_SUFFIX)
        return PackRequest(
            annotator=name,
            out=path,
            units=parse_ids(self.units.text()),
            runs=parse_ids(self.runs.text()),
            langs=None if len(langs) == len(LANGUAGES) else langs,
            target=str(self.target.currentData()),
            golden=self.golden.value(),
            blind=self.blind.isChecked(),
            guidelines=self.guidelines.toPlainText().strip() or None,
            limit=self.limit.value() or None,
            include_rated=self.include_rated.isChecked(),
        )

    def _accept(self) -> None:
        try:
            self._request = self.request()
        except PackError as error:
            self.problem.setText(str(error))
            return
        self.accept()

    @property
    def accepted_request(self) -> PackRequest | None:
        return self._request


class AnnotationPacksDialog(FittedDialog):
    """The team's progress per annotator, with New pack… and Merge packs…"""

    new_pack_requested = Signal(object)  # PackRequest
    merge_requested = Signal(list)  # [Path]

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Annotation packs")
        intro = QLabel(
            "Annotators can rate offline: make a pack for each, send them the file, and "
            "merge the packs that come back. Merging twice adds nothing; a rating that "
            "differs from one already here is reported and the session's is kept."
        )
        intro.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.agreement = QLabel()
        self.agreement.setWordWrap(True)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.new_button = QPushButton("New pack…")
        self.merge_button = QPushButton("Merge packs…")
        self.new_button.clicked.connect(self._ask_new_pack)
        self.merge_button.clicked.connect(self._ask_merge)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.addButton(self.new_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.merge_button, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.agreement)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        self.resize(760, 420)
        self._annotators: list[str] = []

    def show_progress(self, team: TeamProgress, annotators: Sequence[str]) -> None:
        self._annotators = list(annotators)
        self.table.setRowCount(len(team.annotators))
        for row, p in enumerate(team.annotators):
            cells = (
                p.annotator,
                str(p.packs),
                str(p.assigned),
                str(p.done),
                str(p.remaining),
                str(p.golden_items),
                _figure(p.golden_adequacy, 2),
                _figure(p.golden_fluency, 2),
                _figure(p.seconds_per_item, 0),
            )
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(row, col, item)
        if team.rated_items:
            self.agreement.setText(
                f"Agreement over {plural(team.rated_items, 'rated text')} "
                f"(Krippendorff's α): fluency {_figure(team.alpha_fluency, 3)}, "
                f"adequacy {_figure(team.alpha_adequacy, 3)}"
            )
        else:
            self.agreement.setText("No ratings yet.")

    def show_status(self, text: str) -> None:
        self.status.setText(text)

    def _ask_new_pack(self) -> None:
        form = PackForm(self._annotators, self)
        if form.exec() == QDialog.DialogCode.Accepted and form.accepted_request is not None:
            self.new_pack_requested.emit(form.accepted_request)

    def _ask_merge(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Merge annotation packs", "", f"Packs (*{SESSION_SUFFIX});;All (*)"
        )
        if paths:
            self.merge_requested.emit([Path(p) for p in paths])
