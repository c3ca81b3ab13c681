"""The ONNX frontend: conversion, symbolic dims, attributes, constant folding, and its errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from hetsim.errors import ModelError  # noqa: E402
from hetsim.frontend import SUPPORTED_DTYPES, fold_constants, load_onnx  # noqa: E402
from hetsim.ir import Op, TensorType  # noqa: E402
from hetsim.kernels import execute  # noqa: E402
from hetsim.models import load_model  # noqa: E402

FLOAT = TensorProto.FLOAT


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: list[onnx.TensorProto] = (),  # type: ignore[assignment]
    opset: int = 13,
    name: str = "g",
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name: str, shape: list[int | str | None] | None, elem: int = FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _relu_model(**kwargs: object) -> onnx.ModelProto:
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    return _model([node], [_vi("x", ["seq", 4])], [_vi("y", ["seq", 4])], **kwargs)  # type: ignore[arg-type]


def test_symbolic_and_unnamed_dims_are_kept_symbolic() -> None:
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    graph = load_onnx(_model([node], [_vi("x", ["batch", None, 3])], [_vi("y", None)]))
    assert graph.inputs == {"x": TensorType(("batch", "x_d1", 3), "float32")}
    assert graph.symbols == ("batch", "x_d1")


def test_opset_is_the_default_domain_version() -> None:
    model = _relu_model()
    del model.opset_import[:]
    model.opset_import.extend(
        [helper.make_opsetid("com.microsoft", 1), helper.make_opsetid("", 11)]
    )
    assert load_onnx(model).opset == 11
    model.opset_import[1].domain = "ai.onnx"
    assert load_onnx(model).opset == 11


def test_file_and_proto_give_the_same_graph(tmp_path: Path) -> None:
    model = _relu_model()
    path = tmp_path / "relu.onnx"
    onnx.save(model, path)
    from_file, from_proto = load_onnx(path), load_onnx(model)
    assert from_file.ops == from_proto.ops == (Op("Relu", "relu", ("x",), ("y",)),)
    assert from_file.inputs == from_proto.inputs
    assert from_file.outputs == ("y",)
    assert load_onnx(str(path)).ops == from_proto.ops


def test_attributes_become_python_values() -> None:
    nodes = [
        helper.make_node(
            "Conv", ["x", "w"], ["c"], name="conv", auto_pad="SAME_UPPER", strides=[1, 1]
        ),
        helper.make_node("LeakyRelu", ["c"], ["y"], name="leaky", alpha=0.25),
    ]
    weight = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
    graph = load_onnx(_model(nodes, [_vi("x", [1, 1, 5, 5])], [_vi("y", [1, 2, 5, 5])], [weight]))
    conv, leaky = graph.ops
    assert conv.attrs == {"auto_pad": "SAME_UPPER", "strides": [1, 1]}
    assert isinstance(conv.attrs["auto_pad"], str)
    assert leaky.attrs == {"alpha": 0.25}


def test_tensor_attribute_becomes_an_array() -> None:
    value = numpy_helper.from_array(np.array([1.5, -2.0], np.float32), "value")
    nodes = [
        helper.make_node("Constant", [], ["c"], name="const", value=value),
        helper.make_node("Add", ["x", "c"], ["y"], name="add"),
    ]
    graph = load_onnx(_model(nodes, [_vi("x", [2])], [_vi("y", [2])]), fold=False)
    constant = graph.ops[0].attrs["value"]
    assert isinstance(constant, np.ndarray)
    np.testing.assert_array_equal(constant, [1.5, -2.0])


def test_unnamed_nodes_are_named_after_their_first_output() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Neg", ["h"], ["y"])]
    graph = load_onnx(_model(nodes, [_vi("x", [2])], [_vi("y", [2])]))
    assert [op.name for op in graph.ops] == ["h", "y"]


def test_duplicate_node_names_are_made_unique() -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="n"),
        helper.make_node("Neg", ["h"], ["y"], name="n"),
    ]
    graph = load_onnx(_model(nodes, [_vi("x", [2])], [_vi("y", [2])]))
    assert [op.name for op in graph.ops] == ["n", "n_1"]


def test_initializers_listed_as_inputs_are_not_graph_inputs() -> None:
    bias = numpy_helper.from_array(np.arange(2, dtype=np.float32), "b")
    node = helper.make_node("Add", ["x", "b"], ["y"], name="add")
    model = _model([node], [_vi("x", [2]), _vi("b", [2])], [_vi("y", [2])], [bias])
    graph = load_onnx(model)
    assert list(graph.inputs) == ["x"]
    np.testing.assert_array_equal(graph.initializers["b"], [0.0, 1.0])


def test_value_types_come_from_value_info_and_outputs() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Neg", ["h"], ["y"])]
    model = _model(nodes, [_vi("x", ["n"])], [_vi("y", ["n"])])
    model.graph.value_info.append(_vi("h", ["n"]))
    types = load_onnx(model).value_types
    assert types["h"] == types["y"] == types["x"] == TensorType(("n",), "float32")


SUPPORTED_OPS_LISTED = (
    "hetsim.kernels.OPS holds the supported op types (docs/architecture.md, Kernels, lists them)"
)


def test_unsupported_op_names_the_node_and_where_the_supported_ops_are_listed() -> None:
    # it listed all of them, some 160 names, in one line that buried the op it was about
    node = helper.make_node("Mystery", ["x"], ["y"], name="odd")
    message = f"model g: op odd (Mystery): unsupported op Mystery; {SUPPORTED_OPS_LISTED}"
    with pytest.raises(ModelError, match="^" + re.escape(message) + "$"):
        load_onnx(_model([node], [_vi("x", [2])], [_vi("y", [2])]))


@pytest.mark.parametrize(
    ("op_type", "domain", "said"),
    [
        ("Relux", "", "unsupported op Relux (did you mean 'Relu'?)"),
        ("layernormalization", "", "unsupported op layernormalization (did you mean "
         "'LayerNormalization'?)"),
        ("QLinearAd", "com.microsoft", "unsupported op QLinearAd in domain 'com.microsoft' (did "
         "you mean 'QLinearAdd'?)"),
        # the closest type of another domain is hinted with its domain: within the node's own
        # domain only, QLinearAd had hinted QLinearConv and QLinerConv QLinearConcat
        ("QLinearAd", "", "unsupported op QLinearAd (did you mean 'QLinearAdd', in domain "
         "'com.microsoft'?)"),
        ("QLinerConv", "com.microsoft", "unsupported op QLinerConv in domain 'com.microsoft' (did "
         "you mean 'QLinearConv', in the default domain?)"),
        ("Relux", "com.microsoft", "unsupported op Relux in domain 'com.microsoft' (did you mean "
         "'Relu', in the default domain?)"),
    ],
)  # fmt: skip
def test_unsupported_op_hints_the_closest_type_with_its_domain(
    op_type: str, domain: str, said: str
) -> None:
    node = helper.make_node(op_type, ["x"], ["y"], name="n", domain=domain)
    model = _model([node], [_vi("x", [2])], [_vi("y", [2])])
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    message = f"model g: op n ({op_type}): {said}; {SUPPORTED_OPS_LISTED}"
    with pytest.raises(ModelError, match="^" + re.escape(message) + "$"):
        load_onnx(model)


def test_onnxruntime_s_quantized_ops_are_read_in_their_domain_only() -> None:
    inputs = ["a", "s", "z", "a", "s", "z", "s", "z"]
    add = helper.make_node("QLinearAdd", inputs, ["y"], name="qadd", domain="com.microsoft")
    inits = [
        numpy_helper.from_array(np.array(0.5, np.float32), "s"),
        numpy_helper.from_array(np.array(1, np.int8), "z"),
    ]
    a = _vi("a", [3], TensorProto.INT8)
    model = _model([add], [a], [_vi("y", [3], TensorProto.INT8)], inits)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    graph = load_onnx(model)
    assert [(op.type, op.name) for op in graph.ops] == [("QLinearAdd", "qadd")]
    got = execute(graph, {"a": np.array([-3, 1, 100], np.int8)})["y"]
    np.testing.assert_array_equal(got, [-7, 1, 127])  # 2·(a - 1) · 0.5 / 0.5 + 1, saturated
    add.domain = ""
    plain = _model([add], [a], [_vi("y", [3], TensorProto.INT8)], inits)
    with pytest.raises(
        ModelError,
        match=r"^model g: op qadd \(QLinearAdd\): unsupported op QLinearAdd \(onnxruntime's "
        r"QLinearAdd is in domain 'com\.microsoft'\); hetsim\.kernels\.OPS holds ",
    ):
        load_onnx(plain)


def test_op_from_another_domain_is_unsupported_even_with_a_known_name() -> None:
    node = helper.make_node("Relu", ["x"], ["y"], name="r", domain="com.vendor")
    with pytest.raises(
        ModelError,
        match=r"^model g: op r \(Relu\): unsupported op Relu in domain 'com\.vendor' \(ONNX's "
        r"Relu is in the default domain\); hetsim\.kernels\.OPS holds ",
    ):
        load_onnx(_model([node], [_vi("x", [2])], [_vi("y", [2])]))


def test_a_model_only_of_another_domains_ops_names_the_op() -> None:
    # such a model imports no default-domain opset: that was the complaint, not the op
    node = helper.make_node("Binarizer", ["x"], ["y"], name="bin", domain="ai.onnx.ml")
    graph = helper.make_graph([node], "g", [_vi("x", [2])], [_vi("y", [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 1)])
    with pytest.raises(
        ModelError,
        match=r"^model g: op bin \(Binarizer\): unsupported op Binarizer in domain "
        r"'ai\.onnx\.ml';",
    ):
        load_onnx(model)


@pytest.mark.parametrize(
    ("elem", "name"), [(TensorProto.BFLOAT16, "bfloat16"), (TensorProto.STRING, "string")]
)
def test_unsupported_input_dtype_is_an_error(elem: int, name: str) -> None:
    node = helper.make_node("Identity", ["x"], ["y"], name="id")
    model = _model([node], [_vi("x", [2], elem)], [_vi("y", [2], elem)])
    dtypes = ", ".join(SUPPORTED_DTYPES)
    with pytest.raises(
        ModelError,
        match="^"
        + re.escape(f"model g: input x: expected a supported dtype ({dtypes}), got {name}")
        + "$",
    ):
        load_onnx(model)


def test_unsupported_initializer_dtype_is_an_error() -> None:
    weight = helper.make_tensor("w", TensorProto.COMPLEX64, [1], [1 + 2j])
    node = helper.make_node("Identity", ["w"], ["y"], name="id")
    with pytest.raises(
        ModelError,
        match=r"^model g: initializer w: expected a supported dtype \(.*\), got complex64$",
    ):
        load_onnx(_model([node], [], [_vi("y", [1])], [weight]))


def _matmul_with(weight: onnx.TensorProto) -> onnx.ModelProto:
    node = helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")
    return _model([node], [_vi("x", [1, 4])], [_vi("y", [1, 4])], [weight])


def test_an_initializer_with_fewer_raw_bytes_than_its_dims_is_an_error() -> None:
    weight = numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    weight.raw_data = weight.raw_data[:10]  # a truncated file
    with pytest.raises(
        ModelError,
        match=r"^model g: initializer w: expected 16 values \(dims \[4, 4\]\) of float32, got 10 "
        r"bytes of raw_data \(2\.5 values\)$",
    ):
        load_onnx(_matmul_with(weight))


def test_an_initializer_whose_dims_disagree_with_its_values_is_an_error() -> None:
    weight = numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    weight.dims[:] = [4, 5]
    with pytest.raises(ModelError, match=r"^model g: initializer w: expected 20 values"):
        load_onnx(_matmul_with(weight))
    typed = helper.make_tensor("w", FLOAT, [4, 4], np.ones(16, np.float32))
    del typed.float_data[5:]
    with pytest.raises(
        ModelError,
        match=r"^model g: initializer w: expected 16 values \(dims \[4, 4\]\) of float32, got 5 "
        r"in float_data$",
    ):
        load_onnx(_matmul_with(typed))


def test_an_initializer_with_a_negative_dim_is_an_error() -> None:
    weight = helper.make_tensor("w", FLOAT, [4, 4], np.ones(16, np.float32))
    weight.dims[:] = [-4, -4]
    with pytest.raises(
        ModelError, match=r"^model g: initializer w: expected dims >= 0, got \[-4, -4\]$"
    ):
        load_onnx(_matmul_with(weight))


def test_unsupported_dtype_in_a_tensor_attribute_names_the_op() -> None:
    value = helper.make_tensor("value", TensorProto.BFLOAT16, [1], [1.0])
    node = helper.make_node("ConstantOfShape", ["s"], ["y"], name="fill", value=value)
    with pytest.raises(
        ModelError,
        match=r"^model g: op fill \(ConstantOfShape\) attribute value: expected a supported "
        r"dtype \(.*\), got bfloat16$",
    ):
        load_onnx(_model([node], [_vi("s", [1], TensorProto.INT64)], [_vi("y", None)]))


def test_malformed_file_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x08\x07garbage\xff\xff\x00")
    with pytest.raises(
        ModelError,
        match="^" + re.escape(f"{path}: expected an ONNX model, got unreadable data ("),
    ):
        load_onnx(path)


def test_missing_file_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.onnx"
    with pytest.raises(
        ModelError,
        match="^" + re.escape(f"{path}: expected an ONNX model file, got no such file") + "$",
    ):
        load_onnx(path)


def test_a_missing_file_named_in_capitals_is_a_missing_file_too(tmp_path: Path) -> None:
    # ".ONNX" read as a zoo name: "expected a zoo name or a path to an .onnx file"
    path = tmp_path / "ABSENT.ONNX"
    with pytest.raises(
        ModelError,
        match="^" + re.escape(f"{path}: expected an ONNX model file, got no such file") + "$",
    ):
        load_model(str(path))


def test_an_empty_file_or_a_directory_is_not_a_model(tmp_path: Path) -> None:
    # protobuf reads an empty file as a model with nothing set: "expected an opset" misled
    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    cases = [(path, "an empty file"), (tmp_path, "a directory")]
    fifo = tmp_path / "fifo.onnx"
    if hasattr(os, "mkfifo"):  # a special file: it exists, and was "no such file"
        os.mkfifo(fifo)
        cases.append((fifo, "a special file, not a regular one"))
    for given, found in cases:
        message = f"{given}: expected an ONNX model file, got {found}"
        with pytest.raises(ModelError, match="^" + re.escape(message) + "$"):
            load_onnx(given)


def test_file_without_a_default_opset_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "no-opset.onnx"
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [2])], [_vi("y", [2])])
    del model.opset_import[:]
    path.write_bytes(model.SerializeToString())
    with pytest.raises(
        ModelError,
        match="^"
        + re.escape(
            f"{path}: expected an opset for the default ONNX domain (op y (Relu) is in it), "
            "got none"
        )
        + "$",
    ):
        load_onnx(path)


def test_a_model_without_a_graph_says_so(tmp_path: Path) -> None:
    # a GraphProto saved alone parses as a ModelProto with nothing set: it read as a model
    # without an opset, which sent its author to the wrong field
    graph = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [2])], [_vi("y", [2])])
    path = tmp_path / "graph-only.onnx"
    path.write_bytes(graph.graph.SerializeToString())
    ir_only = tmp_path / "ir-only.onnx"
    ir_only.write_bytes(b"\x08\x07")  # a ModelProto holding only ir_version 7
    found = (
        "expected an ONNX model holding a graph, got none (a GraphProto saved without its "
        "ModelProto reads so: save the model, not model.graph)"
    )
    for given, where in ((path, path), (ir_only, ir_only), (onnx.ModelProto(), "model (unnamed)")):
        with pytest.raises(ModelError, match="^" + re.escape(f"{where}: {found}") + "$"):
            load_onnx(given)


def test_a_name_that_is_not_utf8_says_so(tmp_path: Path) -> None:
    # protobuf hands a string field it cannot decode over as bytes: the message had said only
    # "got bytes", not what was wrong with them
    node = helper.make_node("Relu", ["x"], ["y"], name="QzQQ")
    model = _model([node], [_vi("x", [2])], [_vi("y", [2])])
    path = tmp_path / "latin1-name.onnx"
    path.write_bytes(model.SerializeToString().replace(b"QzQQ", b"Q\xffQQ"))
    found = "name: expected a non-empty str, got bytes b'Q\\xffQQ' (not UTF-8 text)"
    with pytest.raises(ModelError, match=re.escape(found) + "$"):
        load_onnx(path)


def test_dangling_input_names_the_model_and_the_node(tmp_path: Path) -> None:
    node = helper.make_node("Add", ["x", "nowhere"], ["y"], name="add7")
    model = _model([node], [_vi("x", [2])], [_vi("y", [2])])
    with pytest.raises(
        ModelError, match=r"^model g: op add7 \(Add\): expected each input to be .*, got 'nowhere'$"
    ):
        load_onnx(model)
    path = tmp_path / "dangling.onnx"
    onnx.save(model, path)
    with pytest.raises(ModelError, match=rf"^{re.escape(str(path))}: op add7 \(Add\): expected"):
        load_onnx(path)  # the graph's own errors named no file


def test_constant_of_shape_weights_are_folded_into_initializers() -> None:
    shape = numpy_helper.from_array(np.array([2, 3], np.int64), "w__SHAPE")
    fill = numpy_helper.from_array(np.array([0.5], np.float32), "value")
    nodes = [
        helper.make_node("ConstantOfShape", ["w__SHAPE"], ["w"], value=fill),
        helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
    ]
    model = _model(nodes, [_vi("x", [1, 2])], [_vi("y", [1, 3])], [shape], opset=9)
    graph = load_onnx(model)
    assert [op.name for op in graph.ops] == ["mm"]
    assert list(graph.initializers) == ["w"]
    np.testing.assert_array_equal(graph.initializers["w"], np.full((2, 3), 0.5, np.float32))


def test_folded_values_match_the_reference_evaluator() -> None:
    base = numpy_helper.from_array(np.array([1.0, 4.0, 9.0], np.float32), "base")
    nodes = [
        helper.make_node("Sqrt", ["base"], ["root"]),
        helper.make_node("Unsqueeze", ["root"], ["row"], axes=[0]),
        helper.make_node("Mul", ["row", "row"], ["square"]),
        helper.make_node("Add", ["x", "square"], ["y"], name="add"),
    ]
    model = _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])], [base], opset=11)
    folded = load_onnx(model)
    assert [op.name for op in folded.ops] == ["add"]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_allclose(x + folded.initializers["square"], expected, rtol=1e-6)


def test_shape_of_a_static_input_is_folded() -> None:
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape"),
    ]
    graph = load_onnx(_model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])]))
    assert [op.name for op in graph.ops] == ["reshape"]
    np.testing.assert_array_equal(graph.initializers["s"], [2, 3])


def test_shape_of_a_symbolic_input_is_kept() -> None:
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape"),
    ]
    graph = load_onnx(_model(nodes, [_vi("x", ["n", 3])], [_vi("y", ["n", 3])]))
    assert [op.name for op in graph.ops] == ["s", "reshape"]
    assert graph.initializers == {}


def test_fold_keeps_graph_inputs_and_drops_unused_initializers() -> None:
    unused = numpy_helper.from_array(np.zeros(4, np.float32), "unused")
    model = _relu_model(initializers=[unused])
    graph = load_onnx(model)
    assert graph.initializers == {}
    assert load_onnx(model, fold=False).initializers.keys() == {"unused"}
    assert fold_constants(load_onnx(model, fold=False)).initializers == {}


def test_input_without_a_shape_is_an_error() -> None:
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    with pytest.raises(
        ModelError, match=r"^model g: input x: expected a tensor of known rank, got no shape$"
    ):
        load_onnx(_model([node], [_vi("x", None)], [_vi("y", None)]))


def test_input_that_is_not_a_tensor_is_an_error() -> None:
    seq = helper.make_tensor_sequence_value_info("x", FLOAT, [2])
    node = helper.make_node("Identity", ["x"], ["y"], name="id")
    with pytest.raises(
        ModelError, match=r"^model g: input x: expected a tensor, got sequence_type$"
    ):
        load_onnx(_model([node], [seq], [_vi("y", None)]))


def test_sparse_tensor_attribute_is_an_error_naming_the_op() -> None:
    values = numpy_helper.from_array(np.array([1.0], np.float32), "values")
    indices = numpy_helper.from_array(np.array([0], np.int64), "indices")
    sparse = helper.make_sparse_tensor(values, indices, [2])
    node = helper.make_node("Constant", [], ["y"], name="c", sparse_value=sparse)
    with pytest.raises(
        ModelError,
        match=r"^model g: op c \(Constant\): expected a plain attribute, "
        r"got 'sparse_value' of type sparse_tensor$",
    ):
        load_onnx(_model([node], [], [_vi("y", [2])]))


def test_op_whose_shape_needs_run_time_values_is_kept() -> None:
    node = helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")
    inputs = [_vi("x", [2, 3]), _vi("s", [2], TensorProto.INT64)]
    graph = load_onnx(_model([node], inputs, [_vi("y", None)]))
    assert [op.name for op in graph.ops] == ["reshape"]
    assert list(graph.inputs) == ["x", "s"]


def test_unnamed_graph_takes_the_file_stem_or_model(tmp_path: Path) -> None:
    model = _relu_model(name="")
    path = tmp_path / "tiny_relu.onnx"
    onnx.save(model, path)
    assert load_onnx(path).name == "tiny_relu"
    assert load_onnx(model).name == "model"
    assert load_onnx(_relu_model()).name == "g"


def test_cast_to_an_unsupported_dtype_is_an_error_naming_the_op() -> None:
    node = helper.make_node("Cast", ["x"], ["y"], name="to_bf16", to=TensorProto.BFLOAT16)
    with pytest.raises(
        ModelError,
        match=r"^model g: op to_bf16 \(Cast\) attribute to: expected a supported dtype "
        r"\(.*\), got bfloat16$",
    ):
        load_onnx(_model([node], [_vi("x", [2])], [_vi("y", [2], TensorProto.BFLOAT16)]))


def test_cast_keeps_the_onnx_element_type() -> None:
    node = helper.make_node("Cast", ["x"], ["y"], name="to_int", to=TensorProto.INT64)
    graph = load_onnx(_model([node], [_vi("x", [2])], [_vi("y", [2], TensorProto.INT64)]))
    assert graph.ops[0].attrs == {"to": TensorProto.INT64}


def test_files_parse_without_importing_onnx_and_share_its_message_classes() -> None:
    # a fresh interpreter: hetsim reads the light model with protobuf and onnx's generated
    # messages only; importing onnx afterwards must give the very same ModelProto class
    script = """
