"""Knowledge beam search (LINK, Li et al., "In Search of the Long-Tail"; METHODS §3).

A unit template with variables (``?x P19 ?a . ?a P17 ?b``) is filled one variable at a
time from the knowledge graph, so every triple is a real claim (the graph is the
critic). The root variable is filled from a class (a category's members); each next
variable from the truthy item values of its pattern's property for the subjects bound so
far (the ``triple_values`` query, or the session's claims for the session cache). At each
step every partial statement is verbalised with a simple template (labels, in one
language: ``"{s} {p} {o}."`` per bound triple; the root step is the root's label) and
scored by :func:`core.tiers.likelihood.sequence_loglik` (mean log-likelihood per token);
candidates are ranked lowest first for a **tail** set, highest first for a **head** set
(ties: by the filled values, in order), and the top ``ceil(keep · n)`` (``keep`` 0.75) are
kept, at most ``beam`` (LINK: 200). A candidate with no token to score is dropped.
The final beam's first ``units`` statements are saved as data units (origin ``search``)
with their provenance: template, model, direction, each step's score.

δ of a template = mean log-likelihood of the head set − that of the tail set (both
runs' saved statements, scored in full).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.changes import Topic
from core.errors import UserFacingError
from core.jobs import CancelToken, Job, JobContext
from core.store import SessionStore
from core.store.batching import in_chunks
from core.units.shapes import MAX_SIZE
from core.vocab import LANGUAGES
from core.wikidata.categories import PID_RE, QID_RE, Category
from core.wikidata.records import ClaimRecord

DIRECTIONS = ("tail", "head")
DEFAULT_BEAM = 200  # LINK's beam width
DEFAULT_KEEP = 0.75  # LINK keeps the top 75 % of each step
DEFAULT_UNITS = 20
MAX_ROOTS = 20_000  # class members read for the first step (a category's default limit)
PAGE = 5_000  # rows per triple_values page
ORIGIN = "search"

Scorer = Callable[[Sequence[str]], Sequence[float | None]]


class SearchError(UserFacingError):
    """Bad input to the unit search (template, property, class, settings)."""


# --- templates ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    subject: str  # a variable name, without "?"
    pid: str
    obj: str


@dataclass(frozen=True)
class UnitTemplate:
    text: str
    patterns: tuple[Pattern, ...]

    @property
    def root(self) -> str:
        return self.patterns[0].subject

    @property
    def variables(self) -> tuple[str, ...]:
        """Fill order: the root, then each pattern's object."""
        return (self.root, *(p.obj for p in self.patterns))


_VAR = re.compile(r"\?[A-Za-z_][A-Za-z0-9_]*")
_PROP = re.compile(r"(?:wdt:)?(P[0-9]+)")
_TOKEN = re.compile(r"\S+")


def parse_template(text: str) -> UnitTemplate:
    """Parse ``?x P19 ?a . ?a P17 ?b``: patterns separated by ``.``, each a variable, a
    property id (``P19`` or ``wdt:P19``) and a new variable. The first pattern's subject is
    the root; every other subject must be bound by an earlier pattern. Errors name the
    pattern and the character position (1-based)."""
    if not isinstance(text, str) or not text.strip():
        raise SearchError("the template is empty: write patterns like ?x P19 ?a . ?a P17 ?b")
    tokens = [(m.group(), m.start() + 1) for m in _TOKEN.finditer(text)]
    groups: list[list[tuple[str, int]]] = [[]]
    for token, pos in tokens:
        # A "." may stand alone or end a token ("?a ." or "?a.").
        if token == ".":
            groups.append([])
        elif token.endswith(".") and len(token) > 1:
            groups[-1].append((token[:-1], pos))
            groups.append([])
        else:
            groups[-1].append((token, pos))
    if not groups[-1]:
        groups.pop()
    patterns: list[Pattern] = []
    bound: set[str] = set()
    for n, group in enumerate(groups, 1):
        where = f"pattern {n}"
        if len(group) != 3:
            pos = group[0][1] if group else len(text)
            raise SearchError(
                f"template {where} at position {pos}: a pattern is "
                f"'?subject Pnn ?object', got {' '.join(t for t, _ in group)!r}"
            )
        (subj, sp), (prop, pp), (obj, op) = group
        for token, pos, part in ((subj, sp, "subject"), (obj, op, "object")):
            if not _VAR.fullmatch(token):
                raise SearchError(
                    f"template {where} at position {pos}: the {part} must be a "
                    f"variable like ?x, not {token!r}"
                )
        match = _PROP.fullmatch(prop)
        if not match or not PID_RE.fullmatch(match.group(1)):
            raise SearchError(
                f"template {where} at position {pp}: {prop!r} is not a property id like P19"
            )
        s, o = subj[1:], obj[1:]
        if n == 1:
            bound.add(s)
        elif s not in bound:
            raise SearchError(
                f"template {where} at position {sp}: ?{s} is not bound by an "
                "earlier pattern (the unit must be connected from the root)"
            )
        if o in bound:
            raise SearchError(
                f"template {where} at position {op}: ?{o} is already bound; "
                "each pattern must introduce a new variable"
            )
        bound.add(o)
        patterns.append(Pattern(s, match.group(1), o))
    if not patterns:
        raise SearchError("the template has no pattern")
    if len(patterns) > MAX_SIZE:
        raise SearchError(
            f"the template has {len(patterns)} patterns; a unit has at most {MAX_SIZE} triples"
        )
    return UnitTemplate(text.strip(), tuple(patterns))


