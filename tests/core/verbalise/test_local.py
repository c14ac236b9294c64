"""Causal and seq2seq verbalisers over tiny random models, through the real loading path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.local_models.loader import ModelError
from core.verbalise import open_verbaliser
from core.verbalise.base import GenerationParams, VerbaliseRequest
from core.verbalise.local import CausalVerbaliser, Seq2SeqVerbaliser

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models

TRIPLES = (("Paris", "country", "France"), ("Paris", "mayor", "Anne Hidalgo"))


def requests_for(
    verbaliser: Any, units: list[tuple[tuple[str, str, str], ...]], lang: str = "en"
) -> list[VerbaliseRequest]:
    return [
        VerbaliseRequest((i, lang), lang, t, verbaliser.prompt_for(t, lang))
        for i, t in enumerate(units)
    ]


@pytest.fixture(scope="module")
def causal(tiny_causal_lm: Path) -> CausalVerbaliser:
    verbaliser = CausalVerbaliser(
        tiny_causal_lm, GenerationParams(candidates=3, max_new_tokens=5), device="cpu"
    )
    verbaliser.load()
    return verbaliser


def test_open_verbaliser_picks_the_kind(tiny_causal_lm: Path, tiny_seq2seq: Path) -> None:
    assert open_verbaliser("template").kind == "template"
    assert open_verbaliser(tiny_causal_lm).kind == "causal"
    assert open_verbaliser(tiny_seq2seq).kind == "seq2seq"
    assert open_verbaliser("http://127.0.0.1:9/v1", server_model="m").kind == "openai"
    with pytest.raises(ModelError, match="no model folder"):
        open_verbaliser("/nowhere/model")


def test_causal_batch_left_padded_with_n_candidates_each(
    causal: CausalVerbaliser, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}
    original = causal._generate

    def spy(model: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        return original(model, **kwargs)

    monkeypatch.setattr(causal, "_generate", spy)
    units = [TRIPLES[:1], TRIPLES, TRIPLES[:1] * 3]
    results = causal.verbalise(requests_for(causal, units))
    assert [len(r) for r in results] == [3, 3, 3]
    assert seen["num_return_sequences"] == 3 and seen["do_sample"] is True
    assert (seen["temperature"], seen["top_p"], seen["max_new_tokens"]) == (0.7, 0.9, 5)
    ids, mask = seen["input_ids"], seen["attention_mask"]
    pad = causal.loaded.tokenizer.pad_token_id
    lengths = mask.sum(dim=1).tolist()
    assert len(set(lengths)) == 3  # three prompt lengths in one batch
    for row, length in zip(ids.tolist(), lengths, strict=True):
        width = len(row)
        # LEFT padding: pads first, the prompt flush against where generation starts.
        assert row[: width - length] == [pad] * (width - length)
        assert pad not in row[width - length :]
    for candidates in results:
        for candidate in candidates:
            assert 1 <= candidate.tokens <= 5
            assert not candidate.parse_ok and candidate.text is None  # random model: no marker


def test_causal_reply_with_the_marker_is_parsed(
    causal: CausalVerbaliser, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    tokenizer = causal.loaded.tokenizer
    replies = ["The final verbalization is: [Paris is in France.]", "no marker here", ""]

    def scripted(model: Any, **kwargs: Any) -> Any:
        rows = []
        for i in range(kwargs["input_ids"].shape[0]):
            for reply in replies:
                ids = tokenizer(reply, add_special_tokens=False)["input_ids"]
                rows.append(kwargs["input_ids"][i].tolist() + ids + [tokenizer.eos_token_id])
        width = max(map(len, rows))
        return torch.tensor([r + [tokenizer.pad_token_id] * (width - len(r)) for r in rows])

    monkeypatch.setattr(causal, "_generate", scripted)
    [candidates] = causal.verbalise(requests_for(causal, [TRIPLES]))
    assert [(c.text, c.parse_ok) for c in candidates] == [
        ("Paris is in France.", True),
        (None, False),
        (None, False),
    ]
    assert candidates[0].raw == replies[0]  # raw reply kept
    assert candidates[1].raw == "no marker here"


def test_exact_prompt_preview_needs_no_weights(tiny_causal_lm: Path) -> None:
    verbaliser = CausalVerbaliser(tiny_causal_lm)
    preview = verbaliser.exact_prompt(TRIPLES[:1], "es")
    assert verbaliser.loaded is None
    # The default prompts: TailNLG's Appendix H, the triples after the instructions.
    assert preview.startswith("<|user|>\nEn español, los datos estructurados")
    assert "La verbalización final es: [salida de verbalización]" in preview
    assert preview.endswith("sin añadir nada más\n\n[Paris, country, France]\n<|assistant|>\n")
    previous = CausalVerbaliser(tiny_causal_lm, prompt_preset="taillens")
    assert previous.exact_prompt(TRIPLES[:1], "es").endswith(
        "La verbalización final es: [tu párrafo]\n<|assistant|>\n"
    )


def test_set_templates_reaches_the_exact_prompt(tiny_causal_lm: Path) -> None:
    from core.verbalise.prompts import PromptError

    verbaliser = CausalVerbaliser(tiny_causal_lm)
    verbaliser.set_templates({"en": "Facts:\n{triples}\nWrite one sentence."})
    assert verbaliser.prompt_for(TRIPLES[:1], "en") == (
        "Facts:\n[Paris, country, France]\nWrite one sentence."
    )
    assert verbaliser.exact_prompt(TRIPLES[:1], "en") == (
        "<|user|>\nFacts:\n[Paris, country, France]\nWrite one sentence.\n<|assistant|>\n"
    )
    with pytest.raises(PromptError, match="exactly once"):
        verbaliser.set_templates({"en": "{triples} {triples}"})
    assert verbaliser.templates["en"] == "Facts:\n{triples}\nWrite one sentence."


def test_a_causal_preview_waits_for_the_tokenizer_then_shows_the_exact_prompt(
    tiny_causal_lm: Path,
) -> None:
    from core.local_models.loader import ModelInfo

    verbaliser = CausalVerbaliser(tiny_causal_lm)
    verbaliser.use_prompt({"en": "Facts:\n{triples}\nWrite."}, "tailnlg", "ignored: ")
    pending = verbaliser.preview(TRIPLES[:1], "en", exact=False)
    assert pending.needs_tokenizer and pending.warning is None
    assert pending.text == "Facts:\n[Paris, country, France]\nWrite."
    assert verbaliser._tokenizer is None  # nothing loaded on the UI thread's call
    exact = verbaliser.preview(TRIPLES[:1], "en", exact=True)
    assert not exact.needs_tokenizer and exact.warning is None
    assert exact.text == "<|user|>\nFacts:\n[Paris, country, France]\nWrite.\n<|assistant|>\n"
    assert exact.note.startswith("Exactly as the model reads it")
    assert verbaliser.loaded is None
    assert verbaliser.summary([]) == f"causal · {verbaliser.path}"
    listed = ModelInfo("m", verbaliser.path, "causal", 2048, "folder")
    assert verbaliser.summary([listed]) == f"causal · 2.0 KB · {verbaliser.path}"


def test_a_seq2seq_preview_shows_the_task_prefix_it_is_given(tiny_seq2seq: Path) -> None:
    verbaliser = Seq2SeqVerbaliser(tiny_seq2seq)
    # The templates and preset are a chat prompt's: a seq2seq model reads its prefix.
    verbaliser.use_prompt({"en": "no placeholder"}, "tailnlg", "verbalise: ")
    preview = verbaliser.preview(TRIPLES[:1], "en", exact=False)
    assert preview.text == "verbalise: <H> Paris <R> country <T> France"
    assert not preview.needs_tokenizer and "linearisation" in preview.note
    verbaliser.use_prompt(None, "tailnlg", None)
    assert verbaliser.preview(TRIPLES[:1], "en", exact=True).text.startswith(
        "translate from Graph to Text: "
    )


def test_same_seed_same_texts(causal: CausalVerbaliser) -> None:
    requests = requests_for(causal, [TRIPLES])
    assert causal.verbalise(requests) == causal.verbalise(requests)


def test_seq2seq_beam_search_over_marked_triples(tiny_seq2seq: Path) -> None:
    verbaliser = Seq2SeqVerbaliser(
        tiny_seq2seq, GenerationParams(candidates=3, max_new_tokens=4), device="cpu"
    )
    requests = requests_for(verbaliser, [TRIPLES, TRIPLES[:1]])
    # WDV's input: its prefix, then the <H> <R> <T>-marked triples; recorded as a setting.
    assert requests[1].prompt == ("translate from Graph to Text: <H> Paris <R> country <T> France")
    assert verbaliser.describe()["task_prefix"] == "translate from Graph to Text: "
    other = Seq2SeqVerbaliser(
        tiny_seq2seq, device="cpu", task_prefix="translate Graph to {language}: "
    )
    assert other.prompt_for(TRIPLES[:1], "it").startswith("translate Graph to Italian: <H>")
    assert other.describe()["task_prefix"] == "translate Graph to {language}: "
    results = verbaliser.verbalise(requests)
    assert [len(r) for r in results] == [3, 3]
    tokenizer = verbaliser.loaded.tokenizer
    # The markers are single special tokens, not split into characters.
    marker_ids = tokenizer.convert_tokens_to_ids(["<H>", "<R>", "<T>"])
    encoded = tokenizer(requests[1].prompt)["input_ids"]
    assert all(encoded.count(i) == 1 for i in marker_ids)
    assert verbaliser.describe()["num_beams"] == 3
    # Beams are distinct candidates, best first, deterministic.
    assert results == verbaliser.verbalise(requests)
    assert len({c.raw for c in results[0]}) == 3


def test_a_causal_folder_is_not_a_seq2seq_verbaliser(tiny_causal_lm: Path) -> None:
    with pytest.raises(ModelError, match="is a causal model"):
        Seq2SeqVerbaliser(tiny_causal_lm)


class FlipAfter:
    """A ``should_stop`` that says True from its ``n``-th call on, counting every call."""

    def __init__(self, n: int) -> None:
        self.n, self.calls = n, 0

    def __call__(self) -> bool:
        self.calls += 1
        return self.calls >= self.n


def steps_of_generate(verbaliser: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record how many decoding steps each ``generate`` call made: the output's width less
    the causal prompt's (a seq2seq output also starts with the decoder start token)."""
    steps: list[int] = []
    original = verbaliser._generate

    def spy(model: Any, **kwargs: Any) -> Any:
        output = original(model, **kwargs)
        start = 1 if verbaliser.kind == "seq2seq" else kwargs["input_ids"].shape[1]
        steps.append(output.shape[1] - start)
        return output

    monkeypatch.setattr(verbaliser, "_generate", spy)
    return steps