import sys
import hetsim
from hetsim.frontend import proto
from hetsim.models import light_model_path
path = light_model_path("squeezenet")
graph = hetsim.load_model("squeezenet")
assert "onnx" not in sys.modules, "onnx was imported"
model = proto.parse_model(path)
import onnx
assert type(model) is onnx.ModelProto
assert hetsim.load_model(onnx.load(str(path))).ops == graph.ops
print(len(graph.ops))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "66"


def test_an_op_folded_at_load_is_checked_by_its_shape_rule_first() -> None:
    # a constant DequantizeLinear with a scale per axis of the wrong length: the shape rule's
    # message, not a numpy broadcasting error from inside the kernel
    nodes = [
        helper.make_node("DequantizeLinear", ["w", "s"], ["wd"], name="dq_w", axis=1),
        helper.make_node("MatMul", ["x", "wd"], ["y"], name="mm"),
    ]
    inits = [
        numpy_helper.from_array(np.ones((4, 3), np.int8), "w"),
        numpy_helper.from_array(np.ones(4, np.float32), "s"),
    ]
    model = _model(nodes, [_vi("x", [2, 4])], [_vi("y", [2, 3])], inits, opset=19)
    with pytest.raises(ModelError) as caught:
        load_onnx(model)
    assert str(caught.value) == (
        "model g: op dq_w (DequantizeLinear): expected an x_scale of 3 elements (x's axis 1), got 4"
    )


