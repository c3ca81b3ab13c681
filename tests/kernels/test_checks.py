"""The shared checks: typed attribute reads, required inputs, integer inputs and output counts."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import execute, propagate
from hetsim.kernels.checks import float_attr, int_attr, ints_attr

X = np.arange(8, dtype=np.float32).reshape(2, 4)
W = {"w": np.ones((3, 4), np.float32)}


def _graph(op: Op, initializers: dict[str, np.ndarray] | None = None, opset: int = 17) -> Graph:
    inputs = {"x": TensorType((2, 4), "float32")}
    return Graph("g", (op,), inputs, ("y",), initializers or {}, opset)


def _refused(graph: Graph, message: str, *, by_rule: bool) -> None:
    """`execute` (the kernel's compile) gives `message`, and so does `propagate` (the shape
    rule) where the rule reads the attribute (a LeakyRelu's alpha is the kernel's alone)."""
    runs = [lambda: execute(graph, {"x": X}), *([lambda: propagate(graph)] if by_rule else [])]
    for run in runs:
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            run()


ATTRIBUTES_OF_ANOTHER_TYPE = [
    pytest.param(
        Op("ReduceMax", "r", ("x",), ("y",), {"axes": [1], "keepdims": "0"}),
        None,
        "op r (ReduceMax): expected attribute 'keepdims' to be an integer, got '0'",
        id="flag-as-str",  # bool("0") is True: it kept the dims
    ),
    pytest.param(
        Op("Gemm", "r", ("x", "w"), ("y",), {"transB": "0"}),
        W,
        "op r (Gemm): expected attribute 'transB' to be an integer, got '0'",
        id="trans-as-str",  # bool("0") is True: it transposed
    ),
    pytest.param(
        Op("Softmax", "r", ("x",), ("y",), {"axis": 0.7}),
        None,
        "op r (Softmax): expected attribute 'axis' to be an integer, got 0.7",
        id="int-as-float",  # int(0.7) is 0
    ),
    pytest.param(
        Op("Reshape", "r", ("x", "s"), ("y",), {"allowzero": "1"}),
        {"s": np.array([4, 2], np.int64)},
        "op r (Reshape): expected attribute 'allowzero' to be an integer, got '1'",
        id="allowzero-as-str",
    ),
    pytest.param(
        Op("LeakyRelu", "r", ("x",), ("y",), {"alpha": "0.5"}),
        None,
        "op r (LeakyRelu): expected attribute 'alpha' to be a number, got '0.5'",
        id="float-as-str",
    ),
    pytest.param(
        Op("LeakyRelu", "r", ("x",), ("y",), {"alpha": True}),
        None,
        "op r (LeakyRelu): expected attribute 'alpha' to be a number, got True",
        id="float-as-bool",
    ),
    pytest.param(
        Op("Transpose", "r", ("x",), ("y",), {"perm": ["1", "0"]}),
        None,
        "op r (Transpose): expected attribute 'perm' to be a list of integers, got ['1', '0']",
        id="ints-as-strs",
    ),
]


@pytest.mark.parametrize(("op", "initializers", "message"), ATTRIBUTES_OF_ANOTHER_TYPE)
def test_an_attribute_of_another_type_is_refused_not_converted(
    op: Op, initializers: dict[str, np.ndarray] | None, message: str
) -> None:
    graph = _graph(op, initializers, opset=13)
    _refused(graph, message, by_rule=op.type != "LeakyRelu")


@pytest.mark.parametrize("keepdims", [0, False, np.int64(0)])
def test_an_int_attribute_may_be_a_bool_or_a_numpy_integer(keepdims: Any) -> None:
    op = Op("ReduceMax", "r", ("x",), ("y",), {"axes": [1], "keepdims": keepdims})
    graph = _graph(op, opset=13)
    assert execute(graph, {"x": X})["y"].tolist() == [3.0, 7.0]
    assert propagate(graph)["y"].shape == (2,)


@pytest.mark.parametrize("alpha", [2, np.float32(2.0), np.int64(2)])
def test_a_float_attribute_may_be_an_int_or_a_numpy_number(alpha: Any) -> None:
    op = Op("LeakyRelu", "r", ("x",), ("y",), {"alpha": alpha})
    assert execute(_graph(op), {"x": -X})["y"][0].tolist() == [-0.0, -2.0, -4.0, -6.0]


def test_typed_readers_give_python_values_and_the_default() -> None:
    op = Op("Op", "o", ("x",), ("y",), {"a": np.int64(3), "b": 1, "c": np.array([1, 2])})
    assert [type(int_attr(op, "a")), type(float_attr(op, "b"))] == [int, float]
    assert ints_attr(op, "c") == (1, 2)
    assert (int_attr(op, "d", None), ints_attr(op, "d", (0,))) == (None, (0,))


def test_a_missing_required_attribute_is_still_named() -> None:
    with pytest.raises(ModelError, match=r"^op o \(Op\): missing required attribute 'a'$"):
        int_attr(Op("Op", "o", ("x",), ("y",)), "a")
