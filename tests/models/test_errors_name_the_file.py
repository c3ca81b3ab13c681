"""An op's error found as a model read from a file runs (a shape its rule refuses, a value it
needs) is led by the file in the Python API too, as the command line and the loader lead it:
``hetsim.simulate("m.onnx", ...)`` and ``hetsim run m.onnx`` say the same."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hetsim.api import simulate
from hetsim.calibrate.accuracy import compare_model
from hetsim.compare import compare
from hetsim.errors import OpError, UnknownValueError
from hetsim.models import load_model, named_by_file

onnx = pytest.importorskip("onnx")
helper = onnx.helper

MISMATCH = "op y (MatMul): expected the last dim of A to match the rows of B, got [1, 4] and [5, 3]"


def _one_op_model(path: Path, op_type: str, **inputs: tuple[int, list[int]]) -> Path:
    graph = helper.make_graph(
        [helper.make_node(op_type, list(inputs), ["y"], name="y")],
        path.stem,
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _mismatched(tmp_path: Path) -> Path:
    f = onnx.TensorProto.FLOAT
    return _one_op_model(tmp_path / "mismatched.onnx", "MatMul", a=(f, [1, 4]), b=(f, [5, 3]))


@pytest.mark.parametrize("as_path", [str, Path], ids=["str", "Path"])
@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_simulate_leads_an_op_s_error_with_the_file(
    as_path: type, mode: str, tmp_path: Path
) -> None:
    # it said "op y (MatMul): ..." alone, where `hetsim run` named the file
    path = _mismatched(tmp_path)
    with pytest.raises(OpError, match=f"^{re.escape(f'{path}: {MISMATCH}')}$") as caught:
        simulate(as_path(path), "x86-h100", mode=mode)
    assert caught.value.op == "y"  # still the op's error, naming it


def test_a_loaded_graph_s_error_names_no_file(tmp_path: Path) -> None:
    # a Graph has no file to name (it may have been built, or changed, after loading)
    graph = load_model(_mismatched(tmp_path))
    with pytest.raises(OpError, match=f"^{re.escape(MISMATCH)}$"):
        simulate(graph, "x86-h100")


def test_a_value_a_shape_needs_is_led_by_the_file_and_stays_its_own_error(
    tmp_path: Path,
) -> None:
    i64 = onnx.TensorProto.INT64
    path = _one_op_model(
        tmp_path / "reshaped.onnx", "Reshape", x=(onnx.TensorProto.FLOAT, [2, 3]), s=(i64, [2])
    )
    with pytest.raises(UnknownValueError) as caught:
        simulate(path, "x86-h100", mode="timing")
    err = caught.value
    assert str(err) == (
        f"{path}: op y (Reshape): expected a known value for input 1 (shape), got graph input "
        "'s' without its array (pass it in inputs)"
    )
    assert (err.tensor, err.is_graph_input) == ("s", True)


def test_compare_and_compare_model_lead_with_the_file(tmp_path: Path) -> None:
    path = _mismatched(tmp_path)
    with pytest.raises(OpError, match=f"^{re.escape(f'{path}: {MISMATCH}')}$"):
        compare(str(path), "x86-h100", strategies=["none"])
    with pytest.raises(OpError, match=f"^{re.escape(f'{path}: {MISMATCH}')}$"):
        compare_model(str(path), "x86-h100")


def test_an_error_led_once_is_not_led_again() -> None:
    # the loader leads its own errors (an op's attribute read from the file)
    err = OpError("m.onnx: op y (Relu): expected no attributes", "y")
    assert named_by_file(err, "m.onnx") is err
    assert named_by_file(err, "mlp") is err  # a zoo name is no file
