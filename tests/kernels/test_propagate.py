"""Shape propagation: dims bound from `dims` or input arrays, shape arithmetic computed, errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import execute, propagate, propagate_costs
from hetsim.kernels.propagate import SMALL_VALUE_SIZE, bind_dims


def _heads_graph() -> Graph:
    """x[seq, 8] -> [2, seq, 4], the reshape target computed from Shape(x) as exporters do."""
    ops = (
        Op("Shape", "shape", ("x",), ("s",)),
        Op("Gather", "seq", ("s", "zero"), ("n",), {"axis": 0}),
        Op("Unsqueeze", "n1", ("n", "axis0"), ("n_1",)),
        Op("Concat", "target", ("n_1", "heads"), ("t",), {"axis": 0}),
        Op("Reshape", "split_heads", ("x", "t"), ("y",)),
        Op("Transpose", "swap", ("y",), ("z",), {"perm": [1, 0, 2]}),
    )
    initializers = {
        "zero": np.array(0, np.int64),
        "axis0": np.array([0], np.int64),
        "heads": np.array([2, 4], np.int64),
    }
    return Graph("heads", ops, {"x": TensorType(("seq", 8), "float32")}, ("z",), initializers)


def test_symbolic_dim_from_dims_resolves_a_computed_reshape() -> None:
    metas = propagate(_heads_graph(), {"seq": 5})
    assert metas["t"].value is not None
    assert metas["t"].value.tolist() == [5, 2, 4]
    assert metas["y"].shape == (5, 2, 4)
    assert metas["z"].shape == (2, 5, 4)
    assert metas["z"].dtype == np.dtype("float32")
    assert metas["z"].value is None


def test_symbolic_dim_from_an_input_array() -> None:
    metas = propagate(_heads_graph(), inputs={"x": np.zeros((3, 8), np.float32)})
    assert metas["z"].shape == (2, 3, 4)


def test_small_integer_inputs_keep_their_values_and_float_ones_do_not() -> None:
    ops = (Op("Reshape", "r", ("x", "s"), ("y",)),)
    inputs = {"x": TensorType((2, 3), "float32"), "s": TensorType((2,), "int64")}
    g = Graph("g", ops, inputs, ("y",))
    given = {"x": np.zeros((2, 3), np.float32), "s": np.array([3, 2], np.int64)}
    metas = propagate(g, inputs=given)
    assert metas["x"].value is None
    assert metas["y"].shape == (3, 2)
    assert metas["y"].value is None


def test_initializers_keep_their_values() -> None:
    metas = propagate(_heads_graph(), {"seq": 2})
    assert metas["heads"].value is not None
    assert metas["heads"].value.tolist() == [2, 4]


def test_small_outputs_get_values_and_large_ones_do_not() -> None:
    ops = (
        Op("ConstantOfShape", "small", ("s1",), ("a",)),
        Op("ConstantOfShape", "large", ("s2",), ("b",)),
    )
    inits = {"s1": np.array([4], np.int64), "s2": np.array([SMALL_VALUE_SIZE + 1], np.int64)}
    metas = propagate(Graph("g", ops, {}, ("a", "b"), inits))
    assert metas["a"].value is not None
    assert metas["a"].value.tolist() == [0.0] * 4
    assert metas["b"].value is None
    assert metas["b"].shape == (SMALL_VALUE_SIZE + 1,)


def test_omitted_optional_input_and_output() -> None:
    ops = (Op("Clip", "clip", ("x", "", "hi"), ("y",)), Op("Dropout", "d", ("y",), ("z", "")))
    g = Graph("g", ops, {"x": TensorType((3,), "float32")}, ("z",), {"hi": np.array(1, np.float32)})
    metas = propagate(g)
    assert metas["z"].shape == (3,)
    assert "" not in metas


def test_an_op_naming_more_outputs_than_its_rule_gives_is_an_error() -> None:
    # the outputs were paired with the rule's metas with zip(strict=False): z got no meta
    g = Graph(
        "g", (Op("Relu", "r", ("x",), ("y", "z")),), {"x": TensorType((3,), "float32")}, ("z",)
    )
    with pytest.raises(ModelError, match=r"^op r \(Relu\): expected at most 1 output, got 2$"):
        propagate(g)


def test_an_omitted_required_input_is_an_error_before_the_rule() -> None:
    g = Graph("g", (Op("Relu", "r", ("",), ("y",)),), {"x": TensorType((3,), "float32")}, ("y",))
    message = r"^op r \(Relu\): expected input 0 \(a tensor\), got none \(an omitted input\)$"
    with pytest.raises(ModelError, match=message):
        propagate(g)


def test_unbound_dim_is_an_error() -> None:
    with pytest.raises(
        ModelError,
        match=r"^input 'x': expected a size for symbolic dim 'seq' "
        r"\(pass dims=\{'seq': \.\.\.\}, --dims seq=N on the command line, "
        r"or an input array\), got none$",
    ):
        propagate(_heads_graph())


@pytest.mark.parametrize(
    ("dim", "option"),
    [
        ("Min(s0, 10)", " --dims 'Min(s0, 10)=N' on the command line,"),  # quoted for a shell
        ("p=1,q", ""),  # --dims reads p=1 and q=N: no --dims to suggest
    ],
)
def test_an_unbound_dim_s_hint_gives_a_dims_option_that_reads_it(dim: str, option: str) -> None:
    g = Graph("g", (Op("Relu", "r", ("x",), ("y",)),), {"x": TensorType((dim,), "float32")}, ("y",))
    message = (
        f"input 'x': expected a size for symbolic dim {dim!r} (pass dims={{{dim!r}: ...}},"
        f"{option} or an input array), got none"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        propagate(g)


def test_dim_conflicting_with_dims_is_an_error() -> None:
    with pytest.raises(
        ModelError, match=r"^input 'x': expected dim 'seq' = 4 \(from dims\), got 3$"
    ):
        propagate(_heads_graph(), {"seq": 4}, {"x": np.zeros((3, 8), np.float32)})


def test_dim_conflicting_between_inputs_is_an_error() -> None:
    g = Graph(
        "g",
        (Op("Add", "add", ("a", "b"), ("c",)),),
        {"a": TensorType(("n",), "float32"), "b": TensorType(("n",), "float32")},
        ("c",),
    )
    shapes = {"a": (2,), "b": (3,)}
    with pytest.raises(
        ModelError, match=r"^input 'b': expected dim 'n' = 2 \(from input 'a'\), got 3$"
    ):
        bind_dims(g, None, shapes)


def test_wrong_rank_is_an_error() -> None:
    with pytest.raises(
        ModelError, match=r"^input 'x': expected rank 2 \[seq, 8\], got shape \[3\]$"
    ):
        propagate(_heads_graph(), inputs={"x": np.zeros(3, np.float32)})


def test_wrong_static_dim_is_an_error() -> None:
    with pytest.raises(
        ModelError, match=r"^input 'x': expected shape \[seq, 8\], got \[3, 9\] \(axis 1\)$"
    ):
        propagate(_heads_graph(), inputs={"x": np.zeros((3, 9), np.float32)})


@pytest.mark.parametrize("size", ["8", 8.0, 8.5, True, -1, None])
def test_a_size_in_dims_must_be_a_non_negative_integer(size: object) -> None:
    # "8" and 8.0 used to be taken through int(), 8.5 truncated, True taken as 1, and -1 went on
    # to fail in a shape rule far from the cause
    message = f"dims: expected a non-negative integer size for 'seq', got {size!r}"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        propagate(_heads_graph(), {"seq": size})


def test_dims_take_numpy_integers_and_zero() -> None:
    assert bind_dims(_heads_graph(), {"seq": np.int64(3)}) == {"seq": 3}
    assert propagate(_heads_graph(), {"seq": 0})["x"].shape == (0, 8)


def test_input_of_another_dtype_than_declared_is_an_error() -> None:
    with pytest.raises(ModelError, match=r"^input 'x': expected float32 array, got int64$"):
        propagate(_heads_graph(), inputs={"x": np.zeros((3, 8), np.int64)})


def test_unknown_input_name_is_an_error() -> None:
    with pytest.raises(
        ModelError, match=r"^inputs: expected names from \['x'\], got unknown \['y'\]$"
    ):
        propagate(_heads_graph(), {"seq": 2}, {"y": np.zeros(2)})


def test_a_misspelt_input_name_gets_the_input_it_likely_means() -> None:
    # it said "got missing ['data_0'] and unknown ['data']" alone
    graph = Graph(
        "g",
        (Op("Relu", "r", ("data_0",), ("y",)),),
        {"data_0": TensorType((2,), "float32")},
        ("y",),
    )
    given = {"data": np.ones(2, np.float32), "extra": np.ones(2, np.float32)}
    message = (
        "inputs: expected ['data_0'], got missing ['data_0'] and unknown ['data', 'extra'] "
        "(did you mean 'data_0' for 'data'?)"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        execute(graph, given)
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        simulate(graph, "x86-h100", inputs=given)


def test_a_weight_given_as_an_input_is_named_as_an_initializer() -> None:
    # an ONNX file may list its initializers among its inputs; the message said only "unknown"
    add = Op("Add", "a", ("x", "w"), ("y",))
    graph = Graph("g", (add,), {"x": TensorType((2,), "float32")}, ("y",), {"w": np.ones(2)})
    given = {"x": np.ones(2, np.float32), "w": np.zeros(2)}
    note = "('w' is an initializer of the model: a constant, not an input)"
    with pytest.raises(
        ModelError,
        match=rf"^inputs: expected names from \['x'\], got unknown \['w'\] {re.escape(note)}$",
    ):
        propagate(graph, inputs=given)
    with pytest.raises(
        ModelError, match=rf"^inputs: expected \['x'\], got unknown \['w'\] {re.escape(note)}$"
    ):
        execute(graph, given)


def test_unsupported_op_is_an_error() -> None:
    g = Graph("g", (Op("Zzzz", "f", ("x",), ("y",)),), {"x": TensorType((2,), "float32")}, ("y",))
    listed = "hetsim.kernels.OPS holds the supported op types (docs/architecture.md, Kernels, "
    message = f"op f (Zzzz): unsupported op Zzzz; {listed}lists them)"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        propagate(g)


def test_reshape_to_a_data_dependent_shape_is_an_error() -> None:
    ops = (
        Op("Cast", "c", ("x",), ("s",), {"to": 7}),
        Op("Reshape", "r", ("x", "s"), ("y",)),
    )
    g = Graph("g", ops, {"x": TensorType((SMALL_VALUE_SIZE + 1,), "float32")}, ("y",))
    with pytest.raises(
        ModelError,
        match=r"^op r \(Reshape\): expected a known value for input 1 \(shape\), "
        r"got a computed tensor 's'$",
    ):
        propagate(g)


MIXED = [
    (Op("Add", "op", ("x", "w"), ("y",)), (1, 4), (1, 4)),
    (Op("Equal", "op", ("x", "w"), ("y",)), (1, 4), (1, 4)),
    (Op("Sum", "op", ("x", "x", "w"), ("y",)), (1, 4), (1, 4)),
    (Op("Where", "op", ("c", "x", "w"), ("y",)), (1, 4), (1, 4)),
    (Op("Concat", "op", ("x", "w"), ("y",), {"axis": 0}), (1, 4), (1, 4)),
    (Op("MatMul", "op", ("x", "w"), ("y",)), (1, 4), (4, 2)),
    (Op("Gemm", "op", ("x", "w"), ("y",)), (1, 4), (4, 2)),
    (Op("Clip", "op", ("x", "w"), ("y",)), (1, 4), ()),
    (Op("PRelu", "op", ("x", "w"), ("y",)), (1, 4), (1, 4)),
    (Op("Conv", "op", ("x", "w"), ("y",)), (1, 1, 4, 4), (1, 1, 3, 3)),
]


@pytest.mark.parametrize(("op", "x_shape", "w_shape"), MIXED, ids=[m[0].type for m in MIXED])
def test_inputs_of_one_onnx_type_must_share_a_dtype(
    op: Op, x_shape: tuple[int, ...], w_shape: tuple[int, ...]
) -> None:
    # numpy promoted float32 and float64 to a float64 output where the rule said float32: every
    # size and cost of the run then disagreed with the values it computed
    inits = {"w": np.ones(w_shape, np.float64), "c": np.ones(x_shape, bool)}
    graph = Graph("g", (op,), {"x": TensorType(x_shape, "float32")}, ("y",), inits)
    message = f"op op ({op.type}): expected inputs of one dtype, got float32 and float64"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        propagate(graph)


def test_a_pow_exponent_may_be_of_another_dtype() -> None:
    graph = Graph(
        "g", (Op("Pow", "p", ("x", "e"), ("y",)),), {"x": TensorType((1, 4), "float32")}, ("y",),
        {"e": np.array(2, np.int64)},
    )  # fmt: skip
    assert propagate(graph)["y"].dtype == np.float32


@pytest.mark.parametrize(
    ("op_type", "x", "w", "weight_shape"),
    [
        ("Conv", (1, 3, 8, 8), (1, 0, 6, 6), (0, 3, 3, 3)),  # no filters: divided by M = 0
        ("ConvInteger", (1, 3, 8, 8), (1, 0, 6, 6), (0, 3, 3, 3)),
    ],
)
def test_a_convolution_without_filters_costs_no_flops(
    op_type: str, x: tuple[int, ...], w: tuple[int, ...], weight_shape: tuple[int, ...]
) -> None:
    # its cost rule raised a bare ZeroDivisionError while execute ran it
    dtype = "float32" if op_type == "Conv" else "uint8"
    weight = np.zeros(weight_shape, np.dtype(dtype))
    graph = Graph(
        "g", (Op(op_type, "c", ("x", "w"), ("y",)),), {"x": TensorType(x, dtype)}, ("y",),
        {"w": weight},
    )  # fmt: skip
    metas, costs = propagate_costs(graph)
    assert metas["y"].shape == w
    assert costs["c"].flops == 0
    assert costs["c"].bytes_read == np.prod(x) * np.dtype(dtype).itemsize


def test_a_top_k_over_rows_of_one_costs_no_compares() -> None:
    # n·ceil(log2 n) compares per row of n, as docs/cost-model.md says: it counted one per element
    k = np.array([1], np.int64)
    graph = Graph(
        "g", (Op("TopK", "t", ("x", "k"), ("v", "i")),), {"x": TensorType((3, 1), "float32")},
        ("v", "i"), {"k": k},
    )  # fmt: skip
    assert propagate_costs(graph)[1]["t"].flops == 0
