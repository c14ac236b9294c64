"""TailLens core: everything that is not Qt.

Nothing in this package may import Qt (``tests/core/test_layering.py`` enforces it),
and heavy libraries (torch, transformers, ...) are imported inside the functions
that use a model, never at module level.
"""

import os as _os

__version__ = "0.1.0"
# HF_HUB_OFFLINE as the user started TailLens with it. Loading a model sets it for this
# process (nothing is downloaded while loading); a pull asked for later must tell that
# switch from the user's own (core.local_models.hub).
USER_HF_HUB_OFFLINE = _os.environ.get("HF_HUB_OFFLINE")
APP_NAME = "TailLens"
