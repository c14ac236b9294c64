"""The annotation filter's choices come from one cheap query (core.annotation.queue_options)
and are what the queues themselves would show."""

from __future__ import annotations

from core.annotation import (
    YES,
    ItemRef,
    QueueFilter,
    QueueOptions,
    add_annotator,
    build_queue,
    queue_options,
    set_golden_answer,
)
from core.groups import order_key
from core.store import SessionStore
from tests.fixtures import report_session as fixture_module
from tests.fixtures.report_session import ReportSession

report_session = fixture_module.report_session  # registers the fixture here


def _from_queues(store: SessionStore, annotator: int) -> QueueOptions:
    """The choices as the panel computed them before: from every item of both queues."""
    items = [
        item
        for target in ("verbalisations", "references")
        for item in build_queue(store, annotator, QueueFilter(target=target, unrated_only=False))
    ]
    return QueueOptions(
        models=tuple(sorted({i.model for i in items if i.model}, key=str.casefold)),
        langs=tuple(sorted({i.lang for i in items}, key=lambda v: order_key("lang", v))),
        categories=tuple(sorted({i.category for i in items}, key=str.casefold)),
        tiers=tuple(
            sorted(
                {i.tier for i in items} | {i.sub_tier for i in items},
                key=lambda v: order_key("subtier", v),
            )
        ),
    )


def test_the_options_are_what_the_queues_show(report_session: ReportSession) -> None:
    with SessionStore.open(report_session.path) as store:
        eve = add_annotator(store, "eve").id
        options = queue_options(store)
        assert options == _from_queues(store, eve)
        assert options.models and len(options.langs) >= 2 and "head" in options.tiers
        assert options.as_mapping()["langs"] == list(options.langs)
        # Golden items stay out of ordinary queues, and so out of the choices.
        dora = report_session.annotators["dora"]
        for (model, _uid, _lang), vid in report_session.verbalisations.items():
            if model == options.models[0]:
                set_golden_answer(
                    store, dora, ItemRef("verbalisation", vid), fluency=5, adequacy=YES
                )
        assert queue_options(store) == _from_queues(store, eve)
        assert queue_options(store).models == options.models[1:]  # all its texts golden
