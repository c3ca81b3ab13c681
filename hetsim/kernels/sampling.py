"""GridSample (opsets 16, 20, 22) and AffineGrid (20): sampling an input at given points.

GridSample reads X ``[N, C, *spatial]`` at the points of a grid ``[N, *out, d]`` (``d`` spatial
axes; the last grid axis lists the coordinates in reverse axis order, x (width) first), each
in [-1, 1], and gives Y ``[N, C, *out]``; X's batch and channels may be empty, its spatial
axes not (nothing to sample: onnxruntime refuses it). Opset 16 takes 4-D X only and names the
modes ``bilinear``, ``nearest`` and ``bicubic``; from opset 20 X is 4-D or 5-D and the modes
are ``linear``, ``nearest`` and ``cubic``. The kernel follows ONNX's reference
(``onnx/reference/ops/op_grid_sample.py``): coordinates are unnormalized in the grid's dtype and
kept in float32; nearest rounds half to even (``np.rint``, as PyTorch does); a coordinate
outside the borders is clamped (``border``) or reflected (``reflection``) before the taps are
taken, and a tap outside X reads 0 (``zeros``), the edge (``border``) or its reflection.
Cubic uses Keys' kernel with ``a = -0.75``; integer outputs are rounded half to even and
clipped to their type's range (cubic overshoots a step). Every point's taps (1, ``2^d`` or
``4^d``) are gathered from X flattened over its spatial axes, one `np.take_along_axis` per tap.

AffineGrid makes the grid of an affine map: theta ``[N, 2, 3]`` (2-D) or ``[N, 3, 4]`` (3-D)
times the homogeneous base grid of ``size`` (``[N, C, H, W]`` or ``[N, C, D, H, W]``, whose
value the shape rule needs), giving ``[N, H, W, 2]`` or ``[N, D, H, W, 3]``.

Cost (op class ``elementwise``): GridSample takes, per output element, ``2 * taps + 10``
flops (a multiply and an add per tap, about 10 for the coordinate transform), where ``taps``
is 1 for nearest, ``2^d`` for linear and ``4^d`` for cubic. AffineGrid takes, per output
point, 2 flops per theta entry used: ``2 * d * (d + 1)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import (
    attr,
    check_integer_input,
    choice,
    flag_attr,
    integer_input,
    op_error,
    str_attr,
)
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register
from hetsim.kernels.resize import cubic_kernel

__all__ = ["affine_grid", "grid_sample"]

MODES = {16: ("bilinear", "nearest", "bicubic"), 20: ("linear", "nearest", "cubic")}
PADDING_MODES = ("zeros", "border", "reflection")
_TAPS = {"nearest": 1, "linear": 2, "bilinear": 2, "cubic": 4, "bicubic": 4}
_CUBIC_A = -0.75


def _modes(opset: int) -> tuple[str, ...]:
    return MODES[16] if opset < 20 else MODES[20]


def _read_attrs(op: Op, opset: int) -> tuple[str, str, bool]:
    """``(mode, padding_mode, align_corners)`` of a GridSample, checked; the mode in opset-20
    names (``bilinear`` read as ``linear``)."""
    modes = _modes(opset)
    mode = choice(op, "mode", attr(op, "mode", modes[0]), modes)
    padding = choice(op, "padding_mode", attr(op, "padding_mode", "zeros"), PADDING_MODES)
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    return mode, padding, flag_attr(op, "align_corners", 0)


def _reflect(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """`x` reflected by the near border until within ``[low, high]``, as the reference does.

    A range of no width (``align_corners`` on a dim of 1) reflects every point onto it: its
    taps had gone to ``high - rest``, out of the dim.

    >>> _reflect(np.array([2.0, -1.0, 0.0]), 0.0, 0.0).tolist()
    [0.0, 0.0, 0.0]
    """
    span = high - low
    if span <= 0:
        return np.full_like(x, low)
    below, above = x < low, x > high
    dx = np.where(below, low - x, np.where(above, x - high, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        turns = np.trunc(dx / span) if span > 0 else np.zeros_like(dx)
    rest = dx - turns * span
    even = turns % 2 == 0
    from_low = np.where(even, low + rest, high - rest)
    from_high = np.where(even, high - rest, low + rest)
    return np.where(below, from_low, np.where(above, from_high, x))


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    """Keys' cubic weights (Resize's kernel, a = -0.75) of the 4 taps at offsets -1, 0, 1, 2
    from ``floor(x)``; ``t`` is ``x - floor(x)``."""
    return [cubic_kernel(d, _CUBIC_A) for d in (t + 1, t, 1 - t, 2 - t)]


def _axis_taps(
    x: np.ndarray, dim: int, mode: str, padding: str, low: float, high: float
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(index, weight)`` of each tap along one axis; an index outside X has weight 0
    (``zeros``) or is moved in (``border``, ``reflection``)."""
    if mode == "nearest":
        start = np.trunc(x).astype(np.int64)
        offsets, weights = [0], [np.ones_like(x, dtype=np.float64)]
    else:
        floor = np.floor(x)
        start = floor.astype(np.int64)
        t = (x - floor.astype(x.dtype)).astype(np.float64)
        if mode == "linear":
            offsets, weights = [0, 1], [1 - t, t]
        else:
            offsets, weights = [-1, 0, 1, 2], _cubic_weights(t)
    taps = []
    for offset, weight in zip(offsets, weights, strict=True):
        index = start + offset
        if padding == "zeros":
            inside = (index >= 0) & (index < dim)
            weight = np.where(inside, weight, 0.0)
            index = np.clip(index, 0, dim - 1)
        elif padding == "border":
            index = np.clip(index, 0, dim - 1)
        else:
            index = _reflect(index.astype(np.float64), low, high).astype(np.int64)
        taps.append((index, weight))
    return taps


