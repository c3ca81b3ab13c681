"""What an Attention asks for: its settings (`read_settings`) and the shapes of its inputs,
checked against each other (`check_shapes`), as ONNX's reference checks them (opsets 23 to 25).

Q, K and V are all 3-D, (B, S, H·D) split into ``q_num_heads`` and ``kv_num_heads`` heads, or
all 4-D, (B, H, S, D), where from opset 25 the head counts must not be given (`as_4d`); Q's
heads are a multiple of K's and V's (grouped-query attention); past_key and past_value come
together and extend K and V along the sequence; ``nonpad_kv_seqlen`` (opset 24) excludes them;
an attn_mask broadcasts to the scores (B, Hq, Sq, T), its last dim at most T from opset 24 (23's
spec has it broadcast, as onnxruntime does; onnx's reference pads a shorter one at 23 too). The
kernel, its shape rule and its cost are `hetsim.kernels.attention`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetsim.ir import Op
from hetsim.kernels.checks import flag_attr, float_attr, int_attr, op_error
from hetsim.kernels.meta import Meta

__all__ = [
    "NO_HEADS_ON_4D_OPSET",
    "AttentionSettings",
    "as_4d",
    "check_shapes",
    "read_settings",
    "seven_inputs",
]

NO_HEADS_ON_4D_OPSET = 25
"""From this opset, q_num_heads and kv_num_heads on 4-D inputs are an error (the reference)."""

_SHORT_MASK_OPSET = 24
"""From this opset, an attn_mask's last dim may be shorter than the keys (padded with -inf)."""

_PRECISIONS: dict[int, np.dtype[Any]] = {
    1: np.dtype("float32"),
    10: np.dtype("float16"),
    11: np.dtype("float64"),
}


@dataclass(frozen=True, slots=True)
class AttentionSettings:
    """An Attention's attributes, read and checked once."""

    scale: float | None
    is_causal: bool
    q_heads: int | None
    kv_heads: int | None
    softcap: float
    mode: int
    precision: np.dtype[Any] | None
    left: int
    right: int

    @property
    def is_windowed(self) -> bool:
        return self.left >= 0 or self.right >= 0


def read_settings(op: Op) -> AttentionSettings:
    """The attributes of Attention `op`, checked.

    Raises
    ------
    OpError
        A bad mode, softmax precision, window size or head count.
    """
    mode = int_attr(op, "qk_matmul_output_mode", 0)
    if mode not in (0, 1, 2, 3):
        raise op_error(op, "expected qk_matmul_output_mode 0, 1, 2 or 3", mode)
    code = int_attr(op, "softmax_precision", None)
    if code is not None and code not in _PRECISIONS:
        raise op_error(op, f"expected softmax_precision one of {sorted(_PRECISIONS)}", code)
    left, right = int_attr(op, "left_window_size", -1), int_attr(op, "right_window_size", -1)
    if min(left, right) < -1:
        raise op_error(op, "expected window sizes of -1 or more", f"{left} and {right}")
    heads = [int_attr(op, name, None) for name in ("q_num_heads", "kv_num_heads")]
    if any(h is not None and h < 1 for h in heads):
        raise op_error(op, "expected q_num_heads and kv_num_heads of 1 or more", heads)
    return AttentionSettings(
        scale=float_attr(op, "scale", None),
        is_causal=flag_attr(op, "is_causal", 0),
        q_heads=heads[0],
        kv_heads=heads[1],
        softcap=float_attr(op, "softcap", 0.0),
        mode=mode,
        precision=None if code is None else _PRECISIONS[code],
        left=left,
        right=right,
    )


