"""Conv: 1-D, 2-D and 3-D, grouped (incl. depthwise), dilated, strided, padded.

It runs on BLAS: Conv gathers every window of the padded input into columns with one strided
view (im2col) and multiplies them by the weight in one batched ``np.matmul`` over (batch,
group); a large output goes by bands of output rows so the column buffer stays small
(`COLUMN_BYTES`), and a pointwise conv multiplies the input itself. A depthwise conv is the
same call with one-row weights, which measured about twice as fast as summing one scaled,
shifted view per tap. A compiled Conv runs a per-shape plan (`conv_plan.py`: the same math with
the layout worked out once, and flat columns for depthwise convs); `conv` is what runs when there
is no plan (a column buffer over `COLUMN_BYTES`: bands of rows). No Python loop runs over
pixels. Window arithmetic lives in `window.py`; ConvTranspose, which shares `tap_slices` and
`group_of`, in `conv_transpose.py`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from math import prod
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from hetsim.ir import Op
from hetsim.kernels.arrays import memoize
from hetsim.kernels.checks import attr, int_attr, op_error
from hetsim.kernels.conv_plan import COLUMN_BYTES, Runner, bias_shape, plan_conv
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register
from hetsim.kernels.window import Geometry, WindowAttrs, read_window_attrs

__all__ = [
    "COLUMN_BYTES",
    "check_bias",
    "compile_conv",
    "conv",
    "cost_conv",
    "group_of",
    "infer_conv",
    "pad_spatial",
    "tap_slices",
    "windows",
]


def pad_spatial(x: np.ndarray, geometry: Geometry, value: float) -> np.ndarray:
    """`x` with its spatial dims padded by `geometry` (begin, end and ceil-mode pads).

    Examples
    --------
    >>> from hetsim.kernels.window import Geometry
    >>> g = Geometry((2,), (1,), (1,), (1,), (0,), (4,), (1,))
    >>> pad_spatial(np.arange(3.0).reshape(1, 1, 3), g, -1.0).tolist()
    [[[-1.0, 0.0, 1.0, 2.0, -1.0]]]
    """
    if not geometry.is_padded:
        return x
    ends = [e + x for e, x in zip(geometry.pads_end, geometry.extra, strict=True)]
    spatial = x.shape[2:]
    shape = x.shape[:2] + tuple(
        b + n + e for b, n, e in zip(geometry.pads_begin, spatial, ends, strict=True)
    )
    padded = np.zeros(shape, x.dtype) if value == 0 else np.full(shape, value, x.dtype)
    inner = tuple(slice(b, b + n) for b, n in zip(geometry.pads_begin, spatial, strict=True))
    padded[(slice(None), slice(None), *inner)] = x
    return padded


def windows(padded: np.ndarray, geometry: Geometry, group: int = 1) -> np.ndarray:
    """A read-only view ``(N, group, C/group, *kernel, *out)`` of every window of `padded`.

    Examples
    --------
    >>> from hetsim.kernels.window import Geometry
    >>> g = Geometry((2,), (2,), (1,), (0,), (0,), (2,), (0,))
    >>> windows(np.arange(4.0).reshape(1, 1, 4), g)[0, 0, 0].tolist()
    [[0.0, 2.0], [1.0, 3.0]]
    """
    n, channels = padded.shape[:2]
    batch_stride, channel_stride, *spatial = padded.strides
    shape = (n, group, channels // group, *geometry.kernel, *geometry.out)
    steps = (
        batch_stride,
        channel_stride * (channels // group),
        channel_stride,
        *(s * d for s, d in zip(spatial, geometry.dilations, strict=True)),
        *(s * t for s, t in zip(spatial, geometry.strides, strict=True)),
    )
    return as_strided(padded, shape, steps, writeable=False)


def tap_slices(geometry: Geometry) -> list[tuple[slice, ...]]:
    """For each kernel tap, the strided slices of the padded input that the tap reads."""
    ranges = [range(k) for k in geometry.kernel]
    return [
        (
            slice(None),
            slice(None),
            *(
                slice(t * d, t * d + (o - 1) * s + 1, s)
                for t, d, o, s in zip(
                    tap, geometry.dilations, geometry.out, geometry.strides, strict=True
                )
            ),
        )
        for tap in itertools.product(*ranges)
    ]


def conv(
    x: np.ndarray,
    w: np.ndarray,
    geometry: Geometry,
    group: int,
    bias: np.ndarray | None = None,
) -> np.ndarray:
    """The convolution of `x` ``(N, C, *in)`` by `w` ``(M, C/group, *kernel)``, plus `bias`.

    Examples
    --------
    >>> from hetsim.kernels.window import Geometry
    >>> g = Geometry((2,), (1,), (1,), (0,), (0,), (2,), (0,))
    >>> x = np.array([[[1.0, 2.0, 3.0]]], np.float32)
    >>> conv(x, np.array([[[1.0, -1.0]]], np.float32), g, 1).tolist()
    [[[-1.0, -1.0]]]
    """
    n, channels = x.shape[:2]
    m = w.shape[0]
    cg, taps = channels // group, prod(geometry.kernel)
    weights = w.reshape(group, m // group, cg * taps)
    if taps == 1 and not geometry.is_padded and set(geometry.strides) == {1}:
        # a pointwise conv is a plain GEMM on the input: no window view, no copy
        cols = x.reshape(n, group, cg, prod(geometry.out))
        y: np.ndarray = np.matmul(weights, cols).reshape(n, m, *geometry.out)
        return _add_bias(y, bias)
    view = windows(pad_spatial(x, geometry, 0.0), geometry, group)
    row_bytes = n * channels * taps * prod(geometry.out[1:]) * x.itemsize
    rows = max(1, COLUMN_BYTES // row_bytes)
    if rows >= geometry.out[0]:
        cols = view.reshape(n, group, cg * taps, prod(geometry.out))
        y = np.matmul(weights, cols).reshape(n, m, *geometry.out)
    else:
        y = _conv_by_rows(view, weights, rows).reshape(n, m, *geometry.out)
    return _add_bias(y, bias)


def _add_bias(y: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """`y` with `bias` added along axis 1, in place (`y` is the conv's own fresh array)."""
    if bias is not None:
        y += bias.reshape(bias_shape(y.ndim - 2))
    return y


def _conv_by_rows(view: np.ndarray, weights: np.ndarray, rows: int) -> np.ndarray:
    """`conv` for a large output: im2col and GEMM one band of `rows` output rows at a time."""
    n, group, cg, *rest = view.shape
    rank = len(rest) // 2
    out = rest[rank:]
    inner, depth = prod(out[1:]), cg * prod(rest[:rank])
    y = np.empty((n, group, weights.shape[1], out[0], inner), view.dtype)
    band = np.empty((n, group, depth, rows * inner), view.dtype)
    band_view = band.reshape(n, group, cg, *rest[:rank], rows, *out[1:])
    for start in range(0, out[0], rows):
        stop = min(start + rows, out[0])
        band_rows: tuple[Any, ...] = (Ellipsis, slice(start, stop), *(slice(None),) * (rank - 1))
        source = view[band_rows]
        if stop - start == rows:
            np.copyto(band_view, source)
            cols = band
        else:
            cols = source.reshape(n, group, depth, (stop - start) * inner)
        product = np.matmul(weights, cols)
        y[:, :, :, start:stop] = product.reshape(n, group, -1, stop - start, inner)
    return y


@dataclass(frozen=True, slots=True)
class _ConvSpec:
    window: WindowAttrs
    group: int

    def geometry(self, x: tuple[int, ...], w: tuple[int, ...]) -> Geometry:
        op = self.window.op
        if len(x) < 3 or len(w) != len(x):
            shapes = f"{list(x)} and {list(w)}"
            raise op_error(op, "expected input and weight of equal rank >= 3", shapes)
        if x[1] != w[1] * self.group or w[0] % self.group:
            expected = f"expected weight (M, C/group, ...) with group {self.group} and C={x[1]}"
            raise op_error(op, expected, f"weight {list(w)}")
        return self.window.resolve(x[2:], w[2:])


def group_of(op: Op) -> int:
    """The ``group`` attribute of a Conv or ConvTranspose, checked."""
    group = int_attr(op, "group", 1)
    if group < 1:
        raise op_error(op, "expected group >= 1", group)
    return group


def _conv_spec(op: Op) -> _ConvSpec:
    if len(op.outputs) != 1:
        raise op_error(op, "expected 1 output", len(op.outputs))
    window = read_window_attrs(op, kernel_required=False, pads_need_notset=True)
    return _ConvSpec(window, group_of(op))


def _plan(spec: _ConvSpec, x: np.ndarray, w: np.ndarray) -> Runner | None:
    if x.dtype != w.dtype:
        return None
    return plan_conv(spec.geometry(x.shape, w.shape), x.shape, w.shape, spec.group, x.dtype)


def compile_conv(op: Op, opset: int) -> Kernel:
    spec = _conv_spec(op)
    geometry = memoize(spec.geometry)
    plans = memoize(partial(_plan, spec))

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, w = inputs[0], inputs[1]
        assert x is not None, f"{op!r}: input x is required"
        assert w is not None, f"{op!r}: input w is required"
        bias = inputs[2] if len(inputs) > 2 else None
        run = plans((x.shape, w.shape, x.dtype, w.dtype), x, w)
        if run is not None:
            return [run(x, w, bias)]
        return [conv(x, w, geometry((x.shape, w.shape), x.shape, w.shape), spec.group, bias)]

    return kernel


def infer_conv(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, w = inputs[0], inputs[1]
    assert x is not None, f"{op!r}: input x is required"
    assert w is not None, f"{op!r}: input w is required"
    out = _conv_spec(op).geometry(x.shape, w.shape).out
    check_bias(op, inputs, w.shape[0])
    return [Meta((x.shape[0], w.shape[0], *out), x.dtype)]


def check_bias(op: Op, inputs: Sequence[Meta | None], channels: int) -> None:
    """Refuse a bias B (the third input, if any) that is not one value per output channel: a
    B of shape [2, 2] for 4 channels ran (broadcast), and one of [1] ran unfused but failed
    fused.

    >>> check_bias(Op("Conv", "c", ("x", "w", "b"), ("y",)), [None, None, Meta((2, 2), "f4")], 4)
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op c (Conv): expected a B of shape [4] (one per output channel), got \
shape [2, 2]
    """
    bias = inputs[2] if len(inputs) > 2 else None
    if bias is not None and tuple(bias.shape) != (channels,):
        expected = f"expected a B of shape [{channels}] (one per output channel)"
        raise op_error(op, expected, f"shape {list(bias.shape)}")


def cost_conv(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """``2·N·M·prod(out)·(C/group)·prod(kernel)`` flops (2 per MAC), plus one add per output
    element for the bias; bytes: inputs read, output written; scratch: unless the conv is
    pointwise (1×1, unpadded, stride 1: a plain GEMM on the input), numpy's im2col column
    buffer of ``N·C·prod(kernel)·prod(out)`` elements, written once and read once by the GEMM
    (counted on ``lowering: numpy`` processors only); `Cost.gemm_dim`: the smallest of M/group,
    prod(out) and C/group·prod(kernel)."""
    x, w = inputs[0], inputs[1]
    assert x is not None, f"{op!r}: input x is required"
    assert w is not None, f"{op!r}: input w is required"
    y = outputs[0]
    flops = 2 * y.size * prod(w.shape[1:])  # not w.size // M: no filters (M = 0) is no MAC
    if len(inputs) > 2 and inputs[2] is not None:
        flops += y.size
    # read from the shapes and two attributes, not a Geometry: cost rules run per op per plan
    # (a 1x1 stride-1 kernel needs no padding, even with auto_pad SAME)
    taps = prod(w.shape[2:])
    is_pointwise = (
        taps == 1 and not any(attr(op, "pads", ())) and all(s == 1 for s in attr(op, "strides", ()))
    )
    columns = 0 if is_pointwise else x.shape[0] * x.shape[1] * taps * prod(y.shape[2:])
    scratch = 2 * columns * x.dtype.itemsize  # written once, read once by the GEMM
    per_group = w.shape[0] // int_attr(op, "group", 1)
    gemm_dim = min(per_group, prod(y.shape[2:]), w.shape[1] * taps)
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "conv", scratch, gemm_dim)


register(
    "Conv",
    "conv",
    compile=compile_conv,
    infer=infer_conv,
    cost=cost_conv,
    one_type=(0, 1, 2),
    required=2,
)
