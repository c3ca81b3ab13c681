"""How many inputs each op takes at most (`hetsim.kernels.arity`) and the check of an op's count.

The table must say what onnx's schemas (and onnxruntime's, for its ``com.microsoft`` ops) say,
and an op naming more inputs than its type takes at the graph's opset is a ModelError naming the
op, in every path that runs a shape rule or a kernel: an extra input was ignored silently.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

import numpy as np
import pytest

import hetsim
from hetsim.errors import ModelError
from hetsim.frontend import fold_constants
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import OPS, Meta, propagate
from hetsim.kernels.arity import MAX_INPUTS, VARIADIC
from tests.kernels.case import Case, case_metas, case_op
from tests.kernels.test_every_op import CASES

SHAPE = (2, 3)


def _graph(op: Op, opset: int = 17, *, constant: bool = False) -> Graph:
    """`op` alone, each named input a float32 graph input of `SHAPE` (an initializer if
    `constant`)."""
    names = [n for n in dict.fromkeys(op.inputs) if n]
    arrays = _arrays(names)
    inputs = {} if constant else {n: TensorType(SHAPE, "float32") for n in names}
    outputs = tuple(n for n in op.outputs if n)
    return Graph("g", (op,), inputs, outputs, arrays if constant else {}, opset)


def _arrays(names: list[str]) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {n: rng.standard_normal(SHAPE).astype(np.float32) for n in names}


def _execute(graph: Graph) -> dict[str, np.ndarray]:
    return hetsim.execute(graph, _arrays(list(graph.inputs)))


def _kept(by_opset: list[tuple[int, int]]) -> dict[int, int]:
    """The versions of `by_opset` (since, count) where the count changes."""
    kept: dict[int, int] = {}
    for since, count in sorted(by_opset):
        if not kept or kept[max(kept)] != count:
            kept[since] = count
    return kept


def test_every_registered_op_has_an_entry() -> None:
    assert sorted(set(OPS) ^ set(MAX_INPUTS)) == []


def test_default_domain_counts_are_onnx_schemas() -> None:
    defs = pytest.importorskip("onnx.defs")
    from hetsim.frontend.onnx import NEWEST_OPSET

    versions: dict[str, list[tuple[int, int]]] = {}
    for schema in defs.get_all_schemas_with_history():
        if schema.domain == "" and schema.since_version <= NEWEST_OPSET:
            versions.setdefault(schema.name, []).append((schema.since_version, schema.max_input))
    default = sorted(t for t, d in OPS.items() if d.domain == "")
    assert {t: MAX_INPUTS[t] for t in default} == {t: _kept(versions[t]) for t in default}


def test_com_microsoft_counts_are_onnxruntime_schemas() -> None:
    state = pytest.importorskip("onnxruntime.capi.onnxruntime_pybind11_state")
    schemas = {s.name: s for s in state.get_all_operator_schema() if s.domain == "com.microsoft"}
    microsoft = sorted(t for t, d in OPS.items() if d.domain == "com.microsoft")
    expected = {t: {schemas[t].since_version: schemas[t].max_input} for t in microsoft}
    assert {t: MAX_INPUTS[t] for t in microsoft} == expected


def _at(by_opset: Mapping[int, int], opset: int) -> int:
    return by_opset[max((v for v in by_opset if v <= opset), default=min(by_opset))]


def test_required_inputs_are_within_the_maximum() -> None:
    over = {
        (t, opset): (_at(d.required, opset), _at(MAX_INPUTS[t], opset))
        for t, d in OPS.items()
        for opset in {*d.required, *MAX_INPUTS[t]}
        if _at(d.required, opset) > _at(MAX_INPUTS[t], opset)
    }
    assert over == {}


def _message(op: Op, opset: int, got: int) -> str:
    """The refusal of `op` with `got` inputs at `opset`."""
    by_opset = MAX_INPUTS[op.type]
    most = _at(by_opset, opset)
    at = f" at opset {opset}" if len(set(by_opset.values())) > 1 else ""
    noun = "input" if most == 1 else "inputs"
    return f"op {op.name} ({op.type}): expected at most {most} {noun}{at}, got {got}"


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if _at(MAX_INPUTS[c.op_type], c.opset) != VARIADIC],
    ids=lambda c: c.id,
)
def test_an_input_past_the_last_is_refused_by_rule_and_kernel(case: Case) -> None:
    op, definition, metas = case_op(case), OPS[case.op_type], case_metas(case)
    most = _at(MAX_INPUTS[case.op_type], case.opset)
    omitted = most - len(op.inputs)
    extra = dataclasses.replace(op, inputs=(*op.inputs, *[""] * omitted, "extra"))
    metas = [*metas, *[None] * omitted, Meta(SHAPE, np.dtype("float32"))]
    message = _message(op, case.opset, most + 1)
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        definition.infer(extra, case.opset, metas)
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        definition.compile(extra, case.opset)


TOO_MANY = [
    pytest.param(
        Op("Add", "o", ("x0", "x1", "x2"), ("y",)),
        17,
        "op o (Add): expected at most 2 inputs, got 3",
        id="Add-3",
    ),
    pytest.param(
        Op("MatMul", "o", ("x0", "x1", "x2"), ("y",)),
        17,
        "op o (MatMul): expected at most 2 inputs, got 3",
        id="MatMul-3",
    ),
    pytest.param(
        Op("Relu", "o", ("x0", "x1"), ("y",)),
        17,
        "op o (Relu): expected at most 1 input, got 2",
        id="Relu-2",
    ),
    pytest.param(
        Op("Softmax", "o", ("x0", "x1"), ("y",)),
        17,
        "op o (Softmax): expected at most 1 input, got 2",
        id="Softmax-2",
    ),
    pytest.param(
        Op("Transpose", "o", ("x0", "x1"), ("y",)),
        17,
        "op o (Transpose): expected at most 1 input, got 2",
        id="Transpose-2",
    ),
    pytest.param(
        Op("Gemm", "o", ("x0", "x1", "x2", "x3"), ("y",), {"transB": 1}),
        17,
        "op o (Gemm): expected at most 3 inputs, got 4",
        id="Gemm-4",
    ),
    pytest.param(
        Op("Clip", "o", ("x0", "x1", "x2", "x3"), ("y",)),
        13,
        "op o (Clip): expected at most 3 inputs at opset 13, got 4",
        id="Clip-4-at-13",
    ),
    pytest.param(
        Op("Clip", "o", ("x0", "x1"), ("y",), {"min": 0.0}),
        6,
        "op o (Clip): expected at most 1 input at opset 6, got 2",
        id="Clip-2-at-6",
    ),
    pytest.param(
        # axes became an input at opset 13: before it, the input was ignored
        Op("ReduceSum", "o", ("x0", "x1"), ("y",)),
        11,
        "op o (ReduceSum): expected at most 1 input at opset 11, got 2",
        id="ReduceSum-2-at-11",
    ),
    pytest.param(
        # below its first version (Gelu is of opset 20) an op takes the count of its first
        Op("Gelu", "o", ("x0", "x1"), ("y",)),
        17,
        "op o (Gelu): expected at most 1 input, got 2",
        id="Gelu-2-below-its-first-version",
    ),
    pytest.param(
        # an omitted input before a named one counts: it is no trailing one
        Op("Add", "o", ("x0", "x1", "", "x2"), ("y",)),
        17,
        "op o (Add): expected at most 2 inputs, got 4",
        id="Add-omitted-then-named",
    ),
]


@pytest.mark.parametrize(("op", "opset", "message"), TOO_MANY)
def test_execute_refuses_too_many_inputs(op: Op, opset: int, message: str) -> None:
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        _execute(_graph(op, opset))


@pytest.mark.parametrize(("op", "opset", "message"), TOO_MANY)
def test_simulate_refuses_too_many_inputs(op: Op, opset: int, message: str) -> None:
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        hetsim.simulate(_graph(op, opset), "x86-cpu", mode="timing")


def test_propagation_refuses_too_many_inputs() -> None:
    graph = _graph(Op("Add", "o", ("x0", "x1", "x2"), ("y",)))
    with pytest.raises(ModelError, match=r"^op o \(Add\): expected at most 2 inputs, got 3$"):
        propagate(graph)


def test_constant_folding_refuses_too_many_inputs() -> None:
    graph = _graph(Op("Add", "o", ("x0", "x1", "x2"), ("y",)), constant=True)
    with pytest.raises(ModelError, match=r"^op o \(Add\): expected at most 2 inputs, got 3$"):
        fold_constants(graph)


def test_a_com_microsoft_op_with_too_many_inputs_is_refused() -> None:
    op = Op("QLinearSigmoid", "o", ("x0", "x1", "x2", "x3", "x4", "x5"), ("y",))
    with pytest.raises(ModelError, match=r"^op o \(QLinearSigmoid\): expected at most 5 inputs"):
        OPS["QLinearSigmoid"].compile(op, 17)


def test_an_onnx_model_with_too_many_inputs_is_refused() -> None:
    onnx = pytest.importorskip("onnx")
    from hetsim.frontend import load_onnx

    helper = onnx.helper
    node = helper.make_node("Add", ["x", "x", "x"], ["y"], name="a")
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(SHAPE))
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, list(SHAPE))
    model = helper.make_model(
        helper.make_graph([node], "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)]
    )
    with pytest.raises(ModelError, match=r"^op a \(Add\): expected at most 2 inputs, got 3$"):
        hetsim.execute(load_onnx(model), _arrays(["x"]))


NAMES = [f"x{i}" for i in range(5)]
VARIADIC_REFERENCES = {
    "Sum": lambda xs: np.sum(xs, axis=0),
    "Max": lambda xs: np.max(xs, axis=0),
    "Min": lambda xs: np.min(xs, axis=0),
    "Mean": lambda xs: np.mean(xs, axis=0),
    "Concat": lambda xs: np.concatenate(xs, axis=0),
}


@pytest.mark.parametrize("op_type", sorted(VARIADIC_REFERENCES))
def test_a_variadic_op_takes_many_inputs(op_type: str) -> None:
    assert MAX_INPUTS[op_type] == {1: VARIADIC}
    op = Op(op_type, "o", tuple(NAMES), ("y",), {"axis": 0} if op_type == "Concat" else {})
    arrays = _arrays(NAMES)
    found = hetsim.execute(_graph(op), arrays)["y"]
    expected = VARIADIC_REFERENCES[op_type]([arrays[n] for n in NAMES])
    np.testing.assert_allclose(found, expected, rtol=1e-6)


TRAILING_OMITTED = [
    pytest.param(Op("Add", "o", ("x0", "x1", "", ""), ("y",)), 17, id="Add"),
    pytest.param(Op("Relu", "o", ("x0", ""), ("y",)), 17, id="Relu"),
    pytest.param(Op("Clip", "o", ("x0", ""), ("y",), {"max": 0.5}), 6, id="Clip-at-6"),
]


@pytest.mark.parametrize(("op", "opset"), TRAILING_OMITTED)
def test_trailing_omitted_inputs_past_the_last_are_taken(op: Op, opset: int) -> None:
    # ONNX reads an omitted input as absent: no value is ignored (onnx's checker refuses it)
    graph = _graph(op, opset)
    named = tuple(n for n in op.inputs if n)
    trimmed = _graph(Op(op.type, op.name, named, op.outputs, op.attrs), opset)
    arrays = _arrays(list(graph.inputs))
    np.testing.assert_array_equal(
        hetsim.execute(graph, arrays)["y"], hetsim.execute(trimmed, arrays)["y"]
    )
    result = hetsim.simulate(graph, "x86-cpu", mode="timing")
    assert result.makespan_us == hetsim.simulate(trimmed, "x86-cpu", mode="timing").makespan_us
