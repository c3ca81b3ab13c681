"""Attention (opsets 23, 24 and 25): scaled dot-product attention with ONNX's masks, KV cache,
grouped-query heads, softcap and sliding window.

The kernel follows onnx's reference (``onnx/reference/ops/op_attention.py``) step for step and
dtype for dtype: Q and K are each scaled by ``sqrt(scale)`` (in Q's dtype) before their matmul;
the softcap ``c·tanh(scores / c)`` comes before the bias; the bias adds a float mask (a bool
one gives 0 or -inf, an integer one is cast to Q's dtype) to -inf wherever the causal limit
(bottom-right: key ``j`` is visible from query ``i`` when ``j <= i + offset``), the sliding
window (opset 25) or ``nonpad_kv_seqlen`` (24) hides a key; a mask shorter than the keys (from
opset 24) is padded with -inf. ``offset`` is the past length, or ``nonpad_kv_seqlen - Sq`` per
batch. The softmax (in ``softmax_precision``'s dtype when given; else a float16 one sums in
float32, as onnxruntime does, where the reference sums in float16) gives 0 to a row whose bias is
all -inf.
The KV heads of grouped-query attention are broadcast over their query heads rather than
repeated (`np.repeat` in the reference), which copies nothing and computes the same products.
``qk_matmul_output`` is, in Q's dtype, what the spec says of each mode: the scores of the
matmul for 0, softcapped for 1 (onnx's reference gives the softcapped ones for 0 too;
onnxruntime follows the spec), biased for 2, the probabilities for 3. 3-D inputs are split into
``q_num_heads``/``kv_num_heads`` heads and Y merged back. The shape rule checks what the
kernel trusts (`hetsim.kernels.attention_spec`, with the attributes), and refuses a key length
(past plus new) of 0, as onnxruntime and the reference do (a new K of length 0 after past keys
is computed: onnxruntime refuses it, the reference computes it). The present key and value are
the past ones with K and V appended.

Cost (op class ``matmul``), with B the batch, Hq the query heads, Sq the query length, T the
key length (past plus new), Dqk and Dv the head sizes of Q and K and of V:
``flops = 2·B·Hq·Sq·T·(Dqk + Dv) + 7·B·Hq·Sq·T``: the two matmuls (2 per MAC), and 7 per score
for the bias add, the softmax (max, subtract, exp, sum, divide) and the fully-masked-row select.
Bytes read are the inputs', written the outputs'; `Cost.gemm_dim` is min(Sq, T, Dqk, Dv);
``scratch_bytes`` (hetsim's numpy lowering only, where a fused kernel keeps the scores on chip)
is the B·Hq·Sq·T scores written 4 times and read 6 times (the QK matmul; the softmax's max,
subtract, exp, sum and divide; the PV matmul).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.arrays import accumulating
from hetsim.kernels.attention_spec import (
    AttentionSettings,
    as_4d,
    check_shapes,
    read_settings,
    seven_inputs,
)
from hetsim.kernels.checks import check_values_below, op_error
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.registry import Kernel, register

__all__ = ["attention"]

_SCRATCH_PASSES = 10  # the scores written 4 times and read 6 times (see above)
_FLOPS_PER_SCORE = 7


def _split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """(B, S, H·D) as (B, H, S, D), a view."""
    batch, length, hidden = x.shape
    return x.reshape(batch, length, heads, hidden // heads).transpose(0, 2, 1, 3)


def _by_kv_head(x: np.ndarray, kv_heads: int) -> np.ndarray:
    """(B, Hq, ...) as (B, Hkv, Hq / Hkv, ...): query head h reads KV head h // (Hq / Hkv)."""
    return x.reshape(x.shape[0], kv_heads, x.shape[1] // kv_heads, *x.shape[2:])


def _grouped_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for `a` of Hq heads and `b` of Hkv heads, each KV head broadcast over its
    group of query heads, in `a`'s dtype (the reference's matmul casts to it)."""
    kv_heads = b.shape[1]
    if kv_heads == a.shape[1]:
        product: np.ndarray = np.matmul(a, b)
    else:
        product = np.matmul(_by_kv_head(a, kv_heads), b[:, :, None])
        product = product.reshape(*a.shape[:-1], b.shape[-1])
    return product.astype(a.dtype, copy=False)


def _softmax(x: np.ndarray) -> np.ndarray:
    """The reference's softmax over the last axis: a row of -inf gives zeros, not NaN."""
    top = x.max(axis=-1, keepdims=True)
    zero, one = x.dtype.type(0), x.dtype.type(1)
    y: np.ndarray = x - np.where(np.isneginf(top), zero, top)
    np.exp(y, out=y)
    total = y.sum(axis=-1, keepdims=True)
    y /= np.where(total == zero, one, total)
    return y


