"""``python -m sltcheck.cli``: the same as the ``sltcheck`` command."""

import sys

from sltcheck.cli import main

if __name__ == "__main__":
    sys.exit(main())
