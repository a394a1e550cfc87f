"""The versions of Python and the packages a result depends on, recorded beside every stored result."""

from __future__ import annotations

import copy
import functools
import os
import platform
from importlib import metadata
from pathlib import Path

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


def kernels() -> dict[str, object]:
    """The float64 kernels and builds a result's last bits depend on: the torch build (``2.13.0+cpu``,
    ``2.14.1+cu130``), ATen's CPU capability where it is overridden, numpy's dispatch targets on this CPU,
    OpenBLAS's core, and the CPU. Verdicts do not depend on them (every verdict is decided in mpmath or intervals); a
    search's float64 trajectory, and so the last digits of the ratios it reports, can. Read once per process
    (they do not change while it runs); each call returns a fresh copy."""
    return copy.deepcopy(_kernels())


def _numerics_library(path: object) -> bool:
    """Whether a loaded BLAS is numpy's or scipy's (the ones sltcheck's float64 runs on), not one bundled in
    another wheel's ``NAME.libs`` folder (cvxpy's SCS brings a generic OpenBLAS): the record must not depend
    on which solvers a process happened to import."""
    folder = Path(str(path)).parent.name
    return not folder.endswith(".libs") or folder in ("numpy.libs", "scipy.libs")


@functools.cache
def _kernels() -> dict[str, object]:
    found: dict[str, object] = {"machine": platform.machine(), "cpu": _cpu_name()}
    try:
        # numpy's private, untyped record of its dispatch targets (what .ci/second_kernels.py reads too)
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__  # type: ignore[import-not-found]

        found["numpy_dispatch"] = [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]
    except ImportError:  # numpy < 2 (numpy.core), or a build without dispatch
        found["numpy_dispatch"] = "unknown"
    try:
        import scipy.linalg  # noqa: F401  (its OpenBLAS loaded, as in every run, so the list does not depend on when)
        import threadpoolctl

        found["openblas"] = sorted({i.get("architecture") or "?" for i in threadpoolctl.threadpool_info()
                                    if i.get("internal_api") == "openblas" and _numerics_library(i.get("filepath"))})
    except ImportError:
        found["openblas"] = "unknown (threadpoolctl not installed)"
    try:  # the build from the package's metadata: a run that never needs torch does not import it
        found["torch"] = metadata.version("torch")
    except metadata.PackageNotFoundError:
        found["torch"] = "not installed"
    # ATen takes the widest kernels this CPU has unless told otherwise (read here without importing torch,
    # so the record does not depend on whether a search has imported it yet)
    found["aten_cpu_capability"] = os.environ.get("ATEN_CPU_CAPABILITY", "the CPU's widest")
    return found


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
