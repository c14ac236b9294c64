"""core.metrics.ter_core gives sacrebleu's TER edits, text by text: on real WebNLG 2020
outputs of every system against their references, and on strings made to reach each rule
of sacrebleu's search (the beam around the diagonal and its widening for very unequal
lengths, the 1,000-candidate stop, ties between shifts, repeated words, empty sides)."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import pytest
from sacrebleu.metrics import TER, lib_ter

from core.metrics import ter_core
from tests import shared_data

_TER = TER()


def _words(text: str, twice: bool = False) -> list[str]:
    """sacrebleu's TER tokens (a reference is tokenised twice by its reference cache)."""
    once = _TER._preprocess_segment(text)
    return (_TER._preprocess_segment(once) if twice else once).split()


def _same(hyp: list[str], ref: list[str]) -> None:
    assert ter_core.translation_edit_rate(hyp, ref) == lib_ter.translation_edit_rate(hyp, ref)


@shared_data.needs(*shared_data.WEBNLG2020_EN)
def test_equal_to_sacrebleu_on_every_systems_real_texts() -> None:
    root = ET.parse(shared_data.require(*shared_data.WEBNLG2020_TEST)).getroot()
    references = [[lex.text or "" for lex in entry.iter("lex")] for entry in root.iter("entry")]
    submissions = shared_data.require(*shared_data.WEBNLG2020_SUBMISSIONS)
    outputs = sorted(submissions.glob("*/primary.en"))
    assert len(outputs) == 16
    rng = random.Random(33)
    pairs = []
    for output in outputs:
        lines = output.read_text(encoding="utf-8").split("\n")
        # One entry per system at random, and the system's longest output (the beam
        # covers a whole row only below 25 reference words).
        longest = max(range(len(references)), key=lambda i: len(lines[i].split()))
        entry = rng.randrange(len(references))
        for ref in references[entry]:
            pairs.append((_words(lines[entry]), _words(ref, twice=True)))
        # The longest output against its longest reference: the widest beam of the row.
        ref = max(references[longest], key=lambda text: len(text.split()))
        pairs.append((_words(lines[longest]), _words(ref, twice=True)))
    assert max(len(ref) for _, ref in pairs) > 60
    mismatches = [
        (hyp, ref)
        for hyp, ref in pairs
        if ter_core.translation_edit_rate(hyp, ref) != lib_ter.translation_edit_rate(hyp, ref)
    ]
    assert not mismatches, mismatches[:2]


@pytest.mark.parametrize(
    ("hyp", "ref"),
    [
        ("", "a b c"),
        ("a b c", ""),
        ("", ""),
        ("a b c", "a b c"),
        ("c b a", "a b c"),
        ("x y z", "a b c"),
        ("the the the the cat", "the cat the the the"),
        ("a b a b a b a b", "b a b a b a b a"),
        # one word against a long reference, and the reverse: the beam is widened
        ("w0", " ".join(f"w{i}" for i in range(120))),
        (" ".join(f"w{i}" for i in range(120)), "w119"),
    ],
)
def test_equal_to_sacrebleu_on_edge_cases(hyp: str, ref: str) -> None:
    _same(hyp.split(), ref.split())


def test_equal_to_sacrebleu_on_long_shuffled_texts() -> None:
    """Long texts (rows wider than the beam), blocks moved about, words dropped and added:
    many shifts in a row, and enough candidates to reach sacrebleu's 1,000 stop."""
    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(12)]
    for length in (30, 45, 70):
        ref = [rng.choice(vocabulary) for _ in range(length)]
        hyp = list(ref)
        for _ in range(4):
            start = rng.randrange(len(hyp) - 5)
            block = hyp[start : start + rng.randint(2, 5)]
            del hyp[start : start + len(block)]
            at = rng.randrange(len(hyp))
            hyp[at:at] = block
        hyp[rng.randrange(len(hyp))] = "new"
        del hyp[rng.randrange(len(hyp))]
        _same(hyp, ref)


def test_the_candidate_stop_is_reached_and_honoured() -> None:
    """Repeated words give thousands of matching spans: sacrebleu stops after 1,000
    candidates (without applying that round's shift); the fast search stops alike."""
    rng = random.Random(0)
    ref, hyp = [], []
    for _ in range(3):  # the third draw (40 words of "a" and "b"): found by searching
        n = rng.choice([20, 30, 40])
        vocabulary = rng.choice(["ab", "abc", "abcd"])
        ref = [rng.choice(vocabulary) for _ in range(n)]
        hyp = [rng.choice(vocabulary) for _ in range(n)]
    reference = ter_core._Reference(ref)
    _, trace = ter_core._distance_and_trace(reference, reference.encode(hyp)) or (0, "")
    _, checked = ter_core._candidates(reference.encode(hyp), reference, trace, 0)
    assert checked >= lib_ter._MAX_SHIFT_CANDIDATES
    _same(hyp, ref)


def test_equal_traces_to_sacrebleus_beam_edit_distance() -> None:
    """The trace (which decides the shift candidates) is sacrebleu's, ties included."""
    rng = random.Random(3)
    for _ in range(40):
        ref = [rng.choice("abcde") for _ in range(rng.randint(1, 40))]
        hyp = [rng.choice("abcdef") for _ in range(rng.randint(1, 40))]
        reference = ter_core._Reference(ref)
        assert ter_core._distance_and_trace(
            reference, reference.encode(hyp)
        ) == lib_ter.BeamEditDistance(ref)(hyp)
