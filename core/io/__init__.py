"""Files, guards, locks and atomic writes: how TailLens reads and writes anything on disk."""
