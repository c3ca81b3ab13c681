"""onnxruntime's quantized ops (`hetsim.kernels.qoperator`): what their shape rule refuses, in
full, and their cost. Values against onnxruntime are `cases_qoperator.py`'s."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import Op
from hetsim.kernels import OPS, Meta
from hetsim.kernels.integer import EXACT_FLOAT32_TERMS

INT8 = np.dtype("int8")


def _add(**attrs: Any) -> Op:
    names = ("a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "c_scale", "c_zero")
    return Op("QLinearAdd", "qadd", names, ("c",), attrs)


def _metas(
    a: Any = INT8, b: Any = INT8, scale: Any = "float32", zero: Any = INT8, scale_shape: Any = ()
) -> list[Meta | None]:
    s, z = Meta(scale_shape, np.dtype(scale)), Meta((), np.dtype(zero))
    return [Meta((2, 3), np.dtype(a)), s, z, Meta((3,), np.dtype(b)), s, z, s, z]


@pytest.mark.parametrize(
    ("metas", "message"),
    [
        (_metas(a="float32", b="float32", zero="float32"),
         "expected an input of int8 or uint8, got float32"),
        (_metas(b="uint8"), "expected every operand of int8, got uint8"),
        (_metas(scale="float16"), "expected a scale of float32 at input 1, got float16"),
        (_metas(zero="uint8"), "expected a zero point of int8, got uint8"),
        (_metas(scale_shape=(3,)), "expected a scale of one element, got (3,)"),
    ],
)  # fmt: skip
def test_the_shape_rule_refuses_what_the_op_does_not_state(
    metas: list[Meta | None], message: str
) -> None:
    with pytest.raises(ModelError) as caught:
        OPS["QLinearAdd"].infer(_add(), 17, metas)
    assert str(caught.value) == f"op qadd (QLinearAdd): {message}"


def test_pools_take_channels_first_only() -> None:
    names = ("x", "x_scale", "x_zero", "y_scale", "y_zero")
    op = Op("QLinearGlobalAveragePool", "gap", names, ("y",), {"channels_last": 1})
    metas = [Meta((1, 4, 4, 3), INT8), Meta((), np.dtype("float32")), Meta((), INT8)] * 2
    message = "op gap (QLinearGlobalAveragePool): expected channels_last 0 (NCHW), got 1"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        OPS["QLinearGlobalAveragePool"].infer(op, 17, metas[:5])
    with pytest.raises(ModelError, match="channels_last 0"):
        OPS["QLinearGlobalAveragePool"].compile(op, 17)


def test_cost_is_the_float_op_s_plus_the_quantization_at_int8_bytes() -> None:
    op, metas = _add(), _metas()
    (out,) = OPS["QLinearAdd"].infer(op, 17, metas)
    cost = OPS["QLinearAdd"].cost(op, metas, [out])
    # Add: 1 flop per output element (6); dequantize 2 per operand element (6 + 3); quantize 4
    # per output element (6)
    assert cost.flops == 6 + 2 * 9 + 4 * 6
    assert cost.bytes_read == 6 + 3 + 3 * (4 + 1)  # the operands, then 3 scales and zero points
    assert cost.bytes_written == 6
    assert cost.op_class == "elementwise"
    # the numpy lowering's calls: each DequantizeLinear casts, subtracts its zero point and
    # multiplies (3 calls, 2 without a zero point); Add 1; QuantizeLinear divides, rounds,
    # adds the zero point, saturates twice and casts (6): all but the op's first call
    assert (cost.numpy_calls, cost.numpy_bytes) == (3 + 3 + 1 + 6 - 1, 0)
    no_zeros = [None if i in (2, 5) else m for i, m in enumerate(metas)]
    assert OPS["QLinearAdd"].cost(op, no_zeros, [out]).numpy_calls == 2 + 2 + 1 + 6 - 1


def _qgemm_metas(
    a: Any = INT8, b: Any = INT8, b_scale: Any = (), c: bool = True, y: Any = ("scale", "zero")
) -> list[Meta | None]:
    f32, i32 = np.dtype("float32"), np.dtype("int32")
    return [
        Meta((3, 5), np.dtype(a)), Meta((), f32), Meta((), np.dtype(a)),
        Meta((5, 4), np.dtype(b)), Meta(b_scale, f32), Meta(b_scale, np.dtype(b)),
        Meta((4,), i32) if c else None,
        Meta((), f32) if "scale" in y else None, Meta((), np.dtype(a)) if "zero" in y else None,
    ]  # fmt: skip


QGEMM = Op("QGemm", "fc", tuple(f"in{i}" for i in range(9)), ("y",))


@pytest.mark.parametrize(
    ("metas", "message"),
    [
        (_qgemm_metas()[:2], "expected an input a_zero_point, got none"),
        (_qgemm_metas(b="uint8"),
         "expected a B of int8, as A is (onnxruntime's kernels), got uint8"),
        (_qgemm_metas(b_scale=(5,)),
         "expected a one-element b_scale or one of [4] (per column of B'), got shape [5]"),
        (_qgemm_metas(y=("scale",)),
         "expected a y_zero_point with y_scale (an 8-bit output; neither: float32), got none"),
        (_qgemm_metas(y=("zero",)),
         "expected a y_scale with y_zero_point (an 8-bit output; neither: float32), got none"),
    ],
)  # fmt: skip
def test_qgemm_s_shape_rule_refuses_what_onnxruntime_does_not_run(
    metas: list[Meta | None], message: str
) -> None:
    with pytest.raises(ModelError) as caught:
        OPS["QGemm"].infer(QGEMM, 17, metas)
    assert str(caught.value) == f"op fc (QGemm): {message}"


def test_qgemm_output_dtype_and_cost() -> None:
    # [3, 5] x [5, 4]: 2·K = 10 flops per output, 1 for the bias C, 3 to requantize (1 to scale)
    quantized, floats = _qgemm_metas(), _qgemm_metas(c=False, y=())
    (out,) = OPS["QGemm"].infer(QGEMM, 17, quantized)
    assert (out.shape, out.dtype) == ((3, 4), INT8)
    cost = OPS["QGemm"].cost(QGEMM, quantized, [out])
    assert cost.flops == 12 * (10 + 1 + 3)
    assert cost.bytes_read == 15 + 4 + 1 + 20 + 4 + 1 + 16 + 4 + 1
    assert (cost.bytes_written, cost.op_class, cost.gemm_dim) == (12, "matmul", 3)
    (as_float,) = OPS["QGemm"].infer(QGEMM, 17, floats)
    assert (as_float.shape, as_float.dtype) == ((3, 4), np.dtype("float32"))
    assert OPS["QGemm"].cost(QGEMM, floats, [as_float]).flops == 12 * (10 + 1)


def test_qgemm_counts_the_numpy_lowering_s_passes() -> None:
    # A [3, 5] and B [5, 4] (K = 5: float32) each cast (1 byte read, 4 written per element)
    # and centered in place (4 and 4); over the 12 int8 outputs C's sum into float64 (4 and
    # 8), the product, rounding, zero point and saturation in place (8 and 8), the cast (8 and
    # 1), and 4 calls for the multiplier; a float output without C: a cast (4 and 4) and the
    # scaling (4 and 4), and 2 calls for the multiplier
    quantized, floats = _qgemm_metas(), _qgemm_metas(c=False, y=())
    centering = 15 * (1 + 4) + 15 * (4 + 4) + 20 * (1 + 4) + 20 * (4 + 4)
    (out,) = OPS["QGemm"].infer(QGEMM, 17, quantized)
    cost = OPS["QGemm"].cost(QGEMM, quantized, [out])
    requantizing = 12 * (4 + 8) + 4 * 12 * (8 + 8) + 12 * (8 + 1)
    assert (cost.numpy_calls, cost.numpy_bytes) == (2 + 2 + 6 + 4, centering + requantizing)
    (as_float,) = OPS["QGemm"].infer(QGEMM, 17, floats)
    cost = OPS["QGemm"].cost(QGEMM, floats, [as_float])
    assert (cost.numpy_calls, cost.numpy_bytes) == (2 + 2 + 2 + 2, centering + 2 * 12 * (4 + 4))


@pytest.mark.parametrize("terms", [EXACT_FLOAT32_TERMS, EXACT_FLOAT32_TERMS + 1])
def test_qgemm_accumulates_exactly_either_side_of_float32s_limit(terms: int) -> None:
    # centered A of 0 or -255, centered B of -255 or 0: one output sums `terms` products of
    # 255 · 255, odd and past 2^24 with one term more, where float32 cannot hold it; C takes
    # all of it but 1 back, so a float output shows a rounded accumulator as 0 or 2
    rng = np.random.default_rng(terms)
    a = rng.choice(np.array([0, 255], np.uint8), (2, terms))
    b = rng.choice(np.array([-128, 127], np.int8), (terms, 3))
    a[0], b[:, 0] = 0, -128
    largest = terms * 255 * 255
    c = np.array([1 - largest, 0, 0], np.int32)
    one = np.array(1.0, np.float32)
    inputs = [a, one, np.array(255, np.uint8), b, one, np.array(127, np.int8), c]
    (got,) = OPS["QGemm"].compile(QGEMM, 17)(inputs)
    want = (a.astype(np.int64) - 255) @ (b.astype(np.int64) - 127) + c
    assert (int(want[0, 0]), got.dtype) == (1, np.float32)
    assert got.tolist() == want.astype(np.float32).tolist()


def _concat_metas(second: Any = INT8, count: int = 2) -> list[Meta | None]:
    f32 = np.dtype("float32")
    operands = [(Meta((1, 2), INT8), INT8), (Meta((1, 3), np.dtype(second)), np.dtype(second))]
    metas: list[Meta | None] = [Meta((), f32), Meta((), INT8)]
    for meta, zero in operands[:count]:
        metas += [meta, Meta((), f32), Meta((), zero)]
    return metas


def test_qlinear_concat_takes_any_number_of_operands_of_one_dtype() -> None:
    # its output's scale and zero point come first, then each operand's triple
    op = Op("QLinearConcat", "cat", tuple(f"i{i}" for i in range(8)), ("y",), {"axis": 1})
    (out,) = OPS["QLinearConcat"].infer(op, 17, _concat_metas())
    assert (out.shape, out.dtype) == ((1, 5), INT8)
    cost = OPS["QLinearConcat"].cost(op, _concat_metas(), [out])
    # Concat moves (no flops); dequantize 2 per operand element (5), quantize 4 per output (5)
    assert (cost.flops, cost.op_class) == (2 * 5 + 4 * 5, "data_movement")
    message = "op cat (QLinearConcat): expected every operand of int8, got uint8"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        OPS["QLinearConcat"].infer(op, 17, _concat_metas(second="uint8"))
    alone = Op("QLinearConcat", "cat", ("s", "z"), ("y",), {"axis": 1})
    message = "op cat (QLinearConcat): expected an operand at input 2, got none"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        OPS["QLinearConcat"].infer(alone, 17, _concat_metas(count=0))


QUANTIZED = ("x", "x_scale", "x_zero", "y_scale", "y_zero")


@pytest.mark.parametrize("opset", [11, 13])
def test_qlinear_softmax_normalizes_the_last_axis_by_default(opset: int) -> None:
    # onnxruntime's schema gives axis -1 whatever Softmax version the op follows; Softmax-11's
    # own default, 1, had normalized a [2, 3, 4] input over axis 1 (up to 255 steps off), and a
    # 1-D input was refused (found by a differential fuzz against onnxruntime)
    x = np.random.default_rng(0).integers(0, 256, (2, 3, 4)).astype(np.uint8)
    scale, zero, out_scale = np.float32(0.05), np.uint8(1), np.float32(1 / 256)
    op = Op("QLinearSoftmax", "sm", QUANTIZED, ("y",), {"opset": opset})
    y = OPS["QLinearSoftmax"].compile(op, 17)([x, scale, zero, out_scale, np.uint8(0)])[0]
    real = (x.astype(np.float32) - np.float32(zero)) * scale
    e = np.exp(real - real.max(axis=-1, keepdims=True))
    expected = np.clip(np.rint(e / e.sum(axis=-1, keepdims=True) / out_scale), 0, 255)
    assert y.dtype == np.uint8
    assert np.abs(y.astype(int) - expected.astype(int)).max() <= 1  # float rounding at a tie


def test_a_qlinear_op_s_error_names_its_own_type() -> None:
    # it named the float op's (AveragePool), a type the model does not have
    attrs = {"kernel_shape": [1], "ceil_mode": 1, "auto_pad": "VALID"}
    op = Op("QLinearAveragePool", "p", QUANTIZED, ("y",), attrs)
    message = "op p (QLinearAveragePool): expected ceil_mode 0 with auto_pad, got auto_pad 'VALID'"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        OPS["QLinearAveragePool"].compile(op, 17)
    scale, zero = Meta((), np.dtype("float32")), Meta((), np.dtype("uint8"))
    metas: list[Meta | None] = [Meta((2, 1, 4), np.dtype("uint8")), scale, zero, scale, zero]
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):  # timing mode alike
        OPS["QLinearAveragePool"].infer(op, 17, metas)
