"""Quantization ops: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (QDQ models).

A scale and its zero point set the granularity: one element (shape ``()`` or ``(1,)``, as
onnxruntime reads it) is per-tensor; a 1-D scale of x's ``axis`` length (default 1) is
per-axis; from opset 21, a scale of x's rank with x's shape except ``ceil(D / block_size)``
along ``axis`` is blocked, each element repeated over its block (`np.repeat`, the last block
short). The zero point has the scale's shape; when it is omitted it is 0 and QuantizeLinear's
output is uint8, or the ``output_dtype`` attribute's (opset 21). The quantized dtypes are
int8, uint8, int16 and uint16 (DequantizeLinear also reads int32); the frontend refuses the
int4 and float8 ones, so ``saturate`` (float8 only) is ignored.

QuantizeLinear is ``clip(rint(x / scale) + zero_point)`` to the quantized dtype's range,
rounding half to even; the sum is clipped as a float, so an out-of-range value (or a division
by a zero scale) saturates where onnx's reference, which casts to int32 first, wraps, and a
NaN gives the dtype's minimum, as onnxruntime gives it (the spec leaves it open); the
division is in numpy's dtype of x and the scale, or opset 23's ``precision``.
DequantizeLinear is ``(float32(x) - zero_point) * scale``, in the scale's dtype or its
``output_dtype`` (opset 23); an int32 x's subtraction is done in int64 first, exact where
float32 is not (past 2**24). DynamicQuantizeLinear computes its uint8 scale and zero point from
x's range inside the kernel, with ONNX's formula step for step; the shape rule gives them shape
``()``. Each is a few numpy expressions over whole arrays; attributes are read once, when the
op compiles, and the shape rules check what the kernels trust.

Cost (op class ``elementwise``; bytes read are the inputs', bytes written the outputs'):
QuantizeLinear 4 flops per element of x (divide, round, add, clip); DequantizeLinear 2
(subtract, multiply); DynamicQuantizeLinear 6 (a min and a max pass, then quantize's 4), and it
reads x twice, once per pass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import dtype_of, int_attr, normalize_axis, op_error
from hetsim.kernels.costs import Cost, elementwise_cost, nbytes
from hetsim.kernels.integer import centered
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register

__all__ = ["QUANTIZED_DTYPES", "article", "either_of", "is_per_tensor", "spread"]

QUANTIZED_DTYPES = tuple(np.dtype(name) for name in ("int8", "uint8", "int16", "uint16"))
"""The dtypes QuantizeLinear gives and DequantizeLinear reads (it also reads int32)."""

_DEQUANTIZED_DTYPES = (*QUANTIZED_DTYPES, np.dtype("int32"))
_FLOAT_DTYPES = (np.dtype("float32"), np.dtype("float16"))
_UINT8 = np.dtype("uint8")
_FLOAT32 = np.dtype("float32")
_INT32 = np.dtype(np.int32)


def either_of(dtypes: Sequence[np.dtype[Any]]) -> str:
    """``int8, uint8 or int16``."""
    names = [d.name for d in dtypes]
    return f"{', '.join(names[:-1])} or {names[-1]}"


def article(name: str) -> str:
    """``a y_scale``, ``an x_scale``, ``an A``: `name` with the article a message reads it with."""
    return f"{'an' if name[0].lower() in 'aeiox' else 'a'} {name}"


def _dtype_attr(op: Op, name: str, allowed: Sequence[np.dtype[Any]]) -> np.dtype[Any] | None:
    """The dtype attribute `name` (an ONNX code; 0 or absent: unset), one of `allowed`."""
    code = int_attr(op, name, 0)
    if code == 0:
        return None
    dtype = dtype_of(op, code)
    if dtype not in allowed:
        raise op_error(op, f"expected {article(name)} of {either_of(allowed)}", dtype.name)
    return dtype


def _block_size(op: Op) -> int:
    block_size = int_attr(op, "block_size", 0)
    if block_size < 0:
        raise op_error(op, "expected a non-negative block_size", block_size)
    return block_size


def is_per_tensor(shape: tuple[int, ...]) -> bool:
    return shape in ((), (1,))


def spread(value: np.ndarray, shape: tuple[int, ...], axis: int, block_size: int) -> np.ndarray:
    """A scale or zero point, reshaped or repeated so that it broadcasts against x's `shape`."""
    if is_per_tensor(value.shape):
        return value.reshape(())
    axis %= len(shape)
    if not block_size:
        return value.reshape([-1 if d == axis else 1 for d in range(len(shape))])
    # each of the k blocks repeated block_size times, the last only to x's size along axis
    starts = block_size * np.arange(value.shape[axis])
    return np.repeat(value, np.minimum(block_size, shape[axis] - starts), axis=axis)


