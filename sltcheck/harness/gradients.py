"""Gradients of measured / bound for the worst-case search: torch autograd where a statement
provides a differentiable version, forward finite differences otherwise.

A statement opts in with ``sltcheck/statements/<name>/differentiable.py``, a float64 torch
version of its measured side and bounds written from the paper's equations (no code shared
with the numpy path, so the tests compare two independent computations). It defines (as
:mod:`sltcheck.contract` declares)

- ``project(fields) -> fields``: the projection onto the assumptions on torch tensors (the
  same map as the instance module's ``project``, differentiable almost everywhere);
- ``measured(fields) -> Tensor``: the measured side (a 0-d tensor);
- ``BOUNDS``: ``{name: bound(fields) -> Tensor}`` for the variants (and ``mutant:<name>``
  bounds, and other closed forms a caller names, e.g. a power case's ``supremum``: the search's
  ``twin``) it covers; a search with any other bound falls back to finite differences.

Generic torch pieces (spectral norm with its exact gradient, the projections onto the token ball
and the spectral unit ball) are in :mod:`sltcheck.harness.differentiable`.

``fields`` is the instance with every continuous field of the search as float64 tensors (tuple
fields as tuples of tensors) and the discrete ones as given. torch is optional (the ``search``
extra): without it, or for a statement without the module, the search uses finite differences,
and :func:`backend_name` records which one ran, so a result replays.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

import numpy as np

from sltcheck.contract import has, submodule

AUTOGRAD = "autograd"
FINITE_DIFFERENCES = "finite-differences"
CHOICES = ("auto", FINITE_DIFFERENCES)


def _torch() -> ModuleType | None:
    try:
        import torch
    except ImportError:
        return None
    return torch


def differentiable(statement: str, variant: str, gradients: str = "auto") -> ModuleType | None:
    """The statement's differentiable module if it covers ``variant`` and torch imports (else None)."""
    if gradients not in CHOICES:
        raise ValueError(f"gradients must be one of {', '.join(CHOICES)}, got {gradients!r}")
    if gradients == FINITE_DIFFERENCES:
        return None
    if not has(statement, "differentiable") or _torch() is None:
        return None
    module = submodule(statement, "differentiable")
    return module if module is not None and variant in module.BOUNDS else None


def backend_name(module: ModuleType | None) -> str:
    return AUTOGRAD if module is not None else FINITE_DIFFERENCES


def _fields(template: Mapping[str, Any], free: tuple[str, ...], leaf: Any) -> dict[str, Any]:
    """``template`` with the free fields cut from the flat tensor ``leaf`` (the search's vector
    layout: fields in ``free`` order, tuple fields part by part, each part row-major)."""
    out = dict(template)
    offset = 0
    for key in free:
        value = template[key]
        parts = [np.asarray(v, dtype=np.float64) for v in value] if isinstance(value, tuple | list) \
            else [np.asarray(value, dtype=np.float64)]
        tensors = []
        for part in parts:
            tensors.append(leaf[offset : offset + part.size].reshape(part.shape))
            offset += part.size
        out[key] = tuple(tensors) if isinstance(value, tuple | list) else tensors[0]
    return out


def value(module: ModuleType, variant: str, instance: Mapping[str, Any], free: tuple[str, ...]) -> float:
    """measured / bound at ``instance`` itself (not projected) in torch float64, without gradient."""
    torch = _torch()
    assert torch is not None
    with torch.no_grad():
        fields = _fields(instance, free, torch.tensor(_vector(instance, free), dtype=torch.float64))
        return float(module.measured(fields) / module.BOUNDS[variant](fields))


def projected(module: ModuleType, template: Mapping[str, Any], free: tuple[str, ...],
              vector: np.ndarray) -> dict[str, Any]:
    """The torch projection of ``vector`` as numpy values (to compare with the module's ``project``)."""
    torch = _torch()
    assert torch is not None
    with torch.no_grad():
        fields = module.project(_fields(template, free, torch.tensor(vector, dtype=torch.float64)))
    return {key: tuple(v.numpy() for v in value) if isinstance(value, tuple) else
            value.numpy() if isinstance(value, torch.Tensor) else value for key, value in fields.items()}


def _vector(instance: Mapping[str, Any], free: tuple[str, ...]) -> np.ndarray:
    chunks = [np.ravel(np.asarray(part, dtype=np.float64)) for key in free
              for part in (instance[key] if isinstance(instance[key], tuple | list) else [instance[key]])]
    return np.concatenate(chunks) if chunks else np.zeros(0)


def value_and_gradient(module: ModuleType, variant: str, template: Mapping[str, Any], free: tuple[str, ...],
                       vector: np.ndarray) -> tuple[float, np.ndarray]:
    """measured / bound at project(vector) and its gradient in ``vector`` by autograd (through the
    projection). A value that is not finite gives (nan, zeros); a gradient entry that is not
    finite (a norm at exactly zero) is zero."""
    torch = _torch()
    assert torch is not None
    leaf = torch.tensor(vector, dtype=torch.float64, requires_grad=True)
    fields = module.project(_fields(template, free, leaf))
    ratio = module.measured(fields) / module.BOUNDS[variant](fields)
    if not bool(torch.isfinite(ratio)):
        return float("nan"), np.zeros_like(vector)
    ratio.backward()
    grad = leaf.grad.numpy() if leaf.grad is not None else np.zeros_like(vector)
    return ratio.item(), np.nan_to_num(grad, nan=0.0, posinf=0.0, neginf=0.0)


def finite_difference_gradient(function: Any, vector: np.ndarray, step: float = 1e-7) -> np.ndarray:
    """Forward differences of ``function`` at ``vector`` (what L-BFGS-B does without a jacobian)."""
    base = function(vector)
    grad = np.zeros_like(vector)
    for k in range(vector.size):
        moved = vector.copy()
        h = step * max(1.0, abs(vector[k]))
        moved[k] += h
        grad[k] = (function(moved) - base) / h
    return grad


__all__ = ["AUTOGRAD", "CHOICES", "FINITE_DIFFERENCES", "backend_name", "differentiable",
           "finite_difference_gradient", "projected", "value", "value_and_gradient"]
