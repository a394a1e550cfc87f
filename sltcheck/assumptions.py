"""Which assumption of which statement an instance violates.

Every statement of the paper rests on a few hypotheses; this module names
each one once (``ASSUMPTIONS``); which of them a statement uses is its module's own
``ASSUMPTIONS`` (see :mod:`sltcheck.contract`). :func:`violations` returns the named
assumptions an instance breaks, with the measured value, so strategies can
respect them, mutants can drop them and reports can explain a failure.

Norms are decided in mpmath at ``CHECK_DPS`` digits with no tolerance:
an instance built to sit exactly on a limit (a token on the alpha-sphere, a
weight of spectral norm exactly 1) passes only if it is on or inside it at
that precision.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from sltcheck.numerics import precision

CHECK_DPS = 40


@dataclass(frozen=True)
class Assumption:
    name: str
    text: str  # as the paper states it
    source: str  # where the paper states it


@dataclass(frozen=True)
class Violation:
    assumption: Assumption
    detail: str

    def __str__(self) -> str:
        return f"{self.assumption.name}: {self.detail} (needs {self.assumption.text}; {self.assumption.source})"


ASSUMPTIONS: dict[str, Assumption] = {
    a.name: a
    for a in (
        Assumption("alpha-large", "alpha >= max(sqrt(d1), sqrt(d2))", "Section 3.1; Theorem 9"),
        Assumption("token-norm", "||x_i|| <= alpha for every token", "Lemma 8 proof; Theorem 14 proof (beta_1)"),
        Assumption("target-spectral", "||W_Q^(j)||, ||W_K^(j)||, ||W_V^(j)||, ||W_O^(j)|| <= 1", "Section 3.1"),
        Assumption("matrix-spectral", "||W|| <= 1", "Lemma 4; Lemma 2"),
        Assumption("matrix-entries", "entries of W in [-1, 1]", "Lemma 7"),
        Assumption("fc-spectral", "||W_l|| <= 1 for every FC layer", "Theorem 10 ('|W_l| <= 1'); Lemma 13 proof"),
        Assumption("mask-rows", "||a_i||_1 >= 1: every token attends to at least one", "Section 2.2"),
        Assumption("eps-unit", "0 < eps < 1", "Lemmas 4/7, Theorems 9/10/11/14"),
        Assumption("eps-max-half", "0 <= eps_max <= 1/2", "Lemma 5"),
        Assumption("eps-max-nonneg", "eps_max >= 0", "Lemma 8"),
        Assumption("perturbation-max", "||eps||_max <= eps_max", "Lemmas 5 and 8"),
        Assumption("input-perturbation", "max_i ||x_i - x'_i|| <= eps_max", "Lemmas 12 and 13"),
        Assumption("input-norm-unit", "||x|| <= 1", "Lemma 2"),
        Assumption("blocks-two", "B >= 2", "Theorems 6 and 14"),
        Assumption("square-block", "d1 = d2 (residual connections)", "Section 3.3"),
    )
}


#: Each assumption in LaTeX, for the report (typeset as MathML by :mod:`sltcheck.report.formulas`); its
#: words stay in ``ASSUMPTIONS[name].text``.
LATEX: dict[str, str] = {
    "alpha-large": r"\alpha \ge \max\left(\sqrt{d_1}, \sqrt{d_2}\right)",
    "token-norm": r"\|x_i\| \le \alpha \text{ for every token}",
    "target-spectral": r"\|W_Q^{(j)}\|, \|W_K^{(j)}\|, \|W_V^{(j)}\|, \|W_O^{(j)}\| \le 1",
    "matrix-spectral": r"\|W\| \le 1",
    "matrix-entries": r"W_{ij} \in [-1, 1]",
    "fc-spectral": r"\|W_l\| \le 1 \text{ for every FC layer}",
    "mask-rows": r"\|a_i\|_1 \ge 1",
    "eps-unit": r"0 < \epsilon < 1",
    "eps-max-half": r"0 \le \epsilon_{\max} \le \tfrac{1}{2}",
    "eps-max-nonneg": r"\epsilon_{\max} \ge 0",
    "perturbation-max": r"\|\epsilon\|_{\max} \le \epsilon_{\max}",
    "input-perturbation": r"\max_i \|x_i - x'_i\| \le \epsilon_{\max}",
    "input-norm-unit": r"\|x\| \le 1",
    "blocks-two": r"B \ge 2",
    "square-block": r"d_1 = d_2",
}

def _mp(value: Any) -> mpmath.mpf:
    with mpmath.workdps(CHECK_DPS):
        return mpmath.mpf(value)


# Float64 prefilter: a float64 norm this far (relatively) from a limit decides
# the comparison on its own (float64 SVDs and norms of the small arrays here
# are accurate to ~1e-15 relative); only closer calls are decided in mpmath.
PREFILTER = 1e-9


def _largest_spectral(matrices: Iterable[np.ndarray]) -> tuple[mpmath.mpf, int]:
    """The largest spectral norm, exact in mpmath where it could exceed 1.

    Matrices whose float64 norm is clearly below 1 are not taken to mpmath
    (their norm is reported from float64); the others are.
    """
    matrices = [np.asarray(m) for m in matrices]
    approx = [float(precision.spectral_norm(m)) if m.dtype != object else float("inf") for m in matrices]
    norms: list[mpmath.mpf] = []
    for matrix, value in zip(matrices, approx, strict=True):
        if value < 1 - PREFILTER:
            norms.append(_mp(value))
        elif value <= 1 + PREFILTER and _at_most_one(matrix):
            norms.append(min(_mp(value), _mp(1)))
        else:
            norms.append(precision.spectral_norm(matrix, CHECK_DPS))
    index = max(range(len(norms)), key=lambda i: norms[i])
    return norms[index], index


def _at_most_one(matrix: np.ndarray) -> bool:
    """||M|| <= 1 proven in mpmath: I - M^T M (the smaller Gram) admits a Cholesky factor.

    A failure proves nothing (a norm of exactly 1 makes the Gram singular), so
    the caller then falls back to the SVD.
    """
    with mpmath.workdps(CHECK_DPS):
        A = precision.to_mp(matrix, CHECK_DPS)
        gram = A.T @ A if A.shape[1] <= A.shape[0] else A @ A.T
        try:
            mpmath.cholesky(mpmath.eye(gram.shape[0]) - mpmath.matrix(gram.tolist()))
        except ValueError:
            return False
        return True


def _token_norms(X: np.ndarray, limit: Any = None) -> np.ndarray:
    """Token norms in mpmath; with ``limit``, only tokens whose float64 norm is
    within PREFILTER of it are evaluated in mpmath (the others keep float64)."""
    X = np.asarray(X)
    if limit is not None and X.dtype != object and X.size:
        approx = np.linalg.norm(X, axis=-1)
        close = approx >= float(limit) * (1 - PREFILTER)
        out = np.array([_mp(v) for v in approx], dtype=object)
        if close.any():
            with mpmath.workdps(CHECK_DPS):
                out[close] = precision.vector_norm(precision.to_mp(X[close], CHECK_DPS), axis=-1)
        return out
    with mpmath.workdps(CHECK_DPS):
        return precision.vector_norm(precision.to_mp(X, CHECK_DPS), axis=-1)


# One checker per assumption: instance fields in, a failure detail (or None) out.
Checker = Callable[[dict[str, object]], str | None]


def _alpha_large(inst: dict[str, object]) -> str | None:
    alpha, d1 = _mp(inst["alpha"]), int(inst["d1"])  # type: ignore[call-overload]
    d2 = int(inst.get("d2", d1))  # type: ignore[call-overload]
    with mpmath.workdps(CHECK_DPS):
        need = mpmath.sqrt(max(d1, d2))
        if alpha >= need:
            return None
        return f"alpha = {mpmath.nstr(alpha, 8)} < sqrt(max(d1, d2)) = {mpmath.nstr(need, 8)}"


def _token_norm(inst: dict[str, object]) -> str | None:
    alpha = _mp(inst["alpha"])
    for key in ("X", "X_perturbed"):
        if key in inst:
            norms = _token_norms(np.asarray(inst[key]), alpha)
            worst = max(range(len(norms)), key=lambda i: norms[i])
            if norms[worst] > alpha:
                norm = mpmath.nstr(norms[worst], 8)
                return f"token {worst} of {key} has norm {norm} > alpha = {mpmath.nstr(alpha, 8)}"
    return None


def _spectral(keys: tuple[str, ...], label: str) -> Checker:
    def check(inst: dict[str, object]) -> str | None:
        for key in keys:
            if key not in inst:
                continue
            value = inst[key]
            if isinstance(value, tuple | list):
                matrices = [np.asarray(m) for m in value]
            else:
                array = np.asarray(value)
                matrices = list(array) if array.ndim == 3 else [array]
            norm, index = _largest_spectral(matrices)
            if norm > 1:
                return f"{label} {key}[{index}] has spectral norm {mpmath.nstr(norm, 10)} > 1"
        return None

    return check


def _entries(inst: dict[str, object]) -> str | None:
    W = np.asarray(inst["W"], dtype=object)
    worst = max(abs(_mp(v)) for v in W.flat)
    return None if worst <= 1 else f"W has an entry of absolute value {mpmath.nstr(worst, 10)} > 1"


def _mask_rows(inst: dict[str, object]) -> str | None:
    mask = np.asarray(inst["mask"])
    empty = np.flatnonzero(~mask.astype(bool).any(axis=-1))
    return None if empty.size == 0 else f"mask row {int(empty[0])} attends to no token"


def _interval(key: str, low: float, high: float, *, open_low: bool, open_high: bool) -> Checker:
    def check(inst: dict[str, object]) -> str | None:
        value = _mp(inst[key])
        ok_low = value > low if open_low else value >= low
        ok_high = value < high if open_high else value <= high
        return None if ok_low and ok_high else f"{key} = {mpmath.nstr(value, 10)} is outside the allowed range"

    return check


def _perturbation_max(inst: dict[str, object]) -> str | None:
    values = np.asarray(inst["perturbation"])
    worst = _mp(np.abs(values).max()) if values.dtype != object else max(abs(_mp(v)) for v in values.flat)
    return None if worst <= _mp(inst["eps_max"]) else (
        f"||eps||_max = {mpmath.nstr(worst, 10)} > eps_max = {mpmath.nstr(_mp(inst['eps_max']), 10)}"
    )


def _input_perturbation(inst: dict[str, object]) -> str | None:
    X, Xp = np.asarray(inst["X"]), np.asarray(inst["X_perturbed"])
    eps_max = _mp(inst["eps_max"])
    if X.dtype != object and Xp.dtype != object:
        approx = np.linalg.norm(X - Xp, axis=-1)
        close = approx >= float(eps_max) * (1 - PREFILTER)
        X, Xp = X[close], Xp[close]
    if X.shape[0] == 0:
        return None
    with mpmath.workdps(CHECK_DPS):
        diff = precision.to_mp(X, CHECK_DPS) - precision.to_mp(Xp, CHECK_DPS)
        worst = max(precision.vector_norm(diff, axis=-1))
    return None if worst <= _mp(inst["eps_max"]) else (
        f"max_i ||x_i - x'_i|| = {mpmath.nstr(worst, 10)} > eps_max = {mpmath.nstr(_mp(inst['eps_max']), 10)}"
    )


def _input_norm_unit(inst: dict[str, object]) -> str | None:
    norms = _token_norms(np.atleast_2d(np.asarray(inst["x"])))
    worst = max(norms)
    return None if worst <= 1 else f"||x|| = {mpmath.nstr(worst, 10)} > 1"


def _blocks_two(inst: dict[str, object]) -> str | None:
    blocks = int(inst["B"])  # type: ignore[call-overload]
    return None if blocks >= 2 else f"B = {blocks} < 2"


def _square_block(inst: dict[str, object]) -> str | None:
    d1, d2 = int(inst["d1"]), int(inst.get("d2", inst["d1"]))  # type: ignore[call-overload]
    return None if d1 == d2 else f"d1 = {d1} != d2 = {d2}"


CHECKERS: dict[str, Checker] = {
    "alpha-large": _alpha_large,
    "token-norm": _token_norm,
    "target-spectral": _spectral(("W_Q", "W_K", "W_V", "W_O"), "target weight"),
    "matrix-spectral": _spectral(("W",), "target matrix"),
    "matrix-entries": _entries,
    "fc-spectral": _spectral(("fc_layers",), "FC layer"),
    "mask-rows": _mask_rows,
    "eps-unit": _interval("eps", 0.0, 1.0, open_low=True, open_high=True),
    "eps-max-half": _interval("eps_max", 0.0, 0.5, open_low=False, open_high=False),
    "eps-max-nonneg": _interval("eps_max", 0.0, float("inf"), open_low=False, open_high=True),
    "perturbation-max": _perturbation_max,
    "input-perturbation": _input_perturbation,
    "input-norm-unit": _input_norm_unit,
    "blocks-two": _blocks_two,
    "square-block": _square_block,
}

# Instance fields each checker reads; an assumption whose fields are absent is not checked.
FIELDS: dict[str, tuple[str, ...]] = {
    "alpha-large": ("alpha", "d1"),
    "token-norm": ("alpha",),
    "target-spectral": (),
    "matrix-spectral": ("W",),
    "matrix-entries": ("W",),
    "fc-spectral": ("fc_layers",),
    "mask-rows": ("mask",),
    "eps-unit": ("eps",),
    "eps-max-half": ("eps_max",),
    "eps-max-nonneg": ("eps_max",),
    "perturbation-max": ("perturbation", "eps_max"),
    "input-perturbation": ("X", "X_perturbed", "eps_max"),
    "input-norm-unit": ("x",),
    "blocks-two": ("B",),
    "square-block": ("d1",),
}


def _assumption_names(statement: str) -> tuple[str, ...]:
    """The statement's assumptions: its module's ``ASSUMPTIONS``, the one list of them."""
    from sltcheck.registry import load

    return tuple(load(statement).ASSUMPTIONS)


def violations(statement: str, instance: dict[str, object], *, skip: Iterable[str] = ()) -> list[Violation]:
    """The assumptions of ``statement`` that ``instance`` violates.

    ``instance`` holds named fields (alpha, d1, d2, X, X_perturbed, mask, W,
    W_Q, W_K, W_V, W_O, fc_layers, eps, eps_max, perturbation, x, B); an
    assumption is checked when its fields are present. ``skip`` drops named
    assumptions (how a mutant "drops a hypothesis").
    """
    names = _assumption_names(statement)
    skipped = set(skip)
    unknown = skipped - ASSUMPTIONS.keys()
    if unknown:
        raise ValueError(f"skip must name assumptions from {sorted(ASSUMPTIONS)}, got {sorted(unknown)}")
    found = []
    for name in names:
        if name in skipped or not all(field in instance for field in FIELDS[name]):
            continue
        detail = CHECKERS[name](instance)
        if detail is not None:
            found.append(Violation(ASSUMPTIONS[name], detail))
    return found


def require(statement: str, instance: dict[str, object], *, skip: Iterable[str] = ()) -> None:
    """Raise ``ValueError`` listing every violated assumption of ``statement``."""
    found = violations(statement, instance, skip=skip)
    if found:
        raise ValueError(f"instance violates the assumptions of {statement}: " + "; ".join(map(str, found)))