@pytest.mark.parametrize("outside", ["../weights.bin", "ABSOLUTE"])
def test_external_data_outside_the_model_folder_is_refused(outside: str, tmp_path: Path) -> None:
    # onnx's loader refused it too, with a ValidationError that came out as a traceback
    (tmp_path / "weights.bin").write_bytes(np.ones(16, np.float32).tobytes())
    location = str(tmp_path / "weights.bin") if outside == "ABSOLUTE" else outside
    weight = helper.make_tensor("W", FLOAT, [4, 4], np.ones(16, np.float32))
    weight.ClearField("float_data")
    weight.data_location = TensorProto.EXTERNAL
    entry = weight.external_data.add()
    entry.key, entry.value = "location", location
    model = _model(
        [helper.make_node("MatMul", ["x", "W"], ["y"])], [_vi("x", [1, 4])], [_vi("y", [1, 4])]
    )
    model.graph.initializer.append(weight)
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / "model.onnx"
    path.write_bytes(model.SerializeToString())
    message = (
        f"{path}: initializer W: expected an external data file in the model's folder, got "
        f"{location!r}, outside it"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        load_onnx(path)


def test_a_model_with_external_data_loads_it_and_names_a_missing_file(tmp_path: Path) -> None:
    weight = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4), "W")
    model = _model(
        [helper.make_node("MatMul", ["x", "W"], ["y"])], [_vi("x", [1, 4])], [_vi("y", [1, 4])]
    )
    model.graph.initializer.append(weight)
    path = tmp_path / "external.onnx"
    onnx.save(model, path, save_as_external_data=True, location="weights.bin", size_threshold=0)
    graph = load_onnx(path)
    np.testing.assert_array_equal(graph.initializers["W"], np.arange(16).reshape(4, 4))
    (tmp_path / "weights.bin").unlink()
    message = (
        f"{path}: initializer W: expected its external data file weights.bin beside the model, "
        f"got no file {tmp_path / 'weights.bin'}"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        load_onnx(path)


@pytest.mark.parametrize("opset", [0, 29, 99])
def test_an_opset_hetsim_does_not_know_is_refused(opset: int) -> None:
    message = (
        f"model g: expected a default-domain opset from 1 to 28 (the newest hetsim's kernels "
        f"follow), got {opset}"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        load_onnx(_relu_model(opset=opset))


def test_two_graph_inputs_of_one_name_are_refused() -> None:
    node = helper.make_node("Add", ["x", "x"], ["y"])
    model = _model([node], [_vi("x", [1, 4]), _vi("x", [1, 4])], [_vi("y", [1, 4])])
    message = "model g: input x: expected one graph input of a name, got two"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        load_onnx(model)


def test_a_graph_without_outputs_is_refused() -> None:
    # it "ran": a makespan of the RET's dispatch alone, exit status 0
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [1, 4])], [])
    message = "model g: expected a graph with at least one output, got none"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        load_onnx(model)


