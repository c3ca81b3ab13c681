"""What a Resize or Upsample asks for: its `ResizeSpec`, output shape and source coordinates.

`read_spec` reads and checks the attributes of a Resize (opsets 10 to 19) or an Upsample (1, 7,
9) once and records where its roi, scales and sizes inputs are; `resize_shape` gives the output
shape and each axis's scale from the scales or the sizes; `source_coordinates` maps output
positions to input coordinates by the ``coordinate_transformation_mode`` (`TRANSFORMS`). Both
follow ONNX's reference (``onnx/reference/ops/op_resize.py``) float for float:
``floor(dim * scale)`` without the roi (as onnxruntime does), and the float output width
``scale * dim`` in the coordinate formulas (``align_corners`` and ``tf_crop_and_resize``: onnx's
node tests expect it, where onnxruntime divides by the integer length), but for
``pytorch_half_pixel`` at an output length of 1, which samples at 0 as the spec and onnxruntime
do (the reference's -0.5 is onnx/onnx#4275). Before opset 11 there is no
``coordinate_transformation_mode``: coordinates are ``asymmetric``, and nearest rounds as
`LEGACY_NEAREST` says. Upsample-1 scales the last two axes (height, width) by its
``height_scale`` and ``width_scale``; its ``bilinear`` mode is Upsample-7's ``linear``.

How an axis is resampled at those coordinates (its taps and weights, one pass per axis), and
the ops' registration, live in `resize.py`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import (
    attr,
    check_integer_input,
    choice,
    flag_attr,
    float_attr,
    floats_attr,
    ints_attr,
    normalize_axes,
    op_error,
)

__all__ = [
    "LEGACY_NEAREST",
    "MODES",
    "MODE_ALIASES",
    "NEAREST_MODES",
    "POLICIES",
    "TRANSFORMS",
    "ResizeSpec",
    "Transform",
    "read_spec",
    "resize_shape",
    "source_coordinates",
]

MODES = ("nearest", "linear", "cubic")
MODE_ALIASES = {"bilinear": "linear"}
"""Upsample-1's names of the modes, as later versions name them."""
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
POLICIES = ("stretch", "not_larger", "not_smaller")
LEGACY_NEAREST = "legacy"
"""The nearest rounding before opset 11: down when upscaling an axis, up when downscaling it."""


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
    "pytorch_half_pixel": lambda y, n, s, w, roi: (  # the spec's 0 at an output length of 1,
        np.zeros(1) if len(y) == 1 else (y + 0.5) / s - 0.5  # onnxruntime's; the reference's -0.5
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
    input); `fixed_scales` holds Upsample-7's ``scales`` attribute (Upsample-1's
    ``height_scale`` and ``width_scale``, of axes -2 and -1).
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
    hetsim.errors.OpError: op r (Resize): expected mode 'nearest' or 'linear', got 'cubic'
    """
    if op.type == "Upsample" and opset < 7:
        mode = choice(op, "mode", attr(op, "mode", "nearest"), ("nearest", "bilinear"))
        height_width = (float_attr(op, "height_scale"), float_attr(op, "width_scale"))
        mode = MODE_ALIASES.get(mode, mode)
        return ResizeSpec(op, mode, axes=(-2, -1), scales_at=None, fixed_scales=height_width)
    if op.type == "Upsample" or opset < 11:
        mode = choice(op, "mode", attr(op, "mode", "nearest"), MODES[:2])
        if op.type == "Upsample" and opset < 9:
            fixed = floats_attr(op, "scales")
            return ResizeSpec(op, mode, scales_at=None, fixed_scales=fixed)
        return ResizeSpec(op, mode)
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
        float_attr(op, "cubic_coeff_a", -0.75),
        flag_attr(op, "exclude_outside", 0),
        float_attr(op, "extrapolation_value", 0.0),
        choice(
            op,
            "keep_aspect_ratio_policy",
            attr(op, "keep_aspect_ratio_policy", "stretch") if opset >= 18 else "stretch",
            POLICIES,
        ),
        flag_attr(op, "antialias", 0) if opset >= 18 else False,
        ints_attr(op, "axes", None) if opset >= 18 else None,
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
    if sizes is not None and spec.sizes_at is not None:
        # 1-D: onnx's shape inference and onnxruntime refuse another (a constant they flatten)
        check_integer_input(op, spec.sizes_at, "sizes", sizes, rank=1)
    given, what = (scales, "scales") if sizes is None else (sizes, "sizes")
    values = np.asarray(given).reshape(-1).tolist()
    if len(values) != len(axes):
        raise op_error(op, f"expected {len(axes)} {what} (one per resized axis)", values)
    if sizes is None:
        if not all(math.isfinite(s) for s in values):
            raise op_error(op, "expected finite scales", values)
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
        if shape[axis] == 0 and out[axis] > 0:  # nothing to sample from (it divided by 0)
            expected = f"expected a non-empty axis {axis} to resize to {out[axis]}"
            raise op_error(op, expected, "size 0")
    factors = [o / d if d else 1.0 for o, d in zip(out, shape, strict=True)]
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
