"""GraphBuilder: naming, arrays as initializers, omitted inputs, several outputs, errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import GraphBuilder, Op, TensorType
from hetsim.kernels import execute


def test_ops_get_readable_unique_names() -> None:
    b = GraphBuilder("g")
    x = b.input("x", (2, 3))
    y = b.op("Relu", b.op("Relu", x))
    graph = b.build(y)
    assert [(op.name, op.inputs, op.outputs) for op in graph.ops] == [
        ("relu0", ("x",), ("relu0",)),
        ("relu1", ("relu0",), ("relu1",)),
    ]


def test_arrays_become_initializers_and_none_an_omitted_input() -> None:
    b = GraphBuilder("g", opset=13)
    x = b.input("x", ("n",), "float32")
    high = np.array(6.0, np.float32)
    graph = b.build(b.op("Clip", x, None, high, name="clip6"))
    assert graph.ops == (Op("Clip", "clip6", ("x", "", "const0"), ("clip6",)),)
    assert graph.initializers["const0"] is not None
    np.testing.assert_array_equal(graph.initializers["const0"], high)
    assert graph.opset == 13
    assert graph.inputs == {"x": TensorType(("n",), "float32")}


def test_attributes_are_kept_as_given() -> None:
    b = GraphBuilder("g")
    x = b.input("x", (1, 4))
    y = b.op("Transpose", x, perm=[1, 0])
    assert b.build(y).ops[0].attrs == {"perm": [1, 0]}


def test_several_outputs_are_numbered_or_named() -> None:
    b = GraphBuilder("g")
    x = b.input("x", (4,))
    first, second = b.op_with_outputs("Split", x, outputs=2, axis=0)
    low, high = b.op_with_outputs("Split", x, outputs=["low", "high"], axis=0)
    graph = b.build(first, second, low, high)
    assert (first, second, low, high) == ("split0_0", "split0_1", "low", "high")
    assert graph.outputs == ("split0_0", "split0_1", "low", "high")


def test_named_initializer_and_dtype_normalized() -> None:
    b = GraphBuilder("g")
    x = b.input("x", (2,), "int64")
    w = b.initializer(np.arange(2), "w")
    graph = b.build(b.op("Add", x, w))
    assert graph.inputs["x"].dtype == "int64"
    assert list(graph.initializers) == ["w"]


def test_reused_tensor_name_is_an_error() -> None:
    b = GraphBuilder("g")
    b.input("x", (2,))
    with pytest.raises(ModelError, match=r"^graph g: expected a new tensor name, got 'x'$"):
        b.op("Relu", "x", output="x")


def test_build_validates_the_graph() -> None:
    b = GraphBuilder("g")
    b.op("Relu", "missing", name="r")
    with pytest.raises(ModelError, match=r"^op r \(Relu\): expected each input .* got 'missing'$"):
        b.build("r")


def test_repr() -> None:
    b = GraphBuilder("g")
    b.input("x", (1,))
    assert repr(b) == "<GraphBuilder g ops=0 inputs=['x']>"


def test_output_name_can_differ_from_the_op_name() -> None:
    b = GraphBuilder("g")
    x = b.input("x", (2,))
    y = b.op("Relu", x, name="act", output="y")
    graph = b.build(y)
    assert graph.ops == (Op("Relu", "act", ("x",), ("y",)),)


@pytest.mark.parametrize(
    ("shape", "dtype", "message"),
    [
        ("23", "float32", "expected a shape (a tuple of dims), got str '23'"),
        ((2, 3), None, "expected a numpy dtype name (float32, int64, ...), got None"),
    ],
)
def test_build_refuses_an_ill_typed_input(shape: object, dtype: object, message: str) -> None:
    b = GraphBuilder("g")
    b.input("x", shape, dtype)  # type: ignore[arg-type]
    with pytest.raises(ModelError, match=f"^graph g: input 'x': {re.escape(message)}$"):
        b.build("x")


def test_an_input_dtype_alias_becomes_numpy_s_name() -> None:
    b = GraphBuilder("g")
    b.input("x", [2, "n"], "f4")
    assert b.build("x").inputs["x"] == TensorType((2, "n"), "float32")


def test_an_automatic_op_name_skips_the_names_given() -> None:
    # relu0 was given to the first op (its output a): the second op was named relu0 too
    b = GraphBuilder("g")
    x = b.input("x", (2,))
    first = b.op("Relu", x, name="relu0", output="a")
    b.op("Relu", first)
    assert [op.name for op in b.build("relu1").ops] == ["relu0", "relu1"]


def test_several_ops_may_omit_an_output() -> None:
    # "" was claimed as a tensor name: the second op with an omitted output was refused
    b = GraphBuilder("drop")
    x = b.input("x", (2, 2))
    a, _ = b.op_with_outputs("Split", x, outputs=["a", ""], axis=1, num_outputs=2)
    c, _ = b.op_with_outputs("Split", x, outputs=["c", ""], axis=1, num_outputs=2)
    graph = b.build(a, c)
    value = np.arange(4, dtype=np.float32).reshape(2, 2)
    result = execute(graph, {"x": value})
    np.testing.assert_array_equal(result["a"], value[:, :1])
    np.testing.assert_array_equal(result["c"], value[:, :1])


def test_numbered_outputs_avoid_the_names_taken() -> None:
    # an input named split0_1: the fresh op split0 numbered its outputs onto it
    b = GraphBuilder("split")
    b.input("split0_1", (2,))
    x = b.input("x", (2, 2))
    assert b.op_with_outputs("Split", x, outputs=2, axis=1, num_outputs=2) == (
        "split1_0",
        "split1_1",
    )


def test_a_refused_op_leaves_no_weight_behind() -> None:
    # its array input had become an initializer before its output name was refused
    b = GraphBuilder("left")
    x = b.input("x", (2,))
    b.op("Relu", x, output="t")
    with pytest.raises(ModelError, match=r"^graph left: expected a new tensor name, got 't'$"):
        b.op("Add", x, np.ones(2, np.float32), output="t")
    graph = b.build("t")
    assert dict(graph.initializers) == {}