@pytest.mark.parametrize("size", [-1, -2])
def test_a_negative_input_dim_is_an_unnamed_unknown_dim(size: int) -> None:
    # "expected each dim an integer >= 0 or a symbolic name, got -1": onnx's checker takes it,
    # as onnxruntime and the reference evaluator run it, an unknown dim
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    x_info, y_info = _vi("x", [3, 2]), _vi("y", [3, 2])
    x_info.type.tensor_type.shape.dim[0].dim_value = size
    y_info.type.tensor_type.shape.dim[1].dim_value = size
    model = _model([node], [x_info], [y_info])
    onnx.checker.check_model(model)
    graph = load_onnx(model)
    assert graph.inputs == {"x": TensorType(("x_d0", 2), "float32")}
    x = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(execute(graph, {"x": x})["y"], expected)


def test_an_initializer_input_with_a_negative_dim_is_its_initializer() -> None:
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    w_info = _vi("w", [2])
    w_info.type.tensor_type.shape.dim[0].dim_value = -1
    weight = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "w")
    model = _model([node], [_vi("x", [2]), w_info], [_vi("y", [2])], [weight])
    np.testing.assert_array_equal(load_onnx(model).initializers["w"], [1.0, 2.0])


def _ms_sigmoid_model(opsets: list[tuple[str, int]]) -> onnx.ModelProto:
    """A lone com.microsoft QLinearSigmoid of a uint8 x (scale 0.05, zero 128) to a uint8 y
    (scale 1/256, zero 0), importing `opsets`."""
    node = helper.make_node(
        "QLinearSigmoid", ["x", "xs", "xz", "ys", "yz"], ["y"], name="sig", domain="com.microsoft"
    )
    weights = [
        numpy_helper.from_array(np.array(v, dtype), name)
        for name, v, dtype in [
            ("xs", 0.05, np.float32), ("xz", 128, np.uint8),
            ("ys", 1 / 256, np.float32), ("yz", 0, np.uint8),
        ]
    ]  # fmt: skip
    uint8 = TensorProto.UINT8
    graph = helper.make_graph([node], "g", [_vi("x", [4], uint8)], [_vi("y", [4], uint8)], weights)
    opset_imports = [helper.make_opsetid(domain, v) for domain, v in opsets]
    return helper.make_model(graph, opset_imports=opset_imports, ir_version=8)