# --- the graph ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    qid: str
    statement_id: str | None


class Graph:
    """The claims and labels the search reads, from a SPARQL source (embedded snapshot or
    endpoint) through named queries, or from the session cache's tables."""

    def __init__(self, source: Any, token: CancelToken | None = None) -> None:
        self.source = source
        self.token = token
        self.name = getattr(source, "name", "source")
        self.cache_store: SessionStore | None = (
            source.store if getattr(source, "kind", None) == "cache" else None
        )

    def _select(self, query: str) -> list[Mapping[str, Any]]:
        if hasattr(self.source, "select"):
            return list(self.source.select(query, self.token))
        raise SearchError(f"{self.name} cannot answer the search's queries")

    def property_type(self, pid: str) -> str | None:
        from core.wikidata import queries

        if self.cache_store is not None:
            from sqlalchemy import select

            from core.store import models as m

            with self.cache_store.unit_of_work() as db:
                row = db.execute(
                    select(m.Claim.value_type).where(m.Claim.property_pid == pid).limit(1)
                ).first()
            return row[0] if row else None
        rows = self._select(queries.property_type(pid))
        if not rows:
            return None
        local = rows[0]["ptype"].value.rsplit("#", 1)[-1]
        return queries.PROPERTY_TYPES.get(local, local)

    def values(self, subjects: Sequence[str], pid: str) -> dict[str, list[Value]]:
        """Each subject's distinct truthy item values of ``pid`` (first statement kept)."""
        from core.wikidata import queries

        found: dict[str, list[Value]] = {}
        seen: set[tuple[str, str]] = set()

        def add(s: str, o: str, st: str | None) -> None:
            if (s, o) not in seen and QID_RE.match(o):
                seen.add((s, o))
                found.setdefault(s, []).append(Value(o, st))

        unique = sorted(set(subjects))
        if self.cache_store is not None:
            for s, o, st in self._cache_values(unique, pid):
                add(s, o, st)
            return found
        for start in range(0, len(unique), queries.MAX_VALUES_SUBJECTS):
            chunk = unique[start : start + queries.MAX_VALUES_SUBJECTS]
            offset = 0
            while True:
                if self.token is not None and self.token.cancelled:
                    from core.jobs import JobCancelled

                    raise JobCancelled()
                rows = self._select(queries.triple_values(chunk, pid, PAGE, offset))
                for row in rows:
                    s = row["s"].value.rsplit("/", 1)[-1]
                    o = row["o"].value.rsplit("/", 1)[-1]
                    st = row["st"].value.rsplit("/", 1)[-1] if row.get("st") else None
                    add(s, o, st)
                if len(rows) < PAGE:
                    break
                offset += PAGE
        return found

    def _cache_values(self, subjects: Sequence[str], pid: str) -> list[tuple[str, str, str | None]]:
        from sqlalchemy import select

        from core.store import models as m

        out: list[tuple[str, str, str | None]] = []
        assert self.cache_store is not None
        with self.cache_store.snapshot() as db:
            for chunk in in_chunks(subjects):
                rows = db.execute(
                    select(m.Claim.subject_qid, m.Claim.value, m.Claim.statement_id, m.Claim.rank)
                    .where(
                        m.Claim.subject_qid.in_(chunk),
                        m.Claim.property_pid == pid,
                        m.Claim.value_type == "wikibase-item",
                        m.Claim.value.is_not(None),
                        m.Claim.rank != "deprecated",
                    )
                    .order_by(m.Claim.subject_qid, m.Claim.value, m.Claim.id)
                ).all()
                preferred = {s for s, _v, _st, rank in rows if rank == "preferred"}
                # Truthy values only: where a subject has preferred ones, the normal go.
                out.extend(
                    (s, v, st)
                    for s, v, st, rank in rows
                    if v is not None and (rank == "preferred" or s not in preferred)
                )
        return out

    def labels(self, ids: Sequence[str], lang: str) -> dict[str, str]:
        from core.wikidata import queries

        unique = sorted(set(ids))
        found: dict[str, str] = {}
        if self.cache_store is not None:
            from core.tiers.likelihood import _labels

            with self.cache_store.unit_of_work() as db:
                return _labels(db, unique, lang)
        for start in range(0, len(unique), queries.MAX_VALUES_SUBJECTS):
            rows = self._select(
                queries.item_labels(unique[start : start + queries.MAX_VALUES_SUBJECTS], lang)
            )
            for row in rows:
                item = row["item"].value.rsplit("/", 1)[-1]
                found.setdefault(item, row["text"].value)
        return found

    def roots(self, category: Category, limit: int = MAX_ROOTS) -> list[str]:
        qids: list[str] = []
        offset = 0
        while len(qids) < limit:
            page = self.source.members_page(
                category, offset, min(PAGE, limit - len(qids)), self.token
            )
            qids.extend(e.qid for e in page.entities)
            if len(page.entities) < min(PAGE, limit - len(qids) + len(page.entities)):
                break
            offset += len(page.entities)
        return sorted(dict.fromkeys(qids), key=lambda q: int(q[1:]))


