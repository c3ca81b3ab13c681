"""Attention beyond the single-op table: bit-for-bit agreement with onnx's reference, omitted
outputs, the cost formula, and every ModelError of its shape rule and attributes in full."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import OPS, Cost, Meta, execute
from tests.kernels.case import Case, case_op, run_reference
from tests.kernels.cases_attention import CASES

F32 = np.dtype("float32")
NAMES = ("q", "k", "v", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen")


def _op(count: int, outputs: tuple[str, ...] = ("y",), **attrs: Any) -> Op:
    return Op("Attention", "attention0", NAMES[:count], outputs, attrs)


def _metas(*shapes: tuple[int, ...] | None, dtype: str = "float32") -> list[Meta | None]:
    return [None if s is None else Meta(s, np.dtype(dtype)) for s in shapes]


def _infer(metas: list[Meta | None], opset: int = 23, **attrs: Any) -> list[Meta]:
    return OPS["Attention"].infer(_op(len(metas), **attrs), opset, metas)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize(
    "case", [c for c in CASES if c.id != "attention-mask-int64"], ids=lambda c: c.id
)
def test_kernel_is_the_reference_bit_for_bit(case: Case) -> None:
    # the reference's operation order and dtypes, step for step; an integer mask is the one
    # departure (the reference adds it in float64, hetsim casts it to Q's dtype)
    got = OPS["Attention"].compile(case_op(case), case.opset)(case.arrays)
    # but a float16 softmax sums in float32 (`accumulating`), where the reference's is float16
    half = case.arrays[0] is not None and case.arrays[0].dtype == np.float16
    for have, want in zip(got, run_reference(case), strict=True):
        if half and "softmax_precision" not in case.attrs:
            np.testing.assert_allclose(have, want, rtol=2.5e-3, atol=1e-3)
        else:
            np.testing.assert_array_equal(have, want)


def test_omitted_outputs_keep_their_positions() -> None:
    q = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    op = _op(3, ("y", "", "", "scores"), qk_matmul_output_mode=3)
    outputs = OPS["Attention"].compile(op, 23)([q, q, q])
    metas = OPS["Attention"].infer(op, 23, _metas(q.shape, q.shape, q.shape))
    assert (
        [a.shape for a in outputs]
        == [m.shape for m in metas]
        == [(1, 2, 3, 4)] * 3 + [(1, 2, 3, 3)]
    )
    np.testing.assert_allclose(outputs[3].sum(axis=-1), np.ones((1, 2, 3)), rtol=1e-6)


def test_execute_hands_out_the_scores_past_omitted_outputs() -> None:
    q = np.random.default_rng(1).standard_normal((1, 2, 3, 4)).astype(np.float32)
    op = Op("Attention", "a", ("q", "q", "q"), ("y", "", "", "probs"), {"qk_matmul_output_mode": 3})
    graph = Graph("g", (op,), {"q": TensorType(q.shape, "float32")}, ("y", "probs"), opset=23)
    got = execute(graph, {"q": q})
    assert got["probs"].shape == (1, 2, 3, 3)
    np.testing.assert_allclose(got["y"], got["probs"] @ q, rtol=1e-6)


def test_only_the_named_trailing_outputs_are_computed() -> None:
    q = np.ones((1, 1, 2, 4), np.float32)
    assert len(OPS["Attention"].compile(_op(3, ("y", "present_key")), 23)([q, q, q])) == 2


def test_3d_inputs_give_a_3d_y_and_4d_present_key_and_value() -> None:
    metas = _metas((2, 3, 16), (2, 5, 8), (2, 5, 12), None, (2, 2, 4, 4), (2, 2, 4, 6))
    op = _op(6, ("y", "pk", "pv", "qk"), q_num_heads=4, kv_num_heads=2)
    shapes = [m.shape for m in OPS["Attention"].infer(op, 23, metas)]
    assert shapes == [(2, 3, 24), (2, 2, 9, 4), (2, 2, 9, 6), (2, 4, 3, 9)]


def test_cost_counts_both_matmuls_and_seven_flops_per_score() -> None:
    # B=2, Hq=4, Sq=3, T=2+5=7, Dqk=8, Dv=6: 168 scores
    metas = _metas((2, 4, 3, 8), (2, 2, 5, 8), (2, 2, 5, 6), None, (2, 2, 2, 8), (2, 2, 2, 6))
    op = _op(6, ("y", "pk", "pv"))
    outputs = OPS["Attention"].infer(op, 23, metas)
    cost = OPS["Attention"].cost(op, metas, outputs)
    scores = 2 * 4 * 3 * 7
    read = 4 * (2 * 4 * 3 * 8 + 2 * 2 * 5 * 8 + 2 * 2 * 5 * 6 + 2 * 2 * 2 * 8 + 2 * 2 * 2 * 6)
    written = 4 * (2 * 4 * 3 * 6 + 2 * 2 * 7 * 8 + 2 * 2 * 7 * 6)
    expected = Cost(
        float(2 * scores * (8 + 6) + 7 * scores),
        read,
        written,
        "matmul",
        scratch_bytes=10 * scores * 4,
        gemm_dim=3,
    )
    assert cost == expected


P = "op attention0 (Attention): "
Q4, K4 = (1, 4, 3, 8), (1, 2, 5, 8)

SHAPE_ERRORS = [
    pytest.param(
        _metas((1, 3, 8), K4, K4),
        23,
        {},
        "expected Q, K and V all 3-D or all 4-D, got [1, 3, 8], [1, 2, 5, 8] and [1, 2, 5, 8]",
        id="ranks-differ",
    ),
    pytest.param(
        _metas((1, 3, 8), (1, 5, 8), (1, 5, 8)),
        23,
        {"q_num_heads": 2},
        "expected q_num_heads and kv_num_heads for 3-D inputs, "
        "got q_num_heads=2, kv_num_heads=None",
        id="3d-without-heads",
    ),
    pytest.param(
        _metas((1, 3, 10), (1, 5, 8), (1, 5, 8)),
        23,
        {"q_num_heads": 4, "kv_num_heads": 2},
        "expected a hidden size of Q divisible by q_num_heads 4, got 10",
        id="hidden-not-divisible",
    ),
    pytest.param(
        _metas((1, 3, 8), (1, 5, 8), (1, 5, 9)),
        23,
        {"q_num_heads": 2, "kv_num_heads": 2},
        "expected a hidden size of V divisible by kv_num_heads 2, got 9",
        id="v-hidden-not-divisible",
    ),
    pytest.param(
        _metas((1, 3, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8)),
        23,
        {},
        "expected Q's heads a multiple of K's and V's, got [1, 3, 3, 8], [1, 2, 5, 8] and "
        "[1, 2, 5, 8] (as [B, heads, S, head size])",
        id="heads-not-a-multiple",
    ),
    pytest.param(
        _metas(Q4, (1, 2, 5, 6), (1, 2, 5, 8)),
        23,
        {},
        "expected Q and K of one head size, got [1, 4, 3, 8], [1, 2, 5, 6] and [1, 2, 5, 8] "
        "(as [B, heads, S, head size])",
        id="head-sizes-differ",
    ),
    pytest.param(
        _metas((2, 4, 3, 8), K4, K4),
        23,
        {},
        "expected Q, K and V of one batch size, got [2, 4, 3, 8], [1, 2, 5, 8] and "
        "[1, 2, 5, 8] (as [B, heads, S, head size])",
        id="batches-differ",
    ),
    pytest.param(
        _metas(Q4, K4, (1, 2, 4, 8)),
        23,
        {},
        "expected K and V of one number of heads and sequence length, got [1, 4, 3, 8], "
        "[1, 2, 5, 8] and [1, 2, 4, 8] (as [B, heads, S, head size])",
        id="k-and-v-differ",
    ),
    pytest.param(
        _metas(Q4, K4, K4, None, (1, 2, 2, 8)),
        23,
        {},
        "expected past_key and past_value together, got only past_key",
        id="past-key-without-past-value",
    ),
    pytest.param(
        _metas(Q4, K4, K4, None, None, (1, 2, 2, 8)),
        23,
        {},
        "expected past_key and past_value together, got only past_value",
        id="past-value-without-past-key",
    ),
    pytest.param(
        _metas(Q4, K4, K4, None, (1, 2, 2, 8), (1, 2, 3, 8)),
        23,
        {},
        "expected past_key [1, 2, P, 8] and past_value [1, 2, P, 8], "
        "got [1, 2, 2, 8] and [1, 2, 3, 8]",
        id="past-lengths-differ",
    ),
    pytest.param(
        _metas(Q4, K4, K4, None, (2, 2, 8), (2, 2, 8)),
        23,
        {},
        "expected a 4-D past_key and past_value, got [2, 2, 8] and [2, 2, 8]",
        id="past-3d",
    ),
    pytest.param(
        _metas(Q4, K4, K4, (3, 6)),
        24,
        {},
        "expected an attn_mask broadcastable to [1, 4, 3, 5] (its last dim may be shorter), "
        "got shape [3, 6]",
        id="mask-too-long",
    ),
    pytest.param(
        _metas(Q4, K4, K4, (2, 3, 5)),
        24,
        {},
        "expected an attn_mask broadcastable to [1, 4, 3, 5] (its last dim may be shorter), "
        "got shape [2, 3, 5]",
        id="mask-not-broadcastable",
    ),
    pytest.param(
        _metas(Q4, K4, K4, (1, 1, 1, 3, 5)),
        24,
        {},
        "expected an attn_mask broadcastable to [1, 4, 3, 5] (its last dim may be shorter), "
        "got shape [1, 1, 1, 3, 5]",
        id="mask-5d",
    ),
    pytest.param(
        [*_metas(Q4, K4, K4), None, None, None, *_metas((1,), dtype="int64")],
        23,
        {},
        "expected at most 6 inputs at opset 23, got 7",
        id="nonpad-at-opset-23",
    ),
    pytest.param(
        [*_metas(Q4, K4, K4, None, (1, 2, 2, 8), (1, 2, 2, 8)), *_metas((1,), dtype="int64")],
        24,
        {},
        "expected nonpad_kv_seqlen without past_key and past_value, got both",
        id="nonpad-with-past",
    ),
    pytest.param(
        [*_metas(Q4, K4, K4), None, None, None, *_metas((2,), dtype="int64")],
        24,
        {},
        "expected an int64 nonpad_kv_seqlen of shape [1], got int64[2]",
        id="nonpad-shape",
    ),
    pytest.param(
        [*_metas(Q4, K4, K4), None, None, None, *_metas((1,), dtype="int32")],
        24,
        {},
        "expected an int64 nonpad_kv_seqlen of shape [1], got int32[1]",
        id="nonpad-dtype",
    ),
    pytest.param(
        _metas(Q4, K4, K4),
        25,
        {"q_num_heads": 4, "kv_num_heads": 2},
        "expected no q_num_heads or kv_num_heads for 4-D inputs at opset 25, "
        "got q_num_heads=4, kv_num_heads=2",
        id="heads-on-4d-at-opset-25",
    ),
    pytest.param(
        _metas(Q4, K4, K4),
        24,
        {"kv_num_heads": 4},
        "expected kv_num_heads equal to the 2 heads of the input, got 4",
        id="heads-on-4d-disagree",
    ),
]


@pytest.mark.parametrize(("metas", "opset", "attrs", "message"), SHAPE_ERRORS)
def test_shape_rule_errors(
    metas: list[Meta | None], opset: int, attrs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ModelError, match=f"^{re.escape(P + message)}$"):
        _infer(metas, opset, **attrs)


ATTRIBUTE_ERRORS = [
    pytest.param(
        {"qk_matmul_output_mode": 4},
        "expected qk_matmul_output_mode 0, 1, 2 or 3, got 4",
        id="mode",
    ),
    pytest.param(
        {"softmax_precision": 16},
        "expected softmax_precision one of [1, 10, 11], got 16",
        id="bfloat16-precision",
    ),
    pytest.param(
        {"left_window_size": -2},
        "expected window sizes of -1 or more, got -2 and -1",
        id="window",
    ),
    pytest.param(
        {"q_num_heads": 0, "kv_num_heads": 1},
        "expected q_num_heads and kv_num_heads of 1 or more, got [0, 1]",
        id="heads",
    ),
]


@pytest.mark.parametrize(("attrs", "message"), ATTRIBUTE_ERRORS)
def test_attribute_errors_in_the_shape_rule(attrs: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelError, match=f"^{re.escape(P + message)}$"):
        _infer(_metas(Q4, K4, K4), 23, **attrs)


@pytest.mark.parametrize(("attrs", "message"), ATTRIBUTE_ERRORS)
def test_attribute_errors_at_compile(attrs: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelError, match=f"^{re.escape(P + message)}$"):
        OPS["Attention"].compile(_op(3, **attrs), 23)


def test_inputs_of_one_onnx_type_must_share_a_dtype() -> None:
    metas = [*_metas(Q4, K4, K4, None), *_metas((1, 2, 2, 8), dtype="float64"), None]
    message = f"{P}expected inputs of one dtype, got float32 and float64"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        _infer(metas, 23)


@pytest.mark.parametrize("length", [-1, 6])
def test_nonpad_kv_seqlen_outside_the_keys_is_refused(length: int) -> None:
    # -1 hid every key and moved the causal offset before the first; 6 read as 5
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    k = rng.standard_normal((1, 2, 5, 4)).astype(np.float32)
    op = Op("Attention", "a", ("q", "k", "v", "", "", "", "n"), ("y",), {})
    message = f"op a (Attention): expected nonpad_kv_seqlen in [0, 5] (the keys), got {length}"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        OPS["Attention"].compile(op, 24)([q, k, k, None, None, None, np.array([length])])


def test_a_float16_softmax_over_many_keys_sums_in_float32() -> None:
    # 70 000 keys of one score: their exponentials summed in float16 passed 65504, and Y was 0
    q = np.zeros((1, 1, 1, 4), np.float16)
    k = np.zeros((1, 1, 70_000, 4), np.float16)
    v = np.ones((1, 1, 70_000, 4), np.float16)
    (y,) = OPS["Attention"].compile(Op("Attention", "a", ("q", "k", "v"), ("y",)), 23)([q, k, v])
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float32), 1.0, rtol=1e-3)
