"""TailLens core: everything that is not Qt.

Nothing in this package may import Qt (``tests/core/test_layering.py`` enforces it),
and heavy libraries (torch, transformers, ...) are imported inside the functions
that use a model, never at module level.
"""

__version__ = "0.1.0"
APP_NAME = "TailLens"
