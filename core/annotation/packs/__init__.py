"""Offline annotation packs for a team (METHODS §13).

A pack is a small session file holding only what one annotator needs: the texts to rate,
their units and references, the guidelines, golden items mixed in; no scores, no
annotations, and in blind mode no model names, tiers or categories. The annotator opens
it in TailLens on their own machine and rates offline; :func:`merge_packs` brings the
ratings and corrections back.

Identity and checks:

* the source session gets a uid (session_meta ``session:uid``) the first time a pack is
  made from it; each pack carries it, its own uid and the SHA-256 of every item's text;
* the source records each pack (``annotation_packs``): its items and which were golden, so
  the progress view knows what was handed out and a merge knows the pack;
* merging refuses a pack made from another session, a pack this session has no record of,
  and (unless asked to skip them) items whose text changed since the pack was made;
* merging is idempotent: every merged rating records its origin (``annotation_origins``:
  pack, annotator, the rating's id and last change in the pack, merge time); merging the
  same pack again adds nothing, and a rating changed in the pack since the last merge
  updates the one it made. A rating the session already holds from elsewhere that differs
  from the pack's is a conflict: it is reported and kept, never overwritten.

Rows are copied with their ids, so an item is the same id in the pack and the session.

The package's modules, one step of a pack's life each:

* :mod:`~core.annotation.packs.manifest`: what a pack says about itself (its description,
  checked field by field), the session's uid, the text digests;
* :mod:`~core.annotation.packs.make`: choosing the texts and writing one annotator's pack;
* :mod:`~core.annotation.packs.read`: reading a pack from elsewhere within bounds (time,
  memory, schema revision) into checked ratings
  (:class:`~core.annotation.packs.read.PackRating`);
* :mod:`~core.annotation.packs.merge`: bringing those ratings into the session;
* :mod:`~core.annotation.packs.progress`: the team's progress and agreement.

Nothing is re-exported here: import each name from the module that defines it.
"""
