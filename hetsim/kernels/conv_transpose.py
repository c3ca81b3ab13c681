"""ConvTranspose: 1-D, 2-D and 3-D, grouped, dilated, strided, padded, with ``output_padding``
or ``output_shape`` (and the ``SAME`` auto-pads, which derive the pads from it).

It runs on BLAS: the weight's transpose times the input gives every kernel tap's columns in one
batched ``np.matmul`` over (batch, group), and each tap's columns are added into the strided
output (col2im), one vectorized add per tap; the result is cropped by the pads (an
``output_shape`` past the uncropped output adds zeros at the end, as onnxruntime does). No
Python loop runs over pixels. The window arithmetic and tap slices it shares with Conv are
`window.py`'s and `conv.py`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.arrays import memoize
from hetsim.kernels.checks import ints_attr, op_error
from hetsim.kernels.conv import check_bias, group_of, tap_slices
from hetsim.kernels.conv_plan import bias_shape
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register
from hetsim.kernels.window import Geometry, WindowAttrs, read_window_attrs

__all__ = ["conv_transpose"]


def conv_transpose(
    x: np.ndarray, w: np.ndarray, geometry: Geometry, group: int, full: tuple[int, ...]
) -> np.ndarray:
    """The transposed convolution of `x` ``(N, C, *in)`` by `w` ``(C, M/group, *kernel)``.

    `geometry.out` is the input size here (the windows the taps write through), and `full` the
    uncropped output size; the result is `full` cropped by the geometry's pads (a negative pad
    adds zeros instead: an ``output_shape`` larger than `full` at its end, a SAME auto_pad's
    output at both ends).
    """
    n, channels = x.shape[:2]
    cg, mg, taps = channels // group, w.shape[1], prod(geometry.kernel)
    m = mg * group
    pixels = prod(x.shape[2:])  # sizes spelt out: an empty batch or M leaves no -1 to infer
    weights = w.reshape(group, cg, mg * taps).transpose(0, 2, 1)
    cols = np.matmul(weights, x.reshape(n, group, cg, pixels))
    cols = cols.reshape(n, group, mg, taps, pixels).transpose(3, 0, 1, 2, 4)
    out = np.zeros((n, m, *full), x.dtype)
    for index, region in enumerate(tap_slices(geometry)):
        out[region] += cols[index].reshape(n, m, *geometry.out)
    begin, end = geometry.pads_begin, geometry.pads_end
    if not any(begin) and not any(end):
        return out
    if min(begin) < 0 or min(end) < 0:  # an output past `full`: zeros where a pad is negative
        widths = [(max(-b, 0), max(-e, 0)) for b, e in zip(begin, end, strict=True)]
        out = np.pad(out, [(0, 0), (0, 0), *widths])
        full = tuple(f + b + e for f, (b, e) in zip(full, widths, strict=True))
        begin = tuple(max(b, 0) for b in begin)
        end = tuple(max(e, 0) for e in end)
    ends = (f - e for f, e in zip(full, end, strict=True))
    crop = tuple(slice(b, e) for b, e in zip(begin, ends, strict=True))
    return np.ascontiguousarray(out[(slice(None), slice(None), *crop)])


@dataclass(frozen=True, slots=True)
class _TransposeSpec:
    window: WindowAttrs
    group: int
    output_padding: tuple[int, ...] | None
    output_shape: tuple[int, ...] | None

    def geometry(self, x: tuple[int, ...], w: tuple[int, ...]) -> tuple[Geometry, tuple[int, ...]]:
        """The tap geometry over the input, and the uncropped output size."""
        op, window = self.window.op, self.window
        if len(x) < 3 or len(w) != len(x):
            shapes = f"{list(x)} and {list(w)}"
            raise op_error(op, "expected input and weight of equal rank >= 3", shapes)
        if x[1] != w[0] or w[0] % self.group:
            expected = f"expected weight (C, M/group, ...) with group {self.group} and C={x[1]}"
            raise op_error(op, expected, f"weight {list(w)}")
        rank = len(x) - 2
        spatial, kernel = x[2:], w[2:]
        if min(spatial) < 1:  # no input pixel to scatter (onnxruntime refuses it too)
            raise op_error(op, "expected spatial dims >= 1", f"shape {list(x)}")
        kernel = window.check_kernel(kernel, rank)
        strides, dilations = window.steps(rank)
        spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
        adjust = (0,) * rank if self.output_padding is None else self.output_padding
        if len(adjust) != rank:
            raise op_error(op, f"expected {rank} values in 'output_padding'", list(adjust))
        # the spec's bound (onnxruntime refuses past it): padding of a stride or more would add
        # whole rows no input reaches; a negative one crops, which `pads` is for
        bounds = [max(s, d) for s, d in zip(strides, dilations, strict=True)]
        if any(not 0 <= a < b for a, b in zip(adjust, bounds, strict=True)):
            expected = f"expected output_padding from 0 to below max(stride, dilation) {bounds}"
            raise op_error(op, expected, list(adjust))
        base = [
            s * (n - 1) + a + k for s, n, a, k in zip(strides, spatial, adjust, spans, strict=True)
        ]
        pads = window.explicit_pads(rank)  # checked even where output_shape sets the pads
        wanted = self._wanted(spatial, strides)
        if wanted is not None:
            # past the uncropped output by less than a stride (what an output_padding adds):
            # an output_shape's zeros at the end (a negative end pad), as onnxruntime adds them
            # in every auto_pad mode; without one, a SAME auto_pad's split by the spec's
            # formula, as ONNX's reference splits them (floor division: a kernel of 1 at
            # stride 3 puts its value in the middle, where it had gone first; onnxruntime gives
            # no output of the spec's SAME size there)
            largest = [b - a + s - 1 for b, a, s in zip(base, adjust, strides, strict=True)]
            if min(wanted) < 1 or any(o > m for o, m in zip(wanted, largest, strict=True)):
                raise op_error(op, f"expected output_shape from 1 to {largest}", list(wanted))
            total = [f - o for f, o in zip(base, wanted, strict=True)]
            upper = window.auto_pad == "SAME_UPPER"
            same = self.output_shape is None  # the SAME modes' own size (`_wanted`)
            begin = [0 if t < 0 and not same else t // 2 if upper else t - t // 2 for t in total]
            full = base
            end = [t - b for t, b in zip(total, begin, strict=True)]
        else:
            if window.auto_pad == "VALID":
                pads = (0,) * 2 * rank
            begin, end, full = list(pads[:rank]), list(pads[rank:]), base
            if any(f - b - e < 1 for f, b, e in zip(full, begin, end, strict=True)):
                raise op_error(op, "expected pads smaller than the output", list(pads))
        zeros = (0,) * rank
        geometry = Geometry(
            kernel, strides, dilations, tuple(begin), tuple(end), tuple(spatial), zeros
        )
        return geometry, tuple(full)

    def _wanted(self, spatial: tuple[int, ...], strides: tuple[int, ...]) -> list[int] | None:
        if self.output_shape is not None:
            # the spatial dims alone: the spec's "should not include dimensions for batch size
            # and channels", which onnxruntime and onnx's reference refuse (N, C, H, W) by
            if len(self.output_shape) != len(spatial):
                expected = f"expected {len(spatial)} values in 'output_shape' (its spatial dims)"
                raise op_error(self.window.op, expected, list(self.output_shape))
            return list(self.output_shape)
        if self.window.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            return [n * s for n, s in zip(spatial, strides, strict=True)]
        return None


def _transpose_spec(op: Op) -> _TransposeSpec:
    if len(op.outputs) != 1:
        raise op_error(op, "expected 1 output", len(op.outputs))
    window = read_window_attrs(op, kernel_required=False, pads_need_notset=True)
    return _TransposeSpec(
        window,
        group_of(op),
        ints_attr(op, "output_padding", None),
        ints_attr(op, "output_shape", None),
    )


def _compile_conv_transpose(op: Op, opset: int) -> Kernel:
    spec = _transpose_spec(op)
    geometry = memoize(spec.geometry)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, w = inputs[0], inputs[1]
        assert x is not None, f"{op!r}: input x is required"
        assert w is not None, f"{op!r}: input w is required"
        taps, full = geometry((x.shape, w.shape), x.shape, w.shape)
        y = conv_transpose(x, w, taps, spec.group, full)
        bias = inputs[2] if len(inputs) > 2 else None
        if bias is not None:
            y += bias.reshape(bias_shape(x.ndim - 2))
        return [y]

    return kernel


def _infer_conv_transpose(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, w = inputs[0], inputs[1]
    assert x is not None, f"{op!r}: input x is required"
    assert w is not None, f"{op!r}: input w is required"
    taps, full = _transpose_spec(op).geometry(x.shape, w.shape)
    out = tuple(f - b - e for f, b, e in zip(full, taps.pads_begin, taps.pads_end, strict=True))
    group = _transpose_spec(op).group
    check_bias(op, inputs, w.shape[1] * group)
    return [Meta((x.shape[0], w.shape[1] * group, *out), x.dtype)]


def _cost_conv_transpose(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """``2·N·C·prod(in)·(M/group)·prod(kernel)`` flops (2 per MAC: each input element meets
    every tap of its group's filters), plus one add per output element for the bias."""
    x, w = inputs[0], inputs[1]
    assert x is not None, f"{op!r}: input x is required"
    assert w is not None, f"{op!r}: input w is required"
    flops = 2 * x.size * prod(w.shape[1:])  # not w.size // C: no channels (C = 0) is no MAC
    if len(inputs) > 2 and inputs[2] is not None:
        flops += outputs[0].size
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "conv")


register(
    "ConvTranspose",
    "conv",
    compile=_compile_conv_transpose,
    infer=_infer_conv_transpose,
    cost=_cost_conv_transpose,
    one_type=(0, 1, 2),
    required=2,
)
