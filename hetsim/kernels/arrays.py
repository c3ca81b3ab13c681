"""Arrays that kernels keep or share: `memoize`d index arithmetic, `read_only` views, `zeros`;
and `accumulating`, the precision a kernel sums in.

Each trades a little bookkeeping for speed on the hot path (`benchmarks/kernels.py`), or keeps
an array a compiled program holds from being written by its caller. The kernels themselves live
in the op modules.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = ["SHARED_ZEROS_BYTES", "accumulating", "memoize", "owned_outputs", "read_only", "zeros"]

_MISSING = object()

_MEMO_SIZE = 64


def accumulating(x: np.ndarray) -> np.ndarray:
    """`x` in the precision a kernel sums it in: float32 for float16, as onnxruntime accumulates
    and numpy's own mean does; else `x` itself. The kernel casts its result back.

    A sum in float16 passed 65504, float16's largest, even where the result fits: the average
    of 2x2 windows of 40000 was inf.

    >>> big = np.full(4, 40000, np.float16)
    >>> float(np.add.reduce(accumulating(big)) / 4), accumulating(big).dtype
    (40000.0, dtype('float32'))
    >>> x = np.ones(2, np.float32)
    >>> accumulating(x) is x
    True
    """
    return x.astype(np.float32) if x.dtype == np.float16 else x


def memoize(compute: Callable[..., Any]) -> Callable[..., Any]:
    """``cached(key, *args)``: `compute(*args)`, remembered under `key` (shapes, parameter bytes).

    Kernels use it for index arithmetic (a Reshape's target, a Slice's index) that depends only
    on shapes and small parameter tensors, which stay the same from one run to the next.

    Examples
    --------
    >>> calls = []
    >>> double = memoize(lambda v: calls.append(v) or 2 * v)
    >>> double("k", 21), double("k", 21), calls
    (42, 42, [21])
    """
    cache: dict[Any, Any] = {}

    def cached(key: Any, *args: Any) -> Any:
        value = cache.get(key, _MISSING)
        if value is _MISSING:
            if len(cache) >= _MEMO_SIZE:
                cache.clear()
            value = cache[key] = compute(*args)
        return value

    return cached


SHARED_ZEROS_BYTES = 1 << 20
"""Largest zeros array `zeros` keeps for reuse; larger ones are made on each call."""


def read_only(value: Any) -> Any:
    """`value` as a read-only view when it is an array (its own flags untouched), else as is.

    A compiled program keeps its constants (initializers and folded results) for every later
    run: read-only, no kernel or caller can change a later run's result through one (a graph
    output that is a constant goes out as a copy: `owned_outputs`). Kernels never write into
    their inputs.

    Examples
    --------
    >>> weights = np.ones(2, np.float32)
    >>> kept = read_only(weights)
    >>> kept.flags.writeable, weights.flags.writeable, kept.tolist()
    (False, True, [1.0, 1.0])
    """
    if not isinstance(value, np.ndarray):
        return value
    view = value.view()
    view.flags.writeable = False
    return view


def owned_outputs(outputs: dict[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """`outputs` (name -> value) as arrays the caller owns: each that is read-only (a kept
    constant, a broadcast view) or shares its buffer with one of `inputs` or an earlier output
    is copied; the rest, nearly always all, are returned as they are.

    Kernels return views where numpy does (an Identity, a Reshape, a Slice), so an output could
    be the caller's own input array, or one array under two output names: an in-place write to
    one would change the other, where onnxruntime and ONNX's reference evaluator hand out
    separate arrays. One pass, no copy unless needed (the same buffer found by the array that
    owns it, then by `np.may_share_memory`'s bounds).

    Examples
    --------
    >>> x = np.arange(3.0)
    >>> out = owned_outputs({"y": x, "z": x, "w": read_only(np.ones(2))}, {"x": x})
    >>> out["y"] is x, np.shares_memory(out["y"], out["z"]), out["w"].flags.writeable
    (False, False, True)
    """
    taken: dict[int, list[np.ndarray]] = {}
    for value in inputs.values():
        if isinstance(value, np.ndarray):
            taken.setdefault(_buffer_owner(value), []).append(value)
    owned = {}
    for name, value in outputs.items():
        if isinstance(value, np.ndarray):
            others = taken.setdefault(_buffer_owner(value), [])
            if not value.flags.writeable or any(np.may_share_memory(value, o) for o in others):
                value = value.copy()
                others = taken.setdefault(_buffer_owner(value), [])
            others.append(value)
        owned[name] = value
    return owned


def _buffer_owner(value: np.ndarray) -> int:
    """The id of the object that holds `value`'s memory (itself, or the base of its views)."""
    owner: Any = value
    while isinstance(owner, np.ndarray) and owner.base is not None:
        owner = owner.base
    return id(owner)


def zeros(shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """A read-only array of zeros, shared between calls when small.

    A ufunc against an array runs vectorized where numpy's scalar operand may not: with numpy
    2.4 on the development machine, ``np.maximum(x, 0)`` took 16.5 µs against 3.7 µs for
    ``np.maximum(x, zeros(x.shape, x.dtype))`` on a (1, 272, 14, 14) float32 input
    (``benchmarks/kernels.py``); both give the same values, NaN included.

    Examples
    --------
    >>> z = zeros((2,), np.dtype("float32"))
    >>> z.tolist(), z.flags.writeable, z is zeros((2,), np.dtype("float32"))
    ([0.0, 0.0], False, True)
    """
    if math.prod(shape) * dtype.itemsize > SHARED_ZEROS_BYTES:
        return np.zeros(shape, dtype)
    return _shared_zeros(shape, dtype)


@functools.lru_cache(maxsize=32)
def _shared_zeros(shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    array = np.zeros(shape, dtype)
    array.flags.writeable = False
    return array
