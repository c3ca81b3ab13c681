"""Resize (opsets 10 to 19) and Upsample (7, 9): nearest, n-linear and cubic resampling.

Resampling is separable, so a resize runs as one pass per resized axis. Each pass is planned
once per input shape and parameter values (`axis_taps`): for every output position along the
axis, the input positions it reads (``taps`` of them) and their weights. Nearest takes one
position per output (one `np.take`); linear and cubic sum ``taps`` gathered slices, each scaled
by its weight column (2 taps for linear, 4 for cubic; antialias, when downscaling, stretches the
filter by ``1 / scale`` and so widens it). Positions past the edges read the edge value;
``exclude_outside`` gives them weight 0 instead and renormalizes.

What the op asks for (its `ResizeSpec`, output shape and source coordinates) lives in
`resize_spec.py`. Like it, this module follows ONNX's reference
(``onnx/reference/ops/op_resize.py``) float for float: an axis is left as is where its scale is
close to 1 and its size unchanged. Linear and cubic compute in float32 for float16 and float32
inputs and in float64 otherwise; integer outputs are rounded half to even and saturated, as the
reference casts. Before opset 11 (`LEGACY_NEAREST`), nearest rounds down when upscaling and up
when downscaling (onnxruntime's rule, and the outputs of ONNX's original Resize-10 tests).

Cost: nearest copies (``data_movement``, no flops). Linear and cubic count, per output element
and per axis whose size changes, a multiply and an add per tap: ``2 * taps``, where ``taps`` is
2 for linear and 4 for cubic, or ``2 * ceil(support * in / out)`` with antialias when
downscaling (support 1 for linear, 2 for cubic); the op class is ``elementwise``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.arrays import memoize
from hetsim.kernels.checks import attr, constant_input, flag_attr, integer_input, op_error
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register
from hetsim.kernels.resize_spec import (
    LEGACY_NEAREST,
    MODE_ALIASES,
    ResizeSpec,
    read_spec,
    resize_shape,
    source_coordinates,
)

__all__ = ["axis_taps", "cubic_kernel", "resize"]

_SUPPORT = {"linear": 1.0, "cubic": 2.0}


def _nearest_index(x: np.ndarray, rounding: str, scale: float) -> np.ndarray:
    low = np.floor(x)
    fraction = x - low
    if rounding == LEGACY_NEAREST:
        rounding = "floor" if scale >= 1 else "ceil"
    up: np.ndarray | bool = {
        "round_prefer_floor": fraction > 0.5,
        "round_prefer_ceil": fraction >= 0.5,
        "floor": False,
        "ceil": fraction > 0,
    }[rounding]
    index: np.ndarray = (low + up).astype(np.int64)
    return index


def cubic_kernel(distance: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel, in the reference's Horner forms."""
    near = ((a + 2) * distance - (a + 3)) * distance * distance + 1
    far = ((a * distance - 5 * a) * distance + 8 * a) * distance - 4 * a
    return np.where(distance <= 1, near, np.where(distance < 2, far, 0.0))


def _filter(
    spec: ResizeSpec, x: np.ndarray, in_dim: int, scale: float
) -> tuple[np.ndarray, np.ndarray]:
    """Input positions (out, taps) and weights of a linear or cubic filter centred on `x`."""
    stretch = min(scale, 1.0) if spec.antialias and scale > 0 else 1.0
    start = _first_tap(spec.mode, stretch)
    index = np.floor(x).astype(np.int64)[:, None] + np.arange(start, 2 - start)
    distance = np.abs(index - x[:, None]) * stretch
    if spec.mode == "linear":
        weights = np.maximum(1 - distance, 0.0)
    else:
        weights = cubic_kernel(distance, spec.cubic_a)
    if spec.antialias:
        weights /= weights.sum(axis=1, keepdims=True)
    if spec.exclude_outside:
        weights[(index < 0) | (index >= in_dim)] = 0.0
        total = weights.sum(axis=1, keepdims=True)
        weights /= np.where(total == 0, 1.0, total)
    return index, weights


@dataclass(frozen=True, slots=True)
class _Pass:
    """One axis of a resize: the input positions each output reads, their weights (None for
    nearest: one position, weight 1) and the outputs `extrapolated` past the roi."""

    axis: int
    index: tuple[np.ndarray, ...]
    weights: tuple[np.ndarray, ...] | None
    extrapolated: np.ndarray | None


