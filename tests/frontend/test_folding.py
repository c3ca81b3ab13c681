"""Constant folding at load: a kernel that fails on a constant sub-graph is reported as
`execute` reports it, naming the op, and led by the model."""

from __future__ import annotations

import re

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from hetsim import execute  # noqa: E402
from hetsim.errors import OpError, SimulationError  # noqa: E402
from hetsim.frontend import load_onnx  # noqa: E402
from tests.frontend.test_onnx import _model, _vi  # noqa: E402
from tests.frontend.test_opset_forms import _const  # noqa: E402


def _constant_branch(node: onnx.NodeProto, weights: list[onnx.TensorProto]) -> onnx.ModelProto:
    """y = Identity(x), and output k of `node`, which reads only `weights`: folded at load."""
    identity = helper.make_node("Identity", ["x"], ["y"], name="id")
    outputs = [_vi("y", [1]), _vi("k", None, TensorProto.INT64)]
    return _model([node, identity], [_vi("x", [1])], outputs, weights)


FAILING = [
    (  # a divisor known only as the kernel runs (ConstantOfShape's [-1] is now its rule's)
        helper.make_node("Div", ["a", "b"], ["k"], name="op"),
        [_const("a", [2, 3]), _const("b", [0])],
        "op op (Div): expected its kernel to compute, got ZeroDivisionError: integer division "
        "by zero",
    ),
    (
        helper.make_node("Mod", ["a", "b"], ["k"], name="op"),
        [_const("a", [2, 3]), _const("b", [0])],
        "op op (Mod): expected its kernel to compute, got ZeroDivisionError: integer division "
        "by zero",
    ),
]


@pytest.mark.parametrize(
    ("node", "weights", "message"), FAILING, ids=[case[0].op_type for case in FAILING]
)
def test_a_kernel_failing_while_folding_is_the_op_error_execute_raises(
    node: onnx.NodeProto, weights: list[onnx.TensorProto], message: str
) -> None:
    # numpy's bare IndexError or ZeroDivisionError came out of load_onnx
    model = _constant_branch(node, weights)
    with pytest.raises(OpError, match=f"^{re.escape(message)}$") as unfolded:
        execute(load_onnx(model, fold=False), {"x": np.ones(1, np.float32)})
    with pytest.raises(OpError, match=f"^{re.escape(f'model g: {message}')}$") as folded:
        load_onnx(model)
    assert folded.value.op == unfolded.value.op == "op"
    assert type(folded.value.__cause__.__cause__) is type(unfolded.value.__cause__)  # numpy's


INDEX_OUT_OF_RANGE = [
    (
        helper.make_node("Gather", ["a", "i"], ["k"], name="op"),
        [_const("a", [2, 3]), _const("i", [5])],
    ),
    (
        helper.make_node("GatherElements", ["a", "i"], ["k"], name="op"),
        [_const("a", [2, 3]), _const("i", [5])],
    ),
    (
        helper.make_node("ScatterElements", ["a", "i", "u"], ["k"], name="op"),
        [_const("a", [2, 3]), _const("i", [5]), _const("u", [1])],
    ),
    (
        helper.make_node("ScatterND", ["a", "i", "u"], ["k"], name="op"),
        [_const("a", [2, 3]), _const("i", [[5]]), _const("u", [1])],
    ),
]


@pytest.mark.parametrize(
    ("node", "weights"), INDEX_OUT_OF_RANGE, ids=[case[0].op_type for case in INDEX_OUT_OF_RANGE]
)
def test_a_constant_index_out_of_range_is_the_op_error_execute_raises(
    node: onnx.NodeProto, weights: list[onnx.TensorProto]
) -> None:
    # its shape rule refuses a constant index, so folding and execute say the same
    message = f"op op ({node.op_type}): expected indices in [-2, 2) (axis 0 of data [2]), got 5"
    model = _constant_branch(node, weights)
    with pytest.raises(OpError, match=f"^{re.escape(message)}$"):
        execute(load_onnx(model, fold=False), {"x": np.ones(1, np.float32)})
    with pytest.raises(OpError, match=f"^{re.escape(f'model g: {message}')}$"):
        load_onnx(model)


def test_arrays_too_large_to_fold_are_the_simulation_error_execute_raises() -> None:
    # numpy's bare MemoryError came out of load_onnx
    huge = _const("s", [10**8, 10**8])  # 40 PB of float32: no machine allocates it
    model = _constant_branch(helper.make_node("ConstantOfShape", ["s"], ["k"], name="op"), [huge])
    message = (
        r"op op \(ConstantOfShape\): expected arrays this machine can allocate, got "
        r"MemoryError: Unable to allocate .* \({}\)$"
    )
    with pytest.raises(
        SimulationError, match="^" + message.format("timing mode computes no values")
    ):
        execute(load_onnx(model, fold=False), {"x": np.ones(1, np.float32)})
    # folded when loaded, whatever the mode: "timing mode computes no values" misled there
    loading = message.format("a constant, computed when the model is loaded")
    with pytest.raises(SimulationError, match=f"^model g: {loading}") as caught:
        load_onnx(model)
    assert isinstance(caught.value.__cause__, SimulationError)
    assert isinstance(caught.value.__cause__.__cause__, MemoryError)
