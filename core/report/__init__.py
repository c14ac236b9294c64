"""The long-tail bias report (METHODS §8): load per-item values, compare groups with the
Mann–Whitney protocol, lay out the study table, plot and export.

* :func:`build_report` -> :class:`BiasReport` (plain data: comparisons, study table,
  :class:`Table` s via ``report.tables()``);
* :func:`plot_specs` -> :class:`PlotSpec` s (data for pyqtgraph; ``.figure()`` /
  ``.svg()``: matplotlib, for exports and HTML);
* :func:`write_csv`, :func:`write_html`, :func:`render_html`.

Only numpy and the standard library are imported here; scipy and SQLAlchemy inside
the functions that need them.
"""

from core.groups import DIMENSIONS, HUMAN_METRICS
from core.report.compare import (
    COMPARISON_COLUMNS,
    STUDY_METRICS,
    BiasReport,
    NothingToCompareError,
    ReportCache,
    ReportRequest,
    Settings,
    StudyCell,
    StudyRow,
    StudyTable,
    Table,
    build_report,
    compare,
    default_pairs,
    metric_label,
    report_job,
    study_table,
)
from core.report.comparison import Comparison
from core.report.data import Observation, RunInfo, ScoreFrame, load_frame
from core.report.export import PlotSpec, plot_specs, render_html, write_csv, write_html

__all__ = [
    "COMPARISON_COLUMNS",
    "DIMENSIONS",
    "HUMAN_METRICS",
    "STUDY_METRICS",
    "BiasReport",
    "Comparison",
    "NothingToCompareError",
    "Observation",
    "PlotSpec",
    "ReportCache",
    "ReportRequest",
    "RunInfo",
    "ScoreFrame",
    "Settings",
    "StudyCell",
    "StudyRow",
    "StudyTable",
    "Table",
    "build_report",
    "compare",
    "default_pairs",
    "load_frame",
    "metric_label",
    "plot_specs",
    "render_html",
    "report_job",
    "study_table",
    "write_csv",
    "write_html",
]
