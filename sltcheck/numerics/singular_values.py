"""Enclosure of the largest singular value of a matrix (its spectral norm), through arb.

The chains of Theorems 9, 11 and 14 bound with spectral norms; python-flint's arb encloses the
eigenvalues of the Gram matrix rigorously and Weyl's bound covers the radii of its entries
(:func:`spectral_norm`; ``NotEnclosed`` without python-flint). Where arb cannot isolate the
eigenvalues (clusters split by subnormal entries, repeated values), :func:`largest_eigenvalue`
brackets the largest one another rigorous way, so an enclosure always exists.
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np

from sltcheck.numerics.enclosures import NotEnclosed, active, ends, interval_of, intervals, norm, num, sqrt

SPECTRAL_BITS = 200  # arb's working precision for the Gram matrix and its eigenvalues


def _arb_of(value: Any) -> Any:
    """An mpf (an interval's end) as an exact arb (never rounded to mpmath's working precision)."""
    from flint import arb

    raw = value._mpf_ if isinstance(value, mpmath.mpf) else mpmath.mpf(value)._mpf_  # float, int: exact
    sign, man, exp, _ = raw
    if not man:
        return arb(0)
    out = arb((int(man), int(exp)))  # mantissa and exponent: exact
    return -out if sign else out


def spectral_norm(matrix: np.ndarray) -> Any:
    """Enclosure of the largest singular value of every real matrix in ``matrix`` (an object array
    of intervals, or float64), through python-flint's arb (``NotEnclosed`` without it).

    The Gram matrix G = A^T A is enclosed entrywise in balls; its symmetrised midpoint M is an exact
    symmetric matrix whose eigenvalues arb encloses rigorously (``eig(multiple=True)``); every
    symmetric G in the balls is within rho = ||radii||_F of M in spectral norm, so (Weyl) its
    largest eigenvalue lies in [max lower - rho, max upper + rho]; sigma_max = sqrt of it. The
    largest eigenvalue of M is :func:`largest_eigenvalue`'s enclosure."""
    try:
        import flint
        from flint import arb, arb_mat
    except ImportError as error:
        raise NotEnclosed("a spectral norm needs python-flint (pip install 'sltcheck[certify]')") from error
    entries = np.asarray(matrix, dtype=object)
    if entries.size == 0:
        return num(0)
    if active().name == "exact":
        entries = intervals(entries)
        if all(x.value is not None for x in entries.flat):
            if all(x.value.r == 0 for x in entries.flat):
                return num(0)
            if min(entries.shape[-2:]) == 1 and entries.ndim == 2:
                return norm(entries.ravel())  # a vector's spectral norm is its Euclidean norm, exactly
    saved = flint.ctx.prec
    flint.ctx.prec = SPECTRAL_BITS
    try:
        rows = [[x if isinstance(x, arb) else _arb_of(ends(x)[0]).union(_arb_of(ends(x)[1])) for x in row]
                for row in entries]
        A = arb_mat(rows)
        G = A.transpose() * A if A.nrows() >= A.ncols() else A * A.transpose()
        n = G.nrows()
        mid = [[(G[i, j].mid() + G[j, i].mid()) / 2 for j in range(n)] for i in range(n)]
        radius = arb(0)
        for i in range(n):
            for j in range(n):
                r = max(G[i, j].rad(), G[j, i].rad()) + abs(mid[i][j] - G[i, j].mid())
                radius += r * r
        rho = radius.sqrt()
        top = largest_eigenvalue(arb_mat(mid))
        low = top.lower() - rho
        high = top.upper() + rho
        low_mp = _mpf_of(low.lower(), -1)
        high_mp = _mpf_of(high.upper(), 1)
    finally:
        flint.ctx.prec = saved
    low_root = sqrt(interval_of(max(low_mp, 0), max(low_mp, 0)))
    high_root = sqrt(interval_of(high_mp, high_mp))
    return interval_of(ends(low_root)[0], ends(high_root)[1])


def largest_eigenvalue(M: Any) -> Any:
    """An arb enclosing the largest eigenvalue of the exact symmetric arb_mat ``M`` (midpoints, no radii).

    First arb's eigenvalue enclosure (``eig(multiple=True)``). Where it cannot isolate the eigenvalues
    (a cluster of nearly equal ones, e.g. split by subnormal entries) it raises; then a bracket that
    always exists takes over: below, the Rayleigh quotient v^T M v / v^T v of float64's leading
    eigenvector v (a lower bound for every v != 0); above, Gershgorin's discs of V^-1 M V, with V
    float64's eigenvectors (nearly orthonormal, so V^-1 M V is nearly diagonal and the discs tight;
    a similarity keeps the eigenvalues), and where V cannot be inverted, the largest absolute row sum of M.
    """
    from flint import arb, arb_mat

    try:
        values = M.eig(multiple=True)
        return _hull(max(v.real.lower() for v in values), max(v.real.upper() for v in values))
    except ValueError:
        pass
    n = M.nrows()
    approx = np.array([[float(M[i, j].mid()) for j in range(n)] for i in range(n)])
    with np.errstate(all="ignore"):
        finite = np.isfinite(approx).all()
        _, vectors = np.linalg.eigh(np.nan_to_num(approx)) if finite else (None, np.eye(n))
    leading = arb_mat([[arb(float(x))] for x in vectors[:, -1]])
    low = ((leading.transpose() * M * leading)[0, 0] / (leading.transpose() * leading)[0, 0]).lower()
    V = arb_mat([[arb(float(x)) for x in row] for row in vectors])
    try:
        B = V.inv() * M * V
        high = max(B[i, i] + sum((abs(B[i, j]) for j in range(n) if j != i), arb(0)) for i in range(n)).upper()
    except (ValueError, ZeroDivisionError):
        high = max(sum((abs(M[i, j]) for j in range(n)), arb(0)) for i in range(n)).upper()
    return _hull(low, high)


def _hull(low: Any, high: Any) -> Any:
    """The arb ball covering [low, high] (arbs, by their ends)."""
    from flint import arb

    return arb(low.lower()).union(arb(high.upper()))


def _mpf_of(value: Any, direction: int) -> Any:
    """An arb's end as an mpf, moved outward (``direction`` -1: down, 1: up) by its radius."""
    mid, rad = value.mid(), value.rad()
    with mpmath.workprec(SPECTRAL_BITS + 20):
        m = mpmath.mpf(mid.str(100, radius=False)) if not mid.is_zero() else mpmath.mpf(0)
        r = mpmath.mpf(rad.str(10, radius=False)) if not rad.is_zero() else mpmath.mpf(0)
        slack = abs(m) * mpmath.mpf(2) ** -(SPECTRAL_BITS - 10) + r * 2
        return m - slack if direction < 0 else m + slack
