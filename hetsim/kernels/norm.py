"""BatchNormalization (inference), InstanceNormalization, LayerNormalization,
RMSNormalization, GroupNormalization, MeanVarianceNormalization and LpNormalization (LRN, a
window across channels, is in `lrn.py`).

BatchNormalization folds its four per-channel vectors into one scale and one shift per call
(``scale / sqrt(var + eps)`` and ``B - mean * that``), so the activation is touched by one
multiply and one add. The statistics of InstanceNormalization are computed in the input's dtype
(float32 stays float32); Layer- and RMSNormalization compute a float16 input's in float32,
their ``stash_type`` 1, and a float32 or float64 input's in its own type, as onnxruntime does
(and onnx's reference, which refuses any other ``stash_type``), and LayerNormalization's Mean and
InvStdDev outputs are float32, as ONNX types them (``U``) and onnxruntime gives them, whatever
the input's. GroupNormalization (opset 21) computes its first stage in its ``stash_type``
(``GROUP_STASH_DTYPES``) whatever the input's type, as its spec says and onnxruntime and onnx's
reference do: a float64 input's in float32 by default. Every variance here is the mean of the
squared deviations from the mean (two passes), not the spec's function body's ``E[x²] - E[x]²``
that onnxruntime and onnx's reference compute: the two agree to float32's rounding, except
where a group's variance is tiny against its mean, where the one-pass form loses the digits
(a float64 group ``[2.4607, 2.4417]`` stashed in float32 normalizes to 0.948861 here, 0.947526
there, 0.948849 in exact float64).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.arrays import accumulating
from hetsim.kernels.checks import (
    flag_attr,
    float_attr,
    int_attr,
    ints_attr,
    normalize_axes,
    normalize_axis,
    op_error,
)
from hetsim.kernels.costs import Cost, CostRule, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import ALL_INPUTS, Kernel, register

__all__ = ["batch_norm", "layer_norm"]


def batch_norm(
    x: np.ndarray,
    scale: np.ndarray,
    bias: np.ndarray,
    mean: np.ndarray,
    var: np.ndarray,
    epsilon: float,
) -> np.ndarray:
    """``(x - mean) / sqrt(var + epsilon) * scale + bias``, the vectors along axis 1.

    Examples
    --------
    >>> x = np.array([[[1.0], [4.0]]], np.float32)
    >>> one, zero = np.ones(2, np.float32), np.zeros(2, np.float32)
    >>> batch_norm(x, one, zero, np.array([1.0, 2.0], np.float32), one * 4, 0.0).ravel().tolist()
    [0.0, 1.0]
    """
    per_channel = (-1, *(1,) * (x.ndim - 2)) if scale.ndim == 1 else scale.shape
    factor = scale / np.sqrt(var + var.dtype.type(epsilon))
    # from opset 15 ONNX types scale and B (T1) and mean and var (T2) apart from X; Y is of X's type
    shift = (bias - mean * factor).astype(x.dtype, copy=False)
    factor = factor.astype(x.dtype, copy=False)
    y: np.ndarray = x * factor.reshape(per_channel)
    y += shift.reshape(per_channel)
    return y


def _check_batch_norm_mode(op: Op) -> None:
    """Inference mode, spatial: the only BatchNormalization hetsim runs (its kernel and its shape
    rule both refuse the rest, so `simulate` says what `execute` does)."""
    if flag_attr(op, "training_mode", 0):  # Y from the batch's own statistics: a training step
        raise op_error(op, "expected training_mode 0 (inference)", "training_mode 1")
    if any(op.outputs[1:]):
        raise op_error(op, "expected inference mode (one output)", f"{len(op.outputs)} outputs")
    if not flag_attr(op, "spatial", 1):
        raise op_error(op, "expected spatial=1", "spatial=0")


def _compile_batch_norm(op: Op, opset: int) -> Kernel:
    epsilon = float_attr(op, "epsilon", 1e-5)
    _check_batch_norm_mode(op)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, scale, bias, mean, var = inputs[:5]
        assert x is not None, f"{op!r}: input x is required"
        assert scale is not None, f"{op!r}: input scale is required"
        assert bias is not None, f"{op!r}: input bias is required"
        assert mean is not None, f"{op!r}: input mean is required"
        assert var is not None, f"{op!r}: input var is required"
        return [batch_norm(x, scale, bias, mean, var, epsilon)]

    return kernel


def _infer_batch_norm(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    _check_batch_norm_mode(op)
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    channels = x.shape[1] if len(x.shape) > 1 else 1
    _check_per_channel(op, ("scale", "B", "mean", "var"), inputs[1:5], channels)
    return [Meta(x.shape, x.dtype)]


def _check_per_channel(
    op: Op, names: Sequence[str], metas: Sequence[Meta | None], channels: int
) -> None:
    """Each of `metas` (inputs `names`) is 1-D of size `channels`, as ONNX types it: numpy
    would broadcast a scalar, a [1] or a [C, 1] across the channels, or fail in the kernel."""
    for name, meta in zip(names, metas, strict=False):
        if meta is None or meta.shape != (channels,):
            got = "none" if meta is None else f"shape {list(meta.shape)}"
            raise op_error(op, f"expected {name} of shape [{channels}]", got)


def _normalize(x: np.ndarray, axes: tuple[int, ...], epsilon: float) -> tuple[np.ndarray, ...]:
    """``(x - mean) * inv_std``, the mean and ``inv_std = 1 / sqrt(var + eps)`` over `axes`."""
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    var = np.mean(np.square(centered), axis=axes, keepdims=True)
    inv_std = np.reciprocal(np.sqrt(var + x.dtype.type(epsilon)))
    centered *= inv_std
    return centered, mean, inv_std


def _compile_instance_norm(op: Op, opset: int) -> Kernel:
    epsilon = float_attr(op, "epsilon", 1e-5)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, scale, bias = inputs[:3]
        assert x is not None, f"{op!r}: input x is required"
        assert scale is not None, f"{op!r}: input scale is required"
        assert bias is not None, f"{op!r}: input bias is required"
        y, _, _ = _normalize(accumulating(x), tuple(range(2, x.ndim)), epsilon)
        per_channel = (-1, *(1,) * (x.ndim - 2))
        y *= scale.reshape(per_channel)
        y += bias.reshape(per_channel)
        return [y.astype(x.dtype, copy=False)]

    return kernel


def _infer_instance_norm(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    if len(x.shape) < 3:
        raise op_error(op, "expected an input of rank >= 3", f"shape {list(x.shape)}")
    _check_per_channel(op, ("scale", "B"), inputs[1:3], x.shape[1])
    return [Meta(x.shape, x.dtype)]


def layer_norm(
    x: np.ndarray,
    scale: np.ndarray,
    bias: np.ndarray | None,
    axis: int,
    epsilon: float,
    wide: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalize `x` over dims ``axis..`` then scale and shift; returns (Y, Mean, InvStdDev),
    Y of `x`'s dtype, Mean and InvStdDev float32. `wide`: `x` in the precision the statistics
    are computed in (`_stash`).

    Examples
    --------
    >>> x = np.array([[1.0, 3.0]], np.float32)
    >>> y, mean, inv = layer_norm(x, np.ones(2, np.float32), None, 1, 0.0, x)
    >>> y.tolist(), mean.tolist(), inv.tolist()
    ([[-1.0, 1.0]], [[2.0]], [[1.0]])
    """
    y, mean, inv_std = _normalize(wide, tuple(range(axis, x.ndim)), epsilon)
    y *= scale
    if bias is not None:
        y += bias
    stats = np.float32
    return y.astype(x.dtype, copy=False), mean.astype(stats), inv_std.astype(stats)


