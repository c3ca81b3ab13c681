"""Shape propagation reuses a rule's outputs for ops of one signature, and only then."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hetsim.errors import OpError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import OPS, propagate


def _chain(n: int) -> Graph:
    ops = tuple(
        Op("Relu", f"r{i}", ("x" if i == 0 else f"t{i - 1}",), (f"t{i}",)) for i in range(n)
    )
    return Graph("chain", ops, {"x": TensorType((2, 3), "float32")}, (f"t{n - 1}",))


def test_a_chain_runs_the_shape_rule_once(monkeypatch: pytest.MonkeyPatch) -> None:
    relu = OPS["Relu"]
    calls: list[str] = []

    def counted(op: Op, opset: int, inputs: list) -> list:
        calls.append(op.name)
        return relu.infer(op, opset, inputs)

    monkeypatch.setitem(OPS, "Relu", dataclasses.replace(relu, infer=counted))
    metas = propagate(_chain(5))
    assert calls == ["r0"]
    assert [metas[f"t{i}"].shape for i in range(5)] == [(2, 3)] * 5
    assert metas["t4"].dtype == np.dtype("float32")


def test_tensors_of_one_shape_and_dtype_share_one_meta() -> None:
    metas = propagate(_chain(3))
    assert metas["x"] is metas["t0"] is metas["t2"]


def test_different_attributes_are_not_reused() -> None:
    ops = (
        Op("Transpose", "a", ("x",), ("y",), {"perm": [1, 0, 2]}),
        Op("Transpose", "b", ("x",), ("z",), {"perm": [2, 1, 0]}),
    )
    g = Graph("g", ops, {"x": TensorType((2, 3, 4), "float32")}, ("y", "z"))
    metas = propagate(g)
    assert metas["y"].shape == (3, 2, 4)
    assert metas["z"].shape == (4, 3, 2)


def test_different_known_inputs_are_not_reused() -> None:
    ops = (Op("Reshape", "a", ("x", "s1"), ("y",)), Op("Reshape", "b", ("x", "s2"), ("z",)))
    inits = {"s1": np.array([3, 2], np.int64), "s2": np.array([6], np.int64)}
    g = Graph("g", ops, {"x": TensorType((2, 3), "float32")}, ("y", "z"), inits)
    metas = propagate(g)
    assert metas["y"].shape == (3, 2)
    assert metas["z"].shape == (6,)


def test_an_omitted_output_is_part_of_the_signature() -> None:
    ops = (Op("Dropout", "a", ("x",), ("y", "")), Op("Dropout", "b", ("x",), ("z", "mask")))
    g = Graph("g", ops, {"x": TensorType((2, 3), "float32")}, ("y", "z", "mask"))
    metas = propagate(g)
    assert metas["y"].shape == metas["z"].shape == (2, 3)
    assert metas["mask"].shape == (2, 3)
    assert metas["mask"].dtype == np.dtype("bool")


def test_small_known_values_are_still_computed_per_op() -> None:
    ops = (Op("Shape", "a", ("x",), ("s",)), Op("Neg", "b", ("s",), ("n",)))
    g = Graph("g", ops, {"x": TensorType((2, 3), "float32")}, ("n",))
    metas = propagate(g)
    assert metas["s"].value is not None
    assert metas["s"].value.tolist() == [2, 3]
    assert metas["n"].value is not None
    assert metas["n"].value.tolist() == [-2, -3]


def test_an_attribute_of_another_type_is_not_reused() -> None:
    # an axis of 1.0 has the key of an axis of 1 by ==: the second Softmax took the first's
    # outputs without the rule that refuses a float axis
    ops = (
        Op("Softmax", "good", ("x",), ("y",), {"axis": 1}),
        Op("Softmax", "bad", ("x",), ("z",), {"axis": 1.0}),
    )
    graph = Graph("g", ops, {"x": TensorType((2, 3), "float32")}, ("y", "z"))
    with pytest.raises(OpError, match=r"^op bad \(Softmax\): expected attribute 'axis' to be an "):
        propagate(graph)
