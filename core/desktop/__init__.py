"""This machine and this user: folders, logs, preferences, theme, desktop entry, install kind."""
