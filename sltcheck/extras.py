"""Optional dependencies, named by the extra that installs them.

The statement checks, the worst-case search and the report need only the core
dependencies; torch is needed by the synthetic reproductions (Figures 4-6 train a
torch target and sweep sources through the torch model: extra ``repro``) and by the
GPT-2 experiment (Figures 7-8: extra ``lm``).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from sltcheck.errors import SltcheckError


class MissingExtra(SltcheckError, ImportError):
    """An optional dependency is absent; the message names the extra that installs it (the
    command line prints it as one line)."""


def require(package: str, extra: str, needed_by: str) -> ModuleType:
    """Import ``package`` or raise :class:`MissingExtra` naming ``extra``."""
    try:
        return importlib.import_module(package)
    except ImportError as error:
        raise MissingExtra(
            f"{needed_by} needs {package}, which is not installed: pip install 'sltcheck[{extra}]'"
        ) from error


def available(package: str) -> bool:
    try:
        importlib.import_module(package)
    except ImportError:
        return False
    return True
