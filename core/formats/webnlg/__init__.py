"""WebNLG and TailNLG XML (METHODS §10): import into a session, export back, without loss.

A document is ``benchmark/entries/entry``; an entry holds triple sets
(``originaltripleset/otriple``, ``modifiedtripleset/mtriple``, and in TailNLG
``spanishtripleset/striple`` and ``italiantripleset/itriple``) and ``lex`` references.

Mapping (one data unit per entry):

* ``data_units``: uid = ``unique_id`` or ``"{file stem}:{eid}"``; shape = ``shape_type``;
  size, tier = ``type``, sub_tier = ``subtype``, root_qid = ``qid``.
* ``unit_triples``: otriple → (en, "original"; "original.1", "original.2", … for further
  originaltripleset elements), mtriple → (en, "main"), striple → (es, "main"),
  itriple → (it, "main"); ``position`` counts from 0 within the set.
* ``unit_references``: one row per lex, in order; provenance ``"{file name}#{lid}"``.

Everything that has no column is kept in ``data_units.attributes`` (see :func:`_layout`):
the entry's attributes as written, the order of its children, each lex's attribute
order, and unknown children serialised as XML. Export re-emits an imported entry from
that layout, taking the values that have columns from the columns (so edits made in the
app are exported) and the original strings where the column still holds what was
imported (so ``size="04"`` stays ``"04"``).

Parsing goes through :mod:`defusedxml` (no DTDs, entities or external references) and
is incremental: each finished entry is dropped from the tree, so memory stays small.

Modules: :mod:`.entries` (parsed data), :mod:`.parse` (an entry element), :mod:`.reader`
(a file, streamed), :mod:`.importer` (into a session), :mod:`.writer` (export), and
:mod:`.human_eval` (the WebNLG 2020 human-evaluation files, for :mod:`core.agreement.judgments`).
"""
