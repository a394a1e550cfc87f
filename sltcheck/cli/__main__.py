"""``python -m sltcheck.cli``: the same as the ``sltcheck`` command."""

import sys

from sltcheck.cli import main

sys.exit(main())
