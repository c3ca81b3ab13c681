"""Resize (opsets 10 to 19) and Upsample (7, 9): nearest, n-linear and cubic resampling.

Resampling is separable, so a resize runs as one pass per resized axis. Each pass is planned
once per input shape and parameter values (`axis_taps`): for every output position along the
axis, the input positions it reads (``taps`` of them) and their weights. Nearest takes one
position per output (one `np.take`); linear and cubic sum ``taps`` gathered slices, each scaled
by its weight column (2 taps for linear, 4 for cubic; antialias, when downscaling, stretches the
filter by ``1 / scale`` and so widens it). Positions past the edges read the edge value;
``exclude_outside`` gives them weight 0 instead and renormalizes.

Output sizes (`resize_shape`) and source coordinates (`source_coordinates`) follow ONNX's
reference (``onnx/reference/ops/op_resize.py``) float for float: ``floor(dim * scale)``
without the roi (as onnxruntime does), the float output width ``scale * dim`` in the coordinate
formulas, and an axis left as is where its scale is close to 1 and its size unchanged. Linear
and cubic compute in float32 for float16 and float32 inputs and in float64 otherwise; integer
outputs are rounded half to even and saturated, as the reference casts. Before opset 11 there
is no ``coordinate_transformation_mode``: coordinates are ``asymmetric``, and nearest rounds
down when upscaling and up when downscaling (onnxruntime's rule, and the outputs of ONNX's
original Resize-10 tests).

Cost: nearest copies (``data_movement``, no flops). Linear and cubic count, per output element
and per axis whose size changes, a multiply and an add per tap: ``2 * taps``, where ``taps`` is
2 for linear and 4 for cubic, or ``2 * ceil(support * in / out)`` with antialias when
downscaling (support 1 for linear, 2 for cubic); the op class is ``elementwise``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.arrays import memoize
from hetsim.kernels.checks import attr, choice, constant_input, normalize_axes, op_error
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register

__all__ = [
    "ResizeSpec",
    "axis_taps",
    "cubic_kernel",
    "read_spec",
    "resize",
    "resize_shape",
    "source_coordinates",
]

MODES = ("nearest", "linear", "cubic")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
POLICIES = ("stretch", "not_larger", "not_smaller")
LEGACY_NEAREST = "legacy"
"""The nearest rounding before opset 11: down when upscaling an axis, up when downscaling it."""

_SUPPORT = {"linear": 1.0, "cubic": 2.0}


def _crop(y: np.ndarray, in_dim: int, width: float, roi: tuple[Any, Any] | None) -> np.ndarray:
    assert roi is not None, "tf_crop_and_resize: roi checked by the plan"
    start, end = roi  # numpy scalars of the roi's dtype: the reference's arithmetic is theirs
    if width == 1:
        x: np.ndarray = np.full(len(y), (end - start) * (in_dim - 1) / 2)
    else:
        x = y * (end - start) * (in_dim - 1) / (width - 1)
    shifted: np.ndarray = x + start * (in_dim - 1)
    return shifted


Transform = Callable[[np.ndarray, int, float, float, Any], np.ndarray]
"""``transform(y, in_dim, scale, width, roi)``: output positions `y` in input coordinates;
`width` is the float output width ``scale * in_dim``, as ONNX's reference uses it."""

TRANSFORMS: dict[str, Transform] = {
    "half_pixel": lambda y, n, s, w, roi: (y + 0.5) / s - 0.5,
    "half_pixel_symmetric": lambda y, n, s, w, roi: n / 2 * (1 - len(y) / w) + (y + 0.5) / s - 0.5,
    "pytorch_half_pixel": lambda y, n, s, w, roi: (
        np.full(len(y), -0.5) if w == 1 else (y + 0.5) / s - 0.5
    ),
    "align_corners": lambda y, n, s, w, roi: np.zeros(len(y)) if w == 1 else y * (n - 1) / (w - 1),
    "asymmetric": lambda y, n, s, w, roi: y / s,
    "tf_half_pixel_for_nn": lambda y, n, s, w, roi: (y + 0.5) / s,  # opset 11 only
    "tf_crop_and_resize": lambda y, n, s, w, roi: _crop(y, n, w, roi),
}
"""``coordinate_transformation_mode`` -> its `Transform`."""


