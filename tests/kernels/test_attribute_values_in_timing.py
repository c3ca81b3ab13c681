"""A timing-mode run refuses the attribute values a functional one refuses, with the same
message: the shape rule of an op with attributes compiles its kernel and drops it
(`hetsim.kernels.registry`), since the kernels read most attribute values and a timing run
builds none. A LeakyRelu ``alpha`` of ``None`` had passed in timing mode and failed in
functional mode; so had 25 op types' numeric and flag attributes (an audit corrupting each
attribute of ONNX's node cases)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType

X = TensorType((1, 2, 4, 4), "float32")

CASES = [
    # op type, its attributes, its further inputs (name: type), the message both modes give
    ("LeakyRelu", {"alpha": None}, {}, "expected attribute 'alpha' to be a number, got None"),
    ("Elu", {"alpha": "x"}, {}, "expected attribute 'alpha' to be a number, got 'x'"),
    ("HardSigmoid", {"beta": [1, 2]}, {}, "expected attribute 'beta' to be a number, got [1, 2]"),
    ("Gelu", {"approximate": 3}, {}, "expected approximate 'none' or 'tanh', got 3"),
    ("Shrink", {"lambd": True}, {}, "expected attribute 'lambd' to be a number, got True"),
    (
        "ArgMax",
        {"select_last_index": "yes"},
        {},
        "expected attribute 'select_last_index' to be an integer, got 'yes'",
    ),
    (
        "CumSum",
        {"exclusive": 2},
        {"axis": TensorType((), "int64")},
        "expected exclusive 0 or 1, got 2",
    ),
    ("LRN", {"size": 3, "bias": "x"}, {}, "expected attribute 'bias' to be a number, got 'x'"),
    (
        "AveragePool",
        {"kernel_shape": [2, 2], "count_include_pad": "a"},
        {},
        "expected attribute 'count_include_pad' to be an integer, got 'a'",
    ),
    (
        "InstanceNormalization",
        {"epsilon": None},
        {"scale": TensorType((2,), "float32"), "bias": TensorType((2,), "float32")},
        "expected attribute 'epsilon' to be a number, got None",
    ),
]


def _graph(op_type: str, attrs: dict, more: dict[str, TensorType]) -> Graph:
    op = Op(op_type, "op0", ("x", *more), ("y",), attrs)
    return Graph("g", (op,), {"x": X, **more}, ("y",))


@pytest.mark.parametrize(("op_type", "attrs", "more", "expected"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_both_modes_refuse_an_attribute_value_the_kernel_cannot_use(
    op_type: str, attrs: dict, more: dict, expected: str, mode: str
) -> None:
    graph = _graph(op_type, attrs, more)
    inputs = None
    if "axis" in more:  # CumSum's axis, an input: 1, not a seeded random integer
        inputs = {"x": np.zeros(X.shape, np.float32), "axis": np.array(1)}
    message = f"op op0 ({op_type}): {expected}"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        simulate(graph, "x86-h100", mode=mode, inputs=inputs)


def test_valid_attributes_still_run_in_timing_mode_with_the_functional_times() -> None:
    graph = _graph("LeakyRelu", {"alpha": 0.2}, {})
    timing = simulate(graph, "x86-h100", mode="timing")
    functional = simulate(graph, "x86-h100", mode="functional")
    assert timing.makespan_us == functional.makespan_us
