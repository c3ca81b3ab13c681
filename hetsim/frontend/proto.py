"""ONNX protobuf messages and tensors, read without importing the ``onnx`` package.

``import onnx`` pulls in ``ml_dtypes`` and the C++ checker: about 0.5 s, more than reading and
summarizing a model takes. The messages themselves need only ``google.protobuf`` and the
generated ``onnx/onnx_ml_pb2.py``, which this module loads on its own, by path, without running
the package's ``__init__``. Both registrations describe the same file, so protobuf hands back the
same message classes either way: an ``onnx.ModelProto`` made by ``import onnx`` later is the
class this module parses into. This module owns finding the package, parsing a file, and turning
a ``TensorProto`` into a numpy array (what ``onnx.numpy_helper.to_array`` does, for the dtypes
hetsim supports); converting messages into the IR is `hetsim.frontend.onnx`'s.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from hetsim.errors import ModelError

__all__ = [
    "EXTERNAL",
    "external_data",
    "external_files",
    "has_external_data",
    "messages",
    "onnx_dir",
    "parse_model",
    "stored_tensors",
    "to_array",
]

EXTERNAL = 1
"""``TensorProto.DataLocation.EXTERNAL``: the tensor's bytes live in another file."""

# numpy dtype name -> the TensorProto field that holds its values when there is no raw_data
_TYPED_FIELDS = {
    "float32": "float_data",
    "float64": "double_data",
    "int64": "int64_data",
    "uint32": "uint64_data",
    "uint64": "uint64_data",
}
_INT32_FIELD = "int32_data"  # every other supported dtype (bool, int8-32, uint8-16, float16)


def onnx_dir(where: str) -> Path:
    """The directory of the installed ``onnx`` package, found without importing it.

    Raises
    ------
    ModelError
        When onnx is not installed (``<where>: expected the onnx package ...``).

    Examples
    --------
    >>> (onnx_dir("model mlp") / "onnx_ml_pb2.py").is_file()
    True
    """
    spec = importlib.util.find_spec("onnx")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            f"{where}: expected the onnx package (pip install 'hetsim[onnx]'), got none installed"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def messages(where: str) -> ModuleType:
    """The module of ONNX's message classes (``ModelProto``, ``TensorProto``, ...).

    It is ``onnx.onnx_ml_pb2`` when onnx is already imported, else the same file loaded alone.

    Examples
    --------
    >>> messages("doctest").ModelProto.__name__
    'ModelProto'
    """
    imported = sys.modules.get("onnx.onnx_ml_pb2")
    return imported if imported is not None else _load_messages(onnx_dir(where))