@dataclass(frozen=True, slots=True)
class ResizeSpec:
    """A Resize's or Upsample's attributes, read and checked once, and where its inputs are.

    `roi_at`, `scales_at` and `sizes_at` are input positions (None where the opset has no such
    input); `fixed_scales` holds Upsample-7's ``scales`` attribute.
    """

    op: Op
    mode: str
    transform: str = "asymmetric"
    nearest_mode: str = LEGACY_NEAREST
    cubic_a: float = -0.75
    exclude_outside: bool = False
    extrapolation: float = 0.0
    policy: str = "stretch"
    antialias: bool = False
    axes: tuple[int, ...] | None = None
    roi_at: int | None = None
    scales_at: int | None = 1
    sizes_at: int | None = None
    fixed_scales: tuple[float, ...] | None = None

    def __repr__(self) -> str:
        return f"<ResizeSpec {self.op.name} {self.mode} {self.transform}>"

    def parameters(self, inputs: Sequence[Any]) -> tuple[Any, Any, Any]:
        """``(roi, scales, sizes)`` of `inputs` (arrays or metas); None for an absent or empty
        one, as opset 11 models pass an empty ``scales`` beside ``sizes``."""

        def at(index: int | None) -> Any:
            if index is None or index >= len(inputs) or inputs[index] is None:
                return None
            return inputs[index] if inputs[index].size > 0 else None

        scales = at(self.scales_at)
        if self.fixed_scales is not None:
            scales = np.array(self.fixed_scales, np.float32)
        return at(self.roi_at), scales, at(self.sizes_at)


def read_spec(op: Op, opset: int) -> ResizeSpec:
    """The `ResizeSpec` of a Resize or Upsample `op` at `opset`, its attributes checked.

    Examples
    --------
    >>> spec = read_spec(Op("Resize", "r", ("x", "", "s"), ("y",), {"mode": "cubic"}), 13)
    >>> spec.mode, spec.transform, spec.nearest_mode, spec.scales_at
    ('cubic', 'half_pixel', 'round_prefer_floor', 2)
    >>> read_spec(Op("Resize", "r", ("x", "s"), ("y",), {"mode": "cubic"}), 10)
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: op r (Resize): expected mode 'nearest' or 'linear', got 'cubic'
    """
    if op.type == "Upsample" or opset < 11:
        mode = choice(op, "mode", attr(op, "mode", "nearest"), MODES[:2])
        if op.type == "Upsample" and opset < 9:
            fixed = tuple(float(s) for s in attr(op, "scales"))
            return ResizeSpec(op, mode, scales_at=None, fixed_scales=fixed)
        return ResizeSpec(op, mode)
    axes = attr(op, "axes", None) if opset >= 18 else None
    return ResizeSpec(
        op,
        choice(op, "mode", attr(op, "mode", "nearest"), MODES),
        choice(
            op,
            "coordinate_transformation_mode",
            attr(op, "coordinate_transformation_mode", "half_pixel"),
            tuple(TRANSFORMS),
        ),
        choice(op, "nearest_mode", attr(op, "nearest_mode", "round_prefer_floor"), NEAREST_MODES),
        float(attr(op, "cubic_coeff_a", -0.75)),
        bool(attr(op, "exclude_outside", 0)),
        float(attr(op, "extrapolation_value", 0.0)),
        choice(
            op,
            "keep_aspect_ratio_policy",
            attr(op, "keep_aspect_ratio_policy", "stretch") if opset >= 18 else "stretch",
            POLICIES,
        ),
        bool(attr(op, "antialias", 0)) if opset >= 18 else False,
        None if axes is None else tuple(int(a) for a in axes),
        roi_at=1,
        scales_at=2,
        sizes_at=3,
    )


