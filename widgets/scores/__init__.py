"""Scores panel: units × candidates × metrics, one text in detail, a corpus summary.

Top: "Score…" (the metrics, models, runs and languages to score, run as a job with its
progress and a Cancel button here) and filters by run, language, tier and the text's words
(a ``ScoresFilter``). A note line says
which BERTScore model the scores come from and whether they are rescaled, and which
encoder graph–text similarity uses.

Tab "Texts": a table (model/view, sortable, a colour scale per metric column; a page of the
texts, the next one asked for when it is scrolled to its end, sorted in the session while
it holds only some of them) beside the
selected text with its ESA mentions highlighted, missing entities listed and hallucination
candidates marked, and the unit's triples (in the text's language) and references (gold and
silver labelled). The table and the detail sit in a splitter that lies side by side when
the panel is wide and stacks when it is narrow (the dock starts narrow).

Tab "Summary": sentence scores pooled by model × language × tier.

The panel keeps no truth of its own: ``app.scores.controller.ScoresController`` reads the session
through ``core.metrics.score_pages`` (a page at a time) and ``core.metrics.scoring`` and
hands plain rows here.

A package along the panel's seams (one module per concern, below); every name is importable from
``widgets.scores`` as before:

* ``rows``: the view models (table rows, the text's detail, the Score… dialog's choices);
* ``ranking``: the tables' sort (per-column ranks, stable, missing last) and figures;
* ``table``: the table model (formatting, colour scale, paging) and its view;
* ``dialog``: the Score… dialog (it hands back core's ``ScoringRequest``);
* ``text_html``: the selected text and its unit as HTML;
* ``panel``: the panel (its signals carry core's ``ScoresFilter``, ``ScoreSort`` and
  ``ScoringRequest``).
"""

from widgets.scores.dialog import ScoreDialog
from widgets.scores.panel import SEARCH_DELAY_MS, WIDE_PX, ScoresPanel
from widgets.scores.ranking import (
    MISSING_RANK,
    SortedRows,
    SortSpec,
    column_names,
    column_ranges,
    column_sort_ranks,
    presort_rows,
    qt_order,
    scored_count,
    sort_key,
    sort_order,
    table_sort_keys,
)
from widgets.scores.rows import (
    SUMMARY_KEYS,
    TEXT_KEYS,
    TEXT_TAIL,
    ModelChoice,
    ScoreChoices,
    ScoreTableRow,
    Span,
    TextDetail,
)
from widgets.scores.table import (
    BAD,
    GOOD,
    MIDDLE,
    ScoreTableModel,
    column_title,
    format_value,
    metric_of,
    scale_colour,
)
from widgets.scores.text_html import (
    HALLUCINATION_COLOUR,
    MENTION_COLOUR,
    highlighted_html,
)

__all__ = [
    "BAD",
    "GOOD",
    "HALLUCINATION_COLOUR",
    "MENTION_COLOUR",
    "MIDDLE",
    "MISSING_RANK",
    "SEARCH_DELAY_MS",
    "SUMMARY_KEYS",
    "TEXT_KEYS",
    "TEXT_TAIL",
    "WIDE_PX",
    "ModelChoice",
    "ScoreChoices",
    "ScoreDialog",
    "ScoreTableModel",
    "ScoreTableRow",
    "ScoresPanel",
    "SortSpec",
    "SortedRows",
    "Span",
    "TextDetail",
    "column_names",
    "column_ranges",
    "column_sort_ranks",
    "column_title",
    "format_value",
    "highlighted_html",
    "metric_of",
    "presort_rows",
    "qt_order",
    "scale_colour",
    "scored_count",
    "sort_key",
    "sort_order",
    "table_sort_keys",
]
