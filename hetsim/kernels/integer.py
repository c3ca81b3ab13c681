"""Integer GEMMs computed in floating point: exact accumulation and requantization.

The quantized ops (`qlinear.py`'s QLinearConv, QLinearMatMul, ConvInteger and MatMulInteger,
`qgemm.py`'s QGemm) subtract their operands' zero points and multiply the centered operands with
a float GEMM (BLAS) that gives the exact integer accumulator: in float32 when every sum has at
most `EXACT_FLOAT32_TERMS` products, in float64 beyond (`accumulator_dtype`, `centered`). The
QLinear ops then requantize it (`requantize`).

Owns, too, the count of the whole-array numpy passes these kernels make beside their GEMM
(`Passes`: `centering`, `requantizing`), which the cost rules give as `Cost.numpy_calls` and
`Cost.numpy_flops` (`with_passes`); docs/cost-model.md has the formulas.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from hetsim.kernels.costs import Cost
from hetsim.kernels.meta import Meta

__all__ = [
    "EXACT_FLOAT32_TERMS",
    "REQUANTIZE_PASSES",
    "Passes",
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


Passes = tuple[tuple[int, int], ...]
"""Whole-array numpy passes of a kernel beside its GEMM: (calls, elements each call)."""


def centering(operand: Meta | None, zero_point: Meta | None) -> tuple[int, int]:
    """`centered`'s passes over `operand`: a cast, and a subtraction with a zero point."""
    assert operand is not None, "operands checked present by the shape rule"
    return (1 if zero_point is None else 2), operand.size


def requantizing(output: Meta, zero_point: Meta | None, bias: Meta | None) -> tuple[int, int]:
    """`requantize`'s passes over `output`: `REQUANTIZE_PASSES`, one more each for a bias and a
    zero point."""
    return REQUANTIZE_PASSES + (bias is not None) + (zero_point is not None), output.size


def with_passes(cost: Cost, passes: Passes) -> Cost:
    """`cost` with `passes` counted in `Cost.numpy_calls` and `Cost.numpy_flops` (one flop per
    element per pass)."""
    calls = sum(count for count, _ in passes)
    flops = float(sum(count * elements for count, elements in passes))
    return dataclasses.replace(cost, numpy_calls=calls, numpy_flops=flops)
