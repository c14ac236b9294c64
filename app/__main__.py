"""``python -m app``: the same entry point as the ``taillens`` console script."""

import sys

from app.cli import main

sys.exit(main())
