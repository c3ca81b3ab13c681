"""RoiAlign: the vision op that pools regions of interest of a feature map.

- RoiAlign averages (or takes the max of) bilinear samples of ``X`` on a grid over each region of
  interest, all rois and channels at once, one pass per sampling point ``(iy, ix)``; a roi whose
  adaptive grid (``sampling_ratio`` 0: ``ceil(roi_size / out_size)`` per dim) is smaller than the
  largest one masks the points beyond its own grid. The max mode is onnx's (and onnxruntime's):
  the max over points of the max of the four weighted taps. A batch index outside X's batch
  is refused, a negative one too (onnx's reference counts it from the end, numpy's way); so are
  a NaN or infinite roi coordinate (as onnxruntime refuses it) or ``spatial_scale``, an empty
  spatial axis of X where there is an output to sample for (onnxruntime reads memory outside
  X), and more than `MAX_SAMPLES_PER_BIN` sampling points per bin: the largest grid, which the
  kernel samples for every roi, one pass a point (a ``spatial_scale`` of 1e10 asked for 4e20).
  An ``output_height`` or ``output_width`` of 0 gives an empty output, as onnxruntime does.

Costs (``S`` sampling points per output element: ``sampling_ratio²``, or for an adaptive ratio
the mean ``ceil(roi_h / out_h)·ceil(roi_w / out_w)`` of the rois when their value is known, and
otherwise ``ceil(H / out_h)·ceil(W / out_w)``, a roi as large as the feature map):

- RoiAlign, ``reduction``: ``S × (4 taps × 2 flops + 1)`` flops per output element.

MaxUnpool and Col2Im, the ops that put values back into an image, live in `unpool.py`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetsim.errors import OpError
from hetsim.ir import Op
from hetsim.kernels.checks import attr, float_attr, int_attr, op_error
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register

__all__ = ["MAX_SAMPLES_PER_BIN", "roi_align"]

MAX_SAMPLES_PER_BIN = 1 << 16
"""The most sampling points (a 256 x 256 grid) in one output bin that RoiAlign takes: each is
one pass over every roi's bins; a real model's adaptive grid is under 100 x 100."""

_ROI_MODES = ("avg", "max")
_TRANSFORMS = ("half_pixel", "output_half_pixel")


# --- RoiAlign ---------------------------------------------------------------------------------


def _roi_attrs(op: Op, opset: int) -> tuple[int, int, int, float, str, bool]:
    """``(out_h, out_w, sampling_ratio, spatial_scale, mode, is_half_pixel)``, checked."""
    out_h, out_w = int_attr(op, "output_height", 1), int_attr(op, "output_width", 1)
    if out_h < 0 or out_w < 0:  # 0 gives an empty output, as onnxruntime does
        raise op_error(op, "expected output_height and output_width >= 0", f"{out_h}, {out_w}")
    ratio = int_attr(op, "sampling_ratio", 0)
    if ratio < 0:
        raise op_error(op, "expected sampling_ratio >= 0", ratio)
    if ratio * ratio > MAX_SAMPLES_PER_BIN:
        raise _too_many_samples(op, ratio * ratio, f"sampling_ratio {ratio}")
    mode = _text(attr(op, "mode", "avg"))
    if mode not in _ROI_MODES:
        raise op_error(op, f"expected mode in {list(_ROI_MODES)}", repr(mode))
    default = "half_pixel" if opset >= 16 else "output_half_pixel"
    transform = _text(attr(op, "coordinate_transformation_mode", default))
    if transform not in _TRANSFORMS:
        expected = f"expected coordinate_transformation_mode in {list(_TRANSFORMS)}"
        raise op_error(op, expected, repr(transform))
    scale = float_attr(op, "spatial_scale", 1.0)
    if not math.isfinite(scale):
        raise op_error(op, "expected a finite spatial_scale", scale)
    return out_h, out_w, ratio, scale, mode, transform == "half_pixel"


def _too_many_samples(op: Op, points: float, why: str) -> OpError:
    expected = f"expected at most {MAX_SAMPLES_PER_BIN} sampling points per bin"
    return op_error(op, expected, f"{points:.0f} ({why})")


def _check_rois(
    op: Op, rois: np.ndarray, out_h: int, out_w: int, ratio: int, scale: float, is_half: bool
) -> None:
    """Refuse a NaN or infinite roi coordinate, and an adaptive grid (``sampling_ratio`` 0)
    of more than `MAX_SAMPLES_PER_BIN` points: the largest roi height's by the largest width's,
    as the kernel samples them (counted before any cast to int64 could wrap)."""
    is_finite = np.isfinite(rois).all(axis=1)
    if not is_finite.all():
        roi = int(np.argmin(is_finite))
        raise op_error(op, "expected finite rois", f"{rois[roi].tolist()} for roi {roi}")
    if ratio or not len(rois) * out_h * out_w:
        return
    # float32 rois times a large scale overflow to inf (or inf - inf, NaN): refused here
    with np.errstate(over="ignore", invalid="ignore"):
        grid_h, grid_w = _adaptive_grid(rois, out_h, out_w, scale, is_half)
    rows, cols = float(np.maximum(grid_h.max(), 0)), float(np.maximum(grid_w.max(), 0))
    if not rows * cols <= MAX_SAMPLES_PER_BIN:
        grid = f"a {rows:.0f} by {cols:.0f} grid"
        if not math.isfinite(rows * cols):
            grid = f"roi sizes times spatial_scale overflow {rois.dtype}"
        raise _too_many_samples(op, rows * cols, grid)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _roi_grids(
    rois: np.ndarray, out_h: int, out_w: int, ratio: int, scale: float, is_half_pixel: bool
) -> tuple[np.ndarray, ...]:
    """Per roi: start_h, start_w, bin_h, bin_w (float64) and grid_h, grid_w (int64)."""
    start_w, start_h, roi_w, roi_h = _boxes(rois, np.float64, scale, is_half_pixel)
    if ratio > 0:
        grid_h = np.full(len(rois), ratio, np.int64)
        grid_w = grid_h
    else:
        rows, cols = _adaptive_grid(rois, out_h, out_w, scale, is_half_pixel)
        grid_h, grid_w = rows.astype(np.int64), cols.astype(np.int64)
    return start_h, start_w, roi_h / out_h, roi_w / out_w, grid_h, grid_w


def _adaptive_grid(
    rois: np.ndarray, out_h: int, out_w: int, scale: float, is_half_pixel: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Per roi, the sampling points of a bin along each dim, ``ceil(roi size / out size)``,
    still floats. Counted in the rois' own float type, as ONNX's reference and onnxruntime
    count: a float32 width of exactly 1.0 is 1.0000000149 in float64, which took 2 samples."""
    typed = rois.dtype.type if rois.dtype.kind == "f" else np.float64
    _, _, width, height = _boxes(rois, typed, scale, is_half_pixel)
    return np.ceil(height / typed(out_h)), np.ceil(width / typed(out_w))


