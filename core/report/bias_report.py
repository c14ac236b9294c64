"""The bias report as computed (METHODS §8): the comparisons, the study table, the
headlines and the human-judgment tables of one build, with the frame they came from.
``core.report.build`` fills it; ``core.report.render`` lays it out as tables and notes
for the panel, the CLI and the exports."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.report.comparison import Comparison
from core.report.data import ScoreFrame
from core.report.settings import Settings
from core.report.study import StudyTable
from core.tables import Table


@dataclass
class BiasReport:
    """Everything the Report panel shows and the exports write."""

    session: str
    generated_at: str
    by: tuple[str, ...]
    metrics: tuple[str, ...]
    settings: Settings
    comparisons: dict[str, list[Comparison]]
    study: StudyTable | None
    frame: ScoreFrame
    annotation_table: Table | None = None
    notes: list[str] = field(default_factory=list)
    agreement_table: Table | None = None  # metrics against human judgments (core.agreement.table)
    # ESA against the other metrics and the human criteria, Table 3's layout
    # (core.agreement.matrix)
    matrix_table: Table | None = None
    headlines: list[Comparison] = field(default_factory=list)  # head vs long tail, pooled
    tests_corrected: int = 0  # the family the correction ran over
