"""What the Verbalise panel says about runs, as text: the line under the Run button, the
Results tab's account of a run, and the title over a run's outputs with the outputs read
for it (a view read, off the UI thread)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from core.labels import plural
from core.verbalise.runs import run_outputs, unit_outputs

if TYPE_CHECKING:
    from core.store import SessionStore
    from core.verbalise.outcome import VerbaliseSummary


def summary_line(summary: VerbaliseSummary | None, status: str) -> str:
    """The short line under the Run button (the Results tab has the whole summary)."""
    if summary is None:
        return f"The run {status} before it started."
    return (
        f"Run {summary.run_id} {status}: {plural(summary.texts, 'text')}, "
        f"{summary.unparsable:,} unparsable (see Results)"
    )


def summary_html(summary: VerbaliseSummary | None, status: str, *, error_colour: str) -> str:
    """The Results tab's account of a run that ended with ``status``, problems in
    ``error_colour`` (the theme's; core knows no theme)."""
    if summary is None:
        return f"The run {status} before it started."
    head = f"<b>Run {summary.run_id}</b> {status}" + (" (resumed)" if summary.resumed else "")
    parts = [
        f"{plural(summary.texts, 'text')} for {plural(summary.units, 'unit')} "
        f"({summary.requests:,} unit-languages)"
    ]
    parts.append(
        f"{summary.unparsable:,} unparsable"
        if not summary.unparsable
        else f"<span style='color:{error_colour}'>{summary.unparsable:,} unparsable</span>"
    )
    if summary.tokens:
        parts.append(f"{summary.tokens_per_s:,.1f} tokens/s")
    if summary.skipped_done:
        parts.append(f"{summary.skipped_done:,} already done")
    if summary.skipped_no_triples:
        parts.append(f"{summary.skipped_no_triples:,} without triples in that language")
    if summary.oom_halvings:
        parts.append(
            f"batch size {summary.batch_size} after {summary.oom_halvings} out-of-memory halvings"
        )
    if summary.failed:
        parts.append(
            f"<span style='color:{error_colour}'>{summary.failed:,} unit-languages without usable "
            "text (run it again to retry them)</span>"
        )
    for count, what in (
        (summary.truncated, "cut at the length cap"),
        (summary.replaced_surrogates, "with invalid characters replaced"),
        (summary.usage_unusable, "with an unusable token count"),
    ):
        if count:
            parts.append(f"{plural(count, 'text')} {what}")
    text = f"{head}: " + ", ".join(parts) + "."
    for other, why in summary.not_resumed:
        # A matching unfinished run that another process still writes is never taken over.
        text += (
            f"<br>Run {other} was not resumed ({html.escape(why)}): this is a new run; "
            f"resume run {other} once that process is gone."
        )
    return text


def read_outputs(
    store: SessionStore, run_id: int, unit_id: int | None, *, error_colour: str
) -> tuple[str, list[Any], list[str]]:
    """(title, outputs, their units' uids) of run ``run_id``: the unit's texts when
    ``unit_id`` is given and it has some, else the run's first texts (a view read)."""
    missing = ""
    if unit_id is not None:
        found = unit_outputs(store, run_id, unit_id)
        outputs, uid = found.outputs, found.uid
        if outputs:
            bad = sum(not o.parse_ok for o in outputs)
            title = (
                f"<b>{uid}</b> in run {run_id}: {len(outputs)} output"
                f"{'s' if len(outputs) != 1 else ''}"
                + (f", <span style='color:{error_colour}'>{bad} unparsable</span>" if bad else "")
            )
            return title, list(outputs), [uid] * len(outputs)
        missing = f"<b>{uid}</b> has no outputs in run {run_id}; "
    texts, total = run_outputs(store, run_id)
    bad = sum(not t.output.parse_ok for t in texts)
    shown = f"the first {len(texts):,} of " if len(texts) < total else ""
    title = f"{missing}run {run_id}: {shown}{total:,} text{'s' if total != 1 else ''}" + (
        f", <span style='color:{error_colour}'>{bad} unparsable</span>" if bad else ""
    )
    return title, [t.output for t in texts], [t.uid for t in texts]
