"""The quantized linear ops beyond the single-op table: rounding, exact accumulation, omitted
zero points, a quantized graph end to end, the exact costs and every ModelError in full.

`cases_qlinear.py` checks each op against onnx's ReferenceEvaluator (or a hand-written
reference on ties, which that one rounds after adding the zero point).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import GraphBuilder, Op
from hetsim.kernels import OPS, Cost, Meta, execute, propagate_costs
from hetsim.kernels.integer import EXACT_FLOAT32_TERMS, accumulator_dtype, requantize

F16, F32, F64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
U8, I8, I16 = np.dtype("uint8"), np.dtype("int8"), np.dtype("int16")
I32, I64 = np.dtype("int32"), np.dtype("int64")


def _op(op_type: str, n_inputs: int, **attrs: Any) -> Op:
    return Op(op_type, "q0", tuple(f"i{i}" for i in range(n_inputs)), ("y",), attrs)


def _run(op_type: str, *inputs: np.ndarray | None, opset: int = 10, **attrs: Any) -> np.ndarray:
    return OPS[op_type].compile(_op(op_type, len(inputs), **attrs), opset)(list(inputs))[0]


def _raises(op_type: str, message: str) -> Any:
    return pytest.raises(ModelError, match=f"^{re.escape(f'op q0 ({op_type}): {message}')}$")


def _costs(op_type: str, metas: list[Meta | None], **attrs: Any) -> Cost:
    op = _op(op_type, len(metas), **attrs)
    definition = OPS[op_type]
    return definition.cost(op, metas, definition.infer(op, 10, metas))


def test_requantize_rounds_ties_to_even_then_adds_the_zero_point() -> None:
    acc = np.array([-5.0, -3.0, -1.0, 1.0, 3.0, 5.0])
    y = requantize(acc, np.float32(0.5), np.array(1, np.int8), I8)
    assert y.tolist() == [-1, -1, 1, 1, 3, 3]


def test_requantize_saturates_to_the_zero_points_dtype() -> None:
    acc = np.array([-1e12, -300.0, 300.0, 1e12])
    assert requantize(acc, np.float32(1.0), np.array(10, np.uint8), U8).tolist() == [0, 0, 255, 255]


def test_requantize_takes_the_product_in_float64() -> None:
    # 20971521 · 2^-23 is 2.5 + 2^-23: 3; in float32 the accumulator is 20971520, a tie, 2
    acc = np.array([20971521.0])
    assert requantize(acc, np.float32(2.0**-23), None, I8).tolist() == [3]


def test_matmul_integer_accumulates_exactly_past_float32() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(200, 256, (2, 5000)).astype(np.uint8)
    b = rng.integers(50, 128, (5000, 3)).astype(np.int8)
    zero_a, zero_b = np.array(3, np.uint8), np.array(-7, np.int8)
    want = (a.astype(np.int64) - 3) @ (b.astype(np.int64) + 7)
    assert np.abs(want).max() > 2**24  # past what a float32 accumulator holds exactly
    got = _run("MatMulInteger", a, b, zero_a, zero_b)
    assert (got.dtype, got.tolist()) == (I32, want.tolist())


def test_conv_integer_accumulates_exactly_past_float32() -> None:
    rng = np.random.default_rng(4)
    x = rng.integers(0, 128, (1, 300, 4, 4)).astype(np.int8)
    w = rng.integers(-128, -50, (2, 300, 3, 3)).astype(np.int8)
    centered_x, centered_w = x.astype(np.int64) + 100, w.astype(np.int64) - 50
    want = np.einsum("nchw,mchw->nm", centered_x[:, :, :3, :3], centered_w)
    got = _run("ConvInteger", x, w, np.array(-100, np.int8), np.array(50, np.int8))
    assert got.shape == (1, 2, 2, 2)
    assert np.abs(want).max() > 2**24
    assert got[:, :, 0, 0].tolist() == want.tolist()


@pytest.mark.parametrize("terms", [EXACT_FLOAT32_TERMS, EXACT_FLOAT32_TERMS + 1])
def test_integer_gemms_are_exact_at_the_largest_operands_either_side_of_float32s_limit(
    terms: int,
) -> None:
    # centered operands 0 or -255, at random, and one output all 255 · 255 products: its sum
    # is at most 2^24 at EXACT_FLOAT32_TERMS, and one more term makes it odd past 2^24, which
    # float32 cannot hold: there the kernel's float64 accumulator takes over
    rng = np.random.default_rng(terms)
    x = rng.choice(np.array([0, 255], np.uint8), (1, terms, 2, 2))
    w = rng.choice(np.array([-128, 127], np.int8), (3, terms, 1, 1))
    zero_x, zero_w = np.array(255, np.uint8), np.array(127, np.int8)
    x[0, :, 0, 0], w[0, :, 0, 0] = 0, -128  # one output of terms · 255 · 255 in size
    centered_x, centered_w = x.astype(np.int64) - 255, w.astype(np.int64) - 127
    want = np.einsum("nchw,mc->nmhw", centered_x, centered_w[:, :, 0, 0])
    assert np.abs(want).max() == terms * 255 * 255
    assert accumulator_dtype(terms) == (F32 if terms <= EXACT_FLOAT32_TERMS else F64)
    got = _run("ConvInteger", x, w, zero_x, zero_w)
    assert got.tolist() == want.tolist()
    a, b = x[0].reshape(terms, 4).T, w[:, :, 0, 0].T
    got = _run("MatMulInteger", a, b, zero_x, zero_w)
    assert got.tolist() == (centered_x[0].reshape(terms, 4).T @ centered_w[:, :, 0, 0].T).tolist()


def test_omitted_zero_points_are_zero_and_give_the_input_dtype() -> None:
    a = np.array([[1, 2], [3, 4]], np.int8)
    b = np.array([[1, 0], [0, -1]], np.int8)
    one = np.array(1.0, np.float32)
    y = _run("QLinearMatMul", a, one, None, b, one, None, np.array(0.5, np.float32), None)
    assert (y.dtype, y.tolist()) == (I8, [[2, -4], [6, -8]])


def test_a_conv_without_its_trailing_zero_point_is_refused() -> None:
    # seven inputs (no y_zero_point, no B): onnx's schema requires y_zero_point, as onnxruntime
    x = np.full((1, 1, 2, 2), 5, np.uint8)
    w = np.array([1, 2], np.uint8).reshape(2, 1, 1, 1)
    one, zero = np.array(1.0, np.float32), np.array(0, np.uint8)
    with _raises("QLinearConv", "expected at least 8 inputs, got 7"):
        _run("QLinearConv", x, one, zero, w, one, zero, np.array(2.0, np.float32))


def test_per_channel_conv_scales_each_output_channel() -> None:
    x = np.full((1, 1, 2, 2), 5, np.uint8)
    w = np.array([1, 2, 3], np.uint8).reshape(3, 1, 1, 1)
    w_scale = np.array([1.0, 0.5, 0.25], np.float32)
    w_zero = np.array([0, 1, 2], np.uint8)
    one, zero = np.array(1.0, np.float32), np.array(0, np.uint8)
    y = _run("QLinearConv", x, one, zero, w, w_scale, w_zero, one, np.array(10, np.uint8))
    # channel m: 5 * (w - zero) * scale, + 10: 15, 12.5 -> 12 (ties to even), 11.25 -> 11
    assert y[0, :, 0, 0].tolist() == [15, 12, 11]


def test_quantized_graph_matches_the_float_conv_within_a_step() -> None:
    rng = np.random.default_rng(5)
    x_scale, w_scale, y_scale = (np.array(s, np.float32) for s in (0.02, 0.01, 0.05))
    zero_x, zero_y = np.array(128, np.uint8), np.array(0, np.int8)
    w = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    b = GraphBuilder("qconv", opset=13)
    q = b.op("QuantizeLinear", b.input("x", (1, 3, 6, 6)), x_scale, zero_x, name="q")
    conv = b.op(
        "QLinearConv",
        q,
        x_scale,
        zero_x,
        w,
        np.array([0.01] * 4, np.float32),
        np.zeros(4, np.int8),
        y_scale,
        zero_y,
        name="conv",
        pads=[1, 1, 1, 1],
    )
    graph = b.build(b.op("DequantizeLinear", conv, y_scale, zero_y, name="d"))
    values = rng.uniform(-2.0, 2.0, (1, 3, 6, 6)).astype(np.float32)
    (got,) = execute(graph, {"x": values}).values()
    quantized = np.clip(np.rint(values / x_scale) + 128, 0, 255) - 128
    reference = OPS["Conv"].compile(Op("Conv", "c", ("x", "w"), ("y",), {"pads": [1] * 4}), 13)
    want = reference([quantized * x_scale, w.astype(np.float32) * w_scale])[0]
    assert got.dtype == F32
    assert np.abs(got - np.clip(want, -128 * y_scale, 127 * y_scale)).max() <= y_scale / 2 + 1e-4
    _, costs = propagate_costs(graph)
    assert costs["conv"].flops == 2 * 4 * 36 * 27 + 3 * 4 * 36


def test_qlinear_conv_costs_conv_flops_plus_three_per_output() -> None:
    metas = [Meta((1, 3, 8, 8), U8), Meta((), F32), Meta((), U8), Meta((4, 3, 3, 3), U8)]
    metas += [Meta((), F32), Meta((), U8), Meta((), F32), Meta((), U8), Meta((4,), I32)]
    cost = _costs("QLinearConv", metas, pads=[1, 1, 1, 1])
    # 256 outputs of 27 MACs, the bias, 3 to requantize; im2col columns of 1728 float32 values
    # (27 terms: float32 is exact); numpy passes: x and w cast to float32 (1 byte read, 4
    # written per element) and centered in place (4 and 4), over 192 and 108 elements; over
    # the 256 outputs the bias's sum into float64 (4 and 8), the product, rounding, zero point
    # and saturation in place (8 and 8 each), the cast to uint8 (8 and 1); and the 3 calls
    # that form the multiplier
    flops = 2 * 256 * 27 + 256 + 3 * 256
    centering = 192 * (1 + 4) + 192 * (4 + 4) + 108 * (1 + 4) + 108 * (4 + 4)
    requantizing = 256 * (4 + 8) + 4 * 256 * (8 + 8) + 256 * (8 + 1)
    passes = {"numpy_calls": 2 + 2 + 6 + 3, "numpy_bytes": centering + requantizing}
    read = 192 + 4 + 1 + 108 + 4 + 1 + 4 + 1 + 16
    assert cost == Cost(float(flops), read, 256, "conv", 2 * 1728 * 4, 4, **passes)


def test_conv_integer_costs_conv_flops() -> None:
    metas = [Meta((1, 3, 8, 8), U8), Meta((4, 3, 3, 3), U8), Meta((), U8), Meta((4,), U8)]
    cost = _costs("ConvInteger", metas, pads=[1, 1, 1, 1])
    # x and w centered as above; the float32 accumulator to int64 (4 and 8), then to int32
    centering = 192 * (1 + 4) + 192 * (4 + 4) + 108 * (1 + 4) + 108 * (4 + 4)
    passes = {"numpy_calls": 2 + 2 + 2, "numpy_bytes": centering + 256 * (4 + 8) + 256 * (8 + 4)}
    assert cost == Cost(2.0 * 256 * 27, 192 + 108 + 1 + 4, 256 * 4, "conv", 13824, 4, **passes)


def test_conv_integer_counts_float64_columns_past_float32s_exact_sums() -> None:
    metas = [Meta((1, 29, 4, 4), U8), Meta((2, 29, 3, 3), U8)]  # 261 terms per output
    cost = _costs("ConvInteger", metas)
    assert cost.scratch_bytes == 2 * 4 * 261 * 8


def test_pointwise_conv_integer_has_no_scratch() -> None:
    cost = _costs("ConvInteger", [Meta((1, 8, 5, 5), I8), Meta((2, 8, 1, 1), I8)])
    # no zero points: x and w only cast (1 byte read, 4 written), then the two wrapping casts
    moved = 200 * (1 + 4) + 16 * (1 + 4) + 50 * (4 + 8) + 50 * (8 + 4)
    passes = {"numpy_calls": 1 + 1 + 2, "numpy_bytes": moved}
    assert cost == Cost(2.0 * 50 * 8, 200 + 16, 50 * 4, "conv", 0, 2, **passes)


def test_qlinear_matmul_costs_matmul_flops_plus_three_per_output() -> None:
    metas = [Meta((2, 4, 6), I8), Meta((), F32), Meta((), I8), Meta((6, 5), I8)]
    metas += [Meta((5,), F32), Meta((5,), I8), Meta((), F32), Meta((), U8)]
    cost = _costs("QLinearMatMul", metas)
    # K = 6: float32; a and b cast and centered; over 40 outputs the product into float64, the
    # rounding, the zero point and the saturation in place, the cast; the multiplier's 3 calls
    centering = 48 * (1 + 4) + 48 * (4 + 4) + 30 * (1 + 4) + 30 * (4 + 4)
    requantizing = 40 * (4 + 8) + 3 * 40 * (8 + 8) + 40 * (8 + 1)
    passes = {"numpy_calls": 2 + 2 + 5 + 3, "numpy_bytes": centering + requantizing}
    read = 48 + 4 + 1 + 30 + 20 + 5 + 4 + 1
    assert cost == Cost(2.0 * 40 * 6 + 3 * 40, read, 40, "matmul", 0, 4, **passes)


def test_matmul_integer_costs_matmul_flops() -> None:
    metas = [Meta((3, 7), U8), Meta((7, 2), U8), Meta((), U8), Meta((1,), U8)]
    centering = 21 * (1 + 4) + 21 * (4 + 4) + 14 * (1 + 4) + 14 * (4 + 4)
    passes = {"numpy_calls": 2 + 2 + 2, "numpy_bytes": centering + 6 * (4 + 8) + 6 * (8 + 4)}
    want = Cost(2.0 * 6 * 7, 21 + 14 + 1 + 1, 24, "matmul", 0, 2, **passes)
    assert _costs("MatMulInteger", metas) == want


def test_compile_refuses_a_bad_group() -> None:
    op = _op("QLinearConv", 8, group=0)
    with _raises("QLinearConv", "expected group >= 1, got 0"):
        OPS["QLinearConv"].compile(op, 10)


def _conv_metas(**changes: Meta | None) -> list[Meta | None]:
    """QLinearConv's inputs (x uint8 [1, 3, 5, 5], w int8 [4, 3, 3, 3], per tensor), changed."""
    metas: dict[str, Meta | None] = {
        "x": Meta((1, 3, 5, 5), U8),
        "x_scale": Meta((), F32),
        "x_zero_point": Meta((), U8),
        "w": Meta((4, 3, 3, 3), I8),
        "w_scale": Meta((), F32),
        "w_zero_point": Meta((), I8),
        "y_scale": Meta((), F32),
        "y_zero_point": Meta((), U8),
        "B": None,
    }
    return list({**metas, **changes}.values())


