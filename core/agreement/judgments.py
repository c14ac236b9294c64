"""The WebNLG 2020 human evaluation, to the session's runs: every published layout read
(:mod:`core.formats.webnlg.human_eval`), each system matched to a run and each sample id
to a text, and the ratings stored in ``session_meta`` (see :mod:`core.agreement`)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.formats.webnlg.human_eval import (
    RAW,
    ZSCORES,
    JudgmentError,
    JudgmentSet,
    judgment_files,
    read_judgment_file,
)
from core.labels import plural
from core.vocab import run_name

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.store import SessionStore

# The session_meta key of one run's stored ratings: this prefix and the run's id.
META_PREFIX = "human-judgments:webnlg2020:run"


@dataclass(frozen=True)
class _RunTexts:
    run_id: int
    name: str
    # (unit uid, verbalisation id, text), candidate 0, in unit-id order
    texts: list[tuple[str, int, str | None]]

    @property
    def label(self) -> str:
        return f"run {self.run_id} ({self.name})"


def _runs(db: Session) -> list[_RunTexts]:
    from sqlalchemy import select

    from core.store.models import DataUnit, ModelRun, Verbalisation

    runs = {r.id: r for r in db.scalars(select(ModelRun).order_by(ModelRun.id))}
    texts: dict[int, list[tuple[str, int, str | None]]] = defaultdict(list)
    for run_id, uid, vid, text in db.execute(
        select(Verbalisation.run_id, DataUnit.uid, Verbalisation.id, Verbalisation.text)
        .join(DataUnit, DataUnit.id == Verbalisation.unit_id)
        .where(Verbalisation.candidate_index == 0)
        .order_by(Verbalisation.run_id, Verbalisation.unit_id, Verbalisation.lang)
    ):
        texts[run_id].append((uid, vid, text))
    return [
        _RunTexts(r.id, run_name(r.system_name, r.model_id), texts.get(r.id, []))
        for r in runs.values()
    ]


def system_key(name: str) -> str:
    """A system name as runs are matched to it: case and punctuation aside
    ("OSU Neural NLG" = "OSU_Neural_NLG", "cuni-ufal" = "CUNI_UFAL")."""
    return re.sub(r"[\W_]+", "", name.casefold())


def _named(runs: list[_RunTexts], name: str) -> list[_RunTexts]:
    exact = [r for r in runs if r.name == name]
    return exact or [r for r in runs if system_key(r.name) == system_key(name) and system_key(name)]


def _runs_list(runs: list[_RunTexts]) -> str:
    return ", ".join(f"{r.run_id}: {r.name}" for r in runs) or "none"


def _run_by_spec(spec: str, runs: list[_RunTexts], where: str) -> _RunTexts:
    """The run a --run value names: its id, else its name."""
    spec = str(spec).strip()
    if spec.isdigit():
        chosen = next((r for r in runs if r.run_id == int(spec)), None)
        if chosen is not None:
            return chosen
    named = _named(runs, spec)
    if len(named) == 1:
        return named[0]
    how = f"{len(named)} runs are named {spec!r}" if named else f"no run {spec!r} (id or name)"
    raise JudgmentError(f"{where}: {how} in this session (runs: {_runs_list(runs)})")


def _match_run(one: JudgmentSet, runs: list[_RunTexts], spec: str | None) -> _RunTexts | None:
    """The run of one system's ratings: the run ``spec`` names, else the one run named
    like the system (the folder, then the file: ``Baseline-FORGE2020/primary.json``).
    None when nothing matches the all-teams file's system (that file holds every team)."""
    if spec is not None:
        return _run_by_spec(spec, runs, one.where)
    for name in one.names:
        named = _named(runs, name)
        if len(named) > 1:
            raise JudgmentError(
                f"{one.where}: {len(named)} runs are named {name!r} in this session "
                f"(runs: {_runs_list(runs)}); name the run with --run {name}=RUN"
            )
        if named:
            return named[0]
    if one.scale == ZSCORES or is_reference_set(one):
        return None
    tried = " or ".join(repr(n) for n in one.names)
    raise JudgmentError(
        f"{one.where}: no run named {tried} in this session (runs: {_runs_list(runs)}); "
        "import the system's outputs with taillens import-outputs --system "
        f"{one.system}, or name the run with --run (its id or name)"
    )


