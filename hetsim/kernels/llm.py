"""RotaryEmbedding (opset 23), TensorScatter (opset 24) and SwiGLU (opset 28): the ops LLM
exports put around Attention.

Each kernel follows onnx's reference (``onnx/reference/ops/op_rotary_embedding.py``,
``op_tensor_scatter.py``, ``op_swiglu.py``) operation for operation and dtype for dtype, over
whole arrays rather than the reference's loops.

RotaryEmbedding rotates the first ``rotary_embedding_dim`` (default: the head size D) of each
head's D values by the cos and sin rows of its position: pairs are the two halves of that part,
or its even and odd values when ``interleaved``; ``real = cos·x1 - sin·x2`` and
``imag = sin·x1 + cos·x2``. The rest of the head passes through. X is (B, H, S, D), or (B, S,
H·D) with ``num_heads``; the caches are (P, R/2) rows picked by ``position_ids`` (B, S), or
(B, S, R/2) already picked. The 4-D case broadcasts the caches over the heads in place rather
than transposing X twice as the reference does: the same products, in the same order.

TensorScatter writes ``update`` into a copy of ``past_cache`` along ``axis`` (not the batch
axis 0), at ``write_indices[b]`` (0 when omitted) for batch b; ``mode`` ``circular`` takes the
index modulo the cache's length there, ``linear`` (the default) lets an index past it fail.

SwiGLU is ``Swish_alpha(A)·B``: ``A·(1 / (1 + exp(-alpha·A)))``, the sigmoid cast to A's dtype
before its product, as the reference computes it (alpha a float32, so a float16 A's sigmoid is
computed in float32).

Costs, with B the batch, S the sequence length, H the heads, R the rotary dim and x the element
size in bytes:

- RotaryEmbedding (op class ``elementwise``): ``flops = 3·B·S·H·R``, two multiplies and an add
  or subtract per rotated element; the passthrough part is copied without flops. Bytes read are
  X's, the ``2·B·S·R/2`` cos and sin values used (a 2-D cache is read only at its picked rows)
  and ``position_ids``'; written, Y's.
- TensorScatter (``data_movement``): no flops; bytes read are the past cache's (copied), the
  update's and ``write_indices``'; written, the present cache's.
- SwiGLU (``elementwise``): ``flops = (5 + TRANSCENDENTAL_FLOPS)`` per element (negate-and-scale,
  exp, add, reciprocal, the product with A, the product with B); A and B read, Y written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import (
    attr,
    check_values_below,
    flag_attr,
    float_attr,
    int_attr,
    normalize_axis,
    op_error,
)
from hetsim.kernels.costs import Cost, elementwise_cost, movement_cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register
from hetsim.kernels.unary import TRANSCENDENTAL_FLOPS

__all__ = ["rotary_embedding", "swiglu", "tensor_scatter"]

_MODES = ("linear", "circular")
_ROTARY_FLOPS = 3  # two multiplies and an add per rotated element
_SWIGLU_FLOPS = 5 + TRANSCENDENTAL_FLOPS


# --- RotaryEmbedding -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Rotary:
    """A RotaryEmbedding's attributes, read and checked once."""

    num_heads: int | None
    rotary_dim: int  # 0: the head size
    is_interleaved: bool


def _rotary(op: Op) -> _Rotary:
    heads = int_attr(op, "num_heads", None)  # checked with a 3-D X, unused with a 4-D one
    rotary_dim = int_attr(op, "rotary_embedding_dim", 0)
    if rotary_dim < 0 or rotary_dim % 2:
        raise op_error(op, "expected an even rotary_embedding_dim of 0 or more", rotary_dim)
    return _Rotary(
        heads,
        rotary_dim,
        flag_attr(op, "interleaved", 0),
    )


