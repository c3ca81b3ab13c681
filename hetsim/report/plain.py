"""Conversion of run data to plain JSON values (no numpy types, no tuples, no mapping proxies).

Owns the one rule every JSON output of `hetsim.report` follows; `Result.to_dict` and the Chrome
trace both use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np

__all__ = ["to_plain"]

_SCALARS = frozenset({type(None), bool, int, float, str})

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]


def to_plain(value: Any) -> JsonValue:
    """`value` as nested dicts, lists, str, int, float, bool and None, ready for `json.dumps`.

    Numpy scalars become Python scalars and arrays become nested lists; mapping keys become
    strings; anything else becomes its `str`.

    Examples
    --------
    >>> to_plain({"bytes": np.int64(4096), "shape": (1, 3), "dtype": np.dtype("float32")})
    {'bytes': 4096, 'shape': [1, 3], 'dtype': 'float32'}
    >>> to_plain(np.arange(3, dtype=np.float32))
    [0.0, 1.0, 2.0]
    """
    if type(value) in _SCALARS:  # exact types first: one set lookup for the common case
        return cast(JsonValue, value)
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.generic):
        return to_plain(value.item())
    if isinstance(value, np.ndarray):
        return to_plain(value.tolist())
    if isinstance(value, dict | Mapping):
        return {str(key): to_plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [to_plain(item) for item in items]
    return str(value)
