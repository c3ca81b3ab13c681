"""Inputs ONNX gives a rank (axes, shapes and splits 1-D, Range's bounds scalars) refused at
another; and the opset-1 forms of Cast (``to`` a type name) and Concat (``axis`` optional)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import OPS, Meta, execute, propagate
from hetsim.kernels.checks import ONNX_DTYPE_CODES, ONNX_DTYPES

X = np.arange(6, dtype=np.float32).reshape(1, 3, 1, 2)


def _i64(value: Any) -> np.ndarray:
    return np.array(value, np.int64)


# op type, opset, inputs (name -> array, None for an omitted one), the input of the wrong rank,
# outputs, attributes, the error; each a case that raised numpy's bare TypeError from a rule
WRONG_RANKS = [
    pytest.param(
        "Unsqueeze", 13, {"x": X, "axes": _i64(2)}, "axes", 1, {},
        "expected input 1 (axes) 1-D, got shape ()", id="unsqueeze-scalar-axes",
    ),
    pytest.param(
        "Squeeze", 13, {"x": X, "axes": _i64(2)}, "axes", 1, {},
        "expected input 1 (axes) 1-D, got shape ()", id="squeeze-scalar-axes",
    ),
    pytest.param(
        "ReduceSum", 13, {"x": X, "axes": _i64(1)}, "axes", 1, {},
        "expected input 1 (axes) 1-D, got shape ()", id="reducesum-scalar-axes",
    ),
    pytest.param(
        "ReduceMean", 18, {"x": X, "axes": _i64(1)}, "axes", 1, {},
        "expected input 1 (axes) 1-D, got shape ()", id="reducemean-scalar-axes",
    ),
    pytest.param(
        "Pad", 18, {"x": X, "pads": _i64([1, 1]), "": None, "axes": _i64(1)}, "axes", 1, {},
        "expected input 3 (axes) 1-D, got shape ()", id="pad-scalar-axes",
    ),
    pytest.param(
        "Pad", 18, {"x": X, "pads": _i64([[0, 0, 0, 0, 1, 1, 1, 1]])}, "pads", 1, {},
        "expected input 1 (pads) 1-D, got shape (1, 8)", id="pad-2d-pads",
    ),
    pytest.param(
        "Split", 13, {"x": X, "split": _i64(3)}, "split", 1, {"axis": 1},
        "expected input 1 (split) 1-D, got shape ()", id="split-scalar-split",
    ),
    pytest.param(
        "Slice", 13, {"x": X, "starts": _i64(0), "ends": _i64([2])}, "starts", 1, {},
        "expected input 1 (starts) 1-D, got shape ()", id="slice-scalar-starts",
    ),
    pytest.param(
        "Expand", 13, {"x": X, "shape": _i64(3)}, "shape", 1, {},
        "expected input 1 (shape) 1-D, got shape ()", id="expand-scalar-shape",
    ),
    pytest.param(
        "Reshape", 13, {"x": X, "shape": _i64([[3, 2]])}, "shape", 1, {},
        "expected input 1 (shape) 1-D, got shape (1, 2)", id="reshape-2d-shape",
    ),
    pytest.param(
        "ConstantOfShape", 13, {"shape": _i64(3)}, "shape", 1, {},
        "expected input 0 (shape) 1-D, got shape ()", id="constantofshape-scalar-shape",
    ),
    pytest.param(
        "Tile", 13, {"x": X, "repeats": _i64(2)}, "repeats", 1, {},
        "expected input 1 (repeats) 1-D, got shape ()", id="tile-scalar-repeats",
    ),
    pytest.param(
        "Range", 11, {"start": _i64([0]), "limit": _i64(5), "delta": _i64(1)}, "start", 1, {},
        "expected input 0 (start) a scalar, got shape (1,)", id="range-1d-start",
    ),
    pytest.param(
        "Range", 11, {"start": _i64(0), "limit": _i64(5), "delta": _i64([[1]])}, "delta", 1, {},
        "expected input 2 (delta) a scalar, got shape (1, 1)", id="range-2d-delta",
    ),
    pytest.param(
        "CenterCropPad", 18, {"x": X, "shape": _i64(2)}, "shape", 1, {"axes": [3]},
        "expected input 1 (shape) 1-D, got shape ()", id="centercroppad-scalar-shape",
    ),
    pytest.param(
        "MaxUnpool", 11,
        {"x": X, "indices": _i64(np.zeros((1, 3, 1, 2))), "output_shape": _i64(4)},
        "output_shape", 1, {"kernel_shape": [1, 2], "strides": [1, 2]},
        "expected input 2 (output_shape) 1-D, got shape ()", id="maxunpool-scalar-output-shape",
    ),
]  # fmt: skip


def _op(op_type: str, inputs: dict[str, Any], outputs: int, attrs: dict[str, Any]) -> Op:
    names = tuple(f"y{i}" for i in range(outputs))
    return Op(op_type, "n0", tuple(inputs), names, attrs)


def _graph(op: Op, inputs: dict[str, Any], opset: int, given: str) -> Graph:
    """`op` alone; `given` (and x) graph inputs, fed at the run; the other inputs constants."""
    fed = {
        n: TensorType(inputs[n].shape, inputs[n].dtype.name) for n in ("x", given) if n in inputs
    }
    constants = {n: a for n, a in inputs.items() if n and n not in fed}
    return Graph("g", (op,), fed, op.outputs, constants, opset)


def _error(op_type: str, message: str) -> str:
    return f"^{re.escape(f'op n0 ({op_type}): {message}')}$"


wrong_ranks = pytest.mark.parametrize(
    ("op_type", "opset", "inputs", "given", "outputs", "attrs", "message"), WRONG_RANKS
)


@wrong_ranks
def test_shape_rule_refuses_an_input_of_the_wrong_rank(
    op_type: str,
    opset: int,
    inputs: dict[str, Any],
    given: str,
    outputs: int,
    attrs: dict[str, Any],
    message: str,
) -> None:
    metas = [None if a is None else Meta.of(a) for a in inputs.values()]
    with pytest.raises(ModelError, match=_error(op_type, message)):
        OPS[op_type].infer(_op(op_type, inputs, outputs, attrs), opset, metas)


@wrong_ranks
def test_kernel_refuses_an_input_of_the_wrong_rank(
    op_type: str,
    opset: int,
    inputs: dict[str, Any],
    given: str,
    outputs: int,
    attrs: dict[str, Any],
    message: str,
) -> None:
    # at run time it had been "expected its kernel to compute, got TypeError: len() of unsized
    # object"
    kernel = OPS[op_type].compile(_op(op_type, inputs, outputs, attrs), opset)
    with pytest.raises(ModelError, match=_error(op_type, message)):
        kernel(list(inputs.values()))


@wrong_ranks
def test_a_graph_input_of_the_wrong_rank_is_refused_before_the_run(
    op_type: str,
    opset: int,
    inputs: dict[str, Any],
    given: str,
    outputs: int,
    attrs: dict[str, Any],
    message: str,
) -> None:
    graph = _graph(_op(op_type, inputs, outputs, attrs), inputs, opset, given)
    feeds = {n: inputs[n] for n in graph.inputs}
    for run in (lambda: propagate(graph), lambda: execute(graph, feeds)):
        with pytest.raises(ModelError, match=_error(op_type, message)):
            run()


def test_inputs_of_their_rank_still_run() -> None:
    op = Op("Unsqueeze", "n0", ("x", "axes"), ("y",))
    (y,) = OPS["Unsqueeze"].compile(op, 13)([X, _i64([0])])
    assert y.shape == (1, *X.shape)
    start, limit, delta = _i64(1), _i64(7), _i64(2)
    (r,) = OPS["Range"].compile(Op("Range", "n0", ("s", "l", "d"), ("y",)), 11)(
        [start, limit, delta]
    )
    assert r.tolist() == [1, 3, 5]


def test_an_onnx_model_with_scalar_axes_is_refused_naming_the_op() -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    from hetsim.frontend import load_onnx

    node = helper.make_node("Unsqueeze", ["x", "a"], ["y"], name="unsq")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(_i64(2), "a")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    for fold in (True, False):
        loaded = load_onnx(onnx.load_from_string(model.SerializeToString()), fold=fold)
        with pytest.raises(
            ModelError,
            match=r"^op unsq \(Unsqueeze\): expected input 1 \(axes\) 1-D, got shape \(\)$",
        ):
            execute(loaded, {"x": X})


# Cast-1: `to` is a STRING, a TensorProto.DataType name


@pytest.mark.parametrize("name", sorted(ONNX_DTYPE_CODES))
def test_cast_1_casts_to_the_onnx_type_name(name: str) -> None:
    x = np.array([1.7, -1.7, 0.0, 3.2], np.float32)
    expected = x.astype(ONNX_DTYPES[ONNX_DTYPE_CODES[name]])
    op = Op("Cast", "n0", ("x",), ("y",), {"to": name})
    (y,) = OPS["Cast"].compile(op, 1)([x])
    assert OPS["Cast"].infer(op, 1, [Meta.of(x)])[0].dtype == expected.dtype
    assert y.dtype == expected.dtype
    np.testing.assert_array_equal(y, expected)


def test_onnx_type_names_are_those_of_onnx() -> None:
    onnx = pytest.importorskip("onnx")
    for name, code in ONNX_DTYPE_CODES.items():
        assert onnx.TensorProto.DataType.Value(name) == code, name
        assert onnx.helper.tensor_dtype_to_np_dtype(code) == ONNX_DTYPES[code], name


@pytest.mark.parametrize(
    ("to", "got"),
    [
        ("INT33", "'INT33' (did you mean 'INT32'?)"),
        ("STRING", "'STRING'"),  # an ONNX type hetsim does not support
        ("complex64", "'complex64'"),  # a numpy dtype, of no supported ONNX type
    ],
)
def test_cast_refuses_an_unknown_type_name(to: str, got: str) -> None:
    names = sorted(ONNX_DTYPE_CODES)
    listed = ", ".join(repr(n) for n in names[:-1]) + f" or {names[-1]!r}"
    message = f"op n0 (Cast): expected a dtype name {listed}, got {got}"
    op = Op("Cast", "n0", ("x",), ("y",), {"to": to})
    x = Meta((2,), np.dtype("float32"))
    for run in (lambda: OPS["Cast"].infer(op, 1, [x]), lambda: OPS["Cast"].compile(op, 1)):
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            run()


def test_an_onnx_cast_1_model_runs() -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from hetsim.frontend import load_onnx

    node = helper.make_node("Cast", ["x"], ["y"], to="INT32", name="cast")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 1)])
    model.ir_version = 3
    x = np.full((2, 3), 1.7, np.float32)
    # onnx's reference evaluator reads `to` as a code (KeyError 'INT32'); onnxruntime runs no
    # opset-1 Cast: numpy is the reference
    y = execute(load_onnx(onnx.load_from_string(model.SerializeToString())), {"x": x})["y"]
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, x.astype(np.int32))


# Concat: `axis` optional with default 1 before opset 4, required from it


@pytest.mark.parametrize("opset", [1, 3])
def test_concat_before_opset_4_defaults_axis_to_1(opset: int) -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = -np.arange(4, dtype=np.float32).reshape(2, 2)
    op = Op("Concat", "n0", ("a", "b"), ("y",))
    assert OPS["Concat"].infer(op, opset, [Meta.of(a), Meta.of(b)])[0].shape == (2, 5)
    (y,) = OPS["Concat"].compile(op, opset)([a, b])
    np.testing.assert_array_equal(y, np.concatenate([a, b], axis=1))


def test_concat_before_opset_4_reads_a_given_axis() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    op = Op("Concat", "n0", ("a", "b"), ("y",), {"axis": 0})
    (y,) = OPS["Concat"].compile(op, 1)([a, a])
    np.testing.assert_array_equal(y, np.concatenate([a, a], axis=0))


def test_concat_from_opset_4_requires_axis() -> None:
    op = Op("Concat", "n0", ("a", "b"), ("y",))
    x = Meta((2, 3), np.dtype("float32"))
    message = r"^op n0 \(Concat\): missing required attribute 'axis'$"
    for run in (lambda: OPS["Concat"].infer(op, 4, [x, x]), lambda: OPS["Concat"].compile(op, 4)):
        with pytest.raises(ModelError, match=message):
            run()
