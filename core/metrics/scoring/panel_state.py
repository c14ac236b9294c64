"""What the Scores panel's filters offer and what the user chose, and where its scoring
job stands, Qt-free.

``widgets.scores.ScoresPanel`` renders a :class:`ScoresState` (its filter combos and
search are bound to the fields through ``widgets.binding.bind``; its progress bar, line
and chips follow the job's fields) and tells the controller when :meth:`ScoresState.filter`
changed; ``app.scores`` fills the choices it read and reports the job. Tests drive it
without a window.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.metrics.score_pages import ScoresFilter
from core.state import Field, State

FILTER_KEYS = ("run_id", "lang", "tier", "search")
JOB_KEYS = ("job_title", "progress", "outcome", "job_notes")


class ScoresState(State):
    # -- what the filters offer (the session's runs, languages and tiers) ----------------
    runs: Field[tuple[tuple[int, str], ...]] = Field(())  # (run id, label)
    langs: Field[tuple[str, ...]] = Field(())
    tiers: Field[tuple[str, ...]] = Field(())
    # -- what the user chose (None / empty: all) ---------------------------------------------
    run_id: Field[int | None] = Field(None)
    lang: Field[str | None] = Field(None)
    tier: Field[str | None] = Field(None)
    search: Field[str] = Field("")
    # -- the scoring job -----------------------------------------------------------------------
    job_title: Field[str] = Field("")  # "": no job runs
    progress: Field[tuple[float, float | None, str] | None] = Field(None)  # done, total, words
    outcome: Field[str] = Field("")  # the last job's one-line outcome
    job_notes: Field[tuple[str, ...]] = Field(())  # its notes (texts without a reference...)

    def set_choices(
        self, runs: Sequence[tuple[int, str]], langs: Sequence[str], tiers: Sequence[str]
    ) -> None:
        """What the filters offer; a choice still offered stays chosen, another goes
        back to all."""
        self.update(
            runs=tuple((int(run_id), str(label)) for run_id, label in runs),
            langs=tuple(langs),
            tiers=tuple(tiers),
        )

    def derive(self, changed: set[str]) -> None:
        if self.run_id not in [run_id for run_id, _label in self.runs]:
            self.run_id = None
        if self.lang not in self.langs:
            self.lang = None
        if self.tier not in self.tiers:
            self.tier = None

    def filter(self) -> ScoresFilter:
        """The texts to show, as the reads take them."""
        return ScoresFilter(
            run_id=self.run_id, lang=self.lang, tier=self.tier, search=self.search.strip()
        )

    # -- the job ---------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return bool(self.job_title)

    def job_started(self, title: str) -> None:
        self.update(job_title=title, progress=None, outcome="")

    def job_progressed(self, done: float, total: float | None, words: str) -> None:
        self.progress = (done, total, words)

    def job_finished(self, outcome: str, notes: Sequence[str] = ()) -> None:
        self.update(job_title="", progress=None, outcome=outcome, job_notes=tuple(notes))
