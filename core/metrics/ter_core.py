"""TER's edit search with sacrebleu's semantics, its edit distances computed row by row
with numpy for every shift candidate at once.

sacrebleu's ``translation_edit_rate`` (``sacrebleu.metrics.lib_ter``) tries, in each round,
every shift of a matching word span that Tercom's rules allow, computes each shifted
hypothesis's beam-limited edit distance to the reference in Python, one cell at a time,
applies the best shift and stops when no shift lowers the distance (or after 1,000
candidates in all). That inner loop is most of its time (about 100 ms per WebNLG 2020 text
with its up to five references).

Here the rules are the same, step by step: the same candidates in the same order (the
alignment comes from the same trace, the same tie-breaks), the same 1,000-candidate stop,
the same ranking of shifts, the same beam around the same pseudo-diagonal with the same
widening for very unequal lengths. Only the arithmetic differs: a round's candidates all
have the hypothesis's length, so their distance matrices are filled together, one numpy
row per hypothesis word; within a row the insertion chain is a running minimum of
``d[j] - j``. The value of every cell is the one sacrebleu's loop computes (the minimum of
the same three moves, never above its "infinity"). The trace of the current hypothesis is
read from the same row values, with sacrebleu's preference among equal moves
(substitution or match, then deletion, then insertion, each taken only when strictly
lower). ``tests/metrics/test_ter_core.py`` checks the result against sacrebleu on real
WebNLG 2020 texts and on adversarial ones; degenerate inputs (an empty side, or a trace
sacrebleu itself could not follow) are handed to sacrebleu's own function.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from sacrebleu.metrics import lib_ter

_INF = lib_ter._INT_INFINITY
_BEAM = lib_ter._BEAM_WIDTH
_MAX_CANDIDATES = lib_ter._MAX_SHIFT_CANDIDATES
# Operation codes of the trace matrix (sacrebleu's letters, in _LETTERS' order).
_UNDEF, _NOP, _SUB, _DEL, _INS = range(5)
_LETTERS = (lib_ter._OP_UNDEF, lib_ter._OP_NOP, lib_ter._OP_SUB, lib_ter._OP_DEL, lib_ter._OP_INS)


class _Reference:
    """One reference's words as integer codes, with the beam's geometry per hypothesis
    length (the same for every shifted hypothesis: a shift keeps the length)."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = list(words)
        self.n = len(self.words)
        self.codes: dict[str, int] = {}
        for word in self.words:
            self.codes.setdefault(word, len(self.codes))
        self.ref = np.array([self.codes[w] for w in self.words], dtype=np.int64)
        self.columns = np.arange(self.n + 1, dtype=np.int64)
        self.initial = self.columns.copy()  # row 0: one insertion per reference word

    def encode(self, words: Sequence[str]) -> list[int]:
        # A word absent from the reference equals no reference word: -1 for all of them.
        return [self.codes.get(w, -1) for w in words]

    def windows(self, n_hyp: int) -> list[tuple[int, int]]:
        """[min_j, max_j) of each row 1..n_hyp, as sacrebleu's _edit_distance sets it."""
        ratio = self.n / n_hyp if n_hyp else 1
        width = math.ceil(ratio / 2 + _BEAM) if ratio / 2 > _BEAM else _BEAM
        out = []
        for i in range(1, n_hyp + 1):
            diagonal = math.floor(i * ratio)
            low = max(0, diagonal - width)
            high = self.n + 1 if i == n_hyp else min(self.n + 1, diagonal + width)
            out.append((low, high))
        return out


def _rows(reference: _Reference, hyps: np.ndarray, keep_ops: bool) -> tuple[np.ndarray, list]:
    """The last row of each hypothesis's distance matrix (hyps: candidates × words), and,
    with keep_ops, the operation chosen in every cell of the first hypothesis."""
    count, n_hyp = hyps.shape
    columns = reference.columns
    prev = np.broadcast_to(reference.initial, (count, reference.n + 1)).copy()
    ops: list[np.ndarray] = []
    for i, (low, high) in enumerate(reference.windows(n_hyp), start=1):
        differ = (hyps[:, i - 1 : i] != reference.ref[None, :]).astype(np.int64)
        # Each cell's best of a diagonal move and a deletion (j = 0: deletion only).
        sub = prev[:, :-1] + differ
        dele = prev + 1
        best = np.empty_like(prev)
        best[:, 0] = dele[:, 0]
        np.minimum(sub, dele[:, 1:], out=best[:, 1:])
        best[:, :low] = _INF
        best[:, high:] = _INF
        # Insertions: d[j] = min(best[j], d[j-1] + 1) is the running minimum of
        # best[k] + (j - k); capped at "infinity", which sacrebleu never lowers a cell from.
        row = np.minimum.accumulate(best - columns, axis=1) + columns
        np.minimum(row, _INF, out=row)
        row[:, :low] = _INF
        row[:, high:] = _INF
        if keep_ops:
            ops.append(_operations(sub[0], dele[0], row[0], differ[0], low, high))
        prev = row
    return prev, ops


