"""The model being trained and its tokenizer: loading (LoRA adapters on a causal model,
graph tokens added to a seq2seq one), examples as token ids, padded batches, the forward
pass, generation for the dev graphs, the dev loss, and the finished model's save.

A seq2seq model reads WDV's input (the task prefix and ``<H> s <R> p <T> o``, from
:func:`core.verbalise.prompts.seq2seq_input`) and learns the reference as its target;
``<H>``, ``<R>`` and ``<T>`` are added to the vocabulary where the tokenizer does not know
them (T5's has no ``<``: they would all read as ``<unk>``). A causal model reads the chat
prompt of the run's preset (:func:`core.local_models.loader.prompt_token_ids`) and learns the answer
marker with the reference in brackets, with the loss on the reply only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from core import heavy
from core.verbalise.training.data import Example, Triples
from core.verbalise.training.settings import TrainingError, TrainingSettings

GRAPH_TOKENS = ("<H>", "<R>", "<T>")
IGNORED = -100  # the label torch's cross-entropy leaves out of the loss


def require_lora() -> None:
    import importlib.util

    if importlib.util.find_spec("peft") is None:
        from core.desktop.install import pip_hint

        raise TrainingError(
            "a causal model is fine-tuned with LoRA adapters, which need peft, and peft is "
            f"not installed: {pip_hint('peft')} (or train a seq2seq model such as T5)"
        )


class TrainingModel:
    """One base model loaded for training, and how examples become its batches."""

    def __init__(self, base: Path, kind: str, settings: TrainingSettings) -> None:
        self.base, self.kind, self.settings = base, kind, settings
        self.causal = kind == "causal"
        self.added_tokens: list[str] = []
        self._templates: dict[str, str] | None = None

    # -- loading -------------------------------------------------------------------------

    def load(self) -> None:
        from core.local_models.loader import load_model, select_device

        with heavy.lock():
            import torch

        self.torch = torch
        torch.manual_seed(self.settings.seed)  # LoRA's and new embeddings' first values
        self.device = select_device(self.settings.device)
        loaded = load_model(self.base, device=self.device, dtype="float32")
        self.model, self.tokenizer = loaded.model, loaded.tokenizer
        if self.causal:
            self._add_lora()
        else:
            unknown = [t for t in GRAPH_TOKENS if self._unknown(t)]
            if unknown:
                self.tokenizer.add_tokens(unknown)
                self.model.resize_token_embeddings(len(self.tokenizer))
                self.added_tokens = unknown
        self.model.to(self.device)
        self.model.train()
        self.autocast = self.device.startswith("cuda") and torch.cuda.is_bf16_supported()

    def _add_lora(self) -> None:
        require_lora()
        with heavy.lock():
            from peft import LoraConfig, get_peft_model

        self.model = get_peft_model(
            self.model,
            LoraConfig(
                r=self.settings.lora_r,
                lora_alpha=self.settings.lora_alpha,
                lora_dropout=self.settings.lora_dropout,
                target_modules="all-linear",
                task_type="CAUSAL_LM",
            ),
        )

    def _unknown(self, token: str) -> bool:
        ids = self.tokenizer(token, add_special_tokens=False)["input_ids"]
        unk = self.tokenizer.unk_token_id
        return len(ids) != 1 or (unk is not None and ids[0] == unk)

    def trainable_parameters(self) -> list[Any]:
        return [p for p in self.model.parameters() if p.requires_grad]

    def trainable_state(self) -> dict[str, Any]:
        """The weights a checkpoint keeps: all of a seq2seq model, the adapters of a causal one."""
        names = {n for n, p in self.model.named_parameters() if p.requires_grad}
        return {
            k: v.detach().to("cpu", copy=True)
            for k, v in self.model.state_dict().items()
            if not self.causal or k in names
        }

    def load_state(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state, strict=not self.causal)

    # -- examples as token ids -----------------------------------------------------------

    def source_text(self, triples: Triples, lang: str) -> str:
        from core.verbalise.prompts import render_prompt, seq2seq_input, templates_for

        if self.causal:
            if self._templates is None:
                from core.vocab import LANGUAGES

                self._templates = templates_for(LANGUAGES, None, self.settings.prompt_preset)
            return render_prompt(self._templates[lang], triples, lang)
        return seq2seq_input(triples, lang, self.settings.task_prefix)

    def source_ids(self, triples: Triples, lang: str) -> list[int]:
        from core.local_models.loader import prompt_token_ids

        text = self.source_text(triples, lang)
        if self.causal:
            return prompt_token_ids(self.tokenizer, text)[-self.settings.max_source_tokens :]
        ids = self.tokenizer(text, truncation=True, max_length=self.settings.max_source_tokens)
        return list(ids["input_ids"])

    def encode(self, example: Example) -> tuple[list[int], list[int]]:
        """(input ids, label ids): for causal models one sequence, the prompt masked."""
        from core.verbalise.prompts import ANSWER_MARKERS

        source = self.source_ids(example.triples, example.lang)
        limit = self.settings.max_target_tokens
        if self.causal:
            reply = f"{ANSWER_MARKERS.get(example.lang, ANSWER_MARKERS['en'])} [{example.text}]"
            ids = list(self.tokenizer(reply, add_special_tokens=False)["input_ids"])[:limit]
            ids.append(self.tokenizer.eos_token_id)
            return source + ids, [IGNORED] * len(source) + ids
        target = self.tokenizer(text_target=example.text, truncation=True, max_length=limit)
        return source, list(target["input_ids"])

    def collate(self, items: Sequence[tuple[list[int], list[int]]]) -> tuple[dict[str, Any], int]:
        """A padded batch on the device and its number of real tokens (inputs + labels
        of a seq2seq model; the sequence of a causal one)."""
        torch = self.torch
        pad = self.tokenizer.pad_token_id
        width = max(len(i) for i, _l in items)
        ids = torch.full((len(items), width), pad, dtype=torch.long)
        mask = torch.zeros((len(items), width), dtype=torch.long)
        label_width = max(len(lab) for _i, lab in items)
        labels = torch.full((len(items), label_width), IGNORED, dtype=torch.long)
        tokens = 0
        for row, (inputs, targets) in enumerate(items):
            ids[row, : len(inputs)] = torch.tensor(inputs)
            mask[row, : len(inputs)] = 1
            labels[row, : len(targets)] = torch.tensor(targets)
            tokens += len(inputs) + (0 if self.causal else len(targets))
        batch = {"input_ids": ids, "attention_mask": mask, "labels": labels}
        return {k: v.to(self.device) for k, v in batch.items()}, tokens

    def loss(self, batch: dict[str, Any]) -> Any:
        """The batch's mean loss (bf16 autocast on a CUDA device that has it)."""
        torch = self.torch
        with torch.autocast("cuda", torch.bfloat16, enabled=self.autocast):
            return self.model(**batch).loss

    # -- evaluation ----------------------------------------------------------------------

    def dev_loss(self, examples: Sequence[Example], check: Callable[[], None]) -> float:
        """The mean loss per label token over ``examples``; ``check`` between batches
        (raises when cancelled)."""
        total_loss, total_tokens = 0.0, 0
        size = self.settings.batch_size
        for start in range(0, len(examples), size):
            check()
            batch, _tokens = self.collate([self.encode(e) for e in examples[start : start + size]])
            labels = batch["labels"]
            shifted = labels[:, 1:] if self.causal else labels
            count = int((shifted != IGNORED).sum())
            total_loss += float(self.loss(batch)) * count
            total_tokens += count
        return total_loss / total_tokens if total_tokens else float("nan")

    def generate(self, graphs: Sequence[tuple[Triples, str]]) -> list[str]:
        from core.verbalise.prompts import parse_reply

        torch, tokenizer = self.torch, self.tokenizer
        ids = [self.source_ids(t, lang) for t, lang in graphs]
        side = tokenizer.padding_side
        tokenizer.padding_side = "left" if self.causal else "right"
        try:
            batch = tokenizer.pad({"input_ids": ids}, padding=True, return_tensors="pt")
        finally:
            tokenizer.padding_side = side
        batch = {k: v.to(self.device) for k, v in batch.items()}
        with torch.autocast("cuda", torch.bfloat16, enabled=self.autocast):
            output = self.model.generate(
                **batch,
                do_sample=False,
                num_beams=1 if self.causal else self.settings.num_beams,
                max_new_tokens=self.settings.max_new_tokens,
                pad_token_id=tokenizer.pad_token_id,
            )
        if self.causal:
            output = output[:, batch["input_ids"].shape[1] :]
        texts = tokenizer.batch_decode(output.cpu(), skip_special_tokens=True)
        if self.causal:
            return [parse_reply(t).text or "" for t in texts]
        return [t.strip() for t in texts]

    # -- the finished model --------------------------------------------------------------

    def save(self, folder: Path) -> None:
        """The weights (adapters merged into a causal model's, so the folder is a plain
        model) and the tokenizer, into ``folder``."""
        model = self.model.merge_and_unload() if self.causal else self.model
        model.eval()
        model.save_pretrained(folder)
        self.tokenizer.save_pretrained(folder)
