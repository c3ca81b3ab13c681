"""Odd but valid ONNX models, and model errors found after parsing: a Constant whose tensor is
kept in an external file loads (and its file is checked as an initializer's is, naming the op),
an unnamed dim never shares a name with a named one, and an op refused while converting or
folding names the file as a structural error does."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from hetsim import execute  # noqa: E402
from hetsim.errors import ModelError, OpError  # noqa: E402
from hetsim.frontend import load_onnx  # noqa: E402
from hetsim.frontend.proto import external_files, has_external_data, parse_model  # noqa: E402
from hetsim.ir import TensorType  # noqa: E402
from tests.frontend.test_onnx import _model, _vi  # noqa: E402

FLOAT = TensorProto.FLOAT


def _onnxruntime(model: onnx.ModelProto | Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    source = str(model) if isinstance(model, Path) else model.SerializeToString()
    session = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def _saved_constant_matmul(folder: Path) -> tuple[Path, np.ndarray]:
    """y = x @ W, W made by a Constant, saved as onnx does with ``convert_attribute=True``:
    the Constant's tensor in w.bin beside the model."""
    weight = np.random.default_rng(4).standard_normal((8, 3)).astype(np.float32)
    nodes = [
        helper.make_node(
            "Constant", [], ["W"], name="const", value=numpy_helper.from_array(weight)
        ),
        helper.make_node("MatMul", ["x", "W"], ["y"], name="mm"),
    ]
    model = _model(nodes, [_vi("x", [2, 8])], [_vi("y", [2, 3])], opset=17)
    model.ir_version = 8
    path = folder / "model.onnx"
    onnx.save(
        model, path, save_as_external_data=True, location="w.bin", size_threshold=0,
        convert_attribute=True,
    )  # fmt: skip
    return path, weight


def _constant_tensor(path: Path) -> onnx.TensorProto:
    """The Constant's tensor in the model file at `path`, its external_data not loaded."""
    return parse_model(path).graph.node[0].attribute[0].t


def test_a_constant_kept_in_an_external_file_computes_what_onnxruntime_does(
    tmp_path: Path,
) -> None:
    # only initializers' files were read: "expected 24 values (dims [8, 3]) of float32, got 0
    # in float_data"
    path, weight = _saved_constant_matmul(tmp_path)
    assert _constant_tensor(path).data_location == TensorProto.EXTERNAL
    x = np.random.default_rng(5).standard_normal((2, 8)).astype(np.float32)
    got = execute(load_onnx(path), {"x": x})["y"]
    np.testing.assert_allclose(got, _onnxruntime(path, {"x": x}), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, x @ weight, rtol=1e-6, atol=1e-6)


def test_a_constant_s_external_file_is_one_of_the_model_s_files(tmp_path: Path) -> None:
    # what a sweep hashes with the model, so that new weights make a new point
    path, _ = _saved_constant_matmul(tmp_path)
    model = parse_model(path)
    assert has_external_data(model)
    assert external_files(model, tmp_path) == [tmp_path / "w.bin"]


