"""Data units: shapes, claim rules, sampling, beam search, the builder, reference counts."""