def class_category(class_qid: str) -> Category:
    """A category of the instances of a class (and of its subclasses)."""
    from core.wikidata.categories import default_pattern

    if not isinstance(class_qid, str) or not QID_RE.fullmatch(class_qid):
        raise SearchError(f"--class {class_qid!r} is not a Wikidata item id like Q515")
    return Category(f"class {class_qid}", class_qid, "P31", default_pattern(class_qid, "P31"))


# --- the search -------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    values: tuple[str, ...]  # filled variables, in fill order
    statements: tuple[str | None, ...]  # statement id of each filled pattern
    scores: tuple[float, ...]  # the score at each step


@dataclass
class SearchResult:
    direction: str
    units: list[Candidate]
    steps: list[dict[str, int]] = field(default_factory=list)  # candidates, kept per step

    @property
    def mean(self) -> float | None:
        return (sum(c.scores[-1] for c in self.units) / len(self.units)) if self.units else None


def verbalise(template: UnitTemplate, values: Sequence[str], labels: Mapping[str, str]) -> str:
    """The simple template: the root's label alone, then ``"{s} {p} {o}."`` per bound
    triple, with labels (the id's surface form where a label is missing)."""
    from core.surface import surface

    def name(item: str) -> str:
        return labels.get(item) or surface(item)

    if len(values) == 1:
        return name(values[0])
    bound = dict(zip(template.variables, values, strict=False))
    return " ".join(
        f"{name(bound[p.subject])} {name(p.pid)} {name(bound[p.obj])}."
        for p in template.patterns[: len(values) - 1]
    )


def rank(
    candidates: Sequence[Candidate], direction: str, keep: float, beam: int
) -> list[Candidate]:
    """Lowest score first (tail) or highest first (head), ties by the values; the top
    ``ceil(keep · n)`` kept, at most ``beam``."""
    if direction not in DIRECTIONS:
        raise SearchError(f"direction must be tail or head, not {direction!r}")
    sign = 1 if direction == "tail" else -1
    ordered = sorted(candidates, key=lambda c: (sign * c.scores[-1], c.values))
    # A hair below the product, so 0.7 × 10 keeps 7 (the float is 7.000000000000001).
    return ordered[: min(beam, math.ceil(keep * len(ordered) - 1e-9))]


def check_settings(beam: int, keep: float, units: int) -> None:
    if isinstance(beam, bool) or not isinstance(beam, int) or beam < 1:
        raise SearchError(f"--beam must be a whole number of at least 1, not {beam!r}")
    if not isinstance(keep, (int, float)) or not 0 < keep <= 1:
        raise SearchError(f"--keep must be a fraction in (0, 1], not {keep!r}")
    if isinstance(units, bool) or not isinstance(units, int) or units < 1:
        raise SearchError(f"--units must be a whole number of at least 1, not {units!r}")


