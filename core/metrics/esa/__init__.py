"""Entity-based semantic adequacy (ESA), ESI@n, and hallucination candidates (METHODS §7).

ESA (Faille, Gatt and Gardent 2021, §4) asks, without any reference: which of the unit's
subjects and objects does the text mention? Identifiers become text first
(:mod:`core.surface`: ``Abilene,_Texas`` is "Abilene, Texas" and also "Abilene"). Every
word n-gram of the text within a normalised Levenshtein distance of :data:`MAX_DISTANCE`
(0.4) of an entity's surface form, a variant, an alias or a synonym (the session's
synonym table, :mod:`core.metrics.esa.synonyms`) is a candidate mention; dates are compared after
normalisation (``1990-05-01``, ``1 May 1990``, ``May 1, 1990``, ``5/1/1990``, ``1 maggio
1990``, ``1 de mayo de 1990`` are one date) and numbers as numbers (``610.0`` is "610",
``3500`` is "3,500", and "3.500" in Italian). Overlapping candidates go to the lowest
distance, then the longest span; the third-person pronouns left over are mentions of the
root entity. An entity is detected when it has a mention.

Matching is on words: the text and every name are split into Unicode word tokens
(``\\w+``), compared casefolded and without accents (NFKD, combining marks dropped), so
"Mongolia" in a label and "MONGOLIA" or "Mongólia" in a text meet. The edit distance is
Hyyrö's bit-parallel form of Myers' algorithm on Python integers (no rapidfuzz here). All
names of all entities of a text are searched in one pass over the text (the patterns
packed into one bit-vector): the search score at a token's end bounds every n-gram ending
there from below, so exact n-gram distances are computed only where a match is possible.
The enriched WebNLG dev set (2,268 texts) takes about 1.6 s of CPU time.

Hallucination candidates are the text's capitalised or numeric spans (a run of
capitalised/numeric words, joined by short connectors such as "of" or "de") that match no
subject, object, predicate label or alias, and no detected mention: names, numbers and
dates the unit does not contain. They are candidates for a person to look at, not
verdicts.

Modules: :mod:`.text` (tokens, edit distance, search), :mod:`.literals` (dates and
numbers), :mod:`.detect` (ESA per text, ESI@n), :mod:`.metric` (the ESA metric) and
:mod:`.hallucination` (hallucination candidates).
"""
