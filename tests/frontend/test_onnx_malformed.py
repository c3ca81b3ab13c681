"""Malformed and unusual ONNX models: each is a `ModelError` naming the file and the node or
tensor at fault (never a traceback from inside, never a silently different number), and the
unusual but valid ones load and run as onnxruntime runs them."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import AttributeProto, TensorProto, helper, numpy_helper  # noqa: E402

from hetsim.api import simulate  # noqa: E402
from hetsim.errors import ModelError  # noqa: E402
from hetsim.frontend import load_onnx  # noqa: E402
from hetsim.kernels import execute  # noqa: E402
from tests.frontend.test_onnx import _model, _relu_model, _vi  # noqa: E402

FLOAT = TensorProto.FLOAT


def _add_w(
    *weights: onnx.TensorProto, w_input: onnx.ValueInfoProto | None = None
) -> onnx.ModelProto:
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    inputs = [_vi("x", [2])] + ([w_input] if w_input is not None else [])
    return _model([node], inputs, [_vi("y", [2])], list(weights))


def _w(values: list[float] | np.ndarray, name: str = "w") -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, np.float32), name)


def _leaky(attribute: AttributeProto) -> onnx.ModelProto:
    node = helper.make_node("LeakyRelu", ["x"], ["y"], name="leaky")
    node.attribute.append(attribute)
    return _model([node], [_vi("x", [2])], [_vi("y", [2])])


def _two_initializers() -> onnx.ModelProto:
    return _add_w(_w([1, 1]), _w([5, 5, 5]))


def _sparse_initializer() -> onnx.ModelProto:
    model = _add_w()
    indices = numpy_helper.from_array(np.array([0], np.int64), "indices")
    sparse = helper.make_sparse_tensor(_w([1.0]), indices, [2])
    model.graph.sparse_initializer.append(sparse)
    return model


def _opsets(*versions: tuple[str, int]) -> onnx.ModelProto:
    model = _relu_model()
    del model.opset_import[:]
    model.opset_import.extend(helper.make_opsetid(domain, v) for domain, v in versions)
    return model


def _attribute_twice() -> onnx.ModelProto:
    model = _leaky(helper.make_attribute("alpha", 0.1))
    model.graph.node[0].attribute.append(helper.make_attribute("alpha", 0.9))
    return model


def _ref_attribute() -> onnx.ModelProto:
    # a reference to a function's attribute, outside any function: read, alpha was 0.0
    return _leaky(AttributeProto(name="alpha", type=AttributeProto.FLOAT, ref_attr_name="a"))


def _value_in_another_field() -> onnx.ModelProto:
    # onnx's checker: "type field and data field mismatch"; read, alpha was int 0
    return _leaky(AttributeProto(name="alpha", type=AttributeProto.INT, f=0.5))


def _not_utf8() -> onnx.ModelProto:
    # the str of a STRING attribute: a UnicodeDecodeError came out as a traceback
    weight = numpy_helper.from_array(np.ones((1, 1, 1, 1), np.float32), "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv")
    node.attribute.append(AttributeProto(name="auto_pad", type=AttributeProto.STRING, s=b"\xff"))
    return _model([node], [_vi("x", [1, 1, 2, 2])], [_vi("y", [1, 1, 2, 2])], [weight])


def _out_of_range(data_type: int, field: str, values: list[int]) -> Callable[[], onnx.ModelProto]:
    def build() -> onnx.ModelProto:
        weight = TensorProto(name="w", data_type=data_type, dims=[len(values)])
        getattr(weight, field).extend(values)
        return _add_w(weight)

    return build


def _too_many_dims() -> onnx.ModelProto:
    # no values, and dims numpy cannot index: a ValueError came out of reshape
    return _add_w(helper.make_tensor("w", FLOAT, [0, 2**62], []))


def _function_call() -> onnx.ModelProto:
    body = [helper.make_node("Relu", ["a"], ["b"])]
    function = helper.make_function(
        "my.domain", "MyRelu", ["a"], ["b"], body, [helper.make_opsetid("", 13)]
    )
    node = helper.make_node("MyRelu", ["x"], ["y"], name="call", domain="my.domain")
    model = _model([node], [_vi("x", [2])], [_vi("y", [2])])
    model.opset_import.append(helper.make_opsetid("my.domain", 1))
    model.functions.append(function)
    return model


BAD = {
    "two_initializers_of_one_name": (
        _two_initializers,
        "initializer w: expected one initializer of a name, got two",
    ),
    "sparse_initializer": (
        _sparse_initializer,
        "initializer w: expected a dense tensor, got a sparse_initializer (hetsim reads no "
        "sparse tensors)",
    ),
    "two_default_opsets": (
        lambda: _opsets(("", 13), ("", 7)),
        "expected one default-domain opset, got 13 and 7",
    ),
    "default_opset_as_empty_and_ai_onnx": (
        lambda: _opsets(("", 13), ("ai.onnx", 11)),
        "expected one default-domain opset, got 13 and 11",
    ),
    "attribute_twice": (
        _attribute_twice,
        "op leaky (LeakyRelu) attribute alpha: expected one attribute of a name, got two",
    ),
    "attribute_referring_to_a_function_attribute": (
        _ref_attribute,
        "op leaky (LeakyRelu) attribute alpha: expected a value, got a reference to attribute "
        "'a' of a function (only a function's body may refer)",
    ),
    "attribute_value_in_another_type_s_field": (
        _value_in_another_field,
        "op leaky (LeakyRelu) attribute alpha: expected its value in field i (type int), got "
        "field f",
    ),
    "string_attribute_not_utf8": (
        _not_utf8,
        "op conv (Conv) attribute auto_pad: expected UTF-8 text, got b'\\xff'",
    ),
    "initializer_input_of_another_dtype": (
        lambda: _add_w(_w([1, 1]), w_input=_vi("w", [2], TensorProto.INT64)),
        "input w: expected its initializer's type float32[2], got int64[2]",
    ),
    "initializer_input_of_another_shape": (
        lambda: _add_w(_w([1, 1]), w_input=_vi("w", ["n", 7])),
        "input w: expected its initializer's type float32[2], got float32[n, 7]",
    ),
    "int8_values_out_of_range": (
        _out_of_range(TensorProto.INT8, "int32_data", [1, 300]),
        "initializer w: expected int32_data values from -128 to 127 (int8), got 300",
    ),
    "float16_bit_patterns_out_of_range": (
        _out_of_range(TensorProto.FLOAT16, "int32_data", [15360, -5]),
        "initializer w: expected int32_data values from 0 to 65535 (float16 bit patterns), got -5",
    ),
    "uint32_values_out_of_range": (
        _out_of_range(TensorProto.UINT32, "uint64_data", [2**40, 1]),
        "initializer w: expected uint64_data values from 0 to 4294967295 (uint32), got "
        "1099511627776",
    ),
    "dims_numpy_cannot_hold": (
        _too_many_dims,
        "initializer w: expected dims numpy can hold, got [0, 4611686018427387904]",
    ),
}


@pytest.mark.parametrize(("build", "message"), BAD.values(), ids=BAD.keys())
def test_malformed_model_is_an_error_naming_the_file_and_the_place(
    build: Callable[[], onnx.ModelProto], message: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.onnx"
    path.write_bytes(build().SerializeToString())
    with pytest.raises(ModelError, match=f"^{re.escape(f'{path}: {message}')}$"):
        load_onnx(path)


def test_a_call_of_a_model_local_function_says_functions_are_not_inlined() -> None:
    with pytest.raises(
        ModelError,
        match=r"^model g: op call \(MyRelu\): unsupported op MyRelu in domain 'my\.domain' \(a "
        r"function of the model's own, which hetsim does not inline\); hetsim\.kernels\.OPS holds ",
    ):
        load_onnx(_function_call())


def test_node_names_made_unique_never_take_a_name_in_use() -> None:
    # ONNX lets nodes share a name: the second 'a' became 'a_2', the third node's own name,
    # and a valid model was refused ("expected distinct op names, got 'a_2' twice")
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="a"),
        helper.make_node("Neg", ["h"], ["k"], name="a_2"),
        helper.make_node("Abs", ["k"], ["y"], name="a"),
    ]
    graph = load_onnx(_model(nodes, [_vi("x", [2])], [_vi("y", [2])]))
    assert [op.name for op in graph.ops] == ["a", "a_2", "a_3"]


def test_a_node_keeps_its_own_name_from_names_made_for_others() -> None:
    # an unnamed node took its output's name 'relu', so the node named 'relu' became 'relu_1'
    # (rules naming 'relu' placed the other op); a repeated 'n' took 'n_3', a later node's own
    nodes = [
        helper.make_node("Relu", ["x"], ["relu"]),
        helper.make_node("Neg", ["relu"], ["h"], name="relu"),
        helper.make_node("Abs", ["h"], ["k"], name="n"),
        helper.make_node("Abs", ["k"], ["m"], name="n"),
        helper.make_node("Neg", ["m"], ["y"], name="n_3"),
    ]
    graph = load_onnx(_model(nodes, [_vi("x", [2])], [_vi("y", [2])]))
    assert [(op.type, op.name) for op in graph.ops] == [
        ("Relu", "relu_0"), ("Neg", "relu"), ("Abs", "n"), ("Abs", "n_4"), ("Neg", "n_3"),
    ]  # fmt: skip


def test_a_node_named_as_an_engine_step_is_renamed() -> None:
    # a Graph refuses the names hetsim gives its own steps; a model's node is renamed instead
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="(return)")]
    graph = load_onnx(_model(nodes, [_vi("x", [2])], [_vi("y", [2])]))
    assert [op.name for op in graph.ops] == ["(return)_0"]


def test_an_initializer_input_with_a_named_dim_or_no_shape_is_its_initializer() -> None:
    # IR 3 lists every weight as an input too; a named dim or a missing shape states nothing
    for stated in (_vi("w", ["n"]), _vi("w", None)):
        graph = load_onnx(_add_w(_w([1, 2]), w_input=stated))
        assert list(graph.inputs) == ["x"]
        np.testing.assert_array_equal(graph.initializers["w"], [1.0, 2.0])


def test_one_default_opset_stated_twice_is_that_opset() -> None:
    assert load_onnx(_opsets(("", 13), ("ai.onnx", 13))).opset == 13


def test_value_info_at_odds_with_the_op_sets_no_size() -> None:
    # sizes come from the shape rules: a value_info (or an output) that says otherwise is not
    # read, so the simulated time is that of the model without it
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="relu"),
        helper.make_node("Neg", ["h"], ["y"], name="neg"),
    ]
    plain = _model(nodes, [_vi("x", [64, 64])], [_vi("y", [64, 64])])
    odd = _model(nodes, [_vi("x", [64, 64])], [_vi("y", [7, 9])])
    odd.graph.value_info.append(_vi("h", [4096, 4096]))
    x = np.ones((64, 64), np.float32)
    got = simulate(load_onnx(odd), "x86-h100", inputs={"x": x})
    want = simulate(load_onnx(plain), "x86-h100", inputs={"x": x})
    assert got.outputs["y"].dtype == np.float32
    assert got.outputs["y"].shape == (64, 64)
    assert got.makespan_us == want.makespan_us


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("output", "op neg (Neg): expected output 'y' of the dtype the model declares for it, "
                   "int64, got float32"),
        ("value_info", "op relu (Relu): expected output 'h' of the dtype the model declares for "
                       "it, float64, got float32"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("shaped", [True, False], ids=["shaped", "of-unknown-rank"])
def test_a_declared_dtype_at_odds_with_the_op_is_refused(
    where: str, message: str, shaped: bool
) -> None:
    # it was not read: y ran as float32 where the model says int64, as onnxruntime refuses
    # ("Type Error: Type (tensor(float)) of output arg (y) of node (neg) does not match"); a
    # declaration of unknown rank (no shape) had gone unread after shaped ones were read
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="relu"),
        helper.make_node("Neg", ["h"], ["y"], name="neg"),
    ]
    shape = [64, 64] if shaped else None
    output = _vi("y", shape, TensorProto.INT64 if where == "output" else TensorProto.FLOAT)
    odd = _model(nodes, [_vi("x", [64, 64])], [output])
    if where == "value_info":
        odd.graph.value_info.append(_vi("h", shape, TensorProto.DOUBLE))
    for run in (
        lambda: simulate(load_onnx(odd), "x86-h100", mode="timing"),
        lambda: execute(load_onnx(odd), {"x": np.ones((64, 64), np.float32)}),
    ):
        with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
            run()


def _dq_reshape_q(stated: int | None) -> onnx.ModelProto:
    """x cast to int8 -> DequantizeLinear (no zero point) -> Reshape -> QuantizeLinear to uint8,
    with a value_info of the int8 tensor stating `stated` (none if None)."""
    nodes = [
        helper.make_node("Cast", ["x"], ["xi"], name="cast", to=TensorProto.INT8),
        helper.make_node("DequantizeLinear", ["xi", "s"], ["xf"], name="dq"),
        helper.make_node("Reshape", ["xf", "shape"], ["r"], name="reshape"),
        helper.make_node("QuantizeLinear", ["r", "s", "z"], ["y"], name="q"),
    ]
    inits = [
        numpy_helper.from_array(np.array(1.0, np.float32), "s"),
        numpy_helper.from_array(np.array(0, np.uint8), "z"),
        numpy_helper.from_array(np.array([4], np.int64), "shape"),
    ]
    model = _model(nodes, [_vi("x", [2, 2])], [_vi("y", [4], TensorProto.UINT8)], inits)
    if stated is not None:
        model.graph.value_info.append(_vi("xi", [2, 2], stated))
    return model


def test_qdq_fusion_does_not_trust_a_value_info_dtype() -> None:
    # a value_info calling the int8 tensor uint8 fused the Reshape onto it: int8 [-3, 5, ...]
    # came out where the model computes uint8 [0, 5, ...]
    x = {"x": np.array([[-3.0, 5.0], [0.0, -1.0]], np.float32)}
    for stated in (TensorProto.INT8, None):
        model = _dq_reshape_q(stated)
        got = execute(load_onnx(model), x)["y"]
        want = execute(load_onnx(model, fuse_qdq=False), x)["y"]
        assert got.dtype == want.dtype == np.uint8
        np.testing.assert_array_equal(got, [0, 5, 0, 0])
    # the model at odds with itself is refused, fused or not, as onnxruntime refuses it
    message = "op cast (Cast): expected output 'xi' of the dtype the model declares for it, "
    for fuse in (True, False):
        with pytest.raises(ModelError, match=f"^{re.escape(message)}uint8, got int8$"):
            execute(load_onnx(_dq_reshape_q(TensorProto.UINT8), fuse_qdq=fuse), x)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
@pytest.mark.parametrize(
    ("bad", "bad_scale", "fused"),
    [("ws", np.nan, False), ("ws", np.inf, False), ("ys", 0.0, False), ("ys", -0.0, False),
     ("ws", 0.0, True)],  # a DQ's zero scale makes zeros, fused or not: only a Q divides by it
)  # fmt: skip
def test_a_qdq_group_with_a_scale_that_is_not_finite_or_a_zero_q_scale_stays_float(
    bad: str, bad_scale: float, fused: bool
) -> None:
    # fused, a NaN weight scale gave 0 where the float ops give -128, and so did a zero output
    # scale (the float Q divides by it: onnxruntime gives -128 too)
    scales = {"ws": np.float32(0.5), "ys": np.float32(0.5), bad: np.float32(bad_scale)}
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"], name="dq_x"),
        helper.make_node("DequantizeLinear", ["w", "ws", "z"], ["wf"], name="dq_w"),
        helper.make_node("MatMul", ["xf", "wf"], ["m"], name="mm"),
        helper.make_node("QuantizeLinear", ["m", "ys", "z"], ["y"], name="q"),
    ]
    inits = [
        numpy_helper.from_array(np.array(0.5, np.float32), "s"),
        *(numpy_helper.from_array(np.array(v, np.float32), name) for name, v in scales.items()),
        numpy_helper.from_array(np.array(0, np.int8), "z"),
        numpy_helper.from_array(np.ones((2, 3), np.int8), "w"),
    ]
    model = _model(
        nodes, [_vi("x", [1, 2], TensorProto.INT8)], [_vi("y", None, TensorProto.INT8)], inits
    )
    graph = load_onnx(model)
    assert ("QLinearMatMul" in [op.type for op in graph.ops]) is fused
    x = {"x": np.array([[1, -2]], np.int8)}
    np.testing.assert_array_equal(
        execute(graph, x)["y"], execute(load_onnx(model, fuse_qdq=False), x)["y"]
    )


@pytest.mark.parametrize("where", ["output", "value_info"])
@pytest.mark.parametrize("elem", [TensorProto.BFLOAT16, TensorProto.STRING])
def test_an_unsupported_dtype_declared_without_a_shape_is_refused(where: str, elem: int) -> None:
    # the same declaration with a shape was refused; without one it was not read, and y ran
    # as float32 where the model says bfloat16 (onnxruntime refuses it: "Type Error")
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="relu"),
        helper.make_node("Neg", ["h"], ["y"], name="neg"),
    ]
    name = "y" if where == "output" else "h"
    unshaped = helper.make_tensor_value_info(name, elem, None)
    output = unshaped if where == "output" else _vi("y", [2])
    model = _model(nodes, [_vi("x", [2])], [output])
    if where == "value_info":
        model.graph.value_info.append(unshaped)
    dtype = TensorProto.DataType.Name(elem).lower()
    message = rf"^model \S+: tensor {name}: expected a supported dtype .*, got {dtype}$"
    with pytest.raises(ModelError, match=message):
        load_onnx(model)