def beam_search(
    graph: Graph,
    template: UnitTemplate,
    roots: Sequence[str],
    scorer: Scorer,
    direction: str,
    *,
    lang: str = "en",
    beam: int = DEFAULT_BEAM,
    keep: float = DEFAULT_KEEP,
    units: int = DEFAULT_UNITS,
    ctx: JobContext | None = None,
    labels: dict[str, str] | None = None,
    step_done: Callable[[int], None] | None = None,
) -> SearchResult:
    """Fill the template one variable at a time, reranking at each step (see module)."""
    check_settings(beam, keep, units)
    labels = labels if labels is not None else {}
    labels.update(graph.labels([p.pid for p in template.patterns], lang))
    result = SearchResult(direction, [])

    def score(cands: list[Candidate], values: list[tuple[tuple[str, ...], tuple]]) -> None:
        missing = [q for v, _s in values for q in v if q not in labels]
        if missing:
            labels.update(graph.labels(missing, lang))
            labels.update({q: "" for q in missing if q not in labels})
        texts = [verbalise(template, v, labels) for v, _s in values]
        got = list(scorer(texts)) if texts else []
        previous = {c.values: c for c in cands}
        for (v, st), s in zip(values, got, strict=True):
            if s is None or not math.isfinite(s):
                continue
            before = previous.get(v[:-1])
            prior = before.scores if before else ()
            out.append(Candidate(v, st, (*prior, float(s))))

    out: list[Candidate] = []
    score([], [((r,), ()) for r in roots])
    current = rank(out, direction, keep, beam)
    result.steps.append({"candidates": len(out), "kept": len(current)})
    if step_done:
        step_done(0)
    for n, pattern in enumerate(template.patterns):
        if ctx is not None:
            ctx.check_cancelled()
        position = template.variables.index(pattern.subject)
        found = graph.values([c.values[position] for c in current], pattern.pid)
        expansions = []
        for c in current:
            for value in found.get(c.values[position], []):
                if value.qid in c.values:  # a unit names each entity once
                    continue
                expansions.append(((*c.values, value.qid), (*c.statements, value.statement_id)))
        out = []
        score(current, expansions)
        current = rank(out, direction, keep, beam)
        result.steps.append({"candidates": len(out), "kept": len(current)})
        if step_done:
            step_done(n + 1)
    result.units = current[:units]
    return result


# --- saving ----------------------------------------------------------------------------


def _claims(template: UnitTemplate, cand: Candidate) -> tuple[ClaimRecord, ...]:
    bound = dict(zip(template.variables, cand.values, strict=True))
    return tuple(
        ClaimRecord(st, bound[p.subject], p.pid, bound[p.obj], "wikibase-item", "normal")
        for p, st in zip(template.patterns, cand.statements, strict=True)
    )


def save_results(
    store: SessionStore,
    graph: Graph,
    template: UnitTemplate,
    results: Sequence[SearchResult],
    *,
    model: str,
    fingerprint: str | None,
    lang: str,
    beam: int,
    keep: float,
    category: str | None,
    check: Callable[[], None] | None = None,
    recorded_as: str | None = None,
) -> list[int]:
    """Save every result's units in one transaction (all or none), rendered in the app's
    languages, with the search's provenance in the unit's attributes; with
    ``recorded_as`` (who searched) one recorded edit, undone as a whole."""
    from core.units.builder.draft import UnitDraft
    from core.units.builder.render import render_unit
    from core.units.builder.saved import save_units

    ids = sorted(
        {q for r in results for c in r.units for q in c.values} | {p.pid for p in template.patterns}
    )
    labels = {code: graph.labels(ids, code) for code in LANGUAGES}
    items = []
    for result in results:
        for order, cand in enumerate(result.units):
            draft = UnitDraft(cand.values[0], _claims(template, cand), category=category)
            rendered = render_unit(draft, {}, LANGUAGES, labels=labels)
            extra = {
                "search": {
                    "template": template.text,
                    "model": model,
                    "model_fingerprint": fingerprint,
                    "direction": result.direction,
                    "lang": lang,
                    "beam": beam,
                    "keep": keep,
                    "rank": order,
                    "variables": list(template.variables),
                    "step_scores": list(cand.scores),
                    "loglik": cand.scores[-1],
                }
            }
            items.append((draft, rendered, extra))
    if check is not None:
        check()
    return save_units(
        store,
        items,
        origin=ORIGIN,
        category=category,
        source=graph.name,
        recorded_as=recorded_as,
        words=f"{len(items)} unit{'s' if len(items) != 1 else ''} found by the search "
        f"{template.text!r}",
    )


