"""sltcheck: the strong lottery ticket hypothesis for multi-head attention, made executable.

The specification is Otsuka et al., "The Strong Lottery Ticket Hypothesis for
Multi-Head Attention Mechanisms" (arXiv 2511.04217, AAAI 2026).

The Python API (:mod:`sltcheck.api`): :func:`sltcheck.api.check`, :func:`sltcheck.api.replay`,
``sltcheck.certify(...)`` (the package :mod:`sltcheck.certify`, callable) and
:func:`sltcheck.repro.figure` (the package :mod:`sltcheck.repro`, reachable as ``sltcheck.repro`` without importing
it first). They are imported on first use, so ``import sltcheck`` stays light (no torch: the reproductions
import it only when they run).
"""

from __future__ import annotations

import importlib
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"  # the one place the version is set (pyproject.toml reads it)

if TYPE_CHECKING:
    from sltcheck.api import (  # noqa: F401 - imported on first use (__getattr__)
        CertifyConfig,
        CertifyResult,
        CheckConfig,
        CheckResult,
        ReplayResult,
        Table,
        check,
        replay,
    )

_API = ("CertifyConfig", "CertifyResult", "CheckConfig", "CheckResult", "ReplayResult", "Table", "check", "replay")
_PACKAGES = ("repro",)  # subpackages reachable as attributes (sltcheck.repro.figure) without an import first
__all__ = ["__version__", "certify", *_PACKAGES, *_API]


class CallablePackage(types.ModuleType):
    """The package :mod:`sltcheck.certify`, callable: ``sltcheck.certify(...)`` is :func:`sltcheck.api.certify`
    (the name is the package's, so the function cannot take it; calling the package runs it)."""

    def __call__(self, config: Any = None, /, **options: Any) -> Any:
        return importlib.import_module("sltcheck.api").certify(config, **options)


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module("sltcheck.api"), name)
    if name == "certify":  # the package, callable as the function (sltcheck.api.certify)
        return importlib.import_module("sltcheck.certify")
    if name in _PACKAGES:
        return importlib.import_module(f"sltcheck.{name}")
    raise AttributeError(f"module 'sltcheck' has no attribute {name!r}")
