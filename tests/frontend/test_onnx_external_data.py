"""Tensors kept in external files that cannot be read: a location no file can have, and a
ModelProto whose external data was never loaded. Each is a ModelError naming the tensor and
the location, where a bare ValueError or OSError, or a count of values, came out."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from hetsim.errors import ModelError  # noqa: E402
from hetsim.frontend import load_onnx  # noqa: E402
from tests.frontend.test_onnx import _model, _vi  # noqa: E402


def _add_of_external_weight(location: str) -> onnx.ModelProto:
    """y = x + w, w's 6 floats said to be in `location`."""
    weight = numpy_helper.from_array(np.arange(6, dtype=np.float32), "w")
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    entry = weight.external_data.add()
    entry.key, entry.value = "location", location
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    return _model([node], [_vi("x", [6])], [_vi("y", [6])], [weight])


@pytest.mark.parametrize(
    ("location", "reason"),
    [("w\0.bin", "embedded null byte"), ("a" * 300, "File name too long")],
    ids=["nul-byte", "name-too-long"],
)
def test_an_external_location_no_file_can_have_names_the_initializer(
    location: str, reason: str, tmp_path: Path
) -> None:
    # Path.resolve's ValueError, is_file's OSError (ENAMETOOLONG) came out bare
    path = tmp_path / "m.onnx"
    path.write_bytes(_add_of_external_weight(location).SerializeToString())
    message = (
        f"{path}: initializer w: expected an external data file name, got {location!r} ({reason})"
    )
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        load_onnx(path)


NOT_LOADED = (
    "expected its values in the model, got them in external file 'w.bin', not loaded (load the "
    "model from its path, or call onnx.load_external_data_for_model first)"
)


def test_an_initializer_s_unloaded_external_data_names_its_file(tmp_path: Path) -> None:
    # "expected 6 values (dims [6]) of float32, got 0 in float_data" hid the cause
    weight = numpy_helper.from_array(np.arange(6, dtype=np.float32), "w")
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    model = _model([node], [_vi("x", [6])], [_vi("y", [6])], [weight])
    path = tmp_path / "m.onnx"
    onnx.save(model, path, save_as_external_data=True, location="w.bin", size_threshold=0)
    proto = onnx.load(path, load_external_data=False)
    with pytest.raises(ModelError, match=f"^{re.escape(f'model g: initializer w: {NOT_LOADED}')}$"):
        load_onnx(proto)
    onnx.load_external_data_for_model(proto, str(tmp_path))  # as the message says
    np.testing.assert_array_equal(load_onnx(proto).initializers["w"], np.arange(6))


def test_a_constant_s_unloaded_external_data_names_the_op(tmp_path: Path) -> None:
    value = numpy_helper.from_array(np.arange(6, dtype=np.float32))
    nodes = [
        helper.make_node("Constant", [], ["w"], name="const", value=value),
        helper.make_node("Add", ["x", "w"], ["y"], name="add"),
    ]
    model = _model(nodes, [_vi("x", [6])], [_vi("y", [6])])
    path = tmp_path / "m.onnx"
    onnx.save(
        model, path, save_as_external_data=True, location="w.bin", size_threshold=0,
        convert_attribute=True,
    )  # fmt: skip
    message = f"model g: op const (Constant) attribute value: {NOT_LOADED}"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        load_onnx(onnx.load(path, load_external_data=False))


def _with_entries(location: str, **entries: str) -> onnx.ModelProto:
    model = _add_of_external_weight(location)
    for key, value in entries.items():
        entry = model.graph.initializer[0].external_data.add()
        entry.key, entry.value = key, value
    return model


@pytest.mark.parametrize(
    ("location", "entries", "got"),
    [
        (".", {}, "expected an external data file in the model's folder, got '.', a folder"),
        ("sub", {}, "expected an external data file in the model's folder, got 'sub', a folder"),
        ("..", {}, "expected an external data file in the model's folder, got '..', outside it"),
        (
            "w.bin",
            {"offset": "abc"},
            "expected its external data offset a count of bytes, got 'abc'",
        ),
        ("w.bin", {"length": "-4"}, "expected its external data length a count of bytes, got '-4'"),
    ],
    ids=["own-folder", "sub-folder", "outside-folder", "offset", "length"],
)
def test_an_external_location_or_extent_that_is_no_file_range_names_the_initializer(
    location: str, entries: dict[str, str], got: str, tmp_path: Path
) -> None:
    # '.' was "outside" the model's folder; an offset of 'abc' gave onnx's "invalid literal for
    # int() with base 10: 'abc'", naming neither the initializer nor the entry
    (tmp_path / "sub").mkdir()
    (tmp_path / "w.bin").write_bytes(np.arange(6, dtype=np.float32).tobytes())
    path = tmp_path / "m.onnx"
    path.write_bytes(_with_entries(location, **entries).SerializeToString())
    with pytest.raises(ModelError, match=f"^{re.escape(f'{path}: initializer w: {got}')}$"):
        load_onnx(path)
    # the same file with a count of bytes loads
    path.write_bytes(_with_entries("w.bin", offset=" 0", length="24").SerializeToString())
    np.testing.assert_array_equal(load_onnx(path).initializers["w"], np.arange(6))