def _operations(
    sub: np.ndarray, dele: np.ndarray, row: np.ndarray, differ: np.ndarray, low: int, high: int
) -> np.ndarray:
    """sacrebleu's choice per cell: a cell starts at "infinity" and takes, in this order,
    the diagonal move, the deletion, the insertion, each only when strictly lower."""
    n = row.shape[0]
    op = np.full(n, _UNDEF, dtype=np.int8)
    chosen = np.full(n, _INF, dtype=np.int64)
    diagonal = np.full(n, _INF + 1, dtype=np.int64)
    diagonal[1:] = sub
    take = diagonal < chosen
    op[take] = np.where(np.concatenate(([0], differ))[take] == 1, _SUB, _NOP)
    np.minimum(chosen, diagonal, out=chosen)
    take = dele < chosen
    op[take] = _DEL
    np.minimum(chosen, dele, out=chosen)
    insert = np.full(n, _INF + 1, dtype=np.int64)
    insert[1:] = row[:-1] + 1
    insert[0] = _INF + 1  # column 0 has no left neighbour
    take = insert < chosen
    op[take] = _INS
    op[0] = _DEL  # sacrebleu sets column 0 to a deletion outright
    op[:low] = _UNDEF
    op[high:] = _UNDEF
    return op


def _distance_and_trace(reference: _Reference, hyp: list[int]) -> tuple[int, str] | None:
    """Edit distance and trace of one hypothesis; None where the trace meets a cell the
    beam left undefined (sacrebleu raises there: its own function decides)."""
    last, ops = _rows(reference, np.array([hyp], dtype=np.int64), keep_ops=True)
    i, j = len(hyp), reference.n
    letters: list[str] = []
    while i > 0 or j > 0:
        op = _INS if i == 0 else int(ops[i - 1][j])
        letters.append(_LETTERS[op])
        if op in (_SUB, _NOP):
            i -= 1
            j -= 1
        elif op == _INS:
            j -= 1
        elif op == _DEL:
            i -= 1
        else:
            return None
    return int(last[0, -1]), "".join(reversed(letters))


def _candidates(
    hyp: list[int], reference: _Reference, trace: str, checked: int
) -> tuple[list[tuple[int, int, int, list[int]]], int]:
    """sacrebleu's _shift without the scoring: (length, start_h, target, shifted words) of
    each candidate in its order, and the running count of candidates it stops on."""
    align, ref_err, hyp_err = lib_ter.trace_to_alignment(lib_ter._flip_trace(trace))
    out: list[tuple[int, int, int, list[int]]] = []
    ref = reference.encode(reference.words)
    for start_h, start_r, length in lib_ter._find_shifted_pairs(hyp, ref):
        if sum(hyp_err[start_h : start_h + length]) == 0:
            continue
        if sum(ref_err[start_r : start_r + length]) == 0:
            continue
        if start_h <= align[start_r] < start_h + length:
            continue
        prev_idx = -1
        for offset in range(-1, length):
            if start_r + offset == -1:
                idx = 0
            elif start_r + offset in align:
                idx = align[start_r + offset] + 1
            else:
                break
            if idx == prev_idx:
                continue
            prev_idx = idx
            out.append((length, start_h, idx, lib_ter._perform_shift(hyp, start_h, length, idx)))
            checked += 1
        if checked >= _MAX_CANDIDATES:
            break
    return out, checked


def translation_edit_rate(words_hyp: Sequence[str], words_ref: Sequence[str]) -> tuple[int, int]:
    """(edits, reference length): what ``sacrebleu.metrics.lib_ter.translation_edit_rate``
    returns for the same words."""
    if not words_hyp or not words_ref:
        return lib_ter.translation_edit_rate(list(words_hyp), list(words_ref))
    reference = _Reference(words_ref)
    return _edits(reference, list(words_hyp), words_hyp, words_ref)


def _edits(
    reference: _Reference, words: list[str], words_hyp: Sequence[str], words_ref: Sequence[str]
) -> tuple[int, int]:
    hyp = reference.encode(words)
    # Codes stand for words throughout: two hypothesis words absent from the reference
    # share -1, which changes nothing (no candidate span or distance compares two
    # hypothesis words; _find_shifted_pairs compares hypothesis with reference only).
    shifts = 0
    checked = 0
    while True:
        current = _distance_and_trace(reference, hyp)
        if current is None:
            return lib_ter.translation_edit_rate(list(words_hyp), list(words_ref))
        pre_score, trace = current
        candidates, checked = _candidates(hyp, reference, trace, checked)
        if checked >= _MAX_CANDIDATES:
            return shifts + pre_score, reference.n
        if not candidates:
            return shifts + pre_score, reference.n
        last, _ = _rows(
            reference, np.array([c[3] for c in candidates], dtype=np.int64), keep_ops=False
        )
        best: tuple[int, int, int, int] | None = None
        best_words: list[int] = hyp
        for (length, start_h, idx, shifted), distance in zip(
            candidates, last[:, -1].tolist(), strict=True
        ):
            key = (pre_score - distance, length, -start_h, -idx)
            if best is None or key > best:
                best, best_words = key, shifted
        assert best is not None
        if best[0] <= 0:
            return shifts + pre_score, reference.n
        shifts += 1
        hyp = best_words


class CachedReferences:
    """Each reference's prepared words once, for every hypothesis scored against it."""

    def __init__(self, words_ref: Sequence[str]) -> None:
        self.words_ref = list(words_ref)
        self._reference = _Reference(self.words_ref) if self.words_ref else None

    def edits(self, words_hyp: Sequence[str]) -> tuple[int, int]:
        if self._reference is None or not words_hyp:
            return lib_ter.translation_edit_rate(list(words_hyp), self.words_ref)
        return _edits(self._reference, list(words_hyp), words_hyp, self.words_ref)
