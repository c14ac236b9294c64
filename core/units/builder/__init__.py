"""Building data units by hand or by sampling: drafts, candidate claims, rendering, saving."""
