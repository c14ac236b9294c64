"""Local language models: finding and loading them, where they run, the hub."""
