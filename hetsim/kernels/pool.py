"""MaxPool, AveragePool, LpPool and their global forms: 1-D, 2-D and 3-D.

Max and sum over a window are separable, so a k×k pool runs as one pass per spatial dim, each
pass combining ``k`` strided views with one ufunc call per tap (``2k`` vectorized calls instead
of ``k²``). AveragePool divides the windowed sum by a per-position count, itself the outer
product of one count vector per dim (the window positions that fall inside the input, or inside
the explicitly padded input with ``count_include_pad``; ceil-mode overhang never counts), found
once per input shape. A window as large as the unpadded input is one reduction over the spatial
dims.
Window arithmetic lives in `window.py`; padding is shared with `conv.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from math import prod
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.arrays import accumulating, memoize
from hetsim.kernels.checks import flag_attr, float_attr, int_attr, ints_attr, op_error
from hetsim.kernels.conv import pad_spatial
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register
from hetsim.kernels.window import Geometry, WindowAttrs, read_window_attrs

__all__ = ["average_pool", "max_pool", "pool_counts"]


def _reduce_windows(padded: np.ndarray, geometry: Geometry, combine: np.ufunc) -> np.ndarray:
    """Combine every window of `padded` with `combine` (``np.maximum``, ``np.add``), dim by dim."""
    y = padded
    for axis, (k, s, d, o) in enumerate(
        zip(geometry.kernel, geometry.strides, geometry.dilations, geometry.out, strict=True)
    ):
        index: list[slice] = [slice(None)] * padded.ndim
        views = []
        for t in range(k):
            index[2 + axis] = slice(t * d, t * d + (o - 1) * s + 1, s)
            views.append(y[tuple(index)])
        acc = views[0].copy() if k == 1 else combine(views[0], views[1])
        for view in views[2:]:
            combine(acc, view, out=acc)
        y = acc
    return y


def _lowest(dtype: np.dtype) -> float | int:
    return -np.inf if dtype.kind == "f" else int(np.iinfo(dtype).min)


def max_pool(x: np.ndarray, geometry: Geometry) -> np.ndarray:
    """The max over every window of `x` ``(N, C, *in)``; pads never win.

    Examples
    --------
    >>> from hetsim.kernels.window import Geometry
    >>> g = Geometry((2,), (2,), (1,), (1,), (0,), (2,), (0,))
    >>> max_pool(np.array([[[3.0, 1.0, 2.0]]], np.float32), g).tolist()
    [[[3.0, 2.0]]]
    """
    if _is_global(x, geometry):
        return np.maximum.reduce(x, axis=tuple(range(2, x.ndim)), keepdims=True)
    return _reduce_windows(pad_spatial(x, geometry, _lowest(x.dtype)), geometry, np.maximum)


def pool_counts(geometry: Geometry, spatial: Sequence[int], include_pad: bool) -> np.ndarray:
    """How many elements each window of an average pool divides by, shape ``out``.

    Examples
    --------
    >>> from hetsim.kernels.window import Geometry
    >>> g = Geometry((3,), (2,), (1,), (1,), (1,), (3,), (0,))
    >>> pool_counts(g, (5,), False).tolist(), pool_counts(g, (5,), True).tolist()
    ([2, 3, 2], [3, 3, 3])
    """
    counts = np.ones((), np.int64)
    for k, s, d, o, b, e, n in zip(
        geometry.kernel,
        geometry.strides,
        geometry.dilations,
        geometry.out,
        geometry.pads_begin,
        geometry.pads_end,
        spatial,
        strict=True,
    ):
        low, high = (0, b + n + e) if include_pad else (b, b + n)
        where = np.arange(o)[:, None] * s + np.arange(k)[None, :] * d
        per_dim = ((where >= low) & (where < high)).sum(axis=1)
        counts = np.multiply.outer(counts, per_dim)
    return counts


def average_pool(x: np.ndarray, geometry: Geometry, include_pad: bool) -> np.ndarray:
    """The mean over every window of `x` ``(N, C, *in)``, dividing as `pool_counts` says.

    Examples
    --------
    >>> from hetsim.kernels.window import Geometry
    >>> g = Geometry((2,), (2,), (1,), (1,), (0,), (2,), (0,))
    >>> x = np.array([[[4.0, 2.0, 6.0]]], np.float32)
    >>> average_pool(x, g, False).tolist(), average_pool(x, g, True).tolist()
    ([[[4.0, 4.0]]], [[[2.0, 4.0]]])
    """
    return _average(x, geometry, _divisor(geometry, x.shape, include_pad))


def _divisor(geometry: Geometry, shape: tuple[int, ...], include_pad: bool) -> Any:
    """What an average pool's window sums are divided by: one count, or `pool_counts`."""
    counts = pool_counts(geometry, shape[2:], include_pad)
    if counts.min() == counts.max() > 0:  # one count; windows of padding alone count 0: NaN
        return int(counts.flat[0])
    return counts


