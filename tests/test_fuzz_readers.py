"""Every reader of files from outside, fed a few hundred seeded mutations of a valid
sample (``tests/fixtures/fuzzing.py``): no traceback, no hang, a one-line refusal, and a session
unchanged by a refused import. ``benchmarks/fuzz_readers.py`` runs 10,000 and more."""

from __future__ import annotations

import pytest

from tests.fixtures import fuzzing

# Readers that write a session open it per case: fewer cases keep the suite fast.
CASES = {"pack": 100, "webnlg_xml": 150, "wdv_json": 150, "outputs": 150, "synonyms": 150}


@pytest.mark.parametrize("name", sorted(fuzzing.READERS))
def test_mutated_input_is_read_or_refused_in_one_line(name: str) -> None:
    tally = fuzzing.run(fuzzing.READERS[name], CASES.get(name, 300), seed=31)
    assert tally.tracebacks == [], tally.tracebacks[0][1]
    assert tally.hangs == [] and tally.changed == [] and tally.multiline == [], tally.line()
    assert tally.refused > 0 or name in ("lock_file", "model_card")  # the mutations bite


def test_the_cases_depend_only_on_the_seed() -> None:
    import random

    sample = fuzzing.WEBNLG_SAMPLE
    first = [fuzzing.mutate(sample, random.Random(f"7:x:{n}")) for n in range(20)]
    again = [fuzzing.mutate(sample, random.Random(f"7:x:{n}")) for n in range(20)]
    assert first == again and len(set(first)) == 20
