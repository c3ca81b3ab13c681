"""The quantization ops beyond the single-op table: rounding, saturation, blocks, costs, errors.

`cases_quant.py` checks every op against onnx's ReferenceEvaluator; here the numerics the
reference leaves to chance (out-of-range values, which it wraps through int32), a QDQ graph
run end to end, the exact costs and every ModelError in full.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import GraphBuilder, Op
from hetsim.kernels import OPS, Cost, Meta, execute, propagate_costs
from hetsim.kernels.quant import QUANTIZE_CALLS

F32, F16 = np.dtype("float32"), np.dtype("float16")
U8, I8, I32 = np.dtype("uint8"), np.dtype("int8"), np.dtype("int32")


def _op(op_type: str, n_inputs: int = 3, **attrs: Any) -> Op:
    return Op(op_type, "q0", tuple(f"i{i}" for i in range(n_inputs)), ("y",), attrs)


def _run(op_type: str, *inputs: np.ndarray | None, opset: int = 21, **attrs: Any) -> np.ndarray:
    return OPS[op_type].compile(_op(op_type, len(inputs), **attrs), opset)(list(inputs))[0]


def _infer(op_type: str, *metas: Meta | None, opset: int = 21, **attrs: Any) -> list[Meta]:
    return OPS[op_type].infer(_op(op_type, len(metas), **attrs), opset, list(metas))


def _raises(op_type: str, message: str) -> Any:
    return pytest.raises(ModelError, match=f"^{re.escape(f'op q0 ({op_type}): {message}')}$")


def test_quantize_rounds_ties_to_even() -> None:
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], np.float32)
    y = _run("QuantizeLinear", x, np.array(1.0, np.float32), np.array(0, np.int8))
    assert y.tolist() == [-2, -2, 0, 0, 2, 2]


def test_quantize_saturates_values_past_the_range_and_past_int32() -> None:
    x = np.array([-1e12, -200.0, 200.0, 1e12, np.inf], np.float32)
    y = _run("QuantizeLinear", x, np.array(1.0, np.float32), np.array(10, np.int8))
    assert y.tolist() == [-128, -128, 127, 127, 127]


def test_quantize_float16_to_uint16_saturates_without_warnings() -> None:
    x = np.array([-1.0, 3.0, 60000.0, np.inf], np.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = _run("QuantizeLinear", x, np.array(1.0, np.float16), output_dtype=4)
    assert (y.dtype, y.tolist()) == (np.dtype("uint16"), [0, 3, 60000, 65535])


@pytest.mark.parametrize(
    ("dtype", "zero", "want"),
    [(np.int8, 0, [-128, 127, -128, 10]), (np.int8, 10, [-128, 127, -128, 20]),
     (np.uint8, 0, [0, 255, 0, 10]), (np.uint8, 128, [0, 255, 0, 138])],
)  # fmt: skip
def test_quantize_gives_nan_the_dtype_s_minimum_as_onnxruntime_does(
    dtype: type, zero: int, want: list[int]
) -> None:
    # `want`: onnxruntime 1.32's CPU QuantizeLinear on these inputs (the spec leaves NaN open;
    # numpy's cast made it 0 with a RuntimeWarning)
    x = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = _run("QuantizeLinear", x, np.array(0.1, np.float32), np.array(zero, dtype))
        by_zero = _run("QuantizeLinear", x, np.array(0.0, np.float32), np.array(zero, dtype))
    assert y.tolist() == want
    info = np.iinfo(dtype)  # x / 0: NaN, +inf, -inf, +inf
    assert by_zero.tolist() == [info.min, info.max, info.min, info.max]


def test_quantize_without_zero_point_gives_uint8() -> None:
    y = _run("QuantizeLinear", np.array([-3.0, 7.0, 300.0], np.float32), np.array(1.0, F32))
    assert (y.dtype, y.tolist()) == (U8, [0, 7, 255])


def test_blocked_quantize_repeats_each_scale_over_its_block() -> None:
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    scale = np.array([[1.0, 2.0], [4.0, 8.0]], np.float32)  # blocks of 4 and a last one of 1
    y = _run("QuantizeLinear", x, scale, axis=1, block_size=4)
    assert y.tolist() == [[0, 1, 2, 3, 2], [1, 2, 2, 2, 1]]


def test_per_axis_dequantize_scales_each_channel() -> None:
    x = np.array([[10, 20], [10, 20]], np.uint8)
    y = _run("DequantizeLinear", x, np.array([0.5, 2.0], F32), np.array([10, 0], np.uint8), axis=0)
    assert (y.dtype, y.tolist()) == (F32, [[0.0, 5.0], [20.0, 40.0]])


def test_dequantize_subtracts_an_int32_zero_point_exactly() -> None:
    # (16777217 - 1) * 1 = 16777216, which float32 holds; subtracted in float32 (16777217 is
    # no float32: 16777216), it gave 16777215
    x = np.array([16777217, -16777217], np.int32)
    y = _run("DequantizeLinear", x, np.array(1.0, F32), np.array(1, np.int32))
    assert y.tolist() == [16777216.0, -16777218.0]


def test_dequantize_gives_the_scale_dtype_or_output_dtype() -> None:
    x, scale = np.array([1, 2], np.int8), np.array(0.5, F16)
    assert _run("DequantizeLinear", x, scale).dtype == F16
    assert _run("DequantizeLinear", x, scale, opset=23, output_dtype=1).dtype == F32


def test_dynamic_quantize_follows_onnx_formula() -> None:
    y, scale, zero_point = _run_dynamic(np.array([0, 2, -3, -2.5, 1.34, 0.5], np.float32))
    # ONNX's own example: scale (2 + 3) / 255, zero point round(3 / scale)
    assert scale.tolist() == np.float32(5.0) / np.float32(255)
    assert (zero_point.dtype, zero_point.shape, int(zero_point)) == (U8, (), 153)
    assert y.tolist() == [153, 255, 0, 26, 221, 179]


def test_dynamic_quantize_of_zeros_uses_scale_one_over_255() -> None:
    y, scale, zero_point = _run_dynamic(np.zeros(3, np.float32))
    assert (y.tolist(), scale.tolist(), int(zero_point)) == ([0, 0, 0], 1 / np.float32(255), 0)


def test_dynamic_quantize_of_an_empty_x_is_empty() -> None:
    # np.max of it raised: "zero-size array to reduction operation maximum"
    y, scale, zero_point = _run_dynamic(np.zeros((2, 0), np.float32))
    assert (y.shape, scale.tolist(), int(zero_point)) == ((2, 0), 1 / np.float32(255), 0)


def _run_dynamic(x: np.ndarray) -> list[np.ndarray]:
    return OPS["DynamicQuantizeLinear"].compile(_op("DynamicQuantizeLinear", 1), 11)([x])


def test_dynamic_quantize_shapes_scale_and_zero_point_as_scalars() -> None:
    metas = _infer("DynamicQuantizeLinear", Meta((2, 3), F32), opset=11)
    assert [(m.shape, m.dtype) for m in metas] == [((2, 3), U8), ((), F32), ((), U8)]


def test_qdq_graph_runs_and_round_trips_within_half_a_step() -> None:
    b = GraphBuilder("qdq", opset=13)
    x = b.input("x", (2, 3))
    scale, zero_point = np.array([0.1, 0.2, 0.3], np.float32), np.array([0, 5, -5], np.int8)
    q = b.op("QuantizeLinear", x, scale, zero_point)
    graph = b.build(b.op("DequantizeLinear", q, scale, zero_point))
    values = np.linspace(-5.0, 5.0, 6, dtype=np.float32).reshape(2, 3)
    (got,) = execute(graph, {"x": values}).values()
    assert got.dtype == F32
    assert np.all(np.abs(got - values) <= scale / 2 + 1e-6)


def _costs(op_type: str, metas: list[Meta | None], **attrs: Any) -> Cost:
    op = _op(op_type, len(metas), **attrs)
    definition = OPS[op_type]
    return definition.cost(op, metas, definition.infer(op, 21, metas))


def test_quantize_costs_four_flops_per_element() -> None:
    cost = _costs("QuantizeLinear", [Meta((8, 16), F32), Meta((16,), F32), Meta((16,), I8)])
    # after the division: round, fmax, fmin, the zero point, the cast
    want = Cost(4.0 * 128, 128 * 4 + 16 * 4 + 16, 128, "elementwise", numpy_calls=5)
    assert cost == want


def test_quantize_counts_the_cast_to_its_precision_and_no_zero_point() -> None:
    cost = _costs("QuantizeLinear", [Meta((8, 16), F32), Meta((), F32)], precision=10)
    assert cost.numpy_calls == QUANTIZE_CALLS + 1  # x cast to float16 first; no zero point


def test_dequantize_costs_two_flops_per_element() -> None:
    cost = _costs("DequantizeLinear", [Meta((8, 16), U8), Meta((), F32), Meta((), U8)])
    # after the cast to float32: the zero point, the scale; the output is float32 already
    assert cost == Cost(2.0 * 128, 128 + 4 + 1, 128 * 4, "elementwise", numpy_calls=2)


def test_dequantize_to_float16_counts_the_last_cast() -> None:
    cost = _costs("DequantizeLinear", [Meta((8, 16), U8), Meta((), np.dtype("float16"))])
    assert cost.numpy_calls == 2  # the scale, the cast to float16; no zero point


def test_dynamic_quantize_costs_six_flops_and_reads_x_twice() -> None:
    cost = _costs("DynamicQuantizeLinear", [Meta((8, 16), F32)])
    assert cost == Cost(6.0 * 128, 2 * 128 * 4, 128 + 4 + 1, "elementwise")


def test_propagate_costs_a_qdq_graph() -> None:
    b = GraphBuilder("qdq", opset=13)
    q = b.op("QuantizeLinear", b.input("x", (4,)), np.array(0.5, np.float32), name="q")
    graph = b.build(b.op("DequantizeLinear", q, np.array(0.5, np.float32), name="d"))
    _, costs = propagate_costs(graph)
    assert (costs["q"].flops, costs["d"].flops) == (16.0, 8.0)


# every ModelError, in full: (op type, input metas, attributes, opset, message)
ERRORS = [
    pytest.param(
        "QuantizeLinear",
        [Meta((2, 3), F32), Meta((4,), F32), Meta((4,), U8)],
        {},
        "expected a y_scale of 3 elements (x's axis 1), got 4",
        id="per-axis-length",
    ),
    pytest.param(
        "QuantizeLinear",
        [Meta((2, 3), F32), Meta((3,), F32), Meta((2,), U8)],
        {},
        "expected a y_zero_point of y_scale's shape [3], got [2]",
        id="zero-point-shape",
    ),
    pytest.param(
        "QuantizeLinear",
        [Meta((2, 3), F32), Meta((), F32), Meta((3,), U8)],
        {},
        "expected a one-element y_zero_point, as y_scale is, got shape [3]",
        id="zero-point-of-per-tensor-scale",
    ),
    pytest.param(
        "DequantizeLinear",
        [Meta((2, 3), U8), Meta((3,), F32), Meta((3,), U8)],
        {"axis": 2},
        "expected an axis in [-2, 2), got 2",
        id="axis-out-of-range",
    ),
    pytest.param(
        "QuantizeLinear",
        [Meta((3,), F32), Meta((), F32), Meta((), I32)],
        {},
        "expected a y_zero_point of int8, uint8, int16 or uint16, got int32",
        id="zero-point-dtype",
    ),
    pytest.param(
        "QuantizeLinear",
        [Meta((3,), F32), Meta((), F32), Meta((), U8)],
        {"output_dtype": 3},
        "expected an output_dtype of y_zero_point's dtype uint8, got int8",
        id="output-dtype-against-zero-point",
    ),
    pytest.param(
        "QuantizeLinear",
        [Meta((3,), F32), Meta((), F32)],
        {"output_dtype": 1},
        "expected an output_dtype of int8, uint8, int16 or uint16, got float32",
        id="output-dtype-not-quantized",
    ),
    pytest.param(
        "QuantizeLinear",
        [Meta((3,), F32), Meta((), F32)],
        {"output_dtype": 16},
        "expected a supported dtype code [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13], got 16",
        id="output-dtype-unsupported",
    ),
    pytest.param(
        "QuantizeLinear",
        [Meta((4, 6), F32), Meta((4, 3), F32)],
        {},
        "expected a scalar or 1-D y_scale (no block_size), got shape [4, 3]",
        id="blocked-scale-without-block-size",
    ),
    pytest.param(
        "QuantizeLinear",
        [Meta((4, 6), F32), Meta((4, 2), F32)],
        {"block_size": 2},
        "expected a y_scale of shape [4, 3] (x's [4, 6] in blocks of 2 along axis 1), got [4, 2]",
        id="blocked-scale-shape",
    ),
    pytest.param(
        "DequantizeLinear",
        [Meta((4, 6), U8), Meta((6,), F32)],
        {"block_size": 2},
        "expected an x_scale of shape [4, 3] (x's [4, 6] in blocks of 2 along axis 1), got [6]",
        id="blocked-scale-rank",
    ),
    pytest.param(
        "QuantizeLinear",
        [Meta((4, 6), F32), Meta((4, 3), F32)],
        {"block_size": -2},
        "expected a non-negative block_size, got -2",
        id="negative-block-size",
    ),
    pytest.param(
        "DequantizeLinear",
        [Meta((3,), F32), Meta((), F32)],
        {},
        "expected an x of int8, uint8, int16, uint16 or int32, got float32",
        id="dequantize-x-dtype",
    ),
    pytest.param(
        "DequantizeLinear",
        [Meta((3,), U8), Meta((), I32)],
        {},
        "expected an x_scale of float32 or float16, got int32",
        id="dequantize-scale-dtype",
    ),
    pytest.param(
        "DequantizeLinear",
        [Meta((3,), U8), Meta((), F32)],
        {"output_dtype": 11},
        "expected an output_dtype of float32 or float16, got float64",
        id="dequantize-output-dtype",
    ),
    pytest.param(
        "QuantizeLinear",
        [Meta((3,), F32), None],
        {},
        "expected inputs x and a scale, got no scale",
        id="missing-scale",
    ),
    pytest.param(
        "DynamicQuantizeLinear",
        [Meta((3,), F16)],
        {},
        "expected an x of float32, got float16",
        id="dynamic-x-dtype",
    ),
]


@pytest.mark.parametrize(("op_type", "metas", "attrs", "message"), ERRORS)
def test_shape_rule_error(
    op_type: str, metas: list[Meta | None], attrs: dict[str, Any], message: str
) -> None:
    with _raises(op_type, message):
        _infer(op_type, *metas, opset=23, **attrs)


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        (
            {"output_dtype": 1},
            "expected an output_dtype of int8, uint8, int16 or uint16, got float32",
        ),
        ({"block_size": -1}, "expected a non-negative block_size, got -1"),
        ({"precision": 3}, "expected a precision of float32 or float16, got int8"),
    ],
)
def test_compile_refuses_bad_attributes(attrs: dict[str, Any], message: str) -> None:
    with _raises("QuantizeLinear", message):
        OPS["QuantizeLinear"].compile(_op("QuantizeLinear", **attrs), 23)