# --- the job -------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchRequest:
    template: str
    model: str
    class_qid: str | None = None
    category: str | None = None
    direction: str = "both"  # tail | head | both
    beam: int = DEFAULT_BEAM
    keep: float = DEFAULT_KEEP
    units: int = DEFAULT_UNITS
    lang: str = "en"
    batch: int = 16
    device: str = "cpu"


@dataclass(frozen=True)
class SearchSummary:
    template: str
    roots: int
    results: dict[str, dict[str, Any]]  # direction -> {units, mean, steps}
    unit_ids: tuple[int, ...]
    delta: float | None
    seconds: float

    @property
    def seconds_per_unit(self) -> float | None:
        return self.seconds / len(self.unit_ids) if self.unit_ids else None


def resolve_root(
    store: SessionStore | None, class_qid: str | None, category: str | None
) -> tuple[Category, str | None]:
    """The root's class: a QID, or a category (the session's own pattern if it has that
    category, else a built-in one). Returns the category and the name to file units under."""
    if (class_qid is None) == (category is None):
        raise SearchError("give the root's class: --class QID or --category NAME (one)")
    if class_qid is not None:
        return class_category(class_qid), None
    assert category is not None
    if store is not None:
        from sqlalchemy import select

        from core.store import models as m

        with store.snapshot() as db:
            row = db.execute(select(m.Category).where(m.Category.name == category)).scalar()
            if row is not None:
                return Category(
                    row.name, row.class_qid, row.membership_property, row.pattern
                ), row.name
    from core.wikidata.categories import category_by_name

    found = category_by_name(category)
    return found, None


def validate(graph: Graph, template: UnitTemplate) -> None:
    """Every property must be known to the source and take item values."""
    for n, pattern in enumerate(template.patterns, 1):
        kind = graph.property_type(pattern.pid)
        if kind is None:
            raise SearchError(
                f"template pattern {n}: {pattern.pid} is not a property {graph.name} knows"
            )
        if kind != "wikibase-item":
            raise SearchError(
                f"template pattern {n}: {pattern.pid} takes {kind} values; "
                "a search pattern needs a property with item values"
            )


def _model_identity(request: SearchRequest, scorer: Scorer | None) -> tuple[str, str | None]:
    """How the units name the model that scored them (its resolved folder) and its
    fingerprint; the folder is checked to be a causal LM. ``scorer`` (tests): the name
    asked for, no fingerprint."""
    if scorer is not None:
        return request.model, None
    from core.local_models.loader import (
        CAUSAL,
        check_model_folder,
        model_fingerprint,
        resolve_model,
    )
    from core.tiers.likelihood import model_key

    folder = resolve_model(request.model)
    kind = check_model_folder(folder)
    if kind != CAUSAL:
        raise SearchError(f"{folder} is a {kind} model; the search needs a causal LM")
    return model_key(folder), model_fingerprint(folder)


def _score_once(score: Scorer) -> Scorer:
    """``score``, asked once per text: a text scores the same in both directions (the
    root step is shared)."""
    memo: dict[str, float | None] = {}

    def once(texts: Sequence[str]) -> list[float | None]:
        todo = list(dict.fromkeys(t for t in texts if t not in memo))
        if todo:
            memo.update(zip(todo, score(todo), strict=True))
        return [memo[t] for t in texts]

    return once


def _delta(results: Sequence[SearchResult]) -> float | None:
    """The head's mean minus the tail's, when both directions were searched."""
    by = {r.direction: r for r in results}
    head, tail = by.get("head"), by.get("tail")
    if head is None or tail is None or head.mean is None or tail.mean is None:
        return None
    return head.mean - tail.mean