def _average(x: np.ndarray, geometry: Geometry, divisor: Any) -> np.ndarray:
    wide = accumulating(x)
    if _is_global(x, geometry):
        total: np.ndarray = np.add.reduce(wide, axis=tuple(range(2, x.ndim)), keepdims=True)
    else:
        total = _reduce_windows(pad_spatial(wide, geometry, 0.0), geometry, np.add)
    if isinstance(divisor, int):
        total *= wide.dtype.type(1.0 / divisor)
    else:
        with np.errstate(invalid="ignore"):  # a window of padding alone: 0 / 0, NaN (ONNX's)
            total /= divisor.astype(wide.dtype)
    return total.astype(x.dtype, copy=False)


def _is_global(x: np.ndarray, geometry: Geometry) -> bool:
    """Whether one unpadded window covers the whole input (a global pool in disguise)."""
    return not geometry.is_padded and geometry.kernel == x.shape[2:]


def _window_of(op: Op) -> WindowAttrs:
    if len(op.outputs) != 1 and any(op.outputs[1:]):
        raise op_error(op, "expected 1 output (Indices is not supported)", len(op.outputs))
    window = read_window_attrs(op, kernel_required=True)
    assert window.kernel_shape is not None, "kernel_required checked it"
    return window


def _geometry(window: WindowAttrs, shape: tuple[int, ...]) -> Geometry:
    assert window.kernel_shape is not None, "kernel_required checked it"
    if len(shape) != len(window.kernel_shape) + 2:
        rank = len(window.kernel_shape) + 2
        raise op_error(window.op, f"expected a rank-{rank} input", f"shape {list(shape)}")
    return window.resolve(shape[2:], window.kernel_shape)


def _compile_max_pool(op: Op, opset: int) -> Kernel:
    flag_attr(op, "storage_order", 0)  # orders the Indices output (not supported): checked only
    geometry = memoize(partial(_geometry, _window_of(op)))

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: X is required"
        return [max_pool(x, geometry(x.shape, x.shape))]

    return kernel


def _average_plan(
    window: WindowAttrs, include_pad: bool, shape: tuple[int, ...]
) -> tuple[Geometry, Any]:
    geometry = _geometry(window, shape)
    return geometry, _divisor(geometry, shape, include_pad)


def _compile_average_pool(op: Op, opset: int) -> Kernel:
    include_pad = flag_attr(op, "count_include_pad", 0)
    plan = memoize(partial(_average_plan, _window_of(op), include_pad))

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: X is required"
        return [_average(x, *plan(x.shape, x.shape))]

    return kernel


def _lp_order(op: Op, opset: int) -> float:
    """``p``: an INT from opset 2, a FLOAT (2.0, 3.5) at opset 1."""
    p = float_attr(op, "p", 2.0) if opset < 2 else int_attr(op, "p", 2)
    if p < 1:
        raise op_error(op, "expected p >= 1", p)
    return p


def _lp_norm(windows_sum: np.ndarray, p: float, dtype: np.dtype[Any]) -> np.ndarray:
    root: np.ndarray = windows_sum if p == 1 else np.power(windows_sum, 1.0 / p)
    return root.astype(dtype, copy=False)


