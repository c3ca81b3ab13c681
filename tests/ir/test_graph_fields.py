"""Graph field types: each ill-typed field of a Graph, an Op or a TensorType is a ModelError
naming the graph (and the op), and well-formed graphs still build, their fields normalized."""

from __future__ import annotations

import re
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType, bind_shape
from hetsim.ir.fields import RESERVED_OP_NAMES

X = {"x": TensorType((2, 3), "float32")}
RELU = Op("Relu", "r", ("x",), ("y",))


def _graph(**fields: Any) -> Graph:
    """A one-op graph x -> Relu -> y, with `fields` replaced."""
    base: dict[str, Any] = {"name": "g", "ops": (RELU,), "inputs": X, "outputs": ("y",)}
    return Graph(**{**base, **fields})


def _one_op(op: Op) -> Callable[[], Graph]:
    return lambda: _graph(ops=(op,))


def _input(shape: Any, dtype: Any) -> Callable[[], Graph]:
    return lambda: _graph(ops=(), inputs={"x": TensorType(shape, dtype)}, outputs=("x",))


BAD = {
    "dtype_none": (
        _input((2, 3), None),
        "graph g: input 'x': expected a numpy dtype name (float32, int64, ...), got None",
    ),
    "dtype_python_type": (
        _input((2, 3), float),
        "graph g: input 'x': expected a numpy dtype name (float32, int64, ...), "
        "got type <class 'float'>",
    ),
    "dtype_of_strings": (
        _input((2, 3), "U5"),
        "graph g: input 'x': expected a numpy dtype name (float32, int64, ...), got 'U5' "
        "(not a bool or number dtype)",
    ),
    "shape_str": (
        _input("23", "float32"),
        "graph g: input 'x': expected a shape (a tuple of dims), got str '23'",
    ),
    "shape_int": (
        _input(4, "float32"),
        "graph g: input 'x': expected a shape (a tuple of dims), got int 4",
    ),
    "input_not_a_type": (
        lambda: _graph(inputs={"x": ((2, 3), "float32")}),
        "graph g: input 'x': expected a TensorType, got tuple ((2, 3), 'float32')",
    ),
    "op_inputs_str": (
        _one_op(Op("Relu", "a", "xy", ("y",))),  # type: ignore[arg-type]
        "graph g: op a (Relu): inputs: expected a tuple of tensor names, got str 'xy'",
    ),
    "op_outputs_str": (
        _one_op(Op("Relu", "a", ("x",), "y")),  # type: ignore[arg-type]
        "graph g: op a (Relu): outputs: expected a tuple of tensor names, got str 'y'",
    ),
    "op_input_none": (
        _one_op(Op("Relu", "a", (None,), ("y",))),  # type: ignore[arg-type]
        "graph g: op a (Relu): inputs[0]: expected a tensor name (a str, '' if omitted), got None",
    ),
    "op_type_int": (
        _one_op(Op(3, "a", ("x",), ("y",))),  # type: ignore[arg-type]
        "graph g: op a (3): type: expected a non-empty str, got int 3",
    ),
    "op_name_empty": (
        _one_op(Op("Relu", "", ("x",), ("y",))),
        "graph g: op  (Relu): name: expected a non-empty str, got str ''",
    ),
    "op_attrs_list": (
        _one_op(Op("Relu", "a", ("x",), ("y",), [("alpha", 1)])),  # type: ignore[arg-type]
        "graph g: op a (Relu): attrs: expected a mapping of name -> value, got list [('alpha', 1)]",
    ),
    "op_attrs_int_key": (
        _one_op(Op("Relu", "a", ("x",), ("y",), {1: 2})),  # type: ignore[dict-item]
        "graph g: op a (Relu): attrs: expected each name a str, got int 1",
    ),
    "ops_str": (
        lambda: _graph(ops="ab"),
        "graph g: ops: expected an iterable of Op, got str 'ab'",
    ),
    "ops_one_op": (
        lambda: _graph(ops=RELU),
        "graph g: ops: expected an iterable of Op, got Op <Op r (Relu)>",
    ),
    "ops_not_iterable": (
        lambda: _graph(ops=None),
        "graph g: ops: expected an iterable of Op, got None",
    ),
    "ops_item_not_op": (
        lambda: _graph(ops=(RELU, "n")),
        "graph g: ops[1]: expected an Op, got str 'n'",
    ),
    "outputs_str": (
        lambda: _graph(ops=(RELU, Op("Neg", "n", ("y",), ("z",))), outputs="yz"),
        "graph g: outputs: expected a tuple of tensor names, got str 'yz'",
    ),
    "outputs_empty_name": (
        lambda: _graph(outputs=("y", "")),
        "graph g: outputs[1]: expected a tensor name (a non-empty str), got str ''",
    ),
    "name_int": (lambda: _graph(name=3), "graph: expected a str name, got int 3"),
    "inputs_list": (
        lambda: _graph(inputs=[("x", X["x"])]),
        "graph g: inputs: expected a mapping of name -> TensorType, got list [('x', "
        "TensorType(shape=(2, 3), dtype='float32'))]",
    ),
    "inputs_int_key": (
        lambda: _graph(inputs={0: X["x"]}),
        "graph g: inputs: expected each name a str, got int 0",
    ),
    "initializers_none": (
        lambda: _graph(initializers=None),
        "graph g: initializers: expected a mapping of name -> array, got None",
    ),
    "value_types_item": (
        lambda: _graph(value_types={"y": (2, 3)}),
        "graph g: value_types['y']: expected a TensorType, got tuple (2, 3)",
    ),
    # an unknown dtype raised numpy's TypeError from propagation, naming no tensor; None and
    # "float" read as float64
    "value_types_dtype": (
        lambda: _graph(value_types={"y": TensorType((2, 3), "nonsense")}),
        "graph g: value_types['y']: expected a numpy dtype name (float32, int64, ...), got "
        "'nonsense'",
    ),
    "value_types_dtype_none": (
        lambda: _graph(value_types={"y": TensorType((2, 3), None)}),  # type: ignore[arg-type]
        "graph g: value_types['y']: expected a numpy dtype name (float32, int64, ...), got None",
    ),
    "value_dtypes_none": (
        lambda: _graph(value_dtypes=None),
        "graph g: value_dtypes: expected a mapping of name -> dtype name, got None",
    ),
    "value_dtypes_dtype": (
        lambda: _graph(value_dtypes={"y": "nonsense"}),
        "graph g: value_dtypes['y']: expected a numpy dtype name (float32, int64, ...), got "
        "'nonsense'",
    ),
    "opset_bool": (
        lambda: _graph(opset=True),
        "graph g: opset: expected an integer >= 1, got bool True",
    ),
    "opset_str": (
        lambda: _graph(opset="17"),
        "graph g: opset: expected an integer >= 1, got str '17'",
    ),
    "opset_zero": (lambda: _graph(opset=0), "graph g: opset: expected an integer >= 1, got int 0"),
}


