"""Binary ops before opset 7 (Add-6, Greater-1, ...) broadcast only B, to A's shape, and only
with ``broadcast`` 1: B of one element, or of A's dims from ``axis`` on (suffix matching without
it). The attributes were accepted and ignored: ``Add(broadcast=1, axis=1)`` of A [2, 3, 3] and
B [3] added B along A's last axis, as numpy does, where ONNX adds it along axis 1."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import execute, propagate

RNG = np.random.default_rng(0)


def _graph(op_type: str, a: tuple[int, ...], b: tuple[int, ...], opset: int, **attrs: int) -> Graph:
    op = Op(op_type, "op", ("a", "b"), ("y",), attrs)
    inputs = {"a": TensorType(a, "float32"), "b": TensorType(b, "float32")}
    return Graph("legacy", (op,), inputs, ("y",), opset=opset)


def _run(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = RNG.standard_normal(graph.inputs["a"].shape).astype(np.float32)
    b = RNG.standard_normal(graph.inputs["b"].shape).astype(np.float32)
    return a, b, execute(graph, {"a": a, "b": b})["y"]


@pytest.mark.parametrize(
    ("a", "b", "attrs", "b_as"),
    [
        ((2, 3, 3), (3,), {"axis": 1}, (1, 3, 1)),  # the case that came out as numpy's
        ((2, 3, 4, 5), (3, 4), {"axis": 1}, (1, 3, 4, 1)),
        ((2, 3, 4, 5), (2,), {"axis": 0}, (2, 1, 1, 1)),
        ((2, 3, 4, 5), (4, 5), {}, (1, 1, 4, 5)),  # suffix matching without axis
        ((2, 3, 4, 5), (1, 1), {}, (1, 1, 1, 1)),  # one element, of any rank up to A's
        ((2, 3, 4, 5), (), {}, ()),
        ((2, 3), (3,), {"axis": -1}, (1, 3)),
        ((2, 3), (2, 1), {"axis": 0}, (2, 1)),  # a dim of 1 in B broadcasts (PyTorch's export)
        ((2, 3, 4), (3, 1), {"axis": 1}, (1, 3, 1)),
    ],
)
@pytest.mark.parametrize("opset", [1, 6])
def test_b_broadcasts_to_a_from_its_axis(
    a: tuple[int, ...], b: tuple[int, ...], attrs: dict[str, int], b_as: tuple[int, ...], opset: int
) -> None:
    graph = _graph("Add", a, b, opset, broadcast=1, **attrs)
    x, y, found = _run(graph)
    np.testing.assert_array_equal(found, x + y.reshape(b_as))
    assert propagate(graph)["y"].shape == a


@pytest.mark.parametrize(
    ("op_type", "numpy_fn"),
    [("Sub", np.subtract), ("Mul", np.multiply), ("Greater", np.greater), ("Less", np.less)],
)
def test_every_legacy_binary_reads_its_axis(op_type: str, numpy_fn: np.ufunc) -> None:
    x, y, found = _run(_graph(op_type, (2, 3, 3), (3,), 6 if op_type in ("Sub", "Mul") else 1,
                              broadcast=1, axis=1))  # fmt: skip
    np.testing.assert_array_equal(found, numpy_fn(x, y.reshape(1, 3, 1)))


@pytest.mark.parametrize(
    ("a", "b", "attrs", "message"),
    [
        (  # broadcasting is off by default
            (2, 3), (3,), {},
            "expected inputs of one shape (broadcast 0; broadcast 1 broadcasts B), got [2, 3] "
            "and [3]",
        ),
        (  # B broadcasts to A, not A to B
            (2, 1), (3,), {"broadcast": 1},
            "expected B of one element or of A's dims from axis 1 (broadcast 1), got A [2, 1] "
            "and B [3]",
        ),
        (
            (2, 3, 4), (3, 4), {"broadcast": 1, "axis": 0},
            "expected B of one element or of A's dims from axis 0 (broadcast 1), got A [2, 3, 4] "
            "and B [3, 4]",
        ),
        (  # A does not broadcast to B
            (3,), (2, 3), {"broadcast": 1},
            "expected B of A's rank or lower (broadcast 1 broadcasts B to A), got A [3] and "
            "B [2, 3]",
        ),
    ],
)  # fmt: skip
def test_shapes_the_legacy_rule_refuses_are_errors(
    a: tuple[int, ...], b: tuple[int, ...], attrs: dict[str, int], message: str
) -> None:
    graph = _graph("Add", a, b, 6, **attrs)
    with pytest.raises(ModelError, match=re.escape(message)):
        propagate(graph)


def test_from_opset_7_every_input_broadcasts_as_numpy_does() -> None:
    x, y, found = _run(_graph("Add", (2, 1), (3,), 7))
    np.testing.assert_array_equal(found, x + y)
    assert found.shape == (2, 3)


@pytest.mark.parametrize(("op_type", "combine"), [("Add", np.add), ("Mul", np.multiply)])
def test_a_legacy_broadcast_after_a_conv_is_not_folded_into_it(op_type: str, combine) -> None:
    # opset 6: B (2, 1, 1) at axis 0 runs along the batch; fused, it had been folded into the
    # Conv as one value per channel ([11, -8, 11, -8] for [11, 12, -9, -8])
    w = np.array([1.0, 2.0], np.float32).reshape(2, 1, 1, 1)
    b = np.array([10.0, -10.0], np.float32).reshape(2, 1, 1)
    ops = (
        Op("Conv", "conv", ("x", "w"), ("c",)),
        Op(op_type, "after", ("c", "b"), ("y",), {"broadcast": 1, "axis": 0}),
    )
    inputs = {"x": TensorType((2, 1, 1, 1), "float32")}
    graph = Graph("g", ops, inputs, ("y",), {"w": w, "b": b}, opset=6)
    x = np.ones((2, 1, 1, 1), np.float32)
    expected = combine(x * w.reshape(1, 2, 1, 1), b.reshape(2, 1, 1, 1))  # by the batch
    for fuse in (False, True):
        np.testing.assert_array_equal(execute(graph, {"x": x}, fuse=fuse)["y"], expected)
    simulated = simulate(graph, "x86-h100", inputs={"x": x}).outputs["y"]
    np.testing.assert_array_equal(simulated, expected)
