"""Graph structure: validation errors that name the op, topological order, symbolic dims."""

from __future__ import annotations

import copy
import pickle
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.compare import check_trace
from hetsim.errors import HetsimError, ModelError
from hetsim.ir import Graph, Op, TensorType, bind_shape, topological_order
from hetsim.kernels import compile_program, propagate, propagate_costs
from hetsim.models import summarize

X = {"x": TensorType(("seq", 4), "float32")}


def _op(name: str, inputs: tuple[str, ...], outputs: tuple[str, ...], kind: str = "Relu") -> Op:
    return Op(kind, name, inputs, outputs)


def test_ops_are_put_in_topological_order() -> None:
    ops = (
        _op("c", ("b_out", "a_out"), ("c_out",), "Add"),
        _op("b", ("a_out",), ("b_out",)),
        _op("a", ("x",), ("a_out",)),
    )
    graph = Graph("g", ops, X, ("c_out",))
    assert [op.name for op in graph.ops] == ["a", "b", "c"]


def test_order_is_stable_for_independent_ops() -> None:
    ops = tuple(_op(name, ("x",), (f"{name}_out",)) for name in ("z", "m", "a"))
    graph = Graph("g", ops, X, ("z_out", "m_out", "a_out"))
    assert [op.name for op in graph.ops] == ["z", "m", "a"]


def test_dangling_input_is_an_error_naming_the_op() -> None:
    ops = (_op("add1", ("x", "w"), ("y",), "Add"),)
    with pytest.raises(
        ModelError,
        match=r"^op add1 \(Add\): expected each input to be a graph input, an initializer or "
        r"an op output, got 'w'$",
    ):
        Graph("g", ops, X, ("y",))


def test_duplicate_output_name_is_an_error_naming_both_ops() -> None:
    ops = (_op("r1", ("x",), ("y",)), _op("r2", ("x",), ("y",), "Neg"))
    with pytest.raises(
        ModelError,
        match=r"^op r2 \(Neg\): expected a new output name, got 'y' "
        r"\(already the output of op r1 \(Relu\)\)$",
    ):
        Graph("g", ops, X, ("y",))


def test_output_shadowing_an_initializer_is_an_error() -> None:
    ops = (_op("r1", ("x",), ("w",)),)
    with pytest.raises(
        ModelError,
        match=r"^op r1 \(Relu\): expected a new output name, got 'w' \(already an initializer\)$",
    ):
        Graph("g", ops, X, ("w",), {"w": np.zeros(1, np.float32)})


def test_output_shadowing_a_graph_input_is_an_error() -> None:
    with pytest.raises(
        ModelError,
        match=r"^op r1 \(Relu\): expected a new output name, got 'x' \(already a graph input\)$",
    ):
        Graph("g", (_op("r1", ("x",), ("x",)),), X, ("x",))


def test_cycle_is_an_error_naming_the_ops_in_it() -> None:
    ops = (
        _op("a", ("x", "c_out"), ("a_out",), "Add"),
        _op("b", ("a_out",), ("b_out",)),
        _op("c", ("b_out",), ("c_out",)),
    )
    with pytest.raises(
        ModelError, match=r"^op a \(Add\): expected no cycle, got a -> b -> c -> a$"
    ):
        Graph("g", ops, X, ("c_out",))


def test_self_loop_is_a_cycle() -> None:
    with pytest.raises(ModelError, match=r"^op a \(Add\): expected no cycle, got a -> a$"):
        Graph("g", (_op("a", ("x", "y"), ("y",), "Add"),), X, ("y",))


def test_output_that_nothing_produces_is_an_error() -> None:
    with pytest.raises(
        ModelError, match=r"^graph g: expected each output to be produced, got 'nope'$"
    ):
        Graph("g", (_op("a", ("x",), ("y",)),), X, ("y", "nope"))


def test_name_both_input_and_initializer_is_an_error() -> None:
    with pytest.raises(
        ModelError,
        match=r"^graph g: expected distinct input and initializer names, got 'x' as both$",
    ):
        Graph("g", (), X, ("x",), {"x": np.zeros(1, np.float32)})


def test_two_ops_of_one_name_are_an_error() -> None:
    # placements, plans and spans are keyed by op name: the run failed on an assertion deep in
    # the compiler, and a plan held one placement for the two ops
    ops = (_op("a", ("x",), ("t",)), _op("a", ("t",), ("y",), "Neg"))
    with pytest.raises(ModelError, match=r"^graph g: expected distinct op names, got 'a' twice$"):
        Graph("g", ops, X, ("y",))


