"""References for new units: TailNLG's pipeline (METHODS §11; TailNLG §3.4, Appendix F).

Qt-free steps, each optional, each a job or a plain function over a session:

1. gold writing (:mod:`core.references.review`: ``units_to_write``, ``write_reference``);
2. machine translation (:mod:`core.references.translate`): gold → silver references,
   with a ``reference_derivations`` row each (source reference, model, parameters);
3. quality estimation (:mod:`core.references.qe`): xCOMET score, band, error spans;
4. post-editing (:mod:`core.references.postedit`): the Appendix F.1 prompt, verbatim;
5. review (:mod:`core.references.review`): F.2 flags, corrections promoted to gold,
   Table 1 figures and agreement per pair.

Export is the TailNLG writer's (:func:`core.formats.webnlg.export_webnlg`): gold and
silver ``lex`` elements with ``quality``.
"""