def grid_sample(
    x: np.ndarray, grid: np.ndarray, mode: str, padding: str, align_corners: bool
) -> np.ndarray:
    """X sampled at `grid`; `mode` is ``nearest``, ``linear`` or ``cubic``.

    Examples
    --------
    >>> x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    >>> grid = np.array([[[[0.0, 0.0], [-1.0, -1.0]]]], np.float32)
    >>> grid_sample(x, grid, "linear", "zeros", False).tolist()
    [[[[1.5, 0.0]]]]
    """
    n, c, *spatial = x.shape
    out = grid.shape[1:-1]
    if not n * c:  # nothing to sample for: numpy's reshape cannot infer a size from 0
        return np.zeros((n, c, *out), x.dtype)
    points = int(np.prod(out, dtype=np.int64))
    flat_grid = grid.reshape(n, points, len(spatial))
    per_axis = []
    for axis, dim in enumerate(spatial):
        g = flat_grid[..., len(spatial) - 1 - axis]
        coord = ((g + 1) / 2 * (dim - 1) if align_corners else ((g + 1) * dim - 1) / 2).astype(
            np.float32
        )
        low, high = (0.0, dim - 1.0) if align_corners else (-0.5, dim - 0.5)
        if mode == "nearest":
            coord = np.rint(coord)
        outside = (coord < low) | (coord > high)
        if padding == "border":
            coord = np.where(outside, np.clip(coord, 0, dim - 1), coord).astype(np.float32)
        elif padding == "reflection":
            coord = np.where(outside, _reflect(coord, low, high), coord).astype(np.float32)
        per_axis.append(_axis_taps(coord, dim, mode, padding, low, high))
    strides = [int(np.prod(spatial[axis + 1 :], dtype=np.int64)) for axis in range(len(spatial))]
    source = x.reshape(n, c, -1)
    total = np.zeros((n, c, points), np.float64)
    for combo in product(*per_axis):
        index = sum(i * s for (i, _), s in zip(combo, strides, strict=True))
        weight = np.prod([w for _, w in combo], axis=0)
        values = np.take_along_axis(source, np.asarray(index)[:, None, :], axis=2)
        total += weight[:, None, :] * values
    if x.dtype.kind in "iu":  # cubic overshoots: clipped to the type's range, not wrapped
        info = np.iinfo(x.dtype)
        total = np.clip(np.rint(total), info.min, info.max)
    elif x.dtype.kind == "b":
        total = np.rint(total)
    return total.astype(x.dtype).reshape(n, c, *out)


def _compile_grid_sample(op: Op, opset: int) -> Kernel:
    mode, padding, align_corners = _read_attrs(op, opset)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, grid = inputs[0], inputs[1]
        assert x is not None, f"{op!r}: X and grid are required"
        assert grid is not None, f"{op!r}: X and grid are required"
        return [grid_sample(x, grid, mode, padding, align_corners)]

    return kernel


