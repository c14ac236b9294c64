"""``python -m taillens``: the ``taillens`` command."""

import sys

from taillens import main

sys.exit(main())