def _hidden(
    q_len: int,
    total: int,
    offset: int | np.ndarray,
    s: AttentionSettings,
    nonpad: np.ndarray | None,
) -> np.ndarray | None:
    """Where the causal limit, the window and ``nonpad_kv_seqlen`` hide a key: (Sq, T), or
    (B, 1, Sq, T) for a per-batch offset or length; None when nothing is hidden."""
    if not (s.is_causal or s.is_windowed or nonpad is not None):
        return None
    queries = np.arange(q_len).reshape(q_len, 1)
    keys = np.arange(total).reshape(1, total)
    if np.ndim(offset):  # how far each key lies behind each query's absolute position
        lag = (queries + np.reshape(offset, (-1, 1, 1)) - keys)[:, None]
    else:
        lag = queries + int(offset) - keys
    hidden = np.zeros(lag.shape, np.bool_)
    if s.is_causal:
        hidden |= lag < 0
    if s.left >= 0:
        hidden |= lag > s.left
    if s.right >= 0:
        hidden |= -lag > s.right
    if nonpad is not None:
        hidden = hidden | (keys >= nonpad.reshape(-1, 1, 1, 1))
    return hidden


def _bias(
    dtype: np.dtype[Any],
    q_len: int,
    total: int,
    mask: np.ndarray | None,
    past: int,
    nonpad: np.ndarray | None,
    s: AttentionSettings,
) -> np.ndarray | None:
    """The additive bias of the scores (the mask, and -inf where a key is hidden), or None.

    The reference adds its 0 / -inf terms one by one; each is exact, so one add of their union
    gives the same values (a +inf in a float mask meets a hidden key as NaN in both).
    """
    if mask is not None:
        if mask.dtype == np.bool_:
            mask = np.where(mask, dtype.type(0), dtype.type(-np.inf))
        elif mask.dtype.kind != "f":
            mask = mask.astype(dtype)
        short = total - mask.shape[-1]
        if short > 0:
            widths = [(0, 0)] * (mask.ndim - 1) + [(0, short)]
            mask = np.pad(mask, widths, constant_values=-np.inf)
    offset = past if nonpad is None else nonpad.reshape(-1) - q_len
    hidden = _hidden(q_len, total, offset, s, nonpad)
    if hidden is None:
        return mask
    exact = np.result_type(dtype, mask) if mask is not None else dtype
    limit: np.ndarray = np.where(hidden, exact.type(-np.inf), exact.type(0))
    return limit if mask is None else mask + limit


def attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    bias: np.ndarray | None = None,
    *,
    scale: float | None = None,
    softcap: float = 0.0,
    precision: np.dtype[Any] | None = None,
    mode: int | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Y of 4-D `q`, `k` and `v` (K's and V's heads dividing Q's) and the additive `bias`, and
    the ``qk_matmul_output`` of `mode` (None when `mode` is None).

    Examples
    --------
    >>> q = k = np.zeros((1, 1, 2, 4), np.float32)
    >>> v = np.arange(8, dtype=np.float32).reshape(1, 1, 2, 4)
    >>> causal = np.array([[0, -np.inf], [0, 0]], np.float32)
    >>> y, probs = attention(q, k, v, causal, mode=3)
    >>> y[0, 0].tolist(), probs[0, 0].tolist()
    ([[0.0, 1.0, 2.0, 3.0], [2.0, 3.0, 4.0, 5.0]], [[1.0, 0.0], [0.5, 0.5]])
    """
    dtype = q.dtype
    root = dtype.type(np.sqrt(scale if scale is not None else 1 / np.sqrt(q.shape[3])))
    raw = scores = _grouped_matmul(q * root, (k * root).swapaxes(2, 3))
    if softcap > 0:
        scores = np.tanh(scores / softcap) * softcap
    biased = scores if bias is None else scores + bias
    # float16 summed in float32 (`accumulating`): 70 000 keys of one score gave Y = 0
    probs = _softmax(accumulating(biased) if precision is None else biased.astype(precision))
    if bias is not None:
        empty = np.isneginf(bias.max(axis=-1, keepdims=True))
        if empty.any():
            probs = np.where(empty, probs.dtype.type(0), probs)
    probs = probs.astype(dtype, copy=False)
    y = _grouped_matmul(probs, v)
    if mode is None:
        return y, None
    kept = (raw, scores, biased, probs)[mode]
    return y, kept.astype(dtype, copy=False)


def _compile(op: Op, opset: int) -> Kernel:
    s = read_settings(op)
    count = len(op.outputs)
    mode = s.mode if count > 3 and op.outputs[3] else None

    def kernel(inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        q, k, v, mask, past_key, past_value, nonpad = (*inputs, *(None,) * 7)[:7]
        assert q is not None, f"{op!r}: input Q is required"
        assert k is not None, f"{op!r}: input K is required"
        assert v is not None, f"{op!r}: input V is required"
        is_3d = q.ndim == 3
        if is_3d:
            assert s.q_heads is not None, f"{op!r}: q_num_heads is required"
            assert s.kv_heads is not None, f"{op!r}: kv_num_heads is required"
            q = _split_heads(q, s.q_heads)
            k, v = _split_heads(k, s.kv_heads), _split_heads(v, s.kv_heads)
        past = 0 if past_key is None else past_key.shape[2]
        if past_key is not None and past_value is not None:
            k = np.concatenate((past_key, k), axis=2)
            v = np.concatenate((past_value, v), axis=2)
        if nonpad is not None:  # lengths of the keys: none past K's
            expected = f"expected nonpad_kv_seqlen in [0, {k.shape[2]}] (the keys)"
            check_values_below(op, nonpad, k.shape[2] + 1, expected)
        bias = _bias(q.dtype, q.shape[2], k.shape[2], mask, past, nonpad, s)
        y, scores = attention(
            q, k, v, bias, scale=s.scale, softcap=s.softcap, precision=s.precision, mode=mode
        )
        if is_3d:
            # sizes spelt out: an empty query sequence leaves numpy no -1 to infer
            y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], y.shape[1] * y.shape[3])
        outputs = [y, k, v] if scores is None else [y, k, v, scores]
        return outputs[:count]

    return kernel


def _infer(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    q4, k4, v4, total = check_shapes(op, opset, read_settings(op), inputs)
    if not total:  # a softmax over no key: onnxruntime and onnx's reference refuse it too
        raise op_error(op, "expected a key length (past_key's plus K's) of 1 or more", total)
    q, k, v = inputs[:3]
    assert q is not None, f"{op!r}: Q is required"
    assert k is not None, f"{op!r}: K is required"
    assert v is not None, f"{op!r}: V is required"
    batch, q_heads, q_len, qk_size = q4
    y = (batch, q_len, q_heads * v4[3]) if len(q.shape) == 3 else (batch, q_heads, q_len, v4[3])
    metas = [
        Meta(y, q.dtype),
        Meta((*k4[:2], total, qk_size), k.dtype),
        Meta((*v4[:2], total, v4[3]), v.dtype),
        Meta((batch, q_heads, q_len, total), q.dtype),
    ]
    return metas[: len(op.outputs)]


def _cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """The two matmuls and 7 flops per score (see the module docstring)."""
    s = read_settings(op)
    q, k, v, _, past_key, _, _ = seven_inputs(inputs)
    assert q is not None, f"{op!r}: Q is required"
    assert k is not None, f"{op!r}: K is required"
    assert v is not None, f"{op!r}: V is required"
    batch, q_heads, q_len, qk_size = as_4d(q.shape, s.q_heads)
    total = as_4d(k.shape, s.kv_heads)[2] + (0 if past_key is None else past_key.shape[2])
    v_size = as_4d(v.shape, s.kv_heads)[3]
    scores = prod((batch, q_heads, q_len, total))
    flops = 2 * scores * (qk_size + v_size) + _FLOPS_PER_SCORE * scores
    scratch = _SCRATCH_PASSES * scores * q.dtype.itemsize
    return Cost(
        float(flops),
        nbytes(inputs),
        nbytes(outputs),
        "matmul",
        scratch_bytes=scratch,
        gemm_dim=min(q_len, total, qk_size, v_size),
    )


register(
    "Attention",
    "matmul",
    compile=_compile,
    infer=_infer,
    cost=_cost,
    # ONNX's T1 (Q, K, past_key) and T2 (V, past_value), the same at opsets 23 to 25
    one_type=((0, 1, 4), (2, 5)),
    required=3,
)
