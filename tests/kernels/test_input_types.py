"""ONNX's type constraints on op inputs (`hetsim.kernels.input_types`): the table against onnx's
schemas, and what a model breaking them gets."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import OPS, execute
from hetsim.kernels.input_types import _ONNX, decode, schema_table


def test_the_table_is_onnx_s_schemas() -> None:
    defs = pytest.importorskip("onnx.defs")
    from hetsim.frontend.onnx import NEWEST_OPSET

    default = [t for t, d in OPS.items() if d.domain == ""]
    found = {
        op_type: {
            since: tuple((name, decode(text)) for name, text in inputs)
            for since, inputs in by_opset.items()
        }
        for op_type, by_opset in _ONNX.items()
    }
    assert found == schema_table(defs, default, NEWEST_OPSET)


def _graph(op_type: str, dtypes: list[str], opset: int = 17) -> Graph:
    names = [f"x{i}" for i in range(len(dtypes))]
    inputs = {n: TensorType((2,), d) for n, d in zip(names, dtypes, strict=True)}
    return Graph("g", (Op(op_type, "y", tuple(names), ("y",)),), inputs, ("y",), opset=opset)


@pytest.mark.parametrize(
    ("op_type", "dtypes", "message"),
    [
        # numpy gave float64 where the shape rule (and every byte count) kept int32
        ("Sqrt", ["int32"], "op y (Sqrt): expected input 0 (X) of float16/32/64, got int32"),
        ("Sigmoid", ["int64"], "op y (Sigmoid): expected input 0 (X) of float16/32/64, got int64"),
        # a bitwise And of integers, and a logical Or of bools, ran
        ("And", ["int32", "int32"], "op y (And): expected input 0 (A) of bool, got int32"),
        (
            "Add",
            ["bool", "bool"],
            "op y (Add): expected input 0 (A) of float16/32/64, int8/16/32/64 or uint8/16/32/64, "
            "got bool",
        ),
        (
            "Mean",
            ["int64", "int64"],
            "op y (Mean): expected input 0 (data_0) of float16/32/64, got int64",
        ),
    ],
)
def test_an_input_of_a_type_its_schema_does_not_take_is_refused(
    op_type: str, dtypes: list[str], message: str
) -> None:
    graph = _graph(op_type, dtypes)
    inputs = {f"x{i}": np.ones(2, d) for i, d in enumerate(dtypes)}
    for run in (lambda: execute(graph, inputs), lambda: simulate(graph, "x86-h100", inputs=inputs)):
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            run()


def test_a_version_s_own_types_are_read() -> None:
    # Add took only floats before opset 6, and int8 from opset 14
    with pytest.raises(ModelError, match=r"^op y \(Add\): expected input 0 \(A\) of float16/32/64"):
        simulate(_graph("Add", ["int32", "int32"], opset=5), "x86-h100", mode="timing")
    graph = _graph("Add", ["int8", "int8"], opset=14)
    found = execute(graph, {"x0": np.ones(2, np.int8), "x1": np.ones(2, np.int8)})["y"]
    assert found.dtype == np.int8
    assert found.tolist() == [2, 2]
