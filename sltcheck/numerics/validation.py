"""Input validation: every bad input becomes a ``ValueError`` that names the
argument, the offending value and what is allowed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_array(
    name: str,
    value: object,
    *,
    ndim: int | Sequence[int] | None = None,
    shape: Sequence[int | None] | None = None,
) -> np.ndarray:
    """Return ``value`` as an array (float64, or object for mpmath entries),
    after checking its rank, its shape and that every entry is finite."""
    array = np.asarray(value)
    if array.dtype != object:
        if not np.issubdtype(array.dtype, np.number) and array.dtype != bool:
            raise ValueError(f"{name} must be numeric, got dtype {array.dtype}")
        array = array.astype(np.float64)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if array.ndim not in allowed:
            raise ValueError(
                f"{name} must have {' or '.join(map(str, allowed))} dimensions, "
                f"got shape {array.shape}"
            )
    if shape is not None and (len(shape) != array.ndim or any(
        want is not None and want != got for want, got in zip(shape, array.shape, strict=True)
    )):
        wanted = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must have shape {wanted}, got {array.shape}")
    if array.dtype == object:
        finite = all(_is_finite_scalar(v) for v in array.flat)
    else:
        finite = bool(np.all(np.isfinite(array)))
    if not finite:
        raise ValueError(f"{name} must have finite entries only (no NaN or inf), got {_describe(value)}")
    return array


def _is_finite_scalar(value: object) -> bool:
    import mpmath

    try:
        return bool(mpmath.isfinite(value))
    except (TypeError, ValueError):
        return False


def check_attention_mask(name: str, value: object, length: int) -> np.ndarray:
    """A binary (length x length) attention mask whose every row attends to at
    least one token (the paper's assumption ||a_i||_1 >= 1, Section 2.2)."""
    array = np.asarray(value)
    if array.shape != (length, length):
        raise ValueError(f"{name} must have shape ({length}, {length}), got {array.shape}")
    return check_binary(name, array, require_nonzero_rows=True)


def check_binary(name: str, value: object, *, require_nonzero_rows: bool = False) -> np.ndarray:
    """A 0/1 (or boolean) array, returned as bool."""
    array = np.asarray(value)
    if array.dtype != bool:
        if array.dtype == object or not np.issubdtype(array.dtype, np.number):
            raise ValueError(f"{name} must be binary (0/1 or bool), got dtype {array.dtype}")
        bad = ~np.isin(array, (0, 1))
        if np.any(bad):
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                f"{name} must be binary (entries 0 or 1), got {array[where]!r} at index {where}"
            )
        array = array.astype(bool)
    if require_nonzero_rows and array.ndim >= 1:
        empty = ~array.any(axis=-1)
        if np.any(empty):
            row = tuple(int(i) for i in np.argwhere(empty)[0])
            raise ValueError(
                f"{name} row {row[0] if len(row) == 1 else row} attends to no token; every row "
                "must have at least one 1 (the paper assumes ||a_i||_1 >= 1)"
            )
    return array


def check_dps(dps: object) -> int:
    """A decimal precision for mpmath: a positive integer."""
    if isinstance(dps, bool) or not isinstance(dps, int | np.integer) or int(dps) <= 0:
        raise ValueError(f"precision (dps) must be a positive integer number of digits, got {dps!r}")
    return int(dps)


def check_positive(name: str, value: object, *, allow_zero: bool = False) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {_describe(value)}") from None
    if not np.isfinite(number) or number < 0 or (number == 0 and not allow_zero):
        allowed = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {allowed}, got {_describe(value)}")
    return number


def check_choice(name: str, value: object, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return str(value)