@pytest.mark.parametrize(("build", "message"), BAD.values(), ids=BAD.keys())
def test_an_ill_typed_field_is_an_error_naming_it(build: Callable[[], Graph], message: str) -> None:
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        build()


def test_a_long_value_is_cut_short_in_the_message() -> None:
    message = (
        "graph g: op a (Relu): inputs: expected a tuple of tensor names, "
        "got str 'xxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxx'"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        _graph(ops=(Op("Relu", "a", "x" * 1000, ("y",)),))  # type: ignore[arg-type]


def test_a_bad_op_among_many_is_named() -> None:
    ops = [Op("Relu", f"op{i}", (f"t{i}",), (f"t{i + 1}",)) for i in range(100)]
    ops[57] = Op("Relu", "op57", "t57", ("t58",))  # type: ignore[arg-type]
    message = "graph g: op op57 (Relu): inputs: expected a tuple of tensor names, got str 't57'"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        Graph("g", tuple(ops), {"t0": X["x"]}, ("t100",))


def test_two_ops_of_one_name_are_an_error_on_the_checked_path_too() -> None:
    # a list of inputs sends the ops through the per-op check, which must still test the names
    ops = (Op("Relu", "a", ["x"], ("t",)), Op("Neg", "a", ("t",), ("y",)))  # type: ignore[arg-type]
    with pytest.raises(ModelError, match=r"^graph g: expected distinct op names, got 'a' twice$"):
        Graph("g", ops, X, ("y",))


def test_an_op_outside_a_graph_is_not_checked() -> None:
    # by design: checking in Op.__post_init__ would slow each of a big graph's 1e6 ops
    op = Op("Relu", "a", "xy", ("y",))  # type: ignore[arg-type]
    assert op.inputs == "xy"  # type: ignore[comparison-overlap]


@pytest.mark.parametrize(
    ("dims", "got"),
    [({"seq": 2.5}, "float 2.5"), ({"seq": "8"}, "str '8'"), ({"seq": -1}, "int -1"),
     ({"seq": True}, "bool True"), ({"seq": None}, "None")],
)  # fmt: skip
def test_bind_shape_refuses_a_size_that_is_not_an_integer(dims: dict[str, Any], got: str) -> None:
    message = f"input x: expected an integer >= 0 for symbolic dim 'seq', got {got}"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        bind_shape((1, "seq"), dims, where="input x")


def test_tensor_type_bind_refuses_a_float_size() -> None:
    message = "expected an integer >= 0 for symbolic dim 'seq', got float 2.5"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        TensorType(("seq",), "float32").bind({"seq": 2.5})  # type: ignore[dict-item]


def test_bind_shape_takes_numpy_integers_and_zero() -> None:
    assert bind_shape(("a", "b"), {"a": np.int64(3), "b": 0}) == (3, 0)  # type: ignore[dict-item]


def test_lists_become_tuples_and_an_input_type_is_normalized() -> None:
    op = Op("Add", "a", ["x", "x"], ["y"])  # type: ignore[arg-type]
    inputs = {"x": TensorType([np.int64(2), "n"], "f4")}  # type: ignore[arg-type]
    graph = Graph("g", [op], inputs, ["y"], opset=np.int64(13))  # type: ignore[arg-type]
    assert graph.ops == (Op("Add", "a", ("x", "x"), ("y",)),)
    assert op.inputs == ["x", "x"]  # type: ignore[comparison-overlap]  # the caller's op as it was
    assert graph.outputs == ("y",)
    assert graph.inputs["x"] == TensorType((2, "n"), "float32")
    assert type(graph.inputs["x"].shape[0]) is int
    assert type(graph.opset) is int
    assert graph.symbols == ("n",)


def test_usual_ops_and_types_are_kept_as_given() -> None:
    graph = _graph()
    assert graph.ops[0] is RELU
    assert graph.inputs["x"] is X["x"]


def test_ops_may_come_from_a_generator() -> None:
    ops = (op for op in (RELU, Op("Neg", "n", ("y",), ("z",))))
    graph = Graph("g", ops, X, ("z",))  # type: ignore[arg-type]
    assert [op.name for op in graph.ops] == ["r", "n"]


def test_subclasses_and_other_mappings_take_the_checked_path_and_build() -> None:
    class Name(str):
        pass

    op = Op("Relu", Name("r"), ("x",), ("y",), MappingProxyType({"alpha": 1.0}))
    assert _graph(ops=(op,)).ops == (op,)


_DIMS = st.one_of(st.integers(0, 8), st.sampled_from(["batch", "seq"]))
_DTYPES = st.sampled_from(["float32", "float16", "float64", "int64", "int8", "uint8", "bool"])


@st.composite
def _graph_fields(draw: st.DrawFn) -> dict[str, Any]:
    """Well-formed fields: a chain of ops, each reading the input or an earlier output (or an
    omitted ''), tuples or lists, attrs or none, for one input."""
    seq = st.sampled_from([tuple, list])
    count = draw(st.integers(0, 8))
    ops = []
    for i in range(count):
        earlier = ["x", *(f"t{j}" for j in range(i))]
        inputs = draw(st.lists(st.sampled_from([*earlier, ""]), min_size=1, max_size=3))
        attrs = draw(st.dictionaries(st.sampled_from(["axis", "alpha"]), st.integers(), max_size=2))
        ops.append(Op("Sum", f"op{i}", draw(seq)(inputs), draw(seq)([f"t{i}"]), attrs))
    shape = draw(st.lists(_DIMS, max_size=4))
    outputs = draw(st.lists(st.sampled_from(["x", *(f"t{i}" for i in range(count))]), max_size=3))
    return {
        "name": draw(st.text(max_size=5)),
        "ops": draw(seq)(ops),
        "inputs": {"x": TensorType(draw(seq)(shape), draw(_DTYPES))},
        "outputs": draw(seq)(outputs),
        "opset": draw(st.integers(1, 28)),
    }


@given(fields=_graph_fields())
@settings(max_examples=80, deadline=None)
def test_well_formed_graphs_build_with_tuple_fields(fields: dict[str, Any]) -> None:
    graph = Graph(**fields)
    assert [op.name for op in graph.ops] == [op.name for op in fields["ops"]]
    assert type(graph.outputs) is tuple
    assert list(graph.outputs) == list(fields["outputs"])
    assert all(type(op.inputs) is tuple and type(op.outputs) is tuple for op in graph.ops)
    declared = fields["inputs"]["x"]
    assert graph.inputs["x"] == TensorType(tuple(declared.shape), declared.dtype)


@pytest.mark.parametrize("dtype", [np.dtype("float32"), np.float32, "f4", "float32"])
def test_a_numpy_dtype_or_scalar_type_becomes_its_name(dtype: object) -> None:
    graph = Graph("g", (), {"x": TensorType((2,), dtype)}, ())  # type: ignore[arg-type]
    assert graph.inputs["x"] == TensorType((2,), "float32")


def test_the_engines_own_step_names_are_no_op_names() -> None:
    # an op named (stage) that ran out of memory crashed the message meant for a staged copy
    # (KeyError: 'src'); (return) put the result copy's ALLOC on the op's processor
    from hetsim.runtime.bytecode import RETURN_OP
    from hetsim.sim.steps import GRAPH_POOL_OP, LOAD_OP, STAGE_OP

    assert {RETURN_OP, LOAD_OP, STAGE_OP, GRAPH_POOL_OP} == RESERVED_OP_NAMES
    message = (
        "graph g: expected op names other than those hetsim gives its own steps ('(graph pool)', "
        "'(load)', '(return)', '(stage)'), got '(stage)'"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        Graph("g", (Op("Relu", "(stage)", ("x",), ("y",)),), {"x": TensorType((2,), "float32")},
              ("y",))  # fmt: skip