def _infer_grid_sample(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    _read_attrs(op, opset)
    x, grid = inputs[0], inputs[1]
    assert x is not None, f"{op!r}: X and grid are required"
    assert grid is not None, f"{op!r}: X and grid are required"
    ranks = (4,) if opset < 20 else (4, 5)
    if len(x.shape) not in ranks:
        allowed = " or ".join(str(r) for r in ranks)
        raise op_error(op, f"expected X of rank {allowed}", f"shape {list(x.shape)}")
    if len(grid.shape) != len(x.shape):
        expected = f"expected grid of rank {len(x.shape)} (X's rank)"
        raise op_error(op, expected, f"shape {list(grid.shape)}")
    if grid.shape[0] != x.shape[0]:
        raise op_error(op, f"expected grid of batch {x.shape[0]} (X's)", grid.shape[0])
    spatial = len(x.shape) - 2
    if grid.shape[-1] != spatial:
        expected = f"expected grid's last dimension {spatial} (X's spatial rank)"
        raise op_error(op, expected, grid.shape[-1])
    if 0 in x.shape[2:]:  # no point to sample from; onnxruntime refuses it, even for no grid
        axis = x.shape.index(0, 2)
        raise op_error(
            op, f"expected a non-empty spatial axis {axis} of X", f"shape {list(x.shape)}"
        )
    return [Meta((*x.shape[:2], *grid.shape[1:-1]), x.dtype)]


def _cost_grid_sample(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """``2 * taps + 10`` flops per output element (see the module docstring)."""
    x, y = inputs[0], outputs[0]
    assert x is not None, f"{op!r}: X is required"
    mode = str_attr(op, "mode", "linear")
    taps = _TAPS.get(mode, 2) ** (len(x.shape) - 2)
    return Cost(float((2 * taps + 10) * y.size), nbytes(inputs), nbytes(outputs), "elementwise")


register(
    "GridSample",
    "elementwise",
    compile=_compile_grid_sample,
    infer=_infer_grid_sample,
    cost=_cost_grid_sample,
    required=2,
)


def _base_axis(dim: int, align_corners: bool) -> np.ndarray:
    """The normalized positions of an axis of `dim` points, as the reference's ``arange``."""
    if align_corners:
        step = 2.0 / (dim - 1) if dim > 1 else 0.0
        return -1.0 + np.arange(dim) * step
    step = 2.0 / dim
    return -1.0 + step / 2 + np.arange(dim) * step


def affine_grid(theta: np.ndarray, spatial: Sequence[int], align_corners: bool) -> np.ndarray:
    """The sampling grid of the affine maps `theta` over `spatial` (``[H, W]`` or ``[D, H, W]``).

    Examples
    --------
    >>> theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], np.float32)
    >>> affine_grid(theta, [1, 2], False).tolist()
    [[[[-0.5, 0.0], [0.5, 0.0]]]]
    """
    axes = [_base_axis(int(dim), align_corners) for dim in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    # homogeneous points, coordinates in reverse axis order (x first), then 1
    base = np.stack([*mesh[::-1], np.ones_like(mesh[0])], axis=-1).reshape(-1, len(spatial) + 1)
    points = np.einsum("nij,pj->npi", theta.astype(np.float64), base)
    grid: np.ndarray = points.astype(theta.dtype).reshape(theta.shape[0], *spatial, len(spatial))
    return grid


def _spatial_size(op: Op, theta: tuple[int, ...], size: np.ndarray) -> list[int]:
    check_integer_input(op, 1, "size", size, rank=1)
    values = [int(v) for v in np.asarray(size).reshape(-1)]
    if len(values) not in (4, 5):
        raise op_error(op, "expected size [N, C, H, W] or [N, C, D, H, W]", values)
    d = len(values) - 2
    if theta != (values[0], d, d + 1):
        expected = f"expected theta of shape [{values[0]}, {d}, {d + 1}] (from size {values})"
        raise op_error(op, expected, f"shape {list(theta)}")
    return values[2:]


def _compile_affine_grid(op: Op, opset: int) -> Kernel:
    align_corners = flag_attr(op, "align_corners", 0)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        theta, size = inputs[0], inputs[1]
        assert theta is not None, f"{op!r}: theta and size are required"
        assert size is not None, f"{op!r}: theta and size are required"
        return [affine_grid(theta, _spatial_size(op, theta.shape, size), align_corners)]

    return kernel


def _infer_affine_grid(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    theta = inputs[0]
    assert theta is not None, f"{op!r}: theta is required"
    spatial = _spatial_size(op, theta.shape, integer_input(op, inputs, 1, "size", rank=1))
    return [Meta((theta.shape[0], *spatial, len(spatial)), theta.dtype)]


def _cost_affine_grid(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """``2 * d * (d + 1)`` flops per output point (see the module docstring)."""
    y = outputs[0]
    d = y.shape[-1]
    flops = 2 * d * (d + 1) * (y.size // d)
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "elementwise")


register(
    "AffineGrid",
    "elementwise",
    compile=_compile_affine_grid,
    infer=_infer_affine_grid,
    cost=_cost_affine_grid,
    required=2,
)
