"""LRN: local response normalization, each element divided by a power of the sum of the squares
in its window of neighbouring channels. It sums them with one shifted add per window element.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.arrays import accumulating
from hetsim.kernels.checks import float_attr, int_attr, op_error
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register

__all__ = ["lrn"]


def lrn(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """Local response normalization across channels (axis 1), ONNX formula.

    ``y = x / (bias + alpha / size * sum(x[c'] ** 2)) ** beta`` over the channels
    ``c - floor((size - 1) / 2) <= c' <= c + ceil((size - 1) / 2)``.

    Examples
    --------
    >>> lrn(np.array([[[1.0], [2.0]]]), 3, 3.0, 1.0, 0.0).ravel().round(3).tolist()
    [0.2, 0.4]
    """
    channels = x.shape[1]
    before = (size - 1) // 2
    squares = np.zeros((x.shape[0], channels + size - 1, *x.shape[2:]), x.dtype)
    np.square(x, out=squares[:, before : before + channels])
    total = squares[:, :channels].copy()
    for shift in range(1, size):
        total += squares[:, shift : shift + channels]
    total *= x.dtype.type(alpha / size)
    total += x.dtype.type(bias)
    np.power(total, x.dtype.type(-beta), out=total)
    total *= x
    return total


def _compile_lrn(op: Op, opset: int) -> Kernel:
    size = int_attr(op, "size")
    if size < 1:
        raise op_error(op, "expected size >= 1", size)
    alpha = float_attr(op, "alpha", 1e-4)
    beta = float_attr(op, "beta", 0.75)
    bias = float_attr(op, "bias", 1.0)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: X is required"
        return [lrn(accumulating(x), size, alpha, beta, bias).astype(x.dtype, copy=False)]

    return kernel


def _infer_lrn(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    if len(x.shape) < 3:  # (N x C x D1 x ...); onnxruntime and onnx's reference want 4-D
        raise op_error(op, "expected an input of rank >= 3", f"shape {list(x.shape)}")
    return [Meta(x.shape, x.dtype)]


def _cost_lrn(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """Per element: a square, ``size`` window adds, scale, bias, power and multiply: size + 5."""
    flops = outputs[0].size * (int_attr(op, "size") + 5)
    return Cost(float(flops), nbytes(inputs), nbytes(outputs), "normalization")


register("LRN", "normalization", compile=_compile_lrn, infer=_infer_lrn, cost=_cost_lrn)
