"""What a job or an edit wrote to the session, as topics panels subscribe to.

A job declares the topics it may write (``Job.writes``); an edit made directly from the
UI announces the same topics once its transaction commits. The application turns both
into one notification (``app.changes.SessionChanges.changed``) and each panel reloads
what it shows when a topic it subscribes to is in it. No job names, no titles: a new
job only has to say what it writes. Plain Python (no Qt), so core jobs can declare it.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum


class Topic(Enum):
    """A part of the session a panel may show."""

    CATEGORIES = "categories"  # category definitions and their fetch status
    MEMBERS = "members"  # a category's fetched members (the Browser's table)
    ENTITIES = "entities"  # cached entity details (claims, labels)
    TIERS = "tiers"  # saved cut-offs and each member's tier
    UNITS = "units"  # data units and their triples
    REFERENCES = "references"  # reference texts of the units (gold, silver) and mentions
    RUNS = "runs"  # model runs and their verbalisations
    SCORES = "scores"  # metric scores of texts
    ANNOTATIONS = "annotations"  # human ratings and annotators
    SYNONYMS = "synonyms"  # the ESA synonym table
    LIKELIHOOD = "likelihood"  # model likelihoods of entities and the model_tail sub-tier


Topics = frozenset[Topic]

# What an import may write: units with their references, and for WDV records the
# crowd-rated verbalisations (as a run) with their ratings.
IMPORT_WRITES: Topics = frozenset({Topic.UNITS, Topic.REFERENCES, Topic.RUNS, Topic.ANNOTATIONS})
EVERYTHING: Topics = frozenset(Topic)


def topics(values: Iterable[Topic | str]) -> Topics:
    """``values`` as topics; a name is looked up by value (``"units"``)."""
    return frozenset(v if isinstance(v, Topic) else Topic(v) for v in values)