def _matmul_metas(**changes: Meta | None) -> list[Meta | None]:
    """QLinearMatMul's inputs (a int8 [2, 3, 4], b uint8 [4, 5], per tensor), changed."""
    metas: dict[str, Meta | None] = {
        "a": Meta((2, 3, 4), I8),
        "a_scale": Meta((), F32),
        "a_zero_point": Meta((), I8),
        "b": Meta((4, 5), U8),
        "b_scale": Meta((), F32),
        "b_zero_point": Meta((), U8),
        "y_scale": Meta((), F32),
        "y_zero_point": Meta((), I8),
    }
    return list({**metas, **changes}.values())


def _scales(dtype: np.dtype[Any], prefix: str) -> dict[str, Meta]:
    return {f"{p}_scale": Meta((), dtype) for p in (prefix, "w" if prefix == "x" else "b", "y")}


X_CONV, W_CONV = Meta((1, 3, 5, 5), U8), Meta((4, 3, 3, 3), I8)
A_MATMUL, B_MATMUL = Meta((2, 3, 4), U8), Meta((4, 5), U8)

# every ModelError, in full: (op type, input metas, attributes, opset, message)
ERRORS = [
    pytest.param(
        "QLinearConv",
        _conv_metas(w_scale=None),
        {},
        10,
        "expected inputs x, x_scale, w, w_scale and y_scale, got no w_scale",
        id="qlinearconv-missing-scale",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(x=Meta((1, 3, 5, 5), F32), x_zero_point=None),
        {},
        10,
        "expected an x of int8 or uint8, got float32",
        id="qlinearconv-float-x",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(x_zero_point=Meta((), I8)),
        {},
        10,
        "expected inputs of one dtype, got uint8 and int8",
        id="qlinearconv-zero-point-dtype",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(y_zero_point=Meta((), I16)),
        {},
        10,
        "expected a y_zero_point of int8 or uint8, got int16",
        id="qlinearconv-int16-output",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(**_scales(F16, "x")),
        {},
        10,
        "expected an x_scale of float32, got float16",
        id="qlinearconv-float16-scales",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(x_scale=Meta((3,), F32)),
        {},
        10,
        "expected a one-element x_scale, got shape [3]",
        id="qlinearconv-per-channel-x",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(w_scale=Meta((3,), F32), w_zero_point=Meta((3,), I8)),
        {},
        10,
        "expected a one-element w_scale or one of [4] (per output channel), got shape [3]",
        id="qlinearconv-per-channel-length",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(w_zero_point=Meta((3,), I8)),
        {},
        10,
        "expected a one-element w_zero_point or one of [4] (per output channel), got shape [3]",
        id="qlinearconv-zero-point-finer-than-scale",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(w_scale=Meta((4,), F32), w_zero_point=Meta((2,), I8)),
        {},
        10,
        "expected a w_zero_point of w_scale's shape [4], got [2]",
        id="qlinearconv-zero-point-of-another-length",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(y_zero_point=Meta((2,), U8)),
        {},
        10,
        "expected a one-element y_zero_point, as y_scale is, got shape [2]",
        id="qlinearconv-per-channel-y-zero-point",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(B=Meta((4,), I64)),
        {},
        10,
        "expected a B of int32, got int64",
        id="qlinearconv-bias-dtype",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(B=Meta((3,), I32)),
        {},
        10,
        "expected a B of shape [4] (w's output channels), got [3]",
        id="qlinearconv-bias-length",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(w=Meta((4, 2, 3, 3), I8)),
        {},
        10,
        "expected weight (M, C/group, ...) with group 1 and C=3, got weight [4, 2, 3, 3]",
        id="qlinearconv-weight-channels",
    ),
    pytest.param(
        "QLinearConv",
        _conv_metas(),
        {"pads": [1, 1]},
        10,
        "expected 4 values in 'pads', got [1, 1]",
        id="qlinearconv-pads",
    ),
    pytest.param(
        "ConvInteger",
        [X_CONV, W_CONV, Meta((2,), U8)],
        {},
        10,
        "expected a one-element x_zero_point, got shape [2]",
        id="convinteger-per-channel-x",
    ),
    pytest.param(
        "ConvInteger",
        [X_CONV, W_CONV, None, Meta((3,), I8)],
        {},
        10,
        "expected a one-element w_zero_point or one of [4] (per output channel), got shape [3]",
        id="convinteger-per-channel-length",
    ),
    pytest.param(
        "ConvInteger",
        [X_CONV, None],
        {},
        10,
        "expected inputs x and w, got no w",
        id="convinteger-missing-w",
    ),
    pytest.param(
        "ConvInteger",
        [Meta((1, 3, 5, 5), I32), W_CONV],
        {},
        10,
        "expected an x of int8 or uint8, got int32",
        id="convinteger-int32-x",
    ),
    pytest.param(
        "QLinearMatMul",
        _matmul_metas(a_scale=Meta((4,), F32), a_zero_point=Meta((4,), I8)),
        {},
        10,
        "expected a one-element a_scale or one of [3] or [2, 3, 1] (per row of a), got shape [4]",
        id="qlinearmatmul-per-row-length",
    ),
    pytest.param(
        "QLinearMatMul",
        _matmul_metas(b_scale=Meta((4,), F32), b_zero_point=Meta((4,), U8)),
        {},
        10,
        "expected a one-element b_scale or one of [5] or [1, 5] (per column of b), got shape [4]",
        id="qlinearmatmul-per-column-length",
    ),
    pytest.param(
        "QLinearMatMul",
        _matmul_metas(b_scale=Meta((5,), F32), b_zero_point=Meta((1, 5), U8)),
        {},
        10,
        "expected a b_zero_point of b_scale's shape [5], got [1, 5]",
        id="qlinearmatmul-zero-point-shape",
    ),
    pytest.param(
        "QLinearMatMul",
        _matmul_metas(a=Meta((4,), I8), a_scale=Meta((4,), F32), a_zero_point=Meta((4,), I8)),
        {},
        10,
        "expected a one-element a_scale, got shape [4]",
        id="qlinearmatmul-vector-per-row",
    ),
    pytest.param(
        "QLinearMatMul",
        _matmul_metas(y_scale=Meta((5,), F32)),
        {},
        10,
        "expected a one-element y_scale, got shape [5]",
        id="qlinearmatmul-per-column-y",
    ),
    pytest.param(
        "QLinearMatMul",
        _matmul_metas(**_scales(F64, "a")),
        {},
        21,
        "expected an a_scale of float32 or float16, got float64",
        id="qlinearmatmul-float64-scales",
    ),
    pytest.param(
        "QLinearMatMul",
        _matmul_metas(**_scales(F16, "a")),
        {},
        10,
        "expected an a_scale of float32, got float16",
        id="qlinearmatmul-float16-scales-before-opset-21",
    ),
    pytest.param(
        "QLinearMatMul",
        _matmul_metas(b=Meta((3, 5), U8)),
        {},
        10,
        "expected the last dim of A to match the rows of B, got [2, 3, 4] and [3, 5]",
        id="qlinearmatmul-inner-dims",
    ),
    pytest.param(
        "QLinearMatMul",
        _matmul_metas(y_scale=None),
        {},
        10,
        "expected inputs a, a_scale, b, b_scale and y_scale, got no y_scale",
        id="qlinearmatmul-missing-scale",
    ),
    pytest.param(
        "MatMulInteger",
        [Meta((2, 4), F32), B_MATMUL],
        {},
        10,
        "expected an A of int8 or uint8, got float32",
        id="matmulinteger-float-a",
    ),
    pytest.param(
        "MatMulInteger",
        [A_MATMUL, B_MATMUL, None, Meta((4,), U8)],
        {},
        10,
        "expected a one-element b_zero_point or one of [5] or [1, 5] (per column of B), "
        "got shape [4]",
        id="matmulinteger-per-column-length",
    ),
    pytest.param(
        "MatMulInteger",
        [A_MATMUL, B_MATMUL, Meta((2, 3), U8)],
        {},
        10,
        "expected a one-element a_zero_point or one of [3] or [2, 3, 1] (per row of A), "
        "got shape [2, 3]",
        id="matmulinteger-per-row-shape",
    ),
    pytest.param(
        "MatMulInteger",
        [A_MATMUL],
        {},
        10,
        "expected at least 2 inputs, got 1",
        id="matmulinteger-missing-b",
    ),
]


@pytest.mark.parametrize(("op_type", "metas", "attrs", "opset", "message"), ERRORS)
def test_shape_rule_error(
    op_type: str, metas: list[Meta | None], attrs: dict[str, Any], opset: int, message: str
) -> None:
    with _raises(op_type, message):
        OPS[op_type].infer(_op(op_type, len(metas), **attrs), opset, metas)
