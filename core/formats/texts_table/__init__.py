"""The per-text table (METHODS §10): one row per text, every figure the session holds about it.

Rows are the runs' texts (``verbalisations``, kind ``output``) and the reference texts that
have a sentence score or a rating (kind ``reference``, model ``(references)``, their
quality gold/silver). Columns, in order:

* keys: ``kind, verbalisation_id, reference_id, unit, run, model, lang, candidate, tier,
  sub_tier, category, quality, text`` (``category`` as :func:`core.groups.category_name`
  names it; ``tier``/``sub_tier`` as the unit stores them);
* one float column per score column as the Scores panel and ``correlate`` name them: the
  metric (``esa``, ``perplexity``), or ``metric:quality`` for a reference-based metric
  (``bleu:gold``, ``chrf++:silver``; CONVENTIONS.md: one row per reference quality);
  missing values are empty (CSV), null (JSON Lines, Parquet), NaN in pandas;
* ``esa:undetected_entities`` (ESA's ``missing`` entities: a list in JSON Lines and
  Parquet, joined with ``" | "`` in CSV) and ``details`` (every score's details as one
  JSON object text, ``{column: details}``);
* each annotator's ratings, ``fluency__NAME`` and ``adequacy__NAME`` (golden answers left
  out), then the item's aggregates as METHODS §9 defines them
  (:func:`core.annotation.aggregation.item_aggregates`): ``ratings``, ``fluency_mean``,
  ``fluency_median``, ``adequacy_majority_voted``, ``adequacy_percentage``.

Where each metric's signature goes (the header names it): Parquet, in the schema's
metadata (``taillens`` key: columns, types and signatures; each metric field's own
``signature``) with pandas metadata so ``pd.read_parquet`` gives nullable integers;
CSV and JSON Lines, whose rows stay plain data for ``csv``/pandas/R, in a sidecar
``NAME.signatures.json`` beside the file (signatures, columns, their types and the
``pandas_dtypes`` to pass to ``pd.read_csv``/``pd.read_json(dtype=...)``); the CLI prints
them too.

Read in pages (keyset by id, :data:`PAGE_SIZE` texts, their scores and ratings) inside one
WAL snapshot and written as it goes: CSV and JSON Lines row by row, Parquet one row group
a page (pyarrow, imported only here), so memory stays flat on a session of 100k texts.
Every file goes through :func:`core.formats.common.atomic_output`; CSV cells through
:class:`core.formats.common.CsvWriter` (spreadsheet-safe unless ``raw``). Qt-free.

Modules: :mod:`.plan` (the columns and filters, decided before the first row),
:mod:`.rows` (the rows, read a page at a time), :mod:`.tables` (CSV, JSON Lines and
Parquet writers) and :mod:`.export` (the export and its job).
"""
