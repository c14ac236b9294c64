"""``python -m app``: the same entry point as the ``taillens`` console script."""

import sys

try:
    from app.cli import main
except KeyboardInterrupt:  # Ctrl+C while the command line loads
    print("taillens: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
