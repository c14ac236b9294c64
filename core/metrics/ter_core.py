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
from collections.abc import Iterator, Sequence

import numpy as np
from sacrebleu.metrics import lib_ter

_INF = lib_ter._INT_INFINITY
_BEAM = lib_ter._BEAM_WIDTH
_MAX_CANDIDATES = lib_ter._MAX_SHIFT_CANDIDATES
_MAX_SHIFT_DIST = lib_ter._MAX_SHIFT_DIST
_MAX_SHIFT_SIZE = lib_ter._MAX_SHIFT_SIZE


class _Reference:
    """One reference's words as integer codes, with the beam's geometry per hypothesis
    length (the same for every shifted hypothesis: a shift keeps the length)."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = list(words)
        self.n = len(self.words)
        self.codes: dict[str, int] = {}
        for word in self.words:
            self.codes.setdefault(word, len(self.codes))
        self.codes_ref = [self.codes[w] for w in self.words]
        # Where each word is in the reference, in order (the only starts a match can have).
        self.positions: dict[int, list[int]] = {}
        for j, code in enumerate(self.codes_ref):
            self.positions.setdefault(code, []).append(j)
        self.ref = np.array(self.codes_ref, dtype=np.int64)
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


def _rows(reference: _Reference, hyps: np.ndarray) -> list[np.ndarray]:
    """Every row of each hypothesis's distance matrix (hyps: candidates × words): row i
    is a candidates × (reference words + 1) array."""
    count, n_hyp = hyps.shape
    columns = reference.columns
    n = reference.n + 1
    differ = (hyps[:, :, None] != reference.ref[None, None, :]).astype(np.int64)
    prev = np.broadcast_to(reference.initial, (count, n)).copy()
    rows = [prev]
    best = np.empty_like(prev)
    for i, (low, high) in enumerate(reference.windows(n_hyp), start=1):
        # Each cell's best of a diagonal move and a deletion (column 0: deletion only).
        np.minimum(prev[:, :-1] + differ[:, i - 1], prev[:, 1:] + 1, out=best[:, 1:])
        best[:, 0] = prev[:, 0] + 1
        if low:
            best[:, :low] = _INF
        if high < n:
            best[:, high:] = _INF
        # Insertions: d[j] = min(best[j], d[j-1] + 1) is the running minimum of
        # best[k] + (j - k); capped at "infinity", which sacrebleu never lowers a cell from.
        row = np.minimum.accumulate(best - columns, axis=1)
        row += columns
        if low or high < n:
            np.minimum(row, _INF, out=row)
            row[:, :low] = _INF
            row[:, high:] = _INF
        rows.append(row)
        prev = row
    return rows


def _trace(reference: _Reference, hyp: Sequence[int], matrix: list[list[int]]) -> str | None:
    """sacrebleu's trace, read back from the finished matrix: a cell starts at "infinity"
    and takes, in this order, the diagonal move, the deletion, the insertion, each only
    when strictly lower (column 0 is a deletion outright, row 0 insertions). None where
    it meets a cell the beam left undefined (sacrebleu raises there)."""
    ref = reference.ref.tolist()
    i, j = len(hyp), reference.n
    letters: list[str] = []
    while i > 0 or j > 0:
        if i == 0:
            op = lib_ter._OP_INS
        elif matrix[i][j] >= _INF:
            return None  # outside the row's beam, or reached from there only: undefined
        elif j == 0:
            op = lib_ter._OP_DEL
        else:
            differ = hyp[i - 1] != ref[j - 1]
            chosen, op = _INF, lib_ter._OP_UNDEF
            diagonal = matrix[i - 1][j - 1] + differ
            if diagonal < chosen:
                chosen, op = diagonal, (lib_ter._OP_SUB if differ else lib_ter._OP_NOP)
            deletion = matrix[i - 1][j] + 1
            if deletion < chosen:
                chosen, op = deletion, lib_ter._OP_DEL
            if matrix[i][j - 1] + 1 < chosen:
                op = lib_ter._OP_INS
        letters.append(op)
        if op in (lib_ter._OP_SUB, lib_ter._OP_NOP):
            i -= 1
            j -= 1
        elif op == lib_ter._OP_INS:
            j -= 1
        elif op == lib_ter._OP_DEL:
            i -= 1
        else:
            return None
    return "".join(reversed(letters))


def _distance_and_trace(reference: _Reference, hyp: list[int]) -> tuple[int, str] | None:
    """Edit distance and trace of one hypothesis (None: sacrebleu's own function decides)."""
    rows = _rows(reference, np.array([hyp], dtype=np.int64))
    return _finish(reference, hyp, [row[0].tolist() for row in rows])


def _finish(
    reference: _Reference, hyp: list[int], matrix: list[list[int]]
) -> tuple[int, str] | None:
    trace = _trace(reference, hyp, matrix)
    return None if trace is None else (matrix[-1][-1], trace)


def _perform_shift(words: list[int], start: int, length: int, target: int) -> list[int]:
    """sacrebleu's _perform_shift (the span moved before ``target``), on word codes."""
    if target < start:
        return (
            words[:target]
            + words[start : start + length]
            + words[target:start]
            + words[start + length :]
        )
    if target > start + length:
        return (
            words[:start]
            + words[start + length : target]
            + words[start : start + length]
            + words[target:]
        )
    return (
        words[:start]
        + words[start + length : length + target]
        + words[start : start + length]
        + words[length + target :]
    )


def _shifted_pairs(hyp: list[int], reference: _Reference) -> Iterator[tuple[int, int, int]]:
    """sacrebleu's _find_shifted_pairs, in its order, visiting only the reference
    positions that hold the hypothesis word (every other start yields nothing there)."""
    ref = reference.codes_ref
    n_hyp, n_ref = len(hyp), len(ref)
    for start_h in range(n_hyp):
        for start_r in reference.positions.get(hyp[start_h], ()):
            if abs(start_r - start_h) > _MAX_SHIFT_DIST:
                continue
            length = 0
            while hyp[start_h + length] == ref[start_r + length] and length < _MAX_SHIFT_SIZE:
                length += 1
                yield start_h, start_r, length
                if n_hyp == start_h + length or n_ref == start_r + length:
                    break


def _candidates(
    hyp: list[int], reference: _Reference, trace: str, checked: int
) -> tuple[list[tuple[int, int, int, list[int]]], int]:
    """sacrebleu's _shift without the scoring: (length, start_h, target, shifted words) of
    each candidate in its order, and the running count of candidates it stops on."""
    align, ref_err, hyp_err = lib_ter.trace_to_alignment(lib_ter._flip_trace(trace))
    out: list[tuple[int, int, int, list[int]]] = []
    for start_h, start_r, length in _shifted_pairs(hyp, reference):
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
            out.append((length, start_h, idx, _perform_shift(hyp, start_h, length, idx)))
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
    current = _distance_and_trace(reference, hyp)
    while True:
        if current is None:
            return lib_ter.translation_edit_rate(list(words_hyp), list(words_ref))
        pre_score, trace = current
        candidates, checked = _candidates(hyp, reference, trace, checked)
        if checked >= _MAX_CANDIDATES or not candidates:
            return shifts + pre_score, reference.n
        rows = _rows(reference, np.array([c[3] for c in candidates], dtype=np.int64))
        best: tuple[int, int, int, int] | None = None
        chosen = 0
        for index, ((length, start_h, idx, _), distance) in enumerate(
            zip(candidates, rows[-1][:, -1].tolist(), strict=True)
        ):
            key = (pre_score - distance, length, -start_h, -idx)
            if best is None or key > best:
                best, chosen = key, index
        assert best is not None
        if best[0] <= 0:
            return shifts + pre_score, reference.n
        shifts += 1
        hyp = candidates[chosen][3]
        # The next round starts from the chosen candidate: its matrix is already filled.
        current = _finish(reference, hyp, [row[chosen].tolist() for row in rows])


class CachedReferences:
    """Each reference's prepared words once, for every hypothesis scored against it."""

    def __init__(self, words_ref: Sequence[str]) -> None:
        self.words_ref = list(words_ref)
        self._reference = _Reference(self.words_ref) if self.words_ref else None

    def edits(self, words_hyp: Sequence[str]) -> tuple[int, int]:
        if self._reference is None or not words_hyp:
            return lib_ter.translation_edit_rate(list(words_hyp), self.words_ref)
        return _edits(self._reference, list(words_hyp), words_hyp, self.words_ref)
