"""Quality estimation (bands, spans, no QE model) and post-editing with the Appendix F.1
prompt: a tiny causal LM (its noise is unparsable: the original is kept) and an
OpenAI-compatible server on 127.0.0.1 (a parsed correction is kept)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from core.jobs import CancelToken, JobSucceeded, run_job
from core.references.postedit import (
    LocalEditor,
    ServerEditor,
    build_prompt,
    parse_postedit,
    postedit_job,
    prompt_template,
)
from core.references.qe import (
    BANDS,
    ErrorSpan,
    QEError,
    annotate_spans,
    band,
    qe_job,
    qe_status,
)
from core.references.translate import LocalTranslator, TranslateParams, translate_job
from core.store import SessionStore
from core.store.models import ReferenceDerivation, UnitReference
from tests.fixtures.fake_openai_server import FakeServer
from tests.fixtures.gold_reference_session import seed_session
from tests.fixtures.stub_comet_scorer import StubCometScorer
from tests.shared_data import require

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models

PARAMS = TranslateParams(num_beams=1, max_new_tokens=6, batch=4, device="cpu")


def _run(job):
    outcome = run_job(job, CancelToken(), lambda progress: None)
    assert isinstance(outcome, JobSucceeded), outcome
    return outcome.result


@pytest.fixture
def translated(tmp_path: Path, tiny_marian: Path) -> Path:
    session = seed_session(tmp_path / "s.taillens")
    with SessionStore.open(session) as store:
        _run(translate_job(store, LocalTranslator(tiny_marian, PARAMS), "en", ["it"], PARAMS))
    return session


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    yield fake
    fake.close()


def test_bands_follow_xtower_thresholds() -> None:
    assert [name for name, _ in BANDS] == ["weak", "moderate", "good", "excellent"]
    assert [band(s) for s in (0.0, 0.59, 0.6, 0.79, 0.8, 0.939, 0.94, 1.0)] == [
        "weak",
        "weak",
        "moderate",
        "moderate",
        "good",
        "good",
        "excellent",
        "excellent",
    ]
    with pytest.raises(QEError):
        band(1.5)


def test_without_comet_qe_says_so_and_changes_nothing(translated: Path) -> None:
    note = qe_status("/nowhere/xcomet")
    assert note is not None and note.startswith("no quality estimation")
    assert "post-editing" in note
    with SessionStore.open(translated) as store:
        summary = _run(qe_job(store, None, note=note))
        assert summary.scored == 0 and summary.note == note
        with store.snapshot() as db:
            assert set(db.scalars(select(ReferenceDerivation.qe_band))) == {None}


def test_qe_stores_score_band_and_spans(translated: Path) -> None:
    with SessionStore.open(translated) as store:
        summary = _run(qe_job(store, StubCometScorer([0.5, 0.7, 0.95])))
        assert summary.bands == {"weak": 1, "moderate": 1, "excellent": 1}
        with store.snapshot() as db:
            rows = db.scalars(select(ReferenceDerivation).order_by(ReferenceDerivation.id)).all()
            assert [r.qe_band for r in rows] == ["weak", "moderate", "excellent"]
            assert rows[0].qe_spans["spans"][0]["severity"] == "major"
            assert rows[2].qe_spans == {"spans": []}
        again = _run(qe_job(store, StubCometScorer([])))
        assert again.scored == 0 and again.skipped == 3


def test_the_prompt_is_appendix_f1_verbatim() -> None:
    paper = require("tailnlg", "prompts-appendix-f.txt").read_text(encoding="utf-8")
    instruction = prompt_template().splitlines()[0]
    assert instruction.startswith("You are provided with a Source, Translation")
    assert instruction in paper.splitlines()
    prompt = build_prompt(
        "Osvaldo il congilio è un personaggio dell’opera Lupo Alberto",
        "Osvaldo the congil is a character from the opera Wolf Albert.",
        "it",
        "en",
        band="good",
        spans=[ErrorSpan("gil", 15, 18, "minor")],
    )
    lines = prompt.splitlines()
    assert lines[0] == instruction
    assert (
        lines[1] == "Italian source: Osvaldo il congilio è un personaggio dell’opera Lupo Alberto"
    )
    assert (
        lines[2]
        == "English translation: Osvaldo the congil is a character from the opera Wolf Albert."
    )
    assert lines[3] == (
        'Translation quality analysis: Osvaldo the con<error severity="minor">gil</error> '
        "is a character from the opera Wolf Albert."
    )
    assert lines[4] == "Translation quality score: good"
    assert "Translation quality score: not estimated" in build_prompt("a", "b", "en", "it")


@pytest.mark.parametrize(
    ("reply", "explanation", "correction"),
    [
        (
            "Explanation for error1: 'congil' is a typo.\n"
            "Translation correction: Osvaldo the rabbit.",
            "'congil' is a typo.",
            "Osvaldo the rabbit.",
        ),
        ('**Corrected translation:** "Roma è bella."\n\nNotes follow.', None, "Roma è bella."),
        ("Explanation: fine.\nItalian correction: Roma\nè bella.", "fine.", "Roma è bella."),
        ("The translation is fine.", "The translation is fine.", None),
        ("Translation correction:   ", None, None),
    ],
)
def test_replies_parse_robustly(
    reply: str, explanation: str | None, correction: str | None
) -> None:
    parsed = parse_postedit(reply)
    assert (parsed.explanation, parsed.correction) == (explanation, correction)


def test_annotated_spans_never_overlap() -> None:
    spans = [ErrorSpan("b", 1, 3, "minor"), ErrorSpan("c", 2, 4, "major")]
    assert annotate_spans("abcde", spans) == (
        'a<error severity="minor">bc</error><error severity="major">d</error>e'
    )


def test_local_llm_reply_unparsable_keeps_the_original(
    translated: Path, tiny_causal_lm: Path
) -> None:
    from core.references.postedit import EditParams

    with SessionStore.open(translated) as store:
        editor = LocalEditor(tiny_causal_lm, EditParams(max_new_tokens=6, device="cpu"))
        summary = _run(postedit_job(store, editor, batch=2))
        assert summary.edited + summary.unparsable == 3
        with store.snapshot() as db:
            for derivation, reference in db.execute(
                select(ReferenceDerivation, UnitReference).join(
                    UnitReference, UnitReference.id == ReferenceDerivation.reference_id
                )
            ):
                assert derivation.postedit_raw is not None
                assert derivation.postedit_model == str(tiny_causal_lm.resolve())
                if derivation.postedit_text is None:  # unparsable: marked, original kept
                    assert derivation.kept == "mt" and reference.text == derivation.mt_text


def test_server_correction_is_kept_with_both_versions(translated: Path, server: FakeServer) -> None:
    replies = [
        "Explanation for error1: wrong word.\n"
        "Translation correction: Parigi è la capitale della Francia.",
        "I cannot help with that.",
        "Explanation for error1: omission.\nTranslation correction: Roma ha 2 milioni di abitanti.",
    ]
    for text in replies:
        body = {"choices": [{"index": 0, "message": {"content": text}}]}
        server.script.append((200, {"Content-Type": "application/json"}, json.dumps(body).encode()))
    with SessionStore.open(translated) as store:
        _run(qe_job(store, StubCometScorer([0.3, 0.9, 0.65])))
        summary = _run(postedit_job(store, ServerEditor(server.url, "xtower"), batch=2))
        assert (summary.edited, summary.unparsable) == (2, 1)
        sent = [b["messages"][0]["content"] for b in server.bodies]
        assert all(p.startswith("You are provided with a Source") for p in sent)
        assert "Translation quality score: weak" in sent[0]
        assert '<error severity="major">' in sent[0]
        with store.snapshot() as db:
            rows = db.execute(
                select(ReferenceDerivation, UnitReference.text)
                .join(UnitReference, UnitReference.id == ReferenceDerivation.reference_id)
                .order_by(ReferenceDerivation.id)
            ).all()
            kept = [(d.kept, text == (d.postedit_text or d.mt_text)) for d, text in rows]
            assert kept == [("postedit", True), ("mt", True), ("postedit", True)]
            assert rows[0][1] == "Parigi è la capitale della Francia."
            assert rows[0][0].mt_text != rows[0][1]  # both versions kept
            assert rows[0][0].postedit_explanation == "wrong word."
        again = _run(postedit_job(store, ServerEditor(server.url, "xtower")))
        assert again.skipped == 3 and again.edited == 0


def test_xcomet_in_this_process_loads_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading the checkpoint in this process may not download its encoder's tokenizer
    (a network wait with no deadline of TailLens's): the hub is switched offline first.
    A stand-in ``comet`` module records what the environment said when it was asked."""
    import os
    import sys
    import types

    import core.references.qe as qe

    seen: dict[str, str | None] = {}

    def load_from_checkpoint(_path: str) -> object:
        seen.update(
            hub=os.environ.get("HF_HUB_OFFLINE"),
            transformers=os.environ.get("TRANSFORMERS_OFFLINE"),
        )
        return types.SimpleNamespace(
            predict=lambda data, **_kw: types.SimpleNamespace(scores=[0.5] * len(data))
        )

    standin = types.ModuleType("comet")
    standin.load_from_checkpoint = load_from_checkpoint  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "comet", standin)  # removed again after the test
    monkeypatch.setattr(qe, "comet_installed", lambda: True)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(name, "")  # so monkeypatch restores the user's value after
        monkeypatch.delenv(name)
    checkpoint = tmp_path / "model.ckpt"
    checkpoint.write_bytes(b"weights")
    scorer = qe.CometScorer(checkpoint)
    try:
        results = scorer.score([qe.QEInput("Roma è in Italia.", "Rome is in Italy.")])
    finally:
        scorer.close()
    assert seen == {"hub": "1", "transformers": "1"}
    assert [r.score for r in results] == [0.5]