def resize_shape(
    spec: ResizeSpec, shape: tuple[int, ...], scales: Any, sizes: Any
) -> tuple[tuple[int, ...], tuple[float, ...], tuple[int, ...]]:
    """``(output shape, scale per axis, resized axes in order)`` of an input of `shape`.

    Exactly one of `scales` and `sizes` (arrays, one value per resized axis) is given.

    Examples
    --------
    >>> spec = read_spec(Op("Resize", "r", ("x", "", "", "s"), ("y",)), 13)
    >>> resize_shape(spec, (1, 1, 4, 6), None, np.array([1, 1, 3, 3]))
    ((1, 1, 3, 3), (1.0, 1.0, 0.75, 0.5), (0, 1, 2, 3))
    """
    op, rank = spec.op, len(shape)
    axes = tuple(range(rank)) if spec.axes is None else normalize_axes(op, spec.axes, rank)
    if (scales is None) == (sizes is None):
        raise op_error(
            op, "expected one of scales and sizes", "neither" if scales is None else "both"
        )
    given, what = (scales, "scales") if sizes is None else (sizes, "sizes")
    values = np.asarray(given).reshape(-1).tolist()
    if len(values) != len(axes):
        raise op_error(op, f"expected {len(axes)} {what} (one per resized axis)", values)
    if sizes is None:
        if not all(s > 0 for s in values):
            raise op_error(op, "expected positive scales", values)
        factors = [1.0] * rank
        for axis, s in zip(axes, values, strict=True):
            factors[axis] = float(s)
        return tuple(int(d * s) for d, s in zip(shape, factors, strict=True)), tuple(factors), axes
    if not all(s >= 0 for s in values):
        raise op_error(op, "expected non-negative sizes", values)
    out = list(shape)
    for axis, s in zip(axes, values, strict=True):
        out[axis] = int(s)
    factors = [o / d for o, d in zip(out, shape, strict=True)]
    if spec.policy != "stretch":
        pick = min if spec.policy == "not_larger" else max
        scale = pick(factors[a] for a in axes)
        factors = [scale if a in axes else 1.0 for a in range(rank)]
        out = [int(scale * shape[a] + 0.5) if a in axes else shape[a] for a in range(rank)]
    return tuple(out), tuple(factors), axes


def source_coordinates(
    transform: str, in_dim: int, out_dim: int, scale: float, roi: tuple[Any, Any] | None
) -> np.ndarray:
    """Where each of `out_dim` output positions samples the input axis, in input coordinates.

    Examples
    --------
    >>> source_coordinates("half_pixel", 2, 4, 2.0, None).tolist()
    [-0.25, 0.25, 0.75, 1.25]
    >>> source_coordinates("align_corners", 2, 3, 1.5, None).tolist()
    [0.0, 0.5, 1.0]
    """
    y = np.arange(out_dim, dtype=np.float64)
    return TRANSFORMS[transform](y, in_dim, scale, scale * in_dim, roi)


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
        sizes = constant_input(op, inputs, spec.sizes_at, "sizes")
    return [Meta(resize_shape(spec, x.shape, scales, sizes)[0], x.dtype)]


def _cost_resize(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Nearest copies; linear and cubic take ``2 * taps`` flops per output element and resized
    axis (see the module docstring)."""
    mode = attr(op, "mode", "nearest")
    if mode not in _SUPPORT:
        return Cost(0.0, nbytes(inputs), nbytes(outputs), "data_movement")
    x, y = inputs[0], outputs[0]
    assert x is not None, f"{op!r}: X is required"
    antialias = bool(attr(op, "antialias", 0))
    taps = 0
    for in_dim, out_dim in zip(x.shape, y.shape, strict=True):
        if in_dim != out_dim and out_dim > 0:
            stretch = min(out_dim / in_dim, 1.0) if antialias else 1.0
            taps += 2 - 2 * _first_tap(mode, stretch)
    return Cost(float(2 * taps * y.size), nbytes(inputs), nbytes(outputs), "elementwise")


for _op_type in ("Resize", "Upsample"):
    register(
        _op_type,
        "data_movement",  # nearest's; linear and cubic cost as elementwise
        compile=_compile_resize,
        infer=_infer_resize,
        cost=_cost_resize,
    )