def _compile_lp_pool(op: Op, opset: int) -> Kernel:
    """``(Σ |x|^p)^(1/p)`` over each window, padding counting as zeros."""
    p = _lp_order(op, opset)
    geometry = memoize(partial(_geometry, _window_of(op)))

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: X is required"
        g = geometry(x.shape, x.shape)
        powered = np.power(np.abs(accumulating(x)), p)
        return [_lp_norm(_reduce_windows(pad_spatial(powered, g, 0.0), g, np.add), p, x.dtype)]

    return kernel


def _compile_global_lp_pool(op: Op, opset: int) -> Kernel:
    p = _lp_order(op, opset)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: X is required"
        powered = np.power(np.abs(accumulating(x)), p)
        total = np.add.reduce(powered, axis=tuple(range(2, x.ndim)), keepdims=True)
        return [_lp_norm(total, p, x.dtype)]

    return kernel


def _cost_lp_pool(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """An abs and a power per input element, ``prod(kernel)`` adds and a root per output."""
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    taps = prod(ints_attr(op, "kernel_shape"))
    flops = 2 * x.size + outputs[0].size * (taps + 1)
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "reduction")


def _cost_global_lp_pool(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """An abs, a power and an add per input element, a root per output."""
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    flops = 3 * x.size + outputs[0].size
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "reduction")


def _infer_pool(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    out = _geometry(_window_of(op), x.shape).out
    return [Meta((*x.shape[:2], *out), x.dtype)]


def _infer_max_pool(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    flag_attr(op, "storage_order", 0)  # 0 or 1, as onnxruntime checks it
    return _infer_pool(op, opset, inputs)


def _cost_max_pool(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """``prod(kernel)`` comparisons per output element."""
    taps = prod(ints_attr(op, "kernel_shape"))
    return Cost(float(outputs[0].size * taps), nbytes(inputs), nbytes(outputs), "reduction")


def _cost_average_pool(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """``prod(kernel)`` adds and one divide per output element."""
    taps = prod(ints_attr(op, "kernel_shape"))
    flops = outputs[0].size * (taps + 1)
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "reduction")


def _compile_global_average_pool(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: X is required"
        return [x.mean(axis=tuple(range(2, x.ndim)), keepdims=True)]

    return kernel


def _compile_global_max_pool(op: Op, opset: int) -> Kernel:
    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: X is required"
        return [x.max(axis=tuple(range(2, x.ndim)), keepdims=True)]

    return kernel


def _infer_global_average_pool(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    if len(x.shape) < 3:
        raise op_error(op, "expected an input of rank >= 3", f"shape {list(x.shape)}")
    if min(x.shape[2:]) < 1:  # no element to pool (onnxruntime: "Only N can be zero")
        raise op_error(op, "expected spatial dims >= 1", f"shape {list(x.shape)}")
    return [Meta((*x.shape[:2], *(1,) * (len(x.shape) - 2)), x.dtype)]


def _cost_global_average_pool(
    op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]
) -> Cost:
    """One add per input element and one divide per output element."""
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    flops = x.size + outputs[0].size
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "reduction")


register(
    "MaxPool", "reduction", compile=_compile_max_pool, infer=_infer_max_pool, cost=_cost_max_pool
)
register(
    "AveragePool",
    "reduction",
    compile=_compile_average_pool,
    infer=_infer_pool,
    cost=_cost_average_pool,
)
register(
    "GlobalAveragePool",
    "reduction",
    compile=_compile_global_average_pool,
    infer=_infer_global_average_pool,
    cost=_cost_global_average_pool,
)
register(
    "GlobalMaxPool",
    "reduction",
    compile=_compile_global_max_pool,
    infer=_infer_global_average_pool,  # the same shapes
    cost=_cost_global_average_pool,  # a compare per input element, as many flops
)
register("LpPool", "reduction", compile=_compile_lp_pool, infer=_infer_pool, cost=_cost_lp_pool)
register(
    "GlobalLpPool",
    "reduction",
    compile=_compile_global_lp_pool,
    infer=_infer_global_average_pool,  # the same shapes
    cost=_cost_global_lp_pool,
)
