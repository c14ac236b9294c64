"""WDV JSON records (METHODS §10): one Wikidata claim and its crowd-rated verbalisation each.

A WDV file is one JSON array of records in UTF-8 (JSON Lines is not a WDV shape: a
top-level object is refused). Releases are large, so import reads the array record by
record (:class:`RecordReader`) and inserts in batches, all in one transaction.
Mapping (one single-triple data unit per record):

* ``data_units``: uid = ``"wdv:{claim_id}"``, root_qid = ``subject_id``, size 1, shape
  ``"sibling"``, origin ``"imported"``; ``attributes`` keeps every field that has no
  column elsewhere (and the record's key order), so export re-emits the record exactly.
* ``unit_triples``: one English main triple ``subject_label | property_label |
  object_label`` with ``subject_qid``, ``property_pid`` and, when the claim's value is an
  item, ``object_value`` = its QID.
* ``model_runs``: one ``kind="external"``, ``system_name="WDV"`` run per imported file;
  ``verbalisations``: the record's ``verbalisation`` (candidate 0, English).
* ``annotations``: position *i* of ``fluency_scores``/``adequacy_scores`` is the rating of
  the anonymous annotator ``wdv-worker-{i+1}`` (created once, reused by later imports).

Export recomputes the aggregates (``fluency_mean``, ``fluency_median``,
``adequacy_majority_voted``, ``adequacy_percentage``) from the session's annotations
with :func:`core.annotation.aggregates` (WDV's rules: strict majority, ties to the most
cautious answer, percentage 0 when the majority is Not sure), so
ratings added in the app count; where a recomputed value equals the imported one the
imported value is written as it was (``4`` stays ``4``, not ``4.0``). Units that are
not one English triple are skipped and listed in the :class:`ExportReport`.

Modules: :mod:`.records` (the fields and a record's checks), :mod:`.reader` (a file,
streamed), :mod:`.importer` (into a session) and :mod:`.writer` (export).
"""
