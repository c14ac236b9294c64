"""Fine-tuning a graph-to-text verbaliser on the session's references.

Two kinds of model, each trained on exactly the input the verbaliser later gives it:

* **seq2seq** (T5, BART, mT5, …), all weights: WDV's setup (Ribeiro et al.'s T5
  convention), the task prefix and the ``<H> s <R> p <T> o`` linearisation built by
  :func:`core.verbalise.prompts.seq2seq_input`, the reference as the target. ``<H>``,
  ``<R>`` and ``<T>`` are added to the vocabulary where the tokenizer does not know them
  (T5's has no ``<``: they would all read as ``<unk>``), as Ribeiro et al. did.
* **causal** LMs, with LoRA adapters (``peft``; without it a clear refusal): the unit's
  chat prompt (the run's prompt preset, wrapped in the model's chat template by
  :func:`core.local_models.loader.prompt_token_ids`) and, as the reply, the answer marker with the
  reference in brackets (what :func:`~core.verbalise.prompts.parse_reply` reads); the
  loss is on the reply only. The adapters are merged into the weights at the end, so the
  folder is a plain model.

The modules, in the order a training uses them:

* :mod:`.settings`: the settings, their checks, the result and the error.
* :mod:`.data`: the examples, the split by entry, what each epoch trains on, its batches.
* :mod:`.folder`: the output folder (new or resumable), its record, checkpoint files
  written atomically, and the finished model moved in.
* :mod:`.model`: the model and tokenizer being trained: loading (LoRA, added tokens),
  examples as token ids, padded batches, generation and the dev loss.
* :mod:`.evaluation`: the dev graphs, their BLEU and chrF++, best weights and early stopping.
* :mod:`.trainer`: the loop (optimiser, schedule, steps, checkpoints, resume, progress).
* :mod:`.card`: the model card (README.md) of a finished folder.
* :mod:`.launch`: the entry points: :func:`~.launch.training_job` and :func:`~.launch.train`.
"""