def _boxes(
    rois: np.ndarray, typed: type[np.floating[Any]], scale: float, is_half_pixel: bool
) -> tuple[np.ndarray, ...]:
    """Per roi, in `typed` arithmetic: start_w, start_h, width, height, scaled and shifted by
    the half pixel (or, without it, each side at least 1)."""
    offset = 0.5 if is_half_pixel else 0.0
    start_w, start_h, end_w, end_h = (rois.astype(typed) * typed(scale) - typed(offset)).T
    width, height = end_w - start_w, end_h - start_h
    if not is_half_pixel:
        width, height = np.maximum(width, typed(1)), np.maximum(height, typed(1))
    return start_w, start_h, width, height


def _taps(coord: np.ndarray, size: int) -> tuple[np.ndarray, ...]:
    """Bilinear taps along one dim: low index, high index, low weight, high weight, validity."""
    is_valid = (coord >= -1.0) & (coord <= size)
    # a point outside is masked out: it reads index 0, where one far out had wrapped int64
    coord = np.where(is_valid, np.maximum(coord, 0.0), 0.0)
    low = coord.astype(np.int64)
    at_edge = low >= size - 1
    low = np.where(at_edge, size - 1, low)
    high = np.where(at_edge, size - 1, low + 1)
    frac = np.where(at_edge, 0.0, coord - low)
    return low, high, 1.0 - frac, frac, is_valid