@cache
def _load_messages(package: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("_hetsim_onnx_ml_pb2", package / "onnx_ml_pb2.py")
    assert spec is not None, f"{package}: onnx_ml_pb2.py is a module"
    assert spec.loader is not None, f"{package}: onnx_ml_pb2.py has a loader"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_model(path: Path) -> Any:
    """The ``ModelProto`` in the file at `path` (tensors in external files are not loaded).

    Raises
    ------
    google.protobuf.message.DecodeError
        When the bytes are not a ModelProto; the caller names the file.
    """
    model = messages(str(path)).ModelProto()
    model.ParseFromString(path.read_bytes())
    return model


def has_external_data(model: Any) -> bool:
    """Whether any tensor of `model`'s main graph (`stored_tensors`) keeps its bytes in another
    file."""
    return any(t.data_location == EXTERNAL for _, _, t in stored_tensors(model))


def stored_tensors(model: Any) -> Iterator[tuple[int | None, str, Any]]:
    """``(node index, name, TensorProto)`` of each tensor stored in `model`'s main graph: each
    initializer (index None, its name), then each tensor in a node's attribute (a Constant's
    ``value``: the node's index, the attribute's name); those a writer may keep in another file
    (``onnx.save(..., convert_attribute=True)`` moves attribute tensors out too)."""
    for tensor in model.graph.initializer:
        yield None, tensor.name, tensor
    for index, node in enumerate(model.graph.node):
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield index, attribute.name, attribute.t
            for tensor in attribute.tensors:
                yield index, attribute.name, tensor


def external_data(model: Any) -> Iterator[tuple[int | None, str, dict[str, str]]]:
    """``(node index, name, entries)`` of each tensor of `model`'s main graph (as
    `stored_tensors` names it) kept in another file: its ``external_data`` as a dict
    (``location``, ``offset``, ``length``, each where the writer set it)."""
    for index, name, tensor in stored_tensors(model):
        if tensor.data_location == EXTERNAL:
            yield index, name, {entry.key: entry.value for entry in tensor.external_data}


def external_files(model: Any, folder: Path) -> list[Path]:
    """The files, under `folder` (the model file's), that `model`'s main-graph tensors keep
    their bytes in, each once, in name order (where they point outside it, `load_onnx` refuses
    the model)."""
    locations = {entries.get("location", "") for _, _, entries in external_data(model)}
    return [folder / location for location in sorted(locations - {""})]


def to_array(tensor: Any, dtype: np.dtype[Any], where: str = "tensor") -> np.ndarray:
    """The values of a ``TensorProto`` of numpy `dtype`, shaped by its dims.

    ``raw_data`` is read as little-endian bytes (a read-only view, as onnx's numpy_helper gives);
    otherwise the typed field the ONNX spec names for the dtype is (float16 values are stored as
    their bit patterns in ``int32_data``).

    Raises
    ------
    ModelError
        Naming `where`, when the values are kept in an external file that was not loaded (a
        ModelProto of ``onnx.load(..., load_external_data=False)``), a dim is negative, the
        dims are more than numpy can hold, the stored values are not as many as the dims say
        (a truncated file, or a writer's bug): numpy would raise from deep inside a reshape;
        or a value in a wider field (an int8 in ``int32_data``) is outside the dtype's range:
        numpy would wrap it around silently.

    Examples
    --------
    >>> t = messages("doctest").TensorProto(dims=[2], data_type=10, int32_data=[15360, 16384])
    >>> to_array(t, np.dtype("float16")).tolist()
    [1.0, 2.0]
    >>> to_array(messages("doctest").TensorProto(dims=[3], data_type=1, raw_data=b"\\0" * 8),
    ...          np.dtype("float32"), "initializer w")
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: initializer w: expected 3 values (dims [3]) of float32, got \
8 bytes of raw_data (2 values)
    """
    if tensor.data_location == EXTERNAL:  # read, it would be "got 0 in float_data"
        location = next((e.value for e in tensor.external_data if e.key == "location"), "")
        file = f"external file {location!r}" if location else "an external file (no location)"
        raise ModelError(
            f"{where}: expected its values in the model, got them in {file}, not loaded (load "
            "the model from its path, or call onnx.load_external_data_for_model first)"
        )
    shape = tuple(tensor.dims)
    if any(dim < 0 for dim in shape):
        raise ModelError(f"{where}: expected dims >= 0, got {list(shape)}")
    count = math.prod(shape)
    if tensor.HasField("raw_data"):
        raw = tensor.raw_data
        if len(raw) != count * dtype.itemsize:
            raise ModelError(
                f"{where}: expected {count} values (dims {list(shape)}) of {dtype.name}, got "
                f"{len(raw)} bytes of raw_data ({len(raw) / dtype.itemsize:g} values)"
            )
        stored = np.frombuffer(raw, dtype.newbyteorder("<"))
        return _shaped(stored.astype(dtype, copy=False), shape, where)
    field = _TYPED_FIELDS.get(dtype.name, _INT32_FIELD)
    values = getattr(tensor, field)
    if len(values) != count:
        raise ModelError(
            f"{where}: expected {count} values (dims {list(shape)}) of {dtype.name}, got "
            f"{len(values)} in {field}"
        )
    stored = np.array(values, np.uint64 if field == "uint64_data" else None)
    # a wider field: int8 in int32_data, float16's bit patterns too; numpy would wrap around
    narrow = np.dtype(np.uint16) if dtype == np.float16 else dtype
    if narrow.kind in "iu" and narrow.itemsize < stored.itemsize and stored.size:
        low, high = np.iinfo(narrow).min, np.iinfo(narrow).max
        outside = stored[(stored < low) | (stored > high)]
        if outside.size:
            kind = "float16 bit patterns" if dtype == np.float16 else dtype.name
            raise ModelError(
                f"{where}: expected {field} values from {low} to {high} ({kind}), got {outside[0]}"
            )
    return _shaped(stored.astype(narrow).view(dtype), shape, where)


def _shaped(values: np.ndarray, shape: tuple[int, ...], where: str) -> np.ndarray:
    try:
        return values.reshape(shape)
    except ValueError as err:  # no values, but dims whose product numpy cannot index
        raise ModelError(f"{where}: expected dims numpy can hold, got {list(shape)}") from err
