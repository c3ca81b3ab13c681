"""Attribute and input forms across opsets, read by the frontend and run by the kernels.

Each model uses the opset's own form of Pad, Clip, Split, Squeeze and Unsqueeze (attributes up
to one opset, inputs from the next), string attributes (``auto_pad``, ``mode``), Cast's ``to``
and Softmax's opset-dependent axis semantics; onnxruntime is the reference (onnx's
ReferenceEvaluator applies the opset-13 Softmax to older models).
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from hetsim.frontend import load_onnx  # noqa: E402
from hetsim.kernels import execute  # noqa: E402


def _const(name: str, values: float | list[int], dtype: type = np.int64) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, dtype), name)


PADS = [0, 0, 1, 1, 0, 0, 1, 1]


def _versioned_nodes(opset: int) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    """Pad, Clip, Split, Unsqueeze and Squeeze in the form `opset` defines."""
    if opset < 11:
        pad = helper.make_node("Pad", ["c"], ["p"], mode="reflect", pads=PADS)
        clip = helper.make_node("Clip", ["p"], ["k"], min=-2.0, max=2.0)
        constants = []
    else:
        pad = helper.make_node("Pad", ["c", "pads"], ["p"], mode="reflect")
        clip = helper.make_node("Clip", ["p", "low", "high"], ["k"])
        constants = [_const("pads", PADS), _const("low", -2.0, np.float32)]
        constants.append(_const("high", 2.0, np.float32))
    if opset < 13:
        rest = [
            helper.make_node("Split", ["k"], ["s1", "s2"], axis=1, split=[1, 3]),
            helper.make_node("Unsqueeze", ["s1"], ["u"], axes=[0]),
            helper.make_node("Squeeze", ["u"], ["q"], axes=[0, 2]),
        ]
    else:
        rest = [
            helper.make_node("Split", ["k", "split"], ["s1", "s2"], axis=1),
            helper.make_node("Unsqueeze", ["s1", "ax0"], ["u"]),
            helper.make_node("Squeeze", ["u", "ax02"], ["q"]),
        ]
        constants += [_const("split", [1, 3]), _const("ax0", [0]), _const("ax02", [0, 2])]
    return [pad, clip, *rest], constants


def _model(opset: int) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    nodes, constants = _versioned_nodes(opset)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["conv"], auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("Cast", ["conv"], ["ints"], to=TensorProto.INT32),
        helper.make_node("Cast", ["ints"], ["c"], to=TensorProto.FLOAT),
        *nodes,
        helper.make_node("Softmax", ["s2"], ["y"], axis=1),
    ]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "q")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 7, 7])]
    graph = helper.make_graph(nodes, "forms", inputs, outputs, [weight, *constants])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("opset", [9, 11, 13, 17])
def test_each_opset_form_matches_onnxruntime(opset: int) -> None:
    model = _model(opset)
    x = (3 * np.random.default_rng(1).standard_normal((1, 3, 7, 7))).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = dict(zip(("y", "q"), session.run(None, {"x": x}), strict=True))
    graph = load_onnx(model)
    outputs = execute(graph, {"x": x})
    assert graph.opset == opset
    for name, reference in expected.items():
        assert outputs[name].shape == reference.shape
        np.testing.assert_allclose(outputs[name], reference, rtol=1e-5, atol=1e-6)