def roi_align(
    x: np.ndarray,
    rois: np.ndarray,
    batch_indices: np.ndarray,
    out_h: int,
    out_w: int,
    ratio: int = 0,
    scale: float = 1.0,
    mode: str = "avg",
    is_half_pixel: bool = True,
) -> np.ndarray:
    """RoiAlign of `x` ``(N, C, H, W)`` over `rois` ``(R, 4)`` as ``(x1, y1, x2, y2)``.

    Examples
    --------
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> roi_align(x, np.array([[0.0, 0.0, 4.0, 4.0]]), np.array([0]), 1, 1, 2).tolist()
    [[[[7.5]]]]
    """
    height, width = x.shape[2:]
    # no output, nothing to sample: an empty spatial axis had nothing to index, an output size
    # of 0 no bins to divide a roi in
    if not len(rois) * x.shape[1] * out_h * out_w:
        return np.zeros((len(rois), x.shape[1], out_h, out_w), x.dtype)
    start_h, start_w, bin_h, bin_w, grid_h, grid_w = _roi_grids(
        rois, out_h, out_w, ratio, scale, is_half_pixel
    )
    batch = batch_indices.astype(np.int64)[:, None, None]
    ph, pw = np.arange(out_h), np.arange(out_w)
    step_h, step_w = bin_h / np.maximum(grid_h, 1), bin_w / np.maximum(grid_w, 1)
    is_avg = mode == "avg"
    shape = (len(rois), out_h, out_w, x.shape[1])  # channels last while gathering
    acc = np.zeros(shape, x.dtype) if is_avg else np.full(shape, -np.inf, x.dtype)
    for iy in range(int(grid_h.max(initial=0))):
        y = start_h[:, None] + ph * bin_h[:, None] + (iy + 0.5) * step_h[:, None]
        y_low, y_high, wy_low, wy_high, y_valid = _taps(y, height)
        y_valid &= (iy < grid_h)[:, None]
        for ix in range(int(grid_w.max(initial=0))):
            xs = start_w[:, None] + pw * bin_w[:, None] + (ix + 0.5) * step_w[:, None]
            x_low, x_high, wx_low, wx_high, x_valid = _taps(xs, width)
            x_valid &= (ix < grid_w)[:, None]
            is_used = (y_valid[:, :, None] & x_valid[:, None, :])[..., None]
            taps = []
            for rows, wy in ((y_low, wy_low), (y_high, wy_high)):
                for cols, wx in ((x_low, wx_low), (x_high, wx_high)):
                    weight = (wy[:, :, None] * wx[:, None, :]).astype(x.dtype)[..., None]
                    taps.append(weight * x[batch, :, rows[:, :, None], cols[:, None, :]])
            if is_avg:
                acc += np.where(is_used, taps[0] + taps[1] + taps[2] + taps[3], 0)
            else:
                best = np.maximum(np.maximum(taps[0], taps[1]), np.maximum(taps[2], taps[3]))
                # a point outside the map has zero weights: it samples 0, as onnx's does
                in_grid = ((iy < grid_h) & (ix < grid_w))[:, None, None, None]
                sample = np.where(in_grid, np.where(is_used, best, 0), -np.inf)
                np.maximum(acc, sample.astype(x.dtype, copy=False), out=acc)
    if is_avg:
        acc /= np.maximum(grid_h * grid_w, 1).astype(x.dtype)[:, None, None, None]
    else:
        acc[np.isneginf(acc)] = 0
    return np.ascontiguousarray(acc.transpose(0, 3, 1, 2))