def test_a_model_of_com_microsoft_ops_alone_needs_no_default_opset() -> None:
    # "expected an opset for the default ONNX domain, got none": onnx's checker takes the
    # model, and onnxruntime runs it
    model = _ms_sigmoid_model([("com.microsoft", 1)])
    onnx.checker.check_model(model)
    graph = load_onnx(model)
    assert graph.opset == 28  # NEWEST_OPSET: what the QLinearSigmoid's inner Sigmoid follows
    x = np.array([0, 100, 128, 255], np.uint8)
    real = (x.astype(np.float64) - 128) * 0.05
    expected = np.clip(np.rint(1 / (1 + np.exp(-real)) * 256), 0, 255)  # [0, 51, 128, 255]
    assert execute(graph, {"x": x})["y"].tolist() == expected.tolist() == [0, 51, 128, 255]


def test_a_default_domain_op_without_its_opset_names_the_op() -> None:
    model = _ms_sigmoid_model([("com.microsoft", 1)])
    model.graph.node.append(helper.make_node("Relu", ["y"], ["z"], name="relu"))
    message = (
        "model g: expected an opset for the default ONNX domain (op relu (Relu) is in it), got none"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        load_onnx(model)


def test_names_with_control_characters_are_shown_escaped() -> None:
    # a newline or a terminal escape in a model's names was printed as it is: a message broke
    # its lines, or cleared the user's screen
    node = helper.make_node("Rel\x1bu", ["x\n"], ["y"], name="act\tX")
    graph = helper.make_graph([node], "g\n2", [_vi("x\n", [2])], [_vi("y", [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    message = (
        "model g\\n2: op act\\tX (Rel\\x1bu): unsupported op Rel\\x1bu (did you mean 'Relu'?); "
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}"):
        load_onnx(model)
    model.graph.node[0].op_type = "Identity"
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.BFLOAT16
    with pytest.raises(ModelError, match=re.escape("model g\\n2: input x\\n: expected a")):
        load_onnx(model)