def is_reference_set(one: JudgmentSet) -> bool:
    """The ratings of the human references themselves (the challenge's
    ``WebNLG-2020-reference/``): rated like a system, but no system's outputs."""
    return any("reference" in system_key(name) for name in one.names)


REFERENCE_NOTE = (
    "the references' own ratings ({source}) skipped: no run holds the rated references "
    "(the files do not say which of an entry's references was shown); to rate them beside "
    "the systems, import those texts with taillens import-outputs --system {system}"
)


def _match_texts(one: JudgmentSet, run: _RunTexts) -> tuple[dict[str, int], str]:
    """Sample id -> verbalisation id, and the rule used (WebNLG id, else position)."""
    by_eid: dict[str, int] = {}
    for uid, vid, _text in run.texts:
        eid = uid.rsplit(":", 1)[-1]
        if re.fullmatch(r"Id\d+", eid):
            by_eid.setdefault(str(int(eid[2:])), vid)
    ids = list(one.ratings)
    if by_eid and any(i in by_eid for i in ids):
        matched, rule = {i: by_eid[i] for i in ids if i in by_eid}, "WebNLG entry id Id<N>"
    else:
        matched = {i: run.texts[int(i) - 1][1] for i in ids if 1 <= int(i) <= len(run.texts)}
        rule = "N-th text of the run in unit order"
    unmatched = [i for i in ids if i not in matched]
    if len(unmatched) == len(ids):
        raise JudgmentError(
            f"{one.where}: no sample id matches a text of {run.label}, "
            f"{plural(len(run.texts), 'text')}: ids such as {', '.join(ids[:3])} name no "
            "unit Id<N> and no line of its outputs; nothing was stored"
        )
    if unmatched:
        raise JudgmentError(
            f"{one.where}: {len(unmatched):,} of {len(ids):,} sample ids match no text of "
            f"{run.label}, e.g. {', '.join(unmatched[:5])} (matched by {rule}); nothing "
            "was stored"
        )
    return matched, rule


@dataclass(frozen=True)
class JudgmentFileReport:
    file: str
    system: str
    run_id: int
    texts: int
    ratings: int
    rule: str
    text_mismatches: int  # the file's "text" differs from the stored output
    run_name: str = ""
    empty: tuple[str, ...] = ()  # sample ids with no ratings, skipped
    scale: str = RAW


@dataclass(frozen=True)
class JudgmentImport:
    files: list[JudgmentFileReport]
    # all-teams systems left out: (system, file, why)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary_lines(self) -> list[str]:
        lines = []
        for f in self.files:
            what = "z-scores" if f.scale == ZSCORES else plural(f.ratings, "rating")
            line = (
                f"{f.system} ({f.file}): {what} of {plural(f.texts, 'text')} to run "
                f"{f.run_id} ({f.run_name or f.system}), matched by {f.rule}"
            )
            if f.empty:
                line += (
                    f"; {plural(len(f.empty), 'entry')} with no ratings skipped "
                    f"({', '.join(f.empty[:5])}{', …' if len(f.empty) > 5 else ''})"
                )
            if f.text_mismatches:
                line += (
                    f"; WARNING: {f.text_mismatches:,} texts in the file differ from "
                    "the run's stored outputs"
                )
            lines.append(line)
        if self.skipped:
            lines.append(
                f"{plural(len(self.skipped), 'system')} of the all-teams file left out: "
                + "; ".join(f"{system} ({why})" for system, _file, why in self.skipped)
            )
        lines.extend(f"note: {note}" for note in self.notes)
        return lines


def _run_specs(runs: Sequence[str | int], systems: list[JudgmentSet]) -> dict[str, str]:
    """``--run`` values as system -> run: ``SYSTEM=RUN`` maps one system; a bare RUN (an
    id or a name) is the run of the one system given."""
    mapped: dict[str, str] = {}
    bare = []
    for value in runs:
        text = str(value)
        if "=" in text:
            system, run = (part.strip() for part in text.split("=", 1))
            if not system or not run:
                raise JudgmentError(f"--run {text!r}: give SYSTEM=RUN (a run id or name)")
            mapped[system_key(system)] = run
        else:
            bare.append(text.strip())
    if bare:
        names = sorted({one.system for one in systems})
        if len(bare) > 1 or len(names) != 1:
            raise JudgmentError(
                "--run RUN names the run of ONE system; these files hold "
                f"{plural(len(names), 'system')} ({', '.join(names[:6])}"
                f"{', …' if len(names) > 6 else ''}): give --run SYSTEM=RUN for each"
            )
        mapped[system_key(names[0])] = bare[0]
    known = {system_key(n) for one in systems for n in one.names}
    stray = [s for s in mapped if s not in known]
    if stray:
        raise JudgmentError(
            f"--run names a system that no file holds: {', '.join(stray)} (systems: "
            f"{', '.join(sorted({one.system for one in systems})[:10])})"
        )
    return mapped


