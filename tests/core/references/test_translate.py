"""Translation of gold references into silver ones with a local model (tiny random
Marian, tiny causal LM), resumable, cancellable, with provenance."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from core.jobs import CancelToken, JobSucceeded, JobWasCancelled, run_job
from core.references.languages import LanguageError, model_code, parse_languages
from core.references.translate import (
    LocalTranslator,
    TranslateError,
    TranslateParams,
    clean_text,
    resume_key,
    translate_job,
)
from core.store import SessionStore
from core.store.models import ReferenceDerivation, UnitReference
from tests.fixtures.gold_reference_session import GOLD_EN, seed_session
from tests.fixtures.tiny_models import build_tiny_marian

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models

PARAMS = TranslateParams(num_beams=2, max_new_tokens=8, batch=2, device="cpu")


def _run(job):
    outcome = run_job(job, CancelToken(), lambda progress: None)
    assert isinstance(outcome, JobSucceeded), outcome
    return outcome.result


def test_translates_gold_into_silver_with_provenance_and_resumes(
    tmp_path: Path, tiny_marian: Path
) -> None:
    session = seed_session(tmp_path / "s.taillens", it_gold=1)
    with SessionStore.open(session) as store:
        summary = _run(
            translate_job(store, LocalTranslator(tiny_marian, PARAMS), "en", ["it", "es"], PARAMS)
        )
        # u1 has a gold Italian reference: a person's text is not doubled by a machine's.
        assert summary.translated == {"en→it": 2, "en→es": 3}
        assert summary.family == "marian"
        with store.snapshot() as db:
            rows = db.execute(
                select(ReferenceDerivation, UnitReference)
                .join(UnitReference, UnitReference.id == ReferenceDerivation.reference_id)
                .order_by(ReferenceDerivation.id)
            ).all()
            sources = {
                r.id: r.text
                for r in db.scalars(select(UnitReference).where(UnitReference.lang == "en"))
            }
            assert len(rows) == 5
            for derivation, reference in rows:
                assert reference.quality == "silver" and reference.lang == derivation.lang
                assert reference.text == derivation.mt_text and derivation.kept == "mt"
                assert sources[derivation.source_reference_id] in GOLD_EN
                assert derivation.model == str(tiny_marian.resolve())
                assert derivation.model_fingerprint and derivation.parameters["num_beams"] == 2
                assert derivation.parameters["family"] == "marian"
                assert f"reference {derivation.source_reference_id}" in reference.provenance
        again = _run(
            translate_job(store, LocalTranslator(tiny_marian, PARAMS), "en", ["it", "es"], PARAMS)
        )
        assert again.translated == {"en→it": 0, "en→es": 0}
        assert again.skipped == {"en→it": 2, "en→es": 3}
        # Other decoding parameters are another translation: not skipped.
        wider = TranslateParams(num_beams=3, max_new_tokens=8, batch=2, device="cpu")
        third = _run(translate_job(store, LocalTranslator(tiny_marian, wider), "en", ["es"], wider))
        assert third.translated == {"en→es": 3}


def test_cancel_keeps_finished_batches_and_the_rerun_finishes(
    tmp_path: Path, tiny_marian: Path
) -> None:
    session = seed_session(tmp_path / "s.taillens")
    one = TranslateParams(num_beams=1, max_new_tokens=4, batch=1, device="cpu")
    with SessionStore.open(session) as store:
        token = CancelToken()
        seen = []

        def progress(p) -> None:
            seen.append(p.done)
            if p.done >= 1:
                token.cancel()

        outcome = run_job(
            translate_job(store, LocalTranslator(tiny_marian, one), "en", ["it"], one),
            token,
            progress,
        )
        assert isinstance(outcome, JobWasCancelled)
        with store.snapshot() as db:
            kept = len(db.scalars(select(ReferenceDerivation.id)).all())
        assert 1 <= kept < 3
        rest = _run(translate_job(store, LocalTranslator(tiny_marian, one), "en", ["it"], one))
        assert rest.skipped == {"en→it": kept} and rest.translated == {"en→it": 3 - kept}


def test_multi_target_marian_gets_its_language_token(tmp_path: Path) -> None:
    folder = build_tiny_marian(tmp_path / "opus-mt-en-roa", multi_target=True)
    translator = LocalTranslator(folder, PARAMS)
    kwargs, _ = translator.inputs(["Paris"], "en", "it")
    tokenizer = translator.load().tokenizer
    assert kwargs["input_ids"][0][0].item() == tokenizer.convert_tokens_to_ids(">>ita<<")
    plain = LocalTranslator(build_tiny_marian(tmp_path / "opus-mt-en-it"), PARAMS)
    kwargs, _ = plain.inputs(["Paris"], "en", "it")
    assert ">>" not in plain.load().tokenizer.decode(kwargs["input_ids"][0])


def test_causal_lm_translates_with_the_prompt(tmp_path: Path, tiny_causal_lm: Path) -> None:
    session = seed_session(tmp_path / "s.taillens", GOLD_EN[:2])
    with SessionStore.open(session) as store:
        translator = LocalTranslator(tiny_causal_lm, PARAMS)
        summary = _run(translate_job(store, translator, "en", ["es"], PARAMS))
        assert summary.family == "causal" and summary.translated == {"en→es": 2}
        assert "prompt" in translator.describe()
        with store.snapshot() as db:
            params = db.scalars(select(ReferenceDerivation.parameters)).first()
        assert params["prompt"].startswith("Translate the following")


def test_language_codes_per_family() -> None:
    assert model_code("nllb", "it") == "ita_Latn"
    assert model_code("m2m100", "es") == "es"
    assert model_code("madlad", "it") == "<2it>"
    assert model_code("marian", "es") == ">>spa<<"
    assert parse_languages("it, es,it") == ["it", "es"]
    with pytest.raises(LanguageError, match="no translation language code for 'xx'"):
        parse_languages("it,xx")


def test_bad_requests_are_one_line_errors(tmp_path: Path, tiny_marian: Path) -> None:
    session = seed_session(tmp_path / "s.taillens")
    with (
        SessionStore.open(session) as store,
        pytest.raises(TranslateError, match="also a target"),
    ):
        translate_job(store, LocalTranslator(tiny_marian, PARAMS), "en", ["en"], PARAMS)
    with pytest.raises(TranslateError, match="beams"):
        TranslateParams(num_beams=0).check()


def test_resume_key_changes_with_decoding_not_with_batch(tiny_marian: Path) -> None:
    a = LocalTranslator(tiny_marian, PARAMS)
    same = TranslateParams(num_beams=2, max_new_tokens=8, batch=64, device="cpu")
    assert resume_key(a, PARAMS) == resume_key(a, same)
    assert resume_key(a, PARAMS) != resume_key(a, TranslateParams(num_beams=5, max_new_tokens=8))


def test_control_characters_never_reach_a_reference() -> None:
    assert clean_text("Roma\x11 è\x00  la\ncapitale\x7f") == "Roma è la capitale"
