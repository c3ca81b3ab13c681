"""Integer GEMMs computed in floating point: exact accumulation and requantization.

The quantized ops (`qlinear.py`'s QLinearConv and ConvInteger, `qmatmul.py`'s QLinearMatMul and
MatMulInteger, `qgemm.py`'s QGemm) subtract their operands' zero points and multiply the
centered operands with a float GEMM (BLAS) that gives the exact integer accumulator: in float32
when every sum has at most `EXACT_FLOAT32_TERMS` products, in float64 beyond
(`accumulator_dtype`, `centered`). The QLinear ops then requantize it (`requantize`).

Owns, too, the whole-array numpy passes these kernels make beside their GEMM (`Pass`:
`centering`, `requantizing`, and the multiplier's `MULTIPLIER_CALLS`), which the cost rules give
as `Cost.numpy_calls` and `Cost.numpy_bytes` (`with_passes`); docs/cost-model.md has the
formulas.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from hetsim.kernels.costs import Cost
from hetsim.kernels.meta import Meta

__all__ = [
    "EXACT_FLOAT32_TERMS",
    "MULTIPLIER_CALLS",
    "REQUANTIZE_PASSES",
    "Pass",
    "accumulator_dtype",
    "centered",
    "centering",
    "requantize",
    "requantizing",
    "with_passes",
]

_FLOAT32 = np.dtype("float32")
_FLOAT64 = np.dtype("float64")


def requantize(
    acc: np.ndarray,
    multiplier: Any,
    zero_point: np.ndarray | None,
    dtype: np.dtype[Any],
    bias: np.ndarray | None = None,
) -> np.ndarray:
    """``saturate(round_half_even((acc + bias) · multiplier) + zero_point)`` in `dtype`, the sum
    and the product in float64 (`bias` and `multiplier` broadcast against `acc`, `zero_point`
    against the result). Its whole-array passes: `REQUANTIZE_PASSES`, and one more for a bias.

    Examples
    --------
    >>> acc = np.array([-3.0, -1.0, 1.0, 3.0, 600.0], np.float32)
    >>> requantize(acc, np.float32(0.5), np.array(1, np.int8), np.dtype("int8")).tolist()
    [-1, 1, 1, 3, 127]
    >>> requantize(acc, 0.5, None, np.dtype("uint8"), bias=np.array(1, np.int32)).tolist()
    [0, 0, 1, 2, 255]
    """
    scale = np.asarray(multiplier, _FLOAT64)
    if bias is None:
        y: np.ndarray = np.multiply(acc, scale, dtype=_FLOAT64)
    else:
        y = np.add(acc, bias, dtype=_FLOAT64)
        np.multiply(y, scale, out=y)
    np.rint(y, out=y)
    if zero_point is not None:
        y += zero_point
    info = np.iinfo(dtype)
    np.clip(y, info.min, info.max, out=y)
    return y.astype(dtype)


REQUANTIZE_PASSES = 4
"""`requantize`'s whole-array numpy passes without a bias or a zero point: scale, round,
saturate, cast (a bias and a zero point add one each); counted in `Cost.numpy_calls`."""

EXACT_FLOAT32_TERMS = 2**24 // (255 * 255)
"""The most products of two centered 8-bit operands a float32 sum holds exactly (258): each
operand minus its zero point is at most 255 in size, so every partial sum of that many products
is an integer below 2^24, whatever order the BLAS adds them in."""


def accumulator_dtype(terms: int) -> np.dtype[Any]:
    """float32 for a GEMM whose sums have at most `EXACT_FLOAT32_TERMS` products (exact there,
    and twice float64's rate), else float64 (exact below 2^53: 2^37 products)."""
    return _FLOAT32 if terms <= EXACT_FLOAT32_TERMS else _FLOAT64


def centered(q: np.ndarray, zero_point: np.ndarray | None, dtype: np.dtype[Any]) -> np.ndarray:
    """`q` minus `zero_point` (already broadcastable), in `dtype` (one pass, two with a zero
    point: `centering`)."""
    centered = q.astype(dtype)
    if zero_point is not None:
        centered -= zero_point
    return centered


class Pass(NamedTuple):
    """One whole-array numpy pass of a kernel beside its GEMM: over `elements`, reading `read`
    and writing `written` bytes of each (its input's and its output's itemsize)."""

    elements: int
    read: int
    written: int


MULTIPLIER_CALLS = 3
"""The numpy calls that form a requantization multiplier from the (one- or per-channel-element)
scales: ``first · second / output``, and `requantize`'s cast of it to float64. Their arrays are
too small to count bytes."""

_F64 = _FLOAT64.itemsize  # bytes of the float64 the requantization computes in


def centering(operand: Meta | None, zero_point: Meta | None, acc: np.dtype[Any]) -> list[Pass]:
    """`centered`'s passes over `operand`: a cast to the accumulator dtype `acc`, and a
    subtraction in place with a zero point."""
    assert operand is not None, "operands checked present by the shape rule"
    cast = Pass(operand.size, operand.dtype.itemsize, acc.itemsize)
    return [cast] if zero_point is None else [cast, Pass(operand.size, acc.itemsize, acc.itemsize)]


def requantizing(
    output: Meta, zero_point: Meta | None, bias: Meta | None, acc: np.dtype[Any]
) -> list[Pass]:
    """`requantize`'s passes over `output` from an accumulator of dtype `acc`: the product into
    float64 (the sum with a bias, then the product in place), the rounding, the zero point's
    addition, the saturation and the cast (`REQUANTIZE_PASSES`, one more each for a bias and a
    zero point)."""
    n = output.size
    first = Pass(n, acc.itemsize, _F64)  # the product into float64, or the sum with the bias
    # in place in float64, between the first and the cast: the rounding and the saturation, the
    # product after a bias, the zero point's addition
    in_place = REQUANTIZE_PASSES - 2 + (bias is not None) + (zero_point is not None)
    return [first, *[Pass(n, _F64, _F64)] * in_place, Pass(n, _F64, output.dtype.itemsize)]


def with_passes(cost: Cost, passes: Sequence[Pass], calls: int = 0) -> Cost:
    """`cost` with `passes` counted in `Cost.numpy_calls` (one each, plus `calls` on small
    arrays) and `Cost.numpy_bytes` (what each reads and writes)."""
    moved = sum(p.elements * (p.read + p.written) for p in passes)
    return dataclasses.replace(cost, numpy_calls=len(passes) + calls, numpy_bytes=moved)
