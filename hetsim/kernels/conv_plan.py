"""Per-shape Conv plans: every shape, stride and slice of one input shape worked out once.

A compiled Conv meets the same input shape on every run, so its kernel asks `plan_conv` once
per shape for a *runner*, a closure that is nothing but numpy calls: pad into a fresh buffer,
view its windows with ``np.ndarray(..., buffer=...)`` (0.3 µs where ``as_strided`` took 2.5),
copy the columns, one batched GEMM, bias. Over ShuffleNet's 49 Convs, `hetsim.kernels.conv.conv`
took 31 µs per Conv more than the runners (5.8 against 4.3 ms at one thread): its Python
arithmetic on every call.

Three forms, chosen by the geometry:

- *pointwise* (1×1, unpadded, stride 1): the input is the column matrix, no copy;
- *flat* (stride 1, at most `FLAT_MAX_FILTERS` filters per group, columns within
  `COLUMN_BYTES`): column ``q`` is the window starting ``q`` elements into the padded image, so
  each tap copies one long contiguous run; the windows that wrap over a row end are computed
  and dropped when the result is cropped, in the same pass as the bias;
- *window* (columns within `COLUMN_BYTES`): the im2col view of every window, copied once.

Anything else (a column buffer too large, mixed dtypes) gets no plan, and the kernel calls
`conv`, which bands large outputs. The math lives in `conv.py`; this module only lays it out.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import Any

import numpy as np

from hetsim.kernels.window import Geometry

__all__ = ["COLUMN_BYTES", "FLAT_MAX_FILTERS", "Runner", "bias_shape", "c_strides", "plan_conv"]

COLUMN_BYTES = 1 << 22
"""Largest im2col buffer Conv fills at once; bigger ones go by bands of output rows.

A bounded buffer is reused through the call, where a whole-image one (115 MB for VGG-19's
first 3x3 convs) is mapped fresh by the OS on every call: before banding, a quarter of VGG-19's
CPU time at 1 thread was system time spent on its page faults (``benchmarks/kernels.py``)."""

FLAT_MAX_FILTERS = 8
"""Most filters per group for which a Conv builds its columns the flat way.

