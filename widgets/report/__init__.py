"""Report panel: compare head and long tail (and languages, models, gold and silver
references, categories) with the METHODS §8 protocol, see it at a glance, export it.

``panel.ReportPanel`` lays it out: what to compare (``options``: dimensions, metrics, runs
and the protocol's settings, bound to a ``core.report.panel_state.ReportOptionsState``,
which Build report reads and the window restores), one headline line per metric
(``headlines``), a splitter of tables (``table``: the TailNLG study table, one comparison
table per dimension, human ratings, counts, runs, signatures) and plots (``plots``,
pyqtgraph). Significant cells are highlighted (and carry the ``*`` mark the exports
use), with a legend.

The panel holds no truth: ``app.report.ReportController`` builds the report with
``core.report`` in a job and hands it over; the panel only asks (signals) and shows.
"""
