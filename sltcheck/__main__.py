"""``python -m sltcheck``: the same command line as ``sltcheck``."""

import sys

from sltcheck.cli import main

if __name__ == "__main__":
    sys.exit(main())
