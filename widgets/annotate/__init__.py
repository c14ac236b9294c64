"""The Annotate panel (:mod:`widgets.annotate.panel`) and its parts: the Rate tab's
widgets (:mod:`widgets.annotate.rate`, :mod:`widgets.annotate.correction`) and the
Agreement tab
(:mod:`widgets.annotate.agreement`). Every name callers used from the one module it
was is re-exported here."""

from widgets.annotate.agreement import (
    AGREEMENT_COLUMNS,
    GOLDEN_COLUMNS,
    ITEM_COLUMNS,
    AgreementView,
)
from widgets.annotate.correction import CorrectionEditor, diff_html
from widgets.annotate.panel import NEW_ANNOTATOR, AnnotatePanel
from widgets.annotate.rate import (
    ANY,
    FLUENCY_ANCHORS,
    TARGETS,
    ItemView,
    NavigationBar,
    QueueFilterBar,
    RatingForm,
)

__all__ = [
    "AGREEMENT_COLUMNS",
    "ANY",
    "FLUENCY_ANCHORS",
    "GOLDEN_COLUMNS",
    "ITEM_COLUMNS",
    "NEW_ANNOTATOR",
    "TARGETS",
    "AgreementView",
    "AnnotatePanel",
    "CorrectionEditor",
    "ItemView",
    "NavigationBar",
    "QueueFilterBar",
    "RatingForm",
    "diff_html",
]