def test_a_constant_s_missing_external_file_names_the_op(tmp_path: Path) -> None:
    path, _ = _saved_constant_matmul(tmp_path)
    (tmp_path / "w.bin").unlink()
    message = (
        f"{path}: op const (Constant) attribute value: expected its external data file w.bin "
        f"beside the model, got no file {tmp_path / 'w.bin'}"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        load_onnx(path)


def test_a_constant_s_external_file_outside_the_folder_names_the_op(tmp_path: Path) -> None:
    path, _ = _saved_constant_matmul(tmp_path)
    model = parse_model(path)
    model.graph.node[0].attribute[0].t.external_data[0].value = "../w.bin"
    path.write_bytes(model.SerializeToString())
    message = (
        f"{path}: op const (Constant) attribute value: expected an external data file in the "
        "model's folder, got '../w.bin', outside it"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        load_onnx(path)


def test_a_constant_s_truncated_external_file_names_the_op(tmp_path: Path) -> None:
    path, _ = _saved_constant_matmul(tmp_path)
    entries = {e.key: e.value for e in _constant_tensor(path).external_data}
    start, end = int(entries.get("offset", "0")), int(entries.get("offset", "0")) + 96
    (tmp_path / "w.bin").write_bytes((tmp_path / "w.bin").read_bytes()[: end - 4])
    message = (
        f"{path}: op const (Constant) attribute value: expected bytes {start} to {end} in its "
        f"external data file w.bin, got a file of {end - 4} bytes"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        load_onnx(path)


def test_a_truncated_external_file_of_an_initializer_names_it(tmp_path: Path) -> None:
    # onnx's loader refused it: "expected an ONNX model, got unreadable data (External data
    # length (64) exceeds available data ... for tensor 'W')", for a Constant a name never seen
    weight = numpy_helper.from_array(np.ones((4, 4), np.float32), "W")
    node = helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")
    model = _model([node], [_vi("x", [1, 4])], [_vi("y", [1, 4])], [weight])
    path = tmp_path / "model.onnx"
    onnx.save(model, path, save_as_external_data=True, location="w.bin", size_threshold=0)
    (tmp_path / "w.bin").write_bytes(b"\0" * 10)
    message = (
        f"{path}: initializer W: expected bytes 0 to 64 in its external data file w.bin, got a "
        "file of 10 bytes"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        load_onnx(path)


@pytest.mark.parametrize(
    ("named", "unnamed"), [(["x_d0"], "x_d0_1"), (["x_d0", "x_d0_1"], "x_d0_2")]
)
def test_an_unnamed_dim_never_takes_the_name_of_a_named_dim(named: list[str], unnamed: str) -> None:
    # x's unnamed dim was named x_d0, z's dim_param: linked, valid inputs were refused
    # ("input 'z': expected dim 'x_d0' = 2 (from input 'x'), got 5")
    node = helper.make_node("Concat", ["x", "z", "w"], ["y"], name="cat", axis=0)
    inputs = [_vi("x", [None, 3]), _vi("z", [named[0], 3]), _vi("w", [named[-1], 3])]
    model = _model([node], inputs, [_vi("y", None)], opset=17)
    model.ir_version = 8
    graph = load_onnx(model)
    assert graph.inputs["x"] == TensorType((unnamed, 3), "float32")
    feeds = {name: np.full((n, 3), n, np.float32) for name, n in (("x", 2), ("z", 5), ("w", 5))}
    got = execute(graph, feeds)["y"]
    np.testing.assert_array_equal(got, _onnxruntime(model, feeds))


def test_an_unnamed_dim_never_takes_the_name_of_an_output_s_named_dim() -> None:
    node = helper.make_node("Relu", ["x"], ["y"], name="r")
    graph = load_onnx(_model([node], [_vi("x", [None])], [_vi("y", ["x_d0"])]))
    assert graph.inputs["x"] == TensorType(("x_d0_1",), "float32")


def test_an_unsupported_op_in_a_file_is_led_by_the_file(tmp_path: Path) -> None:
    node = helper.make_node("MyOp", ["x"], ["y"], name="mine")
    path = tmp_path / "custom.onnx"
    onnx.save(_model([node], [_vi("x", [2])], [_vi("y", [2])]), path)
    message = f"{path}: op mine (MyOp): unsupported op MyOp; hetsim.kernels.OPS holds "
    with pytest.raises(ModelError, match=f"^{re.escape(message)}"):
        load_onnx(path)


def _folded(node: onnx.NodeProto, path: Path) -> None:
    """Save a model whose `node` reads constants only, as folding at load runs it."""
    weights = [numpy_helper.from_array(np.ones(2, np.float32), name) for name in ("a", "b")]
    add = helper.make_node("Add", ["x", "c"], ["y"], name="add")
    onnx.save(_model([node, add], [_vi("x", [2])], [_vi("y", [2])], weights), path)


@pytest.mark.parametrize(
    ("node", "refusal"),
    [
        (
            helper.make_node("Concat", ["a", "b"], ["c"], name="cat", axis=3),
            "op cat (Concat): expected an axis in [-1, 1), got 3",
        ),
        (
            helper.make_node("Relu", [""], ["c"], name="r"),
            "op r (Relu): expected input 0 (a tensor), got none (an omitted input)",
        ),
    ],
    ids=["concat-axis", "relu-omitted-input"],
)
def test_an_op_refused_while_folding_is_led_by_the_file(
    node: onnx.NodeProto, refusal: str, tmp_path: Path
) -> None:
    path = tmp_path / "folded.onnx"
    _folded(node, path)
    with pytest.raises(OpError, match=f"^{re.escape(f'{path}: {refusal}')}$") as caught:
        load_onnx(path)
    assert caught.value.op == node.name
