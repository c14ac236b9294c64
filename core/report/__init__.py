"""The long-tail bias report (METHODS §8): load per-item values, compare groups with the
Mann–Whitney protocol, lay out the study table, plot and export.

* :func:`build_report` (``core.report.build``) -> :class:`BiasReport` (plain data:
  comparisons, study table, headlines; ``core.report.compare`` and ``core.report.study``
  compute them);
* :func:`report_tables` (``core.report.render``) -> the report's :class:`Table` s and notes;
* :func:`plot_specs` -> :class:`PlotSpec` s (data for pyqtgraph; ``.figure()``: matplotlib,
  for exports; ``.svg()``: the HTML report's SVG, ``core.report.svg_figures``);
* :func:`write_csv`, :func:`write_html`, :func:`render_html`.

Only numpy and the standard library are imported here; scipy and SQLAlchemy inside
the functions that need them.
"""

from core.groups import DIMENSIONS, HUMAN_METRICS, STUDY_METRICS, metric_label
from core.report.bias_report import BiasReport
from core.report.build import (
    NothingToCompareError,
    ReportCache,
    ReportRequest,
    build_report,
    report_job,
)
from core.report.compare import compare, default_pairs
from core.report.comparison import Comparison
from core.report.data import Observation, RunInfo, ScoreFrame, load_frame
from core.report.export import PlotSpec, plot_specs, render_html, write_csv, write_html
from core.report.render import COMPARISON_COLUMNS, report_json, report_tables
from core.report.settings import Settings
from core.report.study import StudyCell, StudyRow, StudyTable, study_table
from core.tables import Table

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
    "report_json",
    "report_tables",
    "study_table",
    "write_csv",
    "write_html",
]
