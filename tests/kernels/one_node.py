"""One-node ONNX models of an op, for the kernel tests that run the op in onnxruntime too."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest


def one_node_model(
    op_type: str, opset: int, inputs: dict[str, np.ndarray], n_outputs: int = 1, **attrs: Any
) -> Any:
    """An onnx.ModelProto of one `op_type` node (named ``n0``) over `inputs`, outputs ``y0``,
    ``y1``, ...; an attribute given as [] is an empty STRINGS list (``helper.make_node`` cannot
    type an empty list). Skips the test where onnx is not installed."""
    onnx = pytest.importorskip("onnx")
    helper = onnx.helper
    outputs = [f"y{i}" for i in range(n_outputs)]
    given = {k: v for k, v in attrs.items() if not (isinstance(v, list) and not v)}
    node = helper.make_node(op_type, list(inputs), outputs, name="n0", **given)
    for name in attrs.keys() - given.keys():
        node.attribute.append(
            helper.make_attribute(name, [], attr_type=onnx.AttributeProto.STRINGS)
        )
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)
            )
            for name, a in inputs.items()
        ],
        [helper.make_empty_tensor_value_info(name) for name in outputs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model