def _compile_roi_align(op: Op, opset: int) -> Kernel:
    out_h, out_w, ratio, scale, mode, is_half_pixel = _roi_attrs(op, opset)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, rois, batch_indices = inputs[:3]
        assert x is not None
        assert rois is not None
        assert batch_indices is not None
        bad = (batch_indices < 0) | (batch_indices >= x.shape[0])
        if bad.any():  # a negative one had counted from the batch's end (numpy's indexing)
            roi = int(np.argmax(bad))
            raise op_error(
                op,
                f"expected batch_indices in [0, {x.shape[0]}) (X's batch)",
                f"{int(batch_indices[roi])} for roi {roi}",
            )
        _check_rois(op, rois, out_h, out_w, ratio, scale, is_half_pixel)
        y = roi_align(x, rois, batch_indices, out_h, out_w, ratio, scale, mode, is_half_pixel)
        return [y]

    return kernel


def _infer_roi_align(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    out_h, out_w, ratio, scale, _, is_half_pixel = _roi_attrs(op, opset)
    if len(inputs) != 3 or any(m is None for m in inputs):
        raise op_error(op, "expected 3 inputs (X, rois, batch_indices)", len(inputs))
    x, rois, batch_indices = inputs
    assert x is not None
    assert rois is not None
    assert batch_indices is not None
    if len(x.shape) != 4:
        raise op_error(op, "expected a rank-4 X (N, C, H, W)", f"shape {list(x.shape)}")
    if len(rois.shape) != 2 or rois.shape[1] != 4:
        raise op_error(op, "expected rois of shape (R, 4)", f"shape {list(rois.shape)}")
    if batch_indices.shape != rois.shape[:1]:
        expected = f"expected batch_indices of shape [{rois.shape[0]}]"
        raise op_error(op, expected, f"shape {list(batch_indices.shape)}")
    if 0 in x.shape[2:] and rois.shape[0] * x.shape[1]:
        axis = x.shape.index(0, 2)
        raise op_error(
            op, f"expected a non-empty spatial axis {axis} of X", f"shape {list(x.shape)}"
        )
    if rois.value is not None:
        _check_rois(op, rois.value, out_h, out_w, ratio, scale, is_half_pixel)
    return [Meta((rois.shape[0], x.shape[1], out_h, out_w), x.dtype)]


def _cost_roi_align(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """``S × (4 taps × 2 flops + 1)`` per output element (``S``: the module docstring)."""
    x, rois = inputs[0], inputs[1]
    assert x is not None
    assert rois is not None
    out_h, out_w = int_attr(op, "output_height", 1), int_attr(op, "output_width", 1)
    ratio = int_attr(op, "sampling_ratio", 0)
    if not outputs[0].size:
        points = 0.0  # no output element, no sampling point (an output size of 0 has no bins)
    elif ratio > 0:
        points = float(ratio * ratio)
    elif rois.value is not None and rois.size:
        is_half_pixel = _text(attr(op, "coordinate_transformation_mode", "half_pixel")) == (
            "half_pixel"
        )
        scale = float_attr(op, "spatial_scale", 1.0)
        *_, grid_h, grid_w = _roi_grids(rois.value, out_h, out_w, 0, scale, is_half_pixel)
        points = float(np.mean(grid_h * grid_w))
    else:
        points = float(math.ceil(x.shape[2] / out_h) * math.ceil(x.shape[3] / out_w))
    flops = outputs[0].size * points * (4 * 2 + 1)
    return Cost(flops, nbytes(inputs), nbytes(outputs), "reduction")


register(
    "RoiAlign",
    "reduction",
    compile=_compile_roi_align,
    infer=_infer_roi_align,
    cost=_cost_roi_align,
    one_type=(0, 1),
    required=3,
)
