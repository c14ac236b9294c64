"""Human annotation (METHODS §9): annotators, queues, ratings, golden items, aggregates.

Every change is its own committed transaction (``store.unit_of_work()``), so a killed
process loses nothing already saved. The Annotate panel keeps no state the session does
not hold, apart from an :class:`AnnotationQueue`'s undo stack.

Storage (the ``annotations`` table of revision 0001):

* one rating per annotator and item (``core.edits.rating_rule``; a unique index since
  schema revision 0008): saving again replaces the annotator's rating;
* ``adequacy`` 0 Yes / 1 No / 2 Not sure (as in WDV); ``blame`` the parts to blame,
  ``"+"``-joined in the order of :data:`BLAME_PARTS` (``"subject+object"`` is a
  combination; ``"combination"`` alone when the annotator did not say which), with
  ``blame_other`` holding the free text of ``other``;
* ``checks``: ``{name: bool}`` for the three TailNLG validation checks (:data:`CHECKS`);
* ``error_taxonomy``: ``{"accuracy": [...], "fluency": [...]}`` (:data:`ERROR_TAXONOMY`),
  meant for translated (silver) references;
* **golden items**: an annotation with ``is_golden = True`` holds the known answer of an
  item, set by an expert annotator (:func:`set_golden_answer`). Golden answers are answer
  keys, not ratings: they never count in aggregates or agreement; every other annotator's
  rating of such an item is checked against them (:func:`golden_accuracy`).

A correction (``corrected_text``) may be promoted to a gold reference of the item's unit
(:func:`promote_correction`): ``unit_references`` with ``quality = 'gold'``,
``created_by`` = the annotator, ``source_verbalisation_id`` = the corrected text, and a
provenance line saying who, when and from which text.

The package's modules, along the seams of what was one file:

* :mod:`~core.annotation.types`: answer codes, labels and the records exchanged (pure data);
* :mod:`~core.annotation.annotators`: who rates;
* :mod:`~core.annotation.ratings`: validating, saving, undoing, reading, promoting;
* :mod:`~core.annotation.golden`: golden items and accuracy on them;
* :mod:`~core.annotation.queue`: what to rate next, and the queue with its undo stack;
* :mod:`~core.annotation.aggregation`: WDV's per-item rules (also used by the WDV format);
* :mod:`~core.annotation.agreement`: Krippendorff's alpha;
* :mod:`~core.annotation.summary`: per-item and group figures;
* :mod:`~core.annotation.packs`: offline packs for a team (make, read, merge, progress).

Which row is an annotator's rating (one per annotator and item, the first by id) is
``core.edits.rating_rule``'s, below this package so that the rating edits use it too.

``import core.annotation`` loads the pure modules only; the modules that read or write the
session (they import SQLAlchemy) load on first use of one of their names, so importing
the package stays cheap for the CLI's start-up (tests/core/test_statistics.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from core.annotation.aggregation import (
    CAUTION_ORDER,
    adequacy_majority,
    adequacy_percentage,
    aggregates,
    item_aggregates,
    sampling_weight,
)
from core.annotation.types import (
    ADEQUACY_KEYS,
    ADEQUACY_LABELS,
    BLAME_PARTS,
    CHECK_LABELS,
    CHECKS,
    COMBINATION,
    ERROR_TAXONOMY,
    FLUENCY_MAX,
    FLUENCY_MIN,
    GROUP_DIMENSIONS,
    MAX_NAME_LENGTH,
    NO,
    NOT_SURE,
    REFERENCE,
    VERBALISATION,
    YES,
    AnnotationError,
    AnnotatorInfo,
    GoldenAccuracy,
    GoldenAnswer,
    ItemRef,
    QueueFilter,
    QueueItem,
    QueueOptions,
    QueueProgress,
    Rating,
    SavedRating,
    StoredRating,
)
from core.groups import UNKNOWN

if TYPE_CHECKING:
    from core.annotation.agreement import (
        AlphaLevel,
        krippendorff_alpha,
        reliability_matrix,
    )
    from core.annotation.annotators import (
        add_annotator,
        find_annotator,
        list_annotators,
    )
    from core.annotation.golden import (
        clear_golden_answer,
        golden_accuracy,
        golden_answers,
        set_golden_answer,
    )
    from core.annotation.queue import (
        AnnotationQueue,
        build_queue,
        disagreement,
        queue_options,
    )
    from core.annotation.ratings import (
        RATING_FIELDS,
        normalise_blame,
        promote_correction,
        rating_of,
        ratings_of_item,
        save_rating,
        undo_last_rating,
        undo_rating,
        validate_rating,
    )
    from core.annotation.summary import (
        SUMMARY_COLUMNS,
        AnnotationSummary,
        GroupAggregate,
        ItemAggregate,
        aggregate_annotations,
        per_item_values,
    )

# name -> the module defining it, for the modules that talk to the session (and
# agreement, which needs numpy: `import core.annotation` stays light for the CLI)
_LAZY = {
    "AlphaLevel": "agreement",
    "krippendorff_alpha": "agreement",
    "reliability_matrix": "agreement",
    "add_annotator": "annotators",
    "find_annotator": "annotators",
    "list_annotators": "annotators",
    "clear_golden_answer": "golden",
    "golden_accuracy": "golden",
    "golden_answers": "golden",
    "set_golden_answer": "golden",
    "AnnotationQueue": "queue",
    "build_queue": "queue",
    "disagreement": "queue",
    "queue_options": "queue",
    "RATING_FIELDS": "ratings",
    "normalise_blame": "ratings",
    "promote_correction": "ratings",
    "rating_of": "ratings",
    "ratings_of_item": "ratings",
    "save_rating": "ratings",
    "undo_last_rating": "ratings",
    "undo_rating": "ratings",
    "validate_rating": "ratings",
    "SUMMARY_COLUMNS": "summary",
    "AnnotationSummary": "summary",
    "GroupAggregate": "summary",
    "ItemAggregate": "summary",
    "aggregate_annotations": "summary",
    "per_item_values": "summary",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "ADEQUACY_KEYS",
    "ADEQUACY_LABELS",
    "AlphaLevel",
    "AnnotationError",
    "AnnotationQueue",
    "AnnotationSummary",
    "AnnotatorInfo",
    "BLAME_PARTS",
    "CAUTION_ORDER",
    "CHECKS",
    "CHECK_LABELS",
    "COMBINATION",
    "ERROR_TAXONOMY",
    "FLUENCY_MAX",
    "FLUENCY_MIN",
    "GROUP_DIMENSIONS",
    "GoldenAccuracy",
    "GoldenAnswer",
    "GroupAggregate",
    "ItemAggregate",
    "ItemRef",
    "MAX_NAME_LENGTH",
    "NO",
    "NOT_SURE",
    "QueueFilter",
    "QueueItem",
    "QueueOptions",
    "QueueProgress",
    "RATING_FIELDS",
    "REFERENCE",
    "Rating",
    "SUMMARY_COLUMNS",
    "SavedRating",
    "StoredRating",
    "UNKNOWN",
    "VERBALISATION",
    "YES",
    "add_annotator",
    "adequacy_majority",
    "adequacy_percentage",
    "aggregate_annotations",
    "aggregates",
    "build_queue",
    "clear_golden_answer",
    "disagreement",
    "find_annotator",
    "golden_accuracy",
    "golden_answers",
    "item_aggregates",
    "krippendorff_alpha",
    "list_annotators",
    "normalise_blame",
    "per_item_values",
    "promote_correction",
    "queue_options",
    "rating_of",
    "ratings_of_item",
    "reliability_matrix",
    "sampling_weight",
    "save_rating",
    "set_golden_answer",
    "undo_last_rating",
    "undo_rating",
    "validate_rating",
]