def import_webnlg_judgments(
    store: SessionStore,
    paths: Iterable[Path | str],
    *,
    runs: Sequence[str | int] = (),
) -> JudgmentImport:
    """Read every file (any published layout: :mod:`core.formats.webnlg.human_eval`), match
    each system to a run and its sample ids to texts, then store all ratings in one
    transaction; any error stores nothing. ``runs``: ``--run`` values (see
    :func:`_run_specs`)."""
    from core.store.models import SessionMeta

    sets = [one for path, root in judgment_files(paths) for one in read_judgment_file(path, root)]
    specs = _run_specs(runs, sets)
    with store.unit_of_work() as db:
        session_runs = _runs(db)
    # Per-rater files first: a system the all-teams file also holds keeps its raters' own
    # ratings (z-scores can be made from them, not the other way round).
    sets.sort(key=lambda one: one.scale == ZSCORES)
    plan = _Plan()
    for one in sets:
        spec = next((specs[system_key(n)] for n in one.names if system_key(n) in specs), None)
        plan.add(one, _match_run(one, session_runs, spec))
    if not plan.payloads:
        raise JudgmentError(
            "no system of these files names a run of this session (runs: "
            f"{_runs_list(session_runs)}); import the systems' outputs with taillens "
            "import-outputs --system NAME, or map them with --run SYSTEM=RUN"
        )
    with store.unit_of_work() as db:
        for rid, payload in plan.payloads.items():
            db.merge(
                SessionMeta(
                    key=f"{META_PREFIX}{rid}", value=json.dumps(payload, ensure_ascii=False)
                )
            )
    return JudgmentImport(plan.reports, plan.skipped, plan.notes)


@dataclass
class _Plan:
    """What an import will store (a payload per run), report and leave out, system by
    system; nothing is stored until every system is planned."""

    payloads: dict[int, dict[str, Any]] = field(default_factory=dict)
    reports: list[JudgmentFileReport] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, one: JudgmentSet, run: _RunTexts | None) -> None:
        """Plan one system's ratings for ``run`` (None: no run holds them)."""
        if run is None and is_reference_set(one) and one.scale == RAW:
            self.notes.append(REFERENCE_NOTE.format(source=one.source, system=one.system))
            return
        if run is None:
            self.skipped.append((one.system, one.source, "no run of that name"))
            return
        if run.run_id in self.payloads:
            earlier = self.payloads[run.run_id]
            if one.scale == ZSCORES and earlier["scale"] == RAW:
                self.skipped.append(
                    (one.system, one.source, f"{run.label} has its raters in {earlier['source']}")
                )
                return
            raise JudgmentError(
                f"{one.where}: {run.label} already has {earlier['source']} in this import"
            )
        matched, rule = _match_texts(one, run)
        self.payloads[run.run_id] = {
            "file": one.path.name,
            "source": one.source,
            "system": one.system,
            "run_id": run.run_id,
            "rule": rule,
            "scale": one.scale,
            "empty": list(one.empty),
            "ratings": {str(matched[sid]): workers for sid, workers in one.ratings.items()},
            "sample_ids": {str(matched[sid]): sid for sid in one.ratings},
        }
        self.reports.append(
            JudgmentFileReport(
                one.source,
                one.system,
                run.run_id,
                len(one.ratings),
                sum(len(w) for w in one.ratings.values()),
                rule,
                _text_mismatches(one, run, matched),
                run.name,
                one.empty,
                one.scale,
            )
        )


def _text_mismatches(one: JudgmentSet, run: _RunTexts, matched: dict[str, int]) -> int:
    """How many of the file's texts differ from the run's stored outputs they matched."""
    stored_text = {vid: text for _uid, vid, text in run.texts}
    return sum(
        1
        for sid, text in one.texts.items()
        if (stored_text.get(matched[sid]) or "").strip() != text.strip().strip('"').strip()
    )
