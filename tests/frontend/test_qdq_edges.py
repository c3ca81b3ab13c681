"""QDQ fusion where it must not change a value: a Resize that fills with a float, a negative
scale, one weight dequantized two ways, a made-up zero point's name. Each model is checked
against onnx's ReferenceEvaluator and against the same model loaded unfused."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from hetsim.frontend import load_onnx  # noqa: E402
from hetsim.kernels import execute  # noqa: E402


def _init(value: Any, name: str) -> Any:
    return numpy_helper.from_array(np.asarray(value), name)


def _model(nodes: list[Any], inputs: list[Any], outputs: list[str], inits: list[Any]) -> Any:
    graph = oh.make_graph(
        nodes, "g", inputs, [oh.make_tensor_value_info(o, T.UNDEFINED, None) for o in outputs],
        inits,
    )  # fmt: skip
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 19)])


def _agree(model: Any, feeds: dict[str, np.ndarray], output: str) -> np.ndarray:
    """The output as fused, after checking it against the reference and the unfused load."""
    names = [o.name for o in model.graph.output]
    expected = ReferenceEvaluator(model).run(None, feeds)[names.index(output)]
    unfused = execute(load_onnx(model, fuse_qdq=False), feeds)[output]
    fused = execute(load_onnx(model), feeds)[output]
    np.testing.assert_array_equal(unfused, expected)
    np.testing.assert_array_equal(fused, expected)
    return fused


def test_a_resize_that_crops_and_fills_stays_on_floats() -> None:
    # moved onto the uint8 tensor, its extrapolation_value 0.0 was written as 0, where the Q
    # maps it to the zero point 128: [0 0 10 200 130 90 0 0]
    resize = oh.make_node("Resize", ["d", "roi", "sc"], ["r"], mode="nearest",
                          coordinate_transformation_mode="tf_crop_and_resize",
                          extrapolation_value=0.0)  # fmt: skip
    model = _model(
        [oh.make_node("DequantizeLinear", ["x", "s", "z"], ["d"]), resize,
         oh.make_node("QuantizeLinear", ["r", "s", "z"], ["y"])],
        [oh.make_tensor_value_info("x", T.UINT8, [1, 1, 4])], ["y"],
        [_init(np.float32(0.1), "s"), _init(np.uint8(128), "z"),
         _init(np.array([0, 0, -0.5, 1, 1, 1.5], np.float32), "roi"),
         _init(np.array([1, 1, 2], np.float32), "sc")],
    )  # fmt: skip
    y = _agree(model, {"x": np.array([[[10, 200, 130, 90]]], np.uint8)}, "y")
    assert y.ravel().tolist() == [128, 128, 10, 200, 130, 90, 128, 128]


def test_a_negative_scale_keeps_max_pool_and_relu_on_floats() -> None:
    # a negative scale reverses the order: MaxPool on the int8 tensor gave the float minimum
    # ([10 30] for [-50 3]), and a Relu dropped before Q(zp=-128) let negatives through
    pool = oh.make_node("MaxPool", ["d"], ["p"], kernel_shape=[2], strides=[2])
    model = _model(
        [oh.make_node("DequantizeLinear", ["x", "s", "z"], ["d"]), pool,
         oh.make_node("QuantizeLinear", ["p", "s", "z"], ["y"]),
         oh.make_node("Relu", ["d"], ["r"]),
         oh.make_node("QuantizeLinear", ["r", "s", "zmin"], ["y2"])],
        [oh.make_tensor_value_info("x", T.INT8, [1, 1, 4])], ["y", "y2"],
        [_init(np.float32(-0.1), "s"), _init(np.int8(0), "z"), _init(np.int8(-128), "zmin")],
    )  # fmt: skip
    feeds = {"x": np.array([[[10, -50, 3, 30]]], np.int8)}
    assert _agree(model, feeds, "y").ravel().tolist() == [-50, 3]
    assert _agree(model, feeds, "y2").ravel().tolist() == [-128] * 4


def test_one_weight_dequantized_per_column_and_per_tensor_gets_two_zero_points() -> None:
    # the one made-up zero point had the first scale's shape [3]: "expected a one-element
    # b_zero_point, as b_scale is, got shape [3]"
    weight = np.arange(12, dtype=np.int8).reshape(4, 3) - 6
    model = _model(
        [oh.make_node("DequantizeLinear", ["x", "xs"], ["dx"]),
         oh.make_node("DequantizeLinear", ["W", "wpc"], ["dw1"], axis=1),
         oh.make_node("DequantizeLinear", ["W", "wpt"], ["dw2"]),
         oh.make_node("MatMul", ["dx", "dw1"], ["c1"]),
         oh.make_node("QuantizeLinear", ["c1", "ys", "yz"], ["y1"]),
         oh.make_node("MatMul", ["dx", "dw2"], ["c2"]),
         oh.make_node("QuantizeLinear", ["c2", "ys", "yz"], ["y2"])],
        [oh.make_tensor_value_info("x", T.INT8, [2, 4])], ["y1", "y2"],
        [_init(np.float32(0.05), "xs"), _init(weight, "W"),
         _init(np.array([0.01, 0.02, 0.03], np.float32), "wpc"), _init(np.float32(0.02), "wpt"),
         _init(np.float32(0.01), "ys"), _init(np.int8(0), "yz")],
    )  # fmt: skip
    feeds = {"x": np.array([[1, -2, 3, 4], [5, 6, -7, 8]], np.int8)}
    assert [op.type for op in load_onnx(model).ops] == ["QLinearMatMul", "QLinearMatMul"]
    _agree(model, feeds, "y1")
    assert _agree(model, feeds, "y2").ravel().tolist() == [1, 2, 2, -2, -1, 0]


def test_a_made_up_zero_point_is_named_apart_from_the_graph_inputs() -> None:
    # a graph input named x_zero_point: the new initializer took its name, and the model was
    # refused ("expected distinct input and initializer names, got 'x_zero_point' as both")
    model = _model(
        [oh.make_node("DequantizeLinear", ["x", "xs"], ["dx"]),
         oh.make_node("DequantizeLinear", ["W", "ws"], ["dw"]),
         oh.make_node("MatMul", ["dx", "dw"], ["c"]),
         oh.make_node("QuantizeLinear", ["c", "ys", "yz"], ["y"]),
         oh.make_node("Identity", ["x_zero_point"], ["y2"])],
        [oh.make_tensor_value_info("x", T.INT8, [2, 4]),
         oh.make_tensor_value_info("x_zero_point", T.FLOAT, [1])], ["y", "y2"],
        [_init(np.float32(0.05), "xs"), _init(np.ones((4, 3), np.int8), "W"),
         _init(np.float32(0.02), "ws"), _init(np.float32(0.01), "ys"), _init(np.int8(0), "yz")],
    )  # fmt: skip
    feeds = {
        "x": np.array([[1, -2, 3, 4], [5, 6, -7, 8]], np.int8),
        "x_zero_point": np.array([1.5], np.float32),
    }
    assert _agree(model, feeds, "y").ravel().tolist() == [1, 1, 1, 1, 1, 1]