def axis_taps(
    spec: ResizeSpec, in_dim: int, out_dim: int, scale: float, roi: tuple[Any, Any] | None
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``(index, weights, extrapolated)`` of one resized axis.

    `index` holds input positions, shape ``(out_dim,)`` for nearest and ``(out_dim, taps)``
    otherwise, clamped to the axis; `weights` is None for nearest; `extrapolated` marks the
    outputs that take ``extrapolation_value`` (tf_crop_and_resize only), else it is None.

    Examples
    --------
    >>> spec = read_spec(Op("Resize", "r", ("x", "", "s"), ("y",), {"mode": "linear"}), 13)
    >>> index, weights, _ = axis_taps(spec, 2, 4, 2.0, None)
    >>> index.tolist(), weights.tolist()
    ([[0, 0], [0, 1], [0, 1], [1, 1]], [[0.25, 0.75], [0.75, 0.25], [0.25, 0.75], [0.75, 0.25]])
    """
    x = source_coordinates(spec.transform, in_dim, out_dim, scale, roi)
    extrapolated = None
    if spec.transform == "tf_crop_and_resize":
        extrapolated = (x < 0) | (x > in_dim - 1)
    if spec.mode == "nearest":
        index, weights = _nearest_index(x, spec.nearest_mode, scale), None
    else:
        index, weights = _filter(spec, x, in_dim, scale)
    return np.clip(index, 0, in_dim - 1), weights, extrapolated


def _first_tap(mode: str, stretch: float) -> int:
    """The offset from ``floor(x)`` of a filter's first tap; it has ``2 - 2 * first`` taps."""
    return math.floor(-_SUPPORT[mode] / stretch) + 1


def _compute_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype(np.float32 if dtype in (np.float16, np.float32) else np.float64)


def _saturate(y: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """`y` cast to `dtype` as ONNX's reference casts: integers rounded, all clipped to range."""
    if y.dtype == dtype:
        return y
    if dtype.kind in "iu":
        info: Any = np.iinfo(dtype)
        y = np.round(y)
    elif dtype.kind == "f":
        info = np.finfo(dtype)
    else:
        return y.astype(dtype)
    saturated: np.ndarray = np.clip(y, info.min, info.max).astype(dtype)
    return saturated


def _roi_pairs(spec: ResizeSpec, roi: Any, axes: tuple[int, ...]) -> dict[int, tuple[Any, Any]]:
    """Axis -> (start, end) of the roi, for tf_crop_and_resize; empty for other transforms."""
    if spec.transform != "tf_crop_and_resize":
        return {}
    if roi is None:
        expected = "expected a roi with coordinate_transformation_mode 'tf_crop_and_resize'"
        raise op_error(spec.op, expected, "none")
    values = np.asarray(roi).reshape(-1)
    if len(values) != 2 * len(axes):
        expected = f"expected a roi of {2 * len(axes)} values (starts, then ends)"
        raise op_error(spec.op, expected, values.tolist())
    n = len(axes)
    return {axis: (values[i], values[n + i]) for i, axis in enumerate(axes)}


def _is_identity(scale: float, in_dim: int, out_dim: int, roi: tuple[Any, Any] | None) -> bool:
    """Whether ONNX's reference leaves the axis as is (and so may this)."""
    same = math.isclose(scale, 1.0) and in_dim == out_dim
    if roi is None:
        return same
    return same and math.isclose(float(roi[0]), 0.0) and math.isclose(float(roi[1]), 1.0)


def _plan(
    spec: ResizeSpec, shape: tuple[int, ...], dtype: np.dtype[Any], roi: Any, scales: Any,
    sizes: Any,
) -> tuple[_Pass, ...]:  # fmt: skip
    out, factors, axes = resize_shape(spec, shape, scales, sizes)
    rois = _roi_pairs(spec, roi, axes)
    compute = _compute_dtype(dtype)
    passes = []
    for axis in axes:
        pair = rois.get(axis)
        if _is_identity(factors[axis], shape[axis], out[axis], pair):
            continue
        index, weights, extrapolated = axis_taps(spec, shape[axis], out[axis], factors[axis], pair)
        column = (-1,) + (1,) * (len(shape) - axis - 1)  # broadcasts along `axis`
        columns: tuple[np.ndarray, ...] = (index,)
        scaled = None
        if weights is not None:
            columns = tuple(np.ascontiguousarray(index[:, t]) for t in range(index.shape[1]))
            scaled = tuple(w.astype(compute).reshape(column) for w in weights.T)
        outside = None
        if extrapolated is not None and extrapolated.any():
            outside = extrapolated.reshape(column)
        passes.append(_Pass(axis, columns, scaled, outside))
    return tuple(passes)


def _apply(spec: ResizeSpec, x: np.ndarray, passes: tuple[_Pass, ...]) -> np.ndarray:
    """`x` resized by `passes`, one axis after another."""
    if not passes:
        return x
    if spec.mode == "nearest":
        fill = _saturate(np.array(spec.extrapolation), x.dtype)
        y = x
        for p in passes:
            y = np.take(y, p.index[0], axis=p.axis)
            if p.extrapolated is not None:
                y = np.where(p.extrapolated, fill, y)
        return y
    y = x.astype(_compute_dtype(x.dtype), copy=False)
    for p in passes:
        assert p.weights is not None, "a filter pass has weights"
        acc = np.take(y, p.index[0], axis=p.axis)
        acc *= p.weights[0]
        for index, weights in zip(p.index[1:], p.weights[1:], strict=True):
            term = np.take(y, index, axis=p.axis)
            term *= weights
            acc += term
        if p.extrapolated is not None:
            acc = np.where(p.extrapolated, acc.dtype.type(spec.extrapolation), acc)
        y = acc
    return _saturate(y, x.dtype)


def resize(
    spec: ResizeSpec, x: np.ndarray, roi: Any = None, scales: Any = None, sizes: Any = None
) -> np.ndarray:
    """`x` resized as `spec` says, to `scales` or to `sizes` (arrays, one value per resized axis).

    Examples
    --------
    >>> spec = read_spec(Op("Resize", "r", ("x", "", "s"), ("y",), {"mode": "linear"}), 13)
    >>> resize(spec, np.array([1.0, 3.0], np.float32), scales=np.array([2.0])).tolist()
    [1.0, 1.5, 2.5, 3.0]
    """
    return _apply(spec, x, _plan(spec, x.shape, x.dtype, roi, scales, sizes))


def _compile_resize(op: Op, opset: int) -> Kernel:
    spec = read_spec(op, opset)
    plan = memoize(partial(_plan, spec))  # for speed: index and weight arrays once per shape

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: X is required"
        params = spec.parameters(inputs)
        key = (x.shape, x.dtype, *(None if p is None else (p.dtype, p.tobytes()) for p in params))
        return [_apply(spec, x, plan(key, x.shape, x.dtype, *params))]

    return kernel


def _infer_resize(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    spec = read_spec(op, opset)
    _, scales, sizes = spec.parameters(inputs)
    if isinstance(scales, Meta) and sizes is None:
        assert spec.scales_at is not None, "scales given at a position"
        scales = constant_input(op, inputs, spec.scales_at, "scales")
    if isinstance(sizes, Meta) and scales is None:
        assert spec.sizes_at is not None, "sizes given at a position"
        sizes = integer_input(op, inputs, spec.sizes_at, "sizes")
    return [Meta(resize_shape(spec, x.shape, scales, sizes)[0], x.dtype)]


def _cost_resize(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Nearest copies; linear and cubic take ``2 * taps`` flops per output element and resized
    axis (see the module docstring)."""
    mode = attr(op, "mode", "nearest")
    mode = MODE_ALIASES.get(mode, mode)
    if mode not in _SUPPORT:
        return Cost(0.0, nbytes(inputs), nbytes(outputs), "data_movement")
    x, y = inputs[0], outputs[0]
    assert x is not None, f"{op!r}: X is required"
    antialias = flag_attr(op, "antialias", 0)
    taps = 0
    for in_dim, out_dim in zip(x.shape, y.shape, strict=True):
        if in_dim != out_dim and out_dim > 0:
            stretch = min(out_dim / in_dim, 1.0) if antialias else 1.0
            taps += 2 - 2 * _first_tap(mode, stretch)
    return Cost(float(2 * taps * y.size), nbytes(inputs), nbytes(outputs), "elementwise")


# Upsample's scales became an input at 9; Resize's roi and scales, required at 10 and 11, are
# optional from 13 on, and left to its spec before that
for _op_type, _required in (("Resize", 1), ("Upsample", {1: 1, 9: 2})):
    register(
        _op_type,
        "data_movement",  # nearest's; linear and cubic cost as elementwise
        compile=_compile_resize,
        infer=_infer_resize,
        cost=_cost_resize,
        required=_required,
    )
