"""Graph ↔ text retrieval (EREDAT, METHODS §7), with a session cache of encodings.

Graphs are linearised as the similarity metric does (``[S] s [P] p [O] o …``, the unit's
``main`` tripleset in the text's language, overrides applied) and embedded by the same
sentence encoder as the texts; candidates are ranked by cosine.

Definitions (a graph may have several texts, and two units may have the same graph):

* the candidates are the *unique* linearised graphs and the *unique* texts of the set;
  a (graph, text) pair is correct when some unit has that graph and that text;
* text → graph: for each unique text, the rank of its best-scoring correct graph among
  all unique graphs; graph → text the same the other way;
* rank = 1 + the number of wrong candidates scored strictly higher than the best correct
  one (a tie counts in the correct candidate's favour);
* top-k accuracy = share of queries with rank ≤ k; MRR = mean of 1/rank.

Encoding is the cost: every unique string is encoded once per encoder and kept in the
session's ``encodings`` table (rev 0005_retrieval) under the encoder's fingerprint, a hash
of its folder's files, so a retrained model in the same folder is never served stale
vectors. Vectors are L2-normalised float32.

Modules: :mod:`.encoders` (a model folder and its fingerprint), :mod:`.encodings` (the
session cache), :mod:`.pairs` (what is ranked), :mod:`.ranking` (ranks, scores, the
inversion check, graph search) and :mod:`.job`.
"""
