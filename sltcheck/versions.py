"""The versions of Python and the packages a result depends on, recorded beside every stored result."""

from __future__ import annotations

import platform
from importlib import metadata

VERSIONED_PACKAGES = ("numpy", "scipy", "mpmath", "torch", "gurobipy", "highspy", "cvxpy", "sltcheck")


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    try:
        import gurobipy

        found["gurobi"] = ".".join(map(str, gurobipy.gurobi.version()))
    except Exception:  # any failure means "no usable Gurobi"
        found["gurobi"] = "not available"
    return found