@pytest.mark.parametrize(
    ("shape", "shown"),
    [((1, -4), "-4"), ((1, 4.0), "4.0"), ((True, 4), "True"), (("", 4), "''")],
)
def test_an_input_dim_must_be_a_size_or_a_name(shape: tuple[object, ...], shown: str) -> None:
    message = (
        f"graph g: input 'x': expected each dim an integer >= 0 or a symbolic name, got {shown} "
        f"in shape {list(shape)}"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        Graph("g", (), {"x": TensorType(shape, "float32")}, ("x",))  # type: ignore[arg-type]


def test_an_unknown_input_dtype_is_an_error() -> None:
    message = "graph g: input 'x': expected a numpy dtype name (float32, int64, ...), got 'float33'"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        Graph("g", (), {"x": TensorType((1, 4), "float33")}, ("x",))


def test_the_dtype_float_is_refused_as_ambiguous() -> None:
    # numpy read it as float64, where an ONNX reader means float32: sizes and costs doubled
    message = (
        "graph g: input 'x': expected a numpy dtype name (float32, int64, ...), got 'float' "
        "(float64 to numpy, float32 to ONNX: write which)"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        Graph("g", (), {"x": TensorType((2,), "float")}, ("x",))


def test_an_initializer_must_be_an_array() -> None:
    message = "graph g: initializer 'w': expected a numpy array, got list"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        Graph("g", (), X, ("w",), {"w": [1.0, 2.0]})  # type: ignore[dict-item]


def test_initializers_are_read_only_views_of_the_callers_arrays() -> None:
    # what execute and simulate keep of a graph (folded constants) is computed once: a weight
    # written through the graph after a first run had left simulate's output stale while
    # execute's op-by-op kernels read the change
    w = np.ones(4, np.float32)
    graph = Graph("g", (Op("Neg", "n", ("w",), ("y",)),), {}, ("y",), {"w": w})
    held = graph.initializers["w"]
    assert held.base is w
    assert not held.flags.writeable
    assert w.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        held[0] = 5.0
    frozen = np.zeros(2, np.float32)
    frozen.flags.writeable = False  # already read-only: kept as it is, no view of a view
    assert Graph("g", (), {}, ("w",), {"w": frozen}).initializers["w"] is frozen


@pytest.mark.parametrize("copied", [lambda g: pickle.loads(pickle.dumps(g)), copy.deepcopy])
def test_initializers_stay_read_only_in_a_pickled_or_copied_graph(copied: Any) -> None:
    # no __post_init__ runs there: a Graph sent to a Dask worker held writeable arrays again
    graph = Graph("g", (Op("Neg", "n", ("w",), ("y",)),), {}, ("y",), {"w": np.ones(4)})
    again = copied(graph)
    np.testing.assert_array_equal(again.initializers["w"], np.ones(4))
    assert not again.initializers["w"].flags.writeable
    assert [op.name for op in again.ops] == ["n"]


def test_model_error_is_a_hetsim_error_and_a_value_error() -> None:
    with pytest.raises(HetsimError):
        Graph("g", (), X, ("nope",))
    with pytest.raises(ValueError, match="nope"):
        Graph("g", (), X, ("nope",))


def test_omitted_optional_inputs_and_outputs_are_allowed() -> None:
    ops = (
        Op("Clip", "clip", ("x", "", "hi"), ("y",)),
        Op("Dropout", "d1", ("y",), ("z1", "")),
        Op("Dropout", "d2", ("y",), ("z2", "")),
    )
    graph = Graph("g", ops, X, ("z1", "z2"), {"hi": np.array(1.0, np.float32)})
    assert [op.name for op in graph.ops] == ["clip", "d1", "d2"]


def test_the_empty_name_is_no_tensor() -> None:
    # producer("") was the Dropout whose output is omitted, consumers("") the Clip
    ops = (Op("Clip", "clip", ("x", "", "hi"), ("y",)), Op("Dropout", "d", ("y",), ("z", "")))
    graph = Graph("g", ops, X, ("z",), {"hi": np.array(1.0, np.float32)})
    assert graph.producer("") is None
    assert graph.consumers("") == ()
    for inputs, weights, field in ((X | {"": X["x"]}, {}, "inputs"),
                                   (X, {"": np.ones(1, np.float32)}, "initializers")):  # fmt: skip
        message = f"graph g: {field}: expected non-empty names ('' marks an omitted input), got ''"
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            Graph("g", (), inputs, ("x",), weights)


@pytest.mark.parametrize("outputs", [(), ("",)])
def test_an_op_without_a_named_output_is_an_error(outputs: tuple[str, ...]) -> None:
    # accepted, then a cost rule raised IndexError (model show, simulate)
    ops = (Op("Relu", "r", ("x",), ("y",)), Op("MatMul", "mm", ("x", "y"), outputs))
    message = f"graph g: op mm (MatMul): outputs: expected at least one named output, got {outputs}"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        Graph("g", ops, X, ("y",))


def test_graph_outputs_may_be_inputs_or_initializers() -> None:
    graph = Graph("g", (), X, ("x", "w"), {"w": np.ones(2, np.float32)})
    assert graph.outputs == ("x", "w")


def test_symbols_and_static_shapes() -> None:
    inputs = {
        "a": TensorType(("batch", "seq", 8), "float32"),
        "b": TensorType(("seq", 2), "int64"),
    }
    graph = Graph("g", (), inputs, ("a",))
    assert graph.symbols == ("batch", "seq")
    assert not graph.is_static
    assert Graph("g", (), {"a": TensorType((1, 8), "float32")}, ("a",)).is_static


def test_bind_shape_replaces_symbols() -> None:
    assert bind_shape(("batch", 3, "seq"), {"batch": 2, "seq": 7}) == (2, 3, 7)
    assert TensorType(("seq",), "int64").bind({"seq": 5}) == TensorType((5,), "int64")


def test_bind_shape_without_a_value_names_the_symbol() -> None:
    with pytest.raises(
        ModelError, match=r"^input x: expected a value for symbolic dim 'seq', got none$"
    ):
        bind_shape((1, "seq"), {"batch": 1}, where="input x")


def test_parameter_count_producer_and_consumers() -> None:
    init = {"w": np.zeros((3, 4), np.float32), "b": np.zeros(4, np.float32)}
    ops = (
        Op("MatMul", "mm", ("x", "w"), ("h",)),
        Op("Add", "add", ("h", "b"), ("y",)),
        Op("Relu", "relu", ("h",), ("z",)),
    )
    graph = Graph("g", ops, {"x": TensorType((2, 3), "float32")}, ("y", "z"), init)
    assert graph.parameter_count == 16
    assert graph.producer("h") is ops[0]
    assert graph.producer("x") is None
    assert graph.consumers("h") == (ops[1], ops[2])


def test_graph_copies_its_mappings_and_pickles() -> None:
    inputs = dict(X)
    graph = Graph("g", (_op("a", ("x",), ("y",)),), inputs, ("y",))
    inputs["other"] = TensorType((1,), "float32")
    assert list(graph.inputs) == ["x"]
    again = pickle.loads(pickle.dumps(graph))
    assert again.ops == graph.ops
    assert again.inputs == graph.inputs


def test_topological_order_of_a_list() -> None:
    a = _op("a", ("x",), ("y",))
    b = _op("b", ("y",), ("z",))
    assert topological_order([b, a], ["x"]) == (a, b)


def test_repr_says_what_and_where() -> None:
    graph = Graph("g", (_op("a", ("x",), ("y",)),), X, ("y",))
    assert repr(graph) == "<Graph g ops=1 inputs=['x']>"
    assert repr(graph.ops[0]) == "<Op a (Relu)>"


@st.composite
def _dags(draw: st.DrawFn) -> list[Op]:
    """Ops in a valid order: op i reads the graph input or outputs of ops before it."""
    count = draw(st.integers(1, 12))
    ops = []
    for i in range(count):
        earlier = ["x", *(f"t{j}" for j in range(i))]
        inputs = draw(st.lists(st.sampled_from(earlier), min_size=1, max_size=3))
        ops.append(Op("Sum", f"op{i}", tuple(inputs), (f"t{i}",)))
    return ops


@given(ops=_dags(), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_any_shuffle_sorts_to_a_valid_order_and_sorted_stays(ops: list[Op], seed: int) -> None:
    shuffled = list(np.random.default_rng(seed).permutation(np.array(ops, dtype=object)))
    order = topological_order(shuffled, ["x"])
    position = {op.outputs[0]: i for i, op in enumerate(order)}
    for i, op in enumerate(order):
        assert all(position.get(name, -1) < i for name in op.inputs)
    assert sorted(order, key=lambda op: op.name) == sorted(ops, key=lambda op: op.name)
    assert topological_order(order, ["x"]) == order


@pytest.mark.parametrize(
    ("what", "call"),
    [
        ("propagate", lambda: propagate("mlp")),
        ("propagate_costs", lambda: propagate_costs(None)),
        ("compile_program", lambda: compile_program("mlp")),
        ("summarize", lambda: summarize("mlp")),
        ("check_trace", lambda: check_trace("mlp", [{"seq": 1}])),
    ],
)
def test_a_function_taking_a_graph_refuses_a_models_name_by_its_own(
    what: str, call: Callable[[], object]
) -> None:
    # each failed inside on an attribute of the str: 'str' object has no attribute 'inputs'
    with pytest.raises(ModelError, match=f"^{what}: expected a Graph \\(hetsim.load_model makes"):
        call()
