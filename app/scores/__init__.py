"""Wiring of the Scores panel: reading scores a page at a time, scoring jobs.

The table is a page of texts from ``core.metrics.score_pages`` (one row per verbalisation,
one column per metric and reference quality), filtered by run, language, tier and a text
search and sorted by the table's sort, all in SQL; the next page comes when the table is
scrolled to its end. The count, the texts scored, each column's range (its colour scale)
and the summary (model × language × tier) are SQL aggregates over every text that passes
the filters. A selected text's detail comes from ``scores_of_verbalisation`` (ESA
mentions and missing entities, hallucination spans, BERTScore model and rescaling) and
the unit's triples and references as the scoring job reads them, with the human ratings
of the text. "Score…" builds a ``ScoringRequest`` and runs ``score_job`` through the
app's job runner (progress and cancel in the panel and the status bar). The panel
refreshes when another session opens and when texts, scores, references or units change
(``app.changes``: whoever wrote them); the selected text's detail follows new ratings and
references.

Nothing here reads the session on the UI thread for a refresh (ARCHITECTURE.md: the UI
thread never stalls over 100 ms): a refresh is a "Load scores" job that reads the
filters' choices and the corpus rows behind the notes (``read_overview``,
``corpus_scores``), then the first page with the figures and the summary
(``read_scores``), and hands plain rows to the panel; it never reads every text (on a
12,915-text session the reads take tens of ms). A newer refresh supersedes an older one
still running (its result is dropped). A filter change reads page 1 and the figures again
in a job (the choices are kept); a header click on a table that holds only some of its
rows reads page 1 in that order (the figures stay); a
header click on a table that holds every row sorts it in the model. The Score… dialog
reuses those runs and languages and finds the local models (a scan of the Hugging Face
cache) in a job too.
"""
