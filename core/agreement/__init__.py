"""Agreement of automatic metrics with human judgments (METHODS §7, "Agreement with humans").

Pearson, Spearman and Kendall (tau-b) correlations, each with its two-sided p-value and
n, between any automatic metric stored in the session (a sentence score column: ``esa``,
``bleu:gold``, …) and any human rating, at two levels:

* **text level**: one pair per verbalisation that has both the metric and the rating;
* **system level**: one pair per run (system): the mean of the metric and the mean of the
  rating over that run's texts that have both (so both sides describe the same texts).
  Fewer than 3 pairs give no coefficient (a note says so), as does a constant side.

Human judgments come from:

* the session's own annotations, WDV's imported crowd scores included (``taillens import
  FILE.json --format wdv`` stores them as annotations): ``fluency`` (the item's mean, 0-5)
  and ``adequacy`` (the item's share of Yes votes, METHODS §9), per item as
  :func:`core.annotation.per_item_values` aggregates them;
* the WebNLG 2020 human evaluation, in the layouts it was published in
  (:mod:`core.formats.webnlg.human_eval`: ``human_eval_id_<SYSTEM>.json``,
  ``results/en/<SYSTEM>/primary.json``, the all-teams list). :func:`import_webnlg_judgments`
  matches each system to the run named like it (case and punctuation aside; the folder's
  name, then the file's) or the run ``--run`` names (id or name; ``SYSTEM=RUN``), each
  sample id to that run's text of the unit whose WebNLG id is ``Id<N>`` (else the N-th
  text in unit order, the line of the submitted file), and stores every rating in the
  session (``session_meta`` key ``human-judgments:webnlg2020:run<ID>``; importing a run
  again replaces its ratings). Ratings are ``webnlg:correctness``,
  ``webnlg:data_coverage``, ``webnlg:fluency``, ``webnlg:relevance`` and
  ``webnlg:text_structure``: per text the mean over raters; with ``zscore`` each rater's
  ratings of a criterion are first turned into z-scores over all that rater's ratings, as
  the WebNLG 2020 analysis did (a rater with constant ratings gives 0, numpy's
  ``nan_to_num`` as there). The all-teams file holds those z-scores already (per text):
  its systems count only with ``zscore``, and a system that also has its raters' own file
  keeps that file's ratings.

A file that cannot be read or has the wrong shape, a per-system file that names no run, or
an id that matches no text is refused with the system, file, entry and reason, and nothing
is stored; entries with no ratings are skipped and counted.

Correlations can be restricted to a subset (tiers, systems, languages, runs and
``--where`` conditions over metadata, scores and score details: :mod:`core.text_filters`).
At system level the metric side is either the mean of the per-text scores (``system``) or,
for BLEU, chrF++ and TER, the corpus score over the same texts (``system-corpus``, as the
WebNLG reports compute system BLEU); both are labelled.

The modules, in the order a correlation uses them:

* :mod:`.judgments`: the WebNLG 2020 human-evaluation files matched to the session's runs
  and stored (``taillens import-judgments``);
* :mod:`.human`: each text's human values (the session's annotations and the stored WebNLG
  ratings, z-scored or not);
* :mod:`.reads`: what the correlations read from one state of a session, kept for the next;
* :mod:`.coefficients` (over :mod:`.correlation_tests`): Pearson, Spearman and Kendall with
  p-values;
* :mod:`.correlate`: the correlations at text and system level over a subset, with
  :mod:`.corpus` for the system-corpus scores;
* :mod:`.table`: the bias report's "Metrics against human judgments" table;
* :mod:`.matrix`: the ESA paper's Table 3 layout.
"""