The flat columns copy in long contiguous runs (a whole band of image rows per tap) where the
window view copies runs of one output row, but they also hold ``(w_pad - w_out) / w_out`` more
columns (the row ends a window wraps over). With few filters per group (a depthwise conv has
one) the copy dominates, and the flat form took 1.47 ms where the window form took 2.56 over
ShuffleNet's 13 stride-1 depthwise convs; with many, the GEMM dominates and the extra columns
cost more than the copy saves."""

Runner = Callable[[np.ndarray, np.ndarray, "np.ndarray | None"], np.ndarray]
"""``runner(x, w, bias) -> y`` for the one input shape and dtype it was planned for."""


def c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a C-contiguous array of `shape`.

    Examples
    --------
    >>> c_strides((2, 3, 4))
    (12, 4, 1)
    """
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def plan_conv(
    geometry: Geometry,
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    group: int,
    dtype: np.dtype[Any],
) -> Runner | None:
    """The runner of a Conv of input `x_shape` by weight `w_shape`, or None for `conv` itself.

    Examples
    --------
    >>> from hetsim.kernels.window import Geometry
    >>> g = Geometry((2,), (1,), (1,), (1,), (0,), (3,), (0,))
    >>> run = plan_conv(g, (1, 1, 3), (1, 1, 2), 1, np.dtype("float32"))
    >>> x = np.array([[[1.0, 2.0, 3.0]]], np.float32)
    >>> run(x, np.array([[[1.0, -1.0]]], np.float32), np.array([10.0], np.float32)).tolist()
    [[[9.0, 9.0, 9.0]]]
    """
    n, channels = x_shape[:2]
    m, taps = w_shape[0], prod(geometry.kernel)
    weights = (group, m // group, channels // group * taps)
    out = (n, m, *geometry.out)
    if taps == 1 and not geometry.is_padded and set(geometry.strides) == {1}:
        return _pointwise(weights, (n, group, channels // group, prod(geometry.out)), out)
    padded = tuple(
        b + s + e + x
        for b, s, e, x in zip(
            geometry.pads_begin, x_shape[2:], geometry.pads_end, geometry.extra, strict=True
        )
    )
    pad = _Pad((n, channels, *padded), geometry, dtype) if geometry.is_padded else None
    steps = c_strides((n, channels, *padded))
    group_steps = (steps[0], steps[1] * (channels // group), steps[1])
    dilated = tuple(s * d for s, d in zip(steps[2:], geometry.dilations, strict=True))
    length = 1 + sum((o - 1) * s for o, s in zip(geometry.out, steps[2:], strict=True))
    is_flat = m // group <= FLAT_MAX_FILTERS and set(geometry.strides) == {1}
    if is_flat and n * channels * taps * length * dtype.itemsize <= COLUMN_BYTES:
        view = (n, group, channels // group, *geometry.kernel, length)
        crop = (m * length, length, *steps[2:])
        return _flat(pad, _Layout(view, (*group_steps, *dilated, 1), dtype), weights, out, crop)
    if n * channels * taps * prod(geometry.out) * dtype.itemsize > COLUMN_BYTES:
        return None
    view = (n, group, channels // group, *geometry.kernel, *geometry.out)
    strided = tuple(s * t for s, t in zip(steps[2:], geometry.strides, strict=True))
    layout = _Layout(view, (*group_steps, *dilated, *strided), dtype)
    return _window(pad, layout, weights, out)


class _Pad:
    """Copies an input into a fresh zero-padded buffer of a fixed shape."""

    __slots__ = ("dtype", "inner", "shape")

    def __init__(self, shape: tuple[int, ...], geometry: Geometry, dtype: np.dtype[Any]) -> None:
        self.shape, self.dtype = shape, dtype
        spans = zip(geometry.pads_begin, shape[2:], geometry.pads_end, geometry.extra, strict=True)
        self.inner = (
            slice(None),
            slice(None),
            *(slice(b, size - e - x) for b, size, e, x in spans),
        )

    def __call__(self, x: np.ndarray) -> np.ndarray:
        padded = np.zeros(self.shape, self.dtype)
        padded[self.inner] = x
        return padded


class _Layout:
    """A strided view of a C-contiguous buffer: shape and element strides."""

    __slots__ = ("dtype", "shape", "strides")

    def __init__(
        self, shape: tuple[int, ...], steps: tuple[int, ...], dtype: np.dtype[Any]
    ) -> None:
        self.shape, self.dtype = shape, dtype
        self.strides = tuple(s * dtype.itemsize for s in steps)

    def __call__(self, buffer: np.ndarray) -> np.ndarray:
        return np.ndarray(self.shape, self.dtype, buffer, 0, self.strides)


def _contiguous(x: np.ndarray) -> np.ndarray:
    return x if x.flags.c_contiguous else np.ascontiguousarray(x)


def bias_shape(rank: int) -> tuple[int, ...]:
    """The shape a bias takes to add along axis 1 of an output with `rank` spatial dims.

    >>> bias_shape(2)
    (-1, 1, 1)
    """
    return (-1, *(1,) * rank)


def _pointwise(weights: tuple[int, ...], cols: tuple[int, ...], out: tuple[int, ...]) -> Runner:
    along_channels = bias_shape(len(out) - 2)

    def run(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
        y: np.ndarray = np.matmul(w.reshape(weights), x.reshape(cols)).reshape(out)
        if bias is not None:
            y += bias.reshape(along_channels)
        return y

    return run


def _window(
    pad: _Pad | None, layout: _Layout, weights: tuple[int, ...], out: tuple[int, ...]
) -> Runner:
    n, group = layout.shape[:2]
    cols = (n, group, prod(layout.shape[2:]) // prod(out[2:]), prod(out[2:]))
    along_channels = bias_shape(len(out) - 2)

    def run(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
        source = pad(x) if pad is not None else _contiguous(x)
        y: np.ndarray = np.matmul(w.reshape(weights), layout(source).reshape(cols)).reshape(out)
        if bias is not None:
            y += bias.reshape(along_channels)
        return y

    return run


def _flat(
    pad: _Pad | None,
    layout: _Layout,
    weights: tuple[int, ...],
    out: tuple[int, ...],
    crop_steps: tuple[int, ...],
) -> Runner:
    n, group, length = *layout.shape[:2], layout.shape[-1]
    cols = (n, group, prod(layout.shape[2:-1]), length)
    crop = _Layout(out, crop_steps, layout.dtype)
    along_channels = bias_shape(len(out) - 2)

    def run(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
        source = pad(x) if pad is not None else _contiguous(x)
        product = np.matmul(w.reshape(weights), layout(source).reshape(cols))
        y = np.empty(out, layout.dtype)
        if bias is None:
            np.copyto(y, crop(product))
        else:
            np.add(crop(product), bias.reshape(along_channels), out=y)  # crop and bias: one pass
        return y

    return run