def as_4d(shape: tuple[int, ...], heads: int | None) -> tuple[int, ...]:
    """A Q, K or V shape as the kernel sees it: (B, S, H·D) is (B, H, S, D)."""
    if len(shape) == 4:
        return shape
    assert heads is not None, f"3-D shape {shape}: heads are required"
    batch, length, hidden = shape
    return (batch, heads, length, hidden // heads)


def seven_inputs(inputs: Sequence[Meta | None]) -> tuple[Meta | None, ...]:
    """The seven inputs, None for each omitted one."""
    return (*inputs, *(None,) * 7)[:7]


def check_shapes(
    op: Op, opset: int, s: AttentionSettings, inputs: Sequence[Meta | None]
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int]:
    """Q's, K's and V's shapes as (B, H, S, D), and the key length (past plus new), after
    checking every input against the others and `op`'s settings `s`.

    Raises
    ------
    OpError
        Inputs of mixed ranks, heads that do not divide, mismatched batch, heads, lengths or
        head sizes, a past_key without a past_value, a bad nonpad_kv_seqlen or attn_mask.
    """
    q, k, v, mask, past_key, past_value, nonpad = seven_inputs(inputs)
    assert q is not None, f"{op!r}: Q is required"
    assert k is not None, f"{op!r}: K is required"
    assert v is not None, f"{op!r}: V is required"
    ranks = {len(q.shape), len(k.shape), len(v.shape)}
    if len(ranks) > 1 or ranks - {3, 4}:
        shapes = f"{list(q.shape)}, {list(k.shape)} and {list(v.shape)}"
        raise op_error(op, "expected Q, K and V all 3-D or all 4-D", shapes)
    if len(q.shape) == 3:
        _check_3d(op, s, q, k, v)
    else:
        _check_4d(op, opset, s, q, k)
    q4, k4, v4 = (
        as_4d(q.shape, s.q_heads),
        as_4d(k.shape, s.kv_heads),
        as_4d(v.shape, s.kv_heads),
    )
    _check_qkv(op, q4, k4, v4)
    batch, q_heads, q_len, _ = q4
    total = k4[2] + _check_past(op, k4, v4, past_key, past_value)
    if nonpad is not None:
        _check_nonpad(op, batch, nonpad, past_key is not None)
    if mask is not None:
        _check_mask(op, opset, mask, (batch, q_heads, q_len, total))
    return q4, k4, v4, total


def _check_3d(op: Op, s: AttentionSettings, q: Meta, k: Meta, v: Meta) -> None:
    if s.q_heads is None or s.kv_heads is None:
        got = f"q_num_heads={s.q_heads}, kv_num_heads={s.kv_heads}"
        raise op_error(op, "expected q_num_heads and kv_num_heads for 3-D inputs", got)
    for name, meta, heads, which in (
        ("Q", q, s.q_heads, "q_num_heads"),
        ("K", k, s.kv_heads, "kv_num_heads"),
        ("V", v, s.kv_heads, "kv_num_heads"),
    ):
        if meta.shape[2] % heads:
            expected = f"expected a hidden size of {name} divisible by {which} {heads}"
            raise op_error(op, expected, meta.shape[2])


def _check_4d(op: Op, opset: int, s: AttentionSettings, q: Meta, k: Meta) -> None:
    given = {"q_num_heads": s.q_heads, "kv_num_heads": s.kv_heads}
    given = {name: heads for name, heads in given.items() if heads is not None}
    if given and opset >= NO_HEADS_ON_4D_OPSET:
        expected = f"expected no q_num_heads or kv_num_heads for 4-D inputs at opset {opset}"
        raise op_error(op, expected, ", ".join(f"{n}={h}" for n, h in given.items()))
    for name, meta in (("q_num_heads", q), ("kv_num_heads", k)):
        if given.get(name, meta.shape[1]) != meta.shape[1]:
            expected = f"expected {name} equal to the {meta.shape[1]} heads of the input"
            raise op_error(op, expected, given[name])


def _check_qkv(op: Op, q: tuple[int, ...], k: tuple[int, ...], v: tuple[int, ...]) -> None:
    """Q, K and V as (B, H, S, D): one batch, K and V alike, Q's heads a multiple of K's."""
    shown = f"{list(q)}, {list(k)} and {list(v)} (as [B, heads, S, head size])"
    if not q[0] == k[0] == v[0]:
        raise op_error(op, "expected Q, K and V of one batch size", shown)
    if k[1:3] != v[1:3]:
        raise op_error(op, "expected K and V of one number of heads and sequence length", shown)
    if q[3] != k[3]:
        raise op_error(op, "expected Q and K of one head size", shown)
    if q[1] % k[1]:
        raise op_error(op, "expected Q's heads a multiple of K's and V's", shown)


def _check_past(
    op: Op, k: tuple[int, ...], v: tuple[int, ...], past_key: Meta | None, past_value: Meta | None
) -> int:
    """The past length, after checking past_key and past_value against K and V."""
    if past_key is None and past_value is None:
        return 0
    if past_key is None or past_value is None:
        got = "only past_key" if past_value is None else "only past_value"
        raise op_error(op, "expected past_key and past_value together", got)
    shapes = f"{list(past_key.shape)} and {list(past_value.shape)}"
    if len(past_key.shape) != 4 or len(past_value.shape) != 4:
        raise op_error(op, "expected a 4-D past_key and past_value", shapes)
    length = past_key.shape[2]
    if past_key.shape != (*k[:2], length, k[3]) or past_value.shape != (*v[:2], length, v[3]):
        expected = f"expected past_key [{k[0]}, {k[1]}, P, {k[3]}] and past_value [{v[0]}, "
        raise op_error(op, f"{expected}{v[1]}, P, {v[3]}]", shapes)
    return length


def _check_nonpad(op: Op, batch: int, nonpad: Meta, has_past: bool) -> None:
    """Before opset 24 the input count check refuses a 7th input (`hetsim.kernels.arity`)."""
    if has_past:
        raise op_error(op, "expected nonpad_kv_seqlen without past_key and past_value", "both")
    if nonpad.shape != (batch,) or nonpad.dtype != np.int64:
        got = f"{nonpad.dtype}{list(nonpad.shape)}"
        raise op_error(op, f"expected an int64 nonpad_kv_seqlen of shape [{batch}]", got)


def _check_mask(op: Op, opset: int, mask: Meta, scores: tuple[int, ...]) -> None:
    """The mask broadcasts to the scores (B, Hq, Sq, T), from opset 24 its last dim at most T
    (padded)."""
    shape = mask.shape
    leading = zip(shape[-2::-1], scores[-2::-1], strict=False)
    may_be_shorter = opset >= _SHORT_MASK_OPSET
    if (
        not 1 <= len(shape) <= 4
        or shape[-1] > scores[-1]
        or not (may_be_shorter or shape[-1] in (1, scores[-1]))
        or any(m not in (1, s) for m, s in leading)
    ):
        shorter = " (its last dim may be shorter)" if may_be_shorter else ""
        expected = f"expected an attn_mask broadcastable to {list(scores)}{shorter}"
        raise op_error(op, expected, f"shape {list(shape)}")