@dataclass
class _Search:
    """A search checked and ready to run: what :func:`search_job`'s job does."""

    store: SessionStore
    request: SearchRequest
    template: UnitTemplate
    graph: Graph
    category: Category
    file_under: str | None
    directions: tuple[str, ...]
    lang: str
    model_name: str
    fingerprint: str | None
    scorer: Scorer | None
    loader: Callable[..., Any] | None
    recorded_as: str

    def run(self, ctx: JobContext) -> SearchSummary:
        started = time.perf_counter()
        self.graph.token = ctx.token
        score = _score_once(self._model_score(ctx))
        roots = self._roots()
        steps = len(self.template.patterns) + 1
        total = len(self.directions) * steps + 1
        labels: dict[str, str] = {}
        results = [
            self._search(direction, d * steps, total, roots, score, labels, ctx)
            for d, direction in enumerate(self.directions)
        ]
        ctx.check_cancelled()
        ids = save_results(
            self.store,
            self.graph,
            self.template,
            results,
            model=self.model_name,
            fingerprint=self.fingerprint,
            lang=self.lang,
            beam=self.request.beam,
            keep=self.request.keep,
            category=self.file_under,
            check=ctx.check_cancelled,
            recorded_as=self.recorded_as,
        )
        ctx.progress(total, total, "saved")
        return SearchSummary(
            self.template.text,
            len(roots),
            {
                r.direction: {"units": len(r.units), "mean": r.mean, "steps": r.steps}
                for r in results
            },
            tuple(ids),
            _delta(results),
            time.perf_counter() - started,
        )

    def _model_score(self, ctx: JobContext) -> Scorer:
        if self.scorer is not None:
            return self.scorer
        from core.local_models.loader import load_model
        from core.tiers.likelihood import sequence_loglik

        request = self.request
        loaded = (self.loader or load_model)(request.model, device=request.device)

        def score(texts: Sequence[str]) -> list[float | None]:
            ctx.check_cancelled()
            return sequence_loglik(loaded.model, loaded.tokenizer, texts, request.batch)

        return score

    def _roots(self) -> list[str]:
        roots = self.graph.roots(self.category)
        if not roots:
            hint = (
                " (the session cache holds only the categories fetched into it: use "
                "--category with one of them, or another source)"
                if self.graph.cache_store is not None
                else ""
            )
            raise SearchError(f"{self.graph.name} has no members of {self.category.name}{hint}")
        return roots

    def _search(
        self,
        direction: str,
        base: int,
        total: int,
        roots: list[str],
        score: Scorer,
        labels: dict[str, str],
        ctx: JobContext,
    ) -> SearchResult:
        def done(step: int) -> None:
            ctx.progress(base + step + 1, total, f"{direction}: step {step + 1}")

        return beam_search(
            self.graph,
            self.template,
            roots,
            score,
            direction,
            lang=self.lang,
            beam=self.request.beam,
            keep=self.request.keep,
            units=self.request.units,
            ctx=ctx,
            labels=labels,
            step_done=done,
        )


def search_job(
    store: SessionStore,
    source: Any,
    request: SearchRequest,
    *,
    scorer: Scorer | None = None,
    loader: Callable[..., Any] | None = None,
    recorded_as: str = "gui",
) -> Job[SearchSummary]:
    """Parse and check the template, run the search in each direction and save the units
    (one recorded edit from ``recorded_as``: one undo takes them out).

    The template, the class and the model folder are checked before the job is built,
    so bad input raises here and nothing is stored. ``scorer`` replaces the model
    (tests)."""
    from core.tiers.likelihood import _check_lang

    template = parse_template(request.template)
    check_settings(request.beam, request.keep, request.units)
    lang = _check_lang(request.lang)
    if request.direction not in (*DIRECTIONS, "both"):
        raise SearchError(f"--direction must be tail, head or both, not {request.direction!r}")
    directions = DIRECTIONS if request.direction == "both" else (request.direction,)
    category, file_under = resolve_root(store, request.class_qid, request.category)
    model_name, fingerprint = _model_identity(request, scorer)
    graph = Graph(source)
    validate(graph, template)
    search = _Search(
        store,
        request,
        template,
        graph,
        category,
        file_under,
        tuple(directions),
        lang,
        model_name,
        fingerprint,
        scorer,
        loader,
        recorded_as,
    )
    return Job(
        title=f"Search units: {template.text}",
        run=search.run,
        kind="units.search",
        writes=frozenset({Topic.UNITS}),
        params={
            "template": template.text,
            "model": model_name,
            "class": category.class_qid,
            "category": request.category,
            "direction": request.direction,
            "beam": request.beam,
            "keep": request.keep,
            "units": request.units,
            "lang": lang,
            "source": graph.name,
        },
    )