def _check_granularity(
    op: Op, x: Meta, scale: Meta, zero_point: Meta | None, prefix: str, block_size: int
) -> None:
    """Raise unless `scale` and `zero_point` are per-tensor, per-axis or blocked for `x`."""
    scale_name, zero_name = f"{prefix}_scale", f"{prefix}_zero_point"
    if is_per_tensor(scale.shape):
        if block_size:  # blocked quantization takes a scale of x's rank (onnxruntime's rule)
            expected = f"expected block_size 0 with a one-element {scale_name} (per-tensor)"
            raise op_error(op, expected, block_size)
        if zero_point is not None and not is_per_tensor(zero_point.shape):
            expected = f"expected a one-element {zero_name}, as {scale_name} is"
            raise op_error(op, expected, f"shape {list(zero_point.shape)}")
        return
    if zero_point is not None and zero_point.shape != scale.shape:
        expected = f"expected {article(zero_name)} of {scale_name}'s shape {list(scale.shape)}"
        raise op_error(op, expected, list(zero_point.shape))
    axis = normalize_axis(op, int_attr(op, "axis", 1), len(x.shape))
    if not block_size:
        if len(scale.shape) != 1:
            expected = f"expected a scalar or 1-D {scale_name} (no block_size)"
            raise op_error(op, expected, f"shape {list(scale.shape)}")
        if scale.shape[0] != x.shape[axis]:
            expected = (
                f"expected {article(scale_name)} of {x.shape[axis]} elements (x's axis {axis})"
            )
            raise op_error(op, expected, scale.shape[0])
        return
    blocks = -(-x.shape[axis] // block_size)
    want = [blocks if d == axis else n for d, n in enumerate(x.shape)]
    if list(scale.shape) != want:
        expected = (
            f"expected {article(scale_name)} of shape {want} (x's {list(x.shape)} in blocks of "
            f"{block_size} along axis {axis})"
        )
        raise op_error(op, expected, list(scale.shape))


def _inputs(op: Op, inputs: Sequence[Meta | None]) -> tuple[Meta, Meta, Meta | None]:
    """x, the scale and the zero point (None when omitted) of a (De)QuantizeLinear."""
    x, scale, zero_point = (*inputs, None, None)[:3]
    if x is None or scale is None:
        raise op_error(op, "expected inputs x and a scale", "no x" if x is None else "no scale")
    return x, scale, zero_point


def _compile_quantize(op: Op, opset: int) -> Kernel:
    axis = int_attr(op, "axis", 1)
    block_size = _block_size(op)
    default = _dtype_attr(op, "output_dtype", QUANTIZED_DTYPES) or _UINT8
    precision = _dtype_attr(op, "precision", _FLOAT_DTYPES)
    ranges = {d: (np.iinfo(d).min, np.iinfo(d).max) for d in QUANTIZED_DTYPES}

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, scale, zero_point = (*inputs, None)[:3]
        assert x is not None, f"{op!r}: input x is required"
        assert scale is not None, f"{op!r}: input scale is required"
        if precision is not None:
            x, scale = x.astype(precision), scale.astype(precision)
        with np.errstate(divide="ignore", invalid="ignore"):  # a zero scale: ±inf, NaN (below)
            y = np.rint(x / spread(scale, x.shape, axis, block_size))
        # float16 cannot hold uint16's 65535: widen before the add and clip (exact)
        y = y.astype(np.result_type(y, np.float32), copy=False)
        dtype = default
        if zero_point is not None:
            dtype = zero_point.dtype
            y = y + spread(zero_point, x.shape, axis, block_size)
        low, high = ranges[dtype]
        # saturate; NaN to the dtype's minimum, as onnxruntime gives it (fmax drops a NaN)
        return [np.fmin(np.fmax(y, low), high).astype(dtype)]

    return kernel


def _infer_quantize(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, scale, zero_point = _inputs(op, inputs)
    output_dtype = _dtype_attr(op, "output_dtype", QUANTIZED_DTYPES)
    dtype = output_dtype or _UINT8
    if zero_point is not None:
        dtype = zero_point.dtype
        if dtype not in QUANTIZED_DTYPES:
            raise op_error(op, f"expected a y_zero_point of {either_of(QUANTIZED_DTYPES)}", dtype)
        if output_dtype not in (None, dtype):
            expected = f"expected an output_dtype of y_zero_point's dtype {dtype}"
            raise op_error(op, expected, output_dtype)
    _check_granularity(op, x, scale, zero_point, "y", _block_size(op))
    return [Meta(x.shape, dtype)]


_QUANTIZE_COST = elementwise_cost("elementwise", 4)
_DEQUANTIZE_COST = elementwise_cost("elementwise", 2)

QUANTIZE_CALLS = 4
"""QuantizeLinear's numpy calls after its division: round, two to saturate (NaN-aware), cast; a
zero point adds one, and so does opset 23's ``precision`` (x cast first)."""


def _cost_quantize(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """4 flops per element; its flops already count the passes' work, so only the further
    calls (`QUANTIZE_CALLS`) go to `Cost.numpy_calls`."""
    _, _, zero_point = _inputs(op, inputs)
    precision = _dtype_attr(op, "precision", _FLOAT_DTYPES)
    calls = QUANTIZE_CALLS + (zero_point is not None) + (precision is not None)
    return dataclasses.replace(_QUANTIZE_COST(op, inputs, outputs), numpy_calls=calls)


register(
    "QuantizeLinear",
    "elementwise",
    compile=_compile_quantize,
    infer=_infer_quantize,
    cost=_cost_quantize,
    # x and y_scale are one T1 in opsets 19 to 22 only; a group of one checks nothing
    one_type={1: (1,), 19: (0, 1), 23: (1,)},
    required=2,
)


def _compile_dequantize(op: Op, opset: int) -> Kernel:
    axis = int_attr(op, "axis", 1)
    block_size = _block_size(op)
    output_dtype = _dtype_attr(op, "output_dtype", _FLOAT_DTYPES)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, scale, zero_point = (*inputs, None)[:3]
        assert x is not None, f"{op!r}: input x is required"
        assert scale is not None, f"{op!r}: input scale is required"
        # an int32's (x - zero point) in integers, as the spec writes it and onnxruntime computes
        # it (in float32 first, onnx's reference's way, one past 2**24 lost its last bits); a
        # narrower x is exact in float32 either way, and stays onnx's reference's step for step
        shift = None if zero_point is None else spread(zero_point, x.shape, axis, block_size)
        if shift is not None and x.dtype == _INT32:
            y = centered(x, shift, np.dtype(np.int64)).astype(_FLOAT32)
        else:
            y = centered(x, shift, _FLOAT32)
        y = y * spread(scale, x.shape, axis, block_size)
        return [y.astype(output_dtype or scale.dtype, copy=False)]

    return kernel


def _infer_dequantize(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, scale, zero_point = _inputs(op, inputs)
    if x.dtype not in _DEQUANTIZED_DTYPES:
        raise op_error(op, f"expected an x of {either_of(_DEQUANTIZED_DTYPES)}", x.dtype)
    if scale.dtype not in _FLOAT_DTYPES:
        raise op_error(op, f"expected an x_scale of {either_of(_FLOAT_DTYPES)}", scale.dtype)
    _check_granularity(op, x, scale, zero_point, "x", _block_size(op))
    dtype = _dtype_attr(op, "output_dtype", _FLOAT_DTYPES) or scale.dtype
    return [Meta(x.shape, dtype)]


def _cost_dequantize(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """2 flops per element; the numpy calls after the cast to float32: the multiplication, the
    subtraction of a zero point (an int32 x's in int64: a cast more), and a cast to an output
    dtype other than float32."""
    x, _, zero_point = _inputs(op, inputs)
    wide = zero_point is not None and x.dtype == _INT32
    calls = 1 + (zero_point is not None) + wide + (outputs[0].dtype != _FLOAT32)
    return dataclasses.replace(_DEQUANTIZE_COST(op, inputs, outputs), numpy_calls=calls)


register(
    "DequantizeLinear",
    "elementwise",
    compile=_compile_dequantize,
    infer=_infer_dequantize,
    cost=_cost_dequantize,
    one_type=(0, 2),
    required=2,
)


def dynamic_quantize(x: np.ndarray) -> list[np.ndarray]:
    """DynamicQuantizeLinear: x as uint8, with the float32 scale and uint8 zero point of its
    range (widened to hold 0), by ONNX's formula in float32, rounding half to even.

    Examples
    --------
    >>> y, scale, zero_point = dynamic_quantize(np.array([-1.0, 0.0, 2.0, 3.0], np.float32))
    >>> y.tolist(), round(float(scale), 6), int(zero_point)
    ([0, 64, 191, 255], 0.015686, 64)
    >>> [v.tolist() for v in dynamic_quantize(np.zeros((2, 0), np.float32))]
    [[[], []], 0.003921568859368563, 0]
    """
    # an empty x has the range [0, 0] (np.max of it raised); a range of one value gives onnx's
    # reference scale, 1 / 255 (onnxruntime's is 1: the spec leaves it undefined)
    high = np.float32(np.maximum(0, np.max(x))) if x.size else np.float32(0)
    low = np.float32(np.minimum(0, np.min(x))) if x.size else np.float32(0)
    scale = np.float32(1.0 if high == low else high - low) / np.float32(255)
    zero_point = np.rint(np.clip(np.float32(0) - low / scale, 0, 255))
    y = np.clip(np.rint(x / scale) + zero_point, 0, 255)
    return [y.astype(np.uint8), np.asarray(scale, x.dtype), np.asarray(zero_point, np.uint8)]


def _compile_dynamic_quantize(op: Op, opset: int) -> Kernel:
    return lambda inputs: dynamic_quantize(inputs[0])


def _infer_dynamic_quantize(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0] if inputs else None
    if x is None:
        raise op_error(op, "expected an input x", "none")
    if x.dtype != _FLOAT32:
        raise op_error(op, "expected an x of float32", x.dtype)
    return [Meta(x.shape, _UINT8), Meta((), _FLOAT32), Meta((), _UINT8)]


def _dynamic_quantize_cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """A min and a max pass over x, then quantize's 4 flops; x is read by both passes."""
    x = inputs[0]
    assert x is not None, f"{op!r}: input missing"
    return Cost(6.0 * x.size, 2 * x.nbytes, nbytes(outputs), "elementwise")


register(
    "DynamicQuantizeLinear",
    "elementwise",
    compile=_compile_dynamic_quantize,
    infer=_infer_dynamic_quantize,
    cost=_dynamic_quantize_cost,
)