def test_a_cancel_stops_causal_generation_within_one_step(
    tiny_causal_lm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.jobs import JobCancelled

    verbaliser = CausalVerbaliser(
        tiny_causal_lm, GenerationParams(candidates=2, max_new_tokens=200), device="cpu"
    )
    requests = requests_for(verbaliser, [TRIPLES, TRIPLES[:1]])
    steps = steps_of_generate(verbaliser, monkeypatch)
    stop = FlipAfter(4)
    verbaliser.should_stop = stop
    with pytest.raises(JobCancelled):
        verbaliser.verbalise(requests)  # cut-short candidates are never returned
    # Asked once before generating, then once per step: True at the 4th ask, after the
    # 3rd token, and generation ended there, not at 200 tokens.
    assert stop.calls == 4 and steps == [3]

    # A cancel before the batch starts generates nothing.
    verbaliser.should_stop = lambda: True
    with pytest.raises(JobCancelled):
        verbaliser.verbalise(requests)
    assert steps == [3]


def test_a_cancel_stops_seq2seq_beam_search_within_one_step(
    tiny_seq2seq: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.jobs import JobCancelled

    verbaliser = Seq2SeqVerbaliser(
        tiny_seq2seq, GenerationParams(candidates=3, max_new_tokens=200), device="cpu"
    )
    steps = steps_of_generate(verbaliser, monkeypatch)
    stop = FlipAfter(5)
    verbaliser.should_stop = stop
    with pytest.raises(JobCancelled):
        verbaliser.verbalise(requests_for(verbaliser, [TRIPLES, TRIPLES[:1]]))
    assert stop.calls == 5 and steps == [4]  # every beam ended after 4 steps


def test_a_should_stop_that_never_fires_changes_nothing(
    causal: CausalVerbaliser, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = requests_for(causal, [TRIPLES, TRIPLES[:1]])
    plain = causal.verbalise(requests)
    stop = FlipAfter(10_000)
    monkeypatch.setattr(causal, "should_stop", stop)
    assert causal.verbalise(requests) == plain  # same seed, same texts, all complete
    assert 2 <= stop.calls <= 1 + 5  # asked before and at each of at most 5 steps