def rotary_embedding(
    x: np.ndarray,
    cos: np.ndarray,
    sin: np.ndarray,
    position_ids: np.ndarray | None = None,
    *,
    num_heads: int | None = None,
    rotary_dim: int = 0,
    is_interleaved: bool = False,
) -> np.ndarray:
    """RoPE of `x`, (B, H, S, D) or (B, S, H·D) with `num_heads`, by onnx's reference.

    Examples
    --------
    >>> x = np.array([[[[1.0, 2.0]]]], np.float32)  # B, H, S, D = 1, 1, 1, 2
    >>> c, s = np.zeros((1, 1), np.float32), np.ones((1, 1), np.float32)
    >>> rotary_embedding(x, c, s, np.zeros((1, 1), np.int64)).tolist()  # a quarter turn
    [[[[-2.0, 1.0]]]]
    """
    if x.ndim == 3:
        assert num_heads is not None
        batch, length, hidden = x.shape
        heads = x.reshape(batch, length, num_heads, hidden // num_heads)
        axis = 2  # the caches broadcast over the heads, after the sequence
    else:
        heads, axis = x, 1  # (B, H, S, D): over the heads, before the sequence
    rotary_dim = rotary_dim or heads.shape[-1]
    if position_ids is not None:
        cos, sin = cos[position_ids], sin[position_ids]
    cos, sin = np.expand_dims(cos, axis), np.expand_dims(sin, axis)
    rotated = heads[..., :rotary_dim]
    if is_interleaved:
        x1, x2 = rotated[..., 0::2], rotated[..., 1::2]
    else:
        x1, x2 = np.split(rotated, 2, axis=-1)
    real = (cos * x1) - (sin * x2)
    imag = (sin * x1) + (cos * x2)
    if is_interleaved:
        rotated = np.stack((real, imag), axis=-1).reshape(rotated.shape)
    else:
        rotated = np.concatenate((real, imag), axis=-1)
    y = np.concatenate((rotated, heads[..., rotary_dim:]), axis=-1)
    return y.reshape(x.shape)


def _compile_rotary(op: Op, opset: int) -> Kernel:
    settings = _rotary(op)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        x, cos, sin, *rest = inputs
        assert x is not None
        assert cos is not None
        assert sin is not None
        position_ids = rest[0] if rest else None
        if position_ids is not None:
            rows = cos.shape[0]
            expected = f"expected position_ids in [0, {rows}) (cos_cache's rows)"
            check_values_below(op, position_ids, rows, expected)
        y = rotary_embedding(
            x,
            cos,
            sin,
            position_ids,
            num_heads=settings.num_heads,
            rotary_dim=settings.rotary_dim,
            is_interleaved=settings.is_interleaved,
        )
        return [y]

    return kernel


def _rotary_shape(op: Op, inputs: Sequence[Meta | None]) -> tuple[int, int, int, int]:
    """(B, S, H, R) of a RotaryEmbedding, every input's shape checked against them."""
    settings = _rotary(op)
    x, cos, sin, *rest = inputs
    assert x is not None
    assert cos is not None
    assert sin is not None
    position_ids = rest[0] if rest else None
    if x.dtype.kind != "f":
        raise op_error(op, "expected a float X", x.dtype)
    if len(x.shape) == 4:
        batch, heads, length, head_size = x.shape
    elif len(x.shape) == 3:
        batch, length, hidden = x.shape
        if settings.num_heads is None:
            raise op_error(op, "expected num_heads for a 3-D X", "none")
        heads = settings.num_heads
        if heads < 1:
            raise op_error(op, "expected num_heads of 1 or more", heads)
        if hidden % heads:
            raise op_error(op, f"expected a hidden size divisible by num_heads {heads}", hidden)
        head_size = hidden // heads
    else:
        raise op_error(op, "expected a 3-D or 4-D X", list(x.shape))
    rotary_dim = settings.rotary_dim or head_size
    if rotary_dim > head_size:
        expected = f"expected a rotary_embedding_dim of at most the head size {head_size}"
        raise op_error(op, expected, rotary_dim)
    if rotary_dim % 2:
        raise op_error(op, "expected an even head size to rotate", head_size)
    if position_ids is None:
        want = f"expected cos_cache and sin_cache of shape {[batch, length, rotary_dim // 2]}"
        width_ok = cos.shape == sin.shape == (batch, length, rotary_dim // 2)
    else:
        if position_ids.shape != (batch, length):
            expected = f"expected position_ids of shape {[batch, length]}"
            raise op_error(op, expected, list(position_ids.shape))
        want = f"expected 2-D cos_cache and sin_cache of width {rotary_dim // 2}"
        width_ok = (
            len(cos.shape) == 2 and cos.shape == sin.shape and cos.shape[1] == rotary_dim // 2
        )
    if not width_ok:
        raise op_error(
            op, f"{want} (rotary_embedding_dim / 2)", f"{list(cos.shape)} and {list(sin.shape)}"
        )
    return batch, length, heads, rotary_dim


def _infer_rotary(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    _rotary_shape(op, inputs)
    x = inputs[0]
    assert x is not None
    return [Meta(x.shape, x.dtype)]


def _cost_rotary(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    batch, length, heads, rotary_dim = _rotary_shape(op, inputs)
    x, cos = inputs[0], inputs[1]
    assert x is not None
    assert cos is not None
    rows_read = 2 * batch * length * (rotary_dim // 2) * cos.dtype.itemsize
    bytes_read = x.nbytes + rows_read + nbytes(inputs[3:])
    flops = _ROTARY_FLOPS * batch * length * heads * rotary_dim
    return Cost(float(flops), bytes_read, nbytes(outputs), "elementwise")


# --- TensorScatter ---------------------------------------------------------------------------


def _scatter_settings(op: Op) -> tuple[str, int]:
    mode = attr(op, "mode", "linear")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in _MODES:
        raise op_error(op, "expected mode 'linear' or 'circular'", repr(mode))
    return mode, int_attr(op, "axis", -2)


def tensor_scatter(
    past: np.ndarray,
    update: np.ndarray,
    write_indices: np.ndarray | None,
    axis: int,
    is_circular: bool,
) -> np.ndarray:
    """`past` with `update` written along `axis` (>= 1) from ``write_indices[b]`` in batch b.

    Examples
    --------
    >>> past = np.zeros((2, 4), np.int64)
    >>> tensor_scatter(past, np.array([[7], [8]]), np.array([1, 3]), 1, False).tolist()
    [[0, 7, 0, 0], [0, 0, 0, 8]]
    """
    batch, length = past.shape[0], update.shape[axis]
    starts = np.zeros(batch, np.int64) if write_indices is None else write_indices
    index = starts.astype(np.int64, copy=False)[:, None] + np.arange(length, dtype=np.int64)
    if is_circular:
        index %= past.shape[axis]
    shape = [1] * past.ndim
    shape[0], shape[axis] = batch, length
    present = past.copy()
    np.put_along_axis(present, np.broadcast_to(index.reshape(shape), update.shape), update, axis)
    return present


def _compile_tensor_scatter(op: Op, opset: int) -> Kernel:
    mode, axis = _scatter_settings(op)
    is_circular = mode == "circular"

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        past, update, *rest = inputs
        assert past is not None
        assert update is not None
        write_indices = rest[0] if rest else None
        at = axis + past.ndim if axis < 0 else axis
        return [tensor_scatter(past, update, write_indices, at, is_circular)]

    return kernel


def _infer_tensor_scatter(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    _, axis = _scatter_settings(op)
    past, update, *rest = inputs
    assert past is not None
    assert update is not None
    write_indices = rest[0] if rest else None
    rank = len(past.shape)
    axis = normalize_axis(op, axis, rank)
    if axis == 0:
        raise op_error(op, "expected a sequence axis other than the batch axis 0", attr(op, "axis"))
    fits = len(update.shape) == rank and update.shape[axis] <= past.shape[axis]
    if not fits or any(
        u != p for i, (u, p) in enumerate(zip(update.shape, past.shape, strict=True)) if i != axis
    ):
        expected = (
            f"expected an update of past_cache's shape {list(past.shape)} but at most "
            f"{past.shape[axis]} along axis {axis}"
        )
        raise op_error(op, expected, list(update.shape))
    if write_indices is not None and write_indices.shape != (past.shape[0],):
        expected = f"expected write_indices of shape {[past.shape[0]]}"
        raise op_error(op, expected, list(write_indices.shape))
    return [Meta(past.shape, past.dtype)]


# --- SwiGLU ----------------------------------------------------------------------------------


def swiglu(a: np.ndarray, b: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """``A·sigmoid(alpha·A)·B`` in A's dtype, by onnx's reference: `alpha` is a float32, as the
    reference reads a float attribute, so a float16 A's sigmoid is computed in float32.

    Examples
    --------
    >>> swiglu(np.array([0.0, 2.0], np.float32), np.array([5.0, 1.0], np.float32)).tolist()
    [0.0, 1.7615940570831299]
    """
    with np.errstate(over="ignore"):  # exp of a large -alpha·A: inf, and a sigmoid of 0
        gate = (1 / (1 + np.exp(-np.float32(alpha) * a))).astype(a.dtype, copy=False)
    result: np.ndarray = (a * gate * b).astype(a.dtype, copy=False)
    return result


def _compile_swiglu(op: Op, opset: int) -> Kernel:
    alpha = float_attr(op, "alpha", 1.0)

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        a, b = inputs
        assert a is not None
        assert b is not None
        return [swiglu(a, b, alpha)]

    return kernel


def _infer_swiglu(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    a, b = inputs
    assert a is not None
    assert b is not None
    if a.dtype.kind != "f":
        raise op_error(op, "expected a float A", a.dtype)
    if a.shape != b.shape:
        expected = f"expected B of A's shape {list(a.shape)} (no broadcasting)"
        raise op_error(op, expected, list(b.shape))
    return [Meta(a.shape, a.dtype)]


register(
    "RotaryEmbedding",
    "elementwise",
    compile=_compile_rotary,
    infer=_infer_rotary,
    cost=_cost_rotary,
    one_type=(0, 1, 2),  # X, cos_cache and sin_cache: T; position_ids: int64
    required=3,
)
register(
    "TensorScatter",
    "data_movement",
    compile=_compile_tensor_scatter,
    infer=_infer_tensor_scatter,
    cost=movement_cost,
    one_type=(0, 1),  # past_cache and update: T; write_indices: int64
    required=2,
)
register(
    "SwiGLU",
    "elementwise",
    compile=_compile_swiglu,
    infer=_infer_swiglu,
    cost=elementwise_cost("elementwise", _SWIGLU_FLOPS),
    one_type=(0, 1),
    required=2,
)
