"""Instances to JSON and back, exactly.

Floats are written as ``float.hex`` strings (the decimal ``repr`` rides along
for the reader), so a replayed instance is bit-for-bit the recorded one.
Arrays become ``{"shape", "dtype", "hex"|"int"}``; tuples/lists of arrays
(``fc_layers``) become ``{"list": [...]}``.
"""

from __future__ import annotations

import json

import numpy as np

from sltcheck.statement_types import Instance


def encode(value: object) -> object:
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biu":
            return {
                "shape": list(value.shape),
                "dtype": str(value.dtype),
                "int": value.ravel().tolist(),
            }
        flat = np.asarray(value, dtype=np.float64).ravel()
        return {
            "shape": list(value.shape),
            "dtype": "float64",
            "hex": [float(v).hex() for v in flat],
        }
    if isinstance(value, tuple | list):
        return {"list": [encode(v) for v in value]}
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return {"float": float(value).hex(), "repr": repr(float(value))}
    if isinstance(value, str):
        return value
    raise ValueError(f"cannot serialise instance field of type {type(value).__name__}: {value!r}")


def decode(value: object) -> object:
    if isinstance(value, dict):
        if "list" in value:
            return tuple(decode(v) for v in value["list"])
        if "float" in value:
            return float.fromhex(value["float"])
        shape = tuple(value["shape"])
        if "int" in value:
            return np.asarray(value["int"], dtype=value["dtype"]).reshape(shape)
        return np.asarray([float.fromhex(h) for h in value["hex"]], dtype=np.float64).reshape(shape)
    return value


def encode_instance(instance: Instance) -> dict[str, object]:
    return {key: encode(value) for key, value in instance.items()}


def decode_instance(data: dict[str, object]) -> Instance:
    return {key: decode(value) for key, value in data.items()}


def summary(instance: Instance) -> str:
    """A one-line description: scalars by value, arrays by shape."""
    parts = []
    for key, value in instance.items():
        if isinstance(value, np.ndarray):
            parts.append(f"{key}{list(value.shape)}")
        elif isinstance(value, tuple | list):
            parts.append(f"{key}[{len(value)} arrays]")
        else:
            parts.append(f"{key}={value!r}")
    return ", ".join(parts)


def dumps(instance: Instance) -> str:
    return json.dumps(encode_instance(instance))