def _compile_layer_norm(op: Op, opset: int) -> Kernel:
    epsilon = float_attr(op, "epsilon", 1e-5)
    axis = int_attr(op, "axis", -1)
    count = len(op.outputs)  # results by position, an omitted output's too, as every kernel's

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, scale = inputs[0], inputs[1]
        assert x is not None, f"{op!r}: input x is required"
        assert scale is not None, f"{op!r}: input scale is required"
        bias = inputs[2] if len(inputs) > 2 else None
        at = normalize_axis(op, axis, x.ndim)
        outputs = layer_norm(x, scale, bias, at, epsilon, _stash(op, x))
        return list(outputs[:count])

    return kernel


def _infer_layer_norm(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    axis = normalize_axis(op, int_attr(op, "axis", -1), len(x.shape))
    _check_broadcast_to_x(op, x.shape, ("scale", "B"), inputs[1:3])
    reduced = (*x.shape[:axis], *(1,) * (len(x.shape) - axis))
    _stash_type(op)
    stats = np.dtype(np.float32)  # stash_type 1: ONNX's U, whatever the input's type
    metas = [Meta(x.shape, x.dtype), Meta(reduced, stats), Meta(reduced, stats)]
    return metas[: len(op.outputs)]


def _check_broadcast_to_x(
    op: Op, shape: tuple[int, ...], names: Sequence[str], metas: Sequence[Meta | None]
) -> None:
    """Each of `metas` (inputs `names`, absent ones aside) broadcasts to X's `shape` one way,
    as ONNX's Layer- and RMSNormalization say and onnxruntime checks: numpy would broadcast X
    up to a larger scale (a larger Y), or fail in the kernel."""
    for name, meta in zip(names, metas, strict=False):
        if meta is None:
            continue
        dims = meta.shape
        if len(dims) > len(shape) or any(
            d not in (1, s) for d, s in zip(reversed(dims), reversed(shape), strict=False)
        ):
            expected = f"expected {name} broadcastable to X's shape {list(shape)}"
            raise op_error(op, expected, f"shape {list(dims)}")


def _stash(op: Op, x: np.ndarray) -> np.ndarray:
    """`x` in the precision its statistics are computed in: float32 for a float16 input (the
    default ``stash_type`` 1), the input's own precision for float32 and float64."""
    _stash_type(op)
    return accumulating(x)


def _stash_type(op: Op) -> None:
    """Refuse a ``stash_type`` other than 1 (float32): bfloat16, the other ONNX allows, is no
    dtype here."""
    stash = int_attr(op, "stash_type", 1)
    if stash != 1:
        raise op_error(op, "expected stash_type 1 (float32)", stash)


def _infer_rms_norm(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    normalize_axis(op, int_attr(op, "axis", -1), len(x.shape))
    _check_broadcast_to_x(op, x.shape, ("scale",), inputs[1:2])
    _stash_type(op)  # in the rule too: timing mode, which runs no kernel, had taken any
    return [Meta(x.shape, x.dtype)]


def _compile_rms_norm(op: Op, opset: int) -> Kernel:
    epsilon = float_attr(op, "epsilon", 1e-5)
    axis = int_attr(op, "axis", -1)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, scale = inputs[0], inputs[1]
        assert x is not None, f"{op!r}: input X is required"
        assert scale is not None, f"{op!r}: input scale is required"
        axes = tuple(range(normalize_axis(op, axis, x.ndim), x.ndim))
        wide = _stash(op, x)
        mean_square = np.mean(np.square(wide), axis=axes, keepdims=True)
        y = wide * np.reciprocal(np.sqrt(mean_square + wide.dtype.type(epsilon)))
        return [(y * scale).astype(x.dtype, copy=False)]

    return kernel


GROUP_SCALE_PER_CHANNEL_OPSET = 21
"""GroupNormalization's scale and bias have one value per channel from this opset on; before
it, one per group. Its ``stash_type`` came with them."""

GROUP_STASH_DTYPES: dict[int, np.dtype[Any]] = {
    1: np.dtype(np.float32),
    10: np.dtype(np.float16),
    11: np.dtype(np.float64),
}
"""GroupNormalization's ``stash_type`` -> the dtype its first stage (the statistics and the
normalized values) is computed in: its spec casts the input to it, then the result back to the
input's type (bfloat16, 16, is no dtype here)."""


def _group_stash(op: Op) -> np.dtype[Any]:
    """The dtype GroupNormalization `op` (opset 21 on) computes its first stage in."""
    stash = int_attr(op, "stash_type", 1)
    found = GROUP_STASH_DTYPES.get(stash)
    if found is None:
        raise op_error(op, "expected stash_type 1 (float32), 10 (float16) or 11 (float64)", stash)
    return found


def _num_groups(op: Op, channels: int) -> int:
    groups = int_attr(op, "num_groups")
    if groups < 1 or channels % groups:
        raise op_error(op, f"expected a num_groups that divides the {channels} channels", groups)
    return groups


def _compile_group_norm(op: Op, opset: int) -> Kernel:
    epsilon = float_attr(op, "epsilon", 1e-5)
    per_channel = opset >= GROUP_SCALE_PER_CHANNEL_OPSET
    stash = _group_stash(op) if per_channel else None

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, scale, bias = inputs[:3]
        assert x is not None, f"{op!r}: input X is required"
        assert scale is not None, f"{op!r}: input scale is required"
        assert bias is not None, f"{op!r}: input bias is required"
        n, c = x.shape[:2]
        groups = _num_groups(op, c)
        wide = x if stash is None else x.astype(stash, copy=False)
        grouped = wide.reshape(n, groups, -1)
        y, _, _ = _normalize(grouped, (2,), epsilon)
        y = y.reshape(x.shape)
        if not per_channel:  # one value per group: repeated over the group's channels
            scale, bias = np.repeat(scale, c // groups), np.repeat(bias, c // groups)
        shape = (-1, *(1,) * (x.ndim - 2))
        return [(y * scale.reshape(shape) + bias.reshape(shape)).astype(x.dtype, copy=False)]

    return kernel


def _infer_group_norm(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x, scale = inputs[0], inputs[1]
    assert x is not None, f"{op!r}: X is required"
    assert scale is not None, f"{op!r}: scale is required"
    if len(x.shape) < 2:  # (N, C) normalizes each group of channels (onnxruntime runs it)
        raise op_error(op, "expected an input of rank >= 2 (N, C, ...)", f"shape {list(x.shape)}")
    if not x.size:  # its function's Reshape to [N, num_groups, -1] fails (onnxruntime's, onnx's)
        raise op_error(op, "expected an input of nonzero size", f"shape {list(x.shape)}")
    groups = _num_groups(op, x.shape[1])
    per = x.shape[1] if opset >= GROUP_SCALE_PER_CHANNEL_OPSET else groups
    for meta, name in zip(inputs[1:3], ("scale", "bias"), strict=True):
        if meta is not None and meta.shape != (per,):
            raise op_error(op, f"expected a {name} of shape [{per}]", list(meta.shape))
    return [Meta(x.shape, x.dtype)]


def _compile_mean_variance_norm(op: Op, opset: int) -> Kernel:
    axes = ints_attr(op, "axes", (0, 2, 3))

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: input X is required"
        at = tuple(normalize_axis(op, a, x.ndim) for a in axes)
        wide = accumulating(x)
        centered = wide - wide.mean(axis=at, keepdims=True)
        deviation = np.sqrt(np.mean(np.square(centered), axis=at, keepdims=True))
        return [(centered / deviation).astype(x.dtype, copy=False)]

    return kernel


def _infer_mean_variance_norm(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    # its function reduces with ReduceMean, whose axes are distinct (onnxruntime merges a repeat)
    axes = ints_attr(op, "axes", (0, 2, 3))
    if not axes:  # numpy reduced over none: 0 / 0, NaN everywhere (onnxruntime refuses it)
        raise op_error(op, "expected at least one axis", "axes []")
    normalize_axes(op, axes, len(x.shape))
    return [Meta(x.shape, x.dtype)]


def _compile_lp_norm(op: Op, opset: int) -> Kernel:
    axis = int_attr(op, "axis", -1)
    p = int_attr(op, "p", 2)
    if p not in (1, 2):
        raise op_error(op, "expected p 1 or 2", p)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None, f"{op!r}: input X is required"
        at = normalize_axis(op, axis, x.ndim)
        wide = accumulating(x)
        if p == 1:
            norm = np.sum(np.abs(wide), axis=at, keepdims=True)
        else:
            norm = np.sqrt(np.sum(np.square(wide), axis=at, keepdims=True))
        with np.errstate(invalid="ignore", divide="ignore"):
            y = np.where(norm == 0, 0, wide / norm)  # a zero vector stays zero
        return [y.astype(x.dtype, copy=False)]

    return kernel


def _infer_axis_kept(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    """The shape rule of an op normalizing along `axis`: X's shape, the axis checked."""
    x = inputs[0]
    assert x is not None, f"{op!r}: X is required"
    normalize_axis(op, int_attr(op, "axis", -1), len(x.shape))
    return [Meta(x.shape, x.dtype)]


def _per_element(flops: float) -> CostRule:
    """A cost rule: `flops` per element of the first input (one per element of X)."""

    def cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
        x = inputs[0]
        assert x is not None, f"{op!r}: X is required"
        return Cost(flops * x.size, nbytes(inputs), nbytes(outputs), "normalization")

    return cost


# BatchNormalization: a multiply and an add per element (the per-channel fold is negligible).
# Instance- and LayerNormalization: mean (1 add), variance (sub, square, add), normalize (sub,
# multiply by 1/std), scale and bias: 8 flops per element.
register(
    "BatchNormalization",
    "normalization",
    compile=_compile_batch_norm,
    infer=_infer_batch_norm,
    cost=_per_element(2.0),
    # ONNX's types: one T (to opset 13); T for X, scale and B and U for mean and var (14); X's
    # T apart from scale and B's T1 and mean and var's T2 (15 on)
    one_type={1: ALL_INPUTS, 14: ((0, 1, 2), (3, 4)), 15: ((1, 2), (3, 4))},
    required=5,
)
register(
    "InstanceNormalization",
    "normalization",
    compile=_compile_instance_norm,
    infer=_infer_instance_norm,
    cost=_per_element(8.0),
    one_type=(0, 1, 2),
    required=3,
)
register(
    "LayerNormalization",
    "normalization",
    compile=_compile_layer_norm,
    infer=_infer_layer_norm,
    cost=_per_element(8.0),
    one_type=(0, 1, 2),
    required=2,
)
# RMSNormalization: square, mean (1 add), reciprocal square root, multiply, scale: 4 flops per
# element. MeanVarianceNormalization: Instance's without scale and bias: 6. LpNormalization:
# a transform and an add for the norm, a divide: 3.
register(
    "RMSNormalization",
    "normalization",
    compile=_compile_rms_norm,
    infer=_infer_rms_norm,
    cost=_per_element(4.0),
    required=2,
)
register(
    "GroupNormalization",
    "normalization",
    compile=_compile_group_norm,
    infer=_infer_group_norm,
    cost=_per_element(8.0),
    one_type=ALL_INPUTS,
    required=3,
)
register(
    "MeanVarianceNormalization",
    "normalization",
    compile=_compile_mean_variance_norm,
    infer=_infer_mean_variance_norm,
    cost=_per_element(6.0),
)
register(
    "LpNormalization",
    "normalization",
    compile=_compile_lp_norm,
    infer=_infer_axis_kept,
    cost=_per_element(3.0),
)
