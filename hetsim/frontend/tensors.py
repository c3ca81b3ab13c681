"""ONNX tensors and value types in numpy's and hetsim's terms: the dtypes hetsim reads, an
initializer as an array, a graph input's `TensorType`, each checked and named in a `ModelError`
(``<file>: initializer w: ...``). Protos are read through `hetsim.frontend.proto`, without onnx.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

import numpy as np

from hetsim.errors import ModelError, printable
from hetsim.frontend import proto as onnx_proto
from hetsim.ir import Dim, TensorType
from hetsim.kernels.checks import ONNX_DTYPES

if TYPE_CHECKING:
    import onnx

__all__ = [
    "SUPPORTED_DTYPES",
    "array",
    "check_initializer_input",
    "dim_params",
    "dtype_name",
    "initializers",
    "tensor_type",
    "type_label",
]

SUPPORTED_DTYPES = (
    "bool",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
)
"""The numpy dtype names a tensor may have; ONNX's others (string, bfloat16, float8...) do not."""


def dtype_name(elem_type: int, where: str) -> str:
    """The numpy dtype name of an ONNX element type, or a ModelError if unsupported."""
    names = onnx_proto.messages(where).TensorProto.DataType
    name = names.Name(elem_type).lower() if elem_type in names.values() else "undefined"
    if name == "float":
        name = "float32"
    elif name == "double":
        name = "float64"
    if name not in SUPPORTED_DTYPES:
        supported = ", ".join(SUPPORTED_DTYPES)
        raise ModelError(f"{where}: expected a supported dtype ({supported}), got {name}")
    assert ONNX_DTYPES[elem_type].name == name, f"dtype table: {name}"
    return name


def array(tensor: onnx.TensorProto, where: str) -> np.ndarray:
    return onnx_proto.to_array(tensor, np.dtype(dtype_name(tensor.data_type, where)), where)


def initializers(proto: onnx.GraphProto, where: str) -> dict[str, np.ndarray]:
    """The graph's initializers by name: one of a name, and dense (a sparse one is a
    ModelError, as is a name given twice, which ONNX forbids: which one wins is a guess)."""
    if proto.sparse_initializer:
        name = proto.sparse_initializer[0].values.name
        raise ModelError(
            f"{where}: initializer {printable(name)}: expected a dense tensor, got a "
            "sparse_initializer "
            "(hetsim reads no sparse tensors)"
        )
    arrays: dict[str, np.ndarray] = {}
    for tensor in proto.initializer:
        where_of = f"{where}: initializer {printable(tensor.name)}"
        if tensor.name in arrays:
            raise ModelError(f"{where_of}: expected one initializer of a name, got two")
        arrays[tensor.name] = array(tensor, where_of)
    return arrays


def check_initializer_input(info: onnx.ValueInfoProto, array: np.ndarray, where: str) -> None:
    """Raise unless a graph input that is also an initializer (IR 3 lists every weight so)
    states the initializer's dtype and shape, where it states them (a named dim fits any
    size): hetsim reads the initializer, so another stated type is a model at odds with
    itself."""
    tensor = info.type.tensor_type
    if not info.type.HasField("tensor_type") or not tensor.elem_type:
        return
    dtype = dtype_name(tensor.elem_type, where)
    stated, fits = dtype, dtype == array.dtype.name
    if tensor.HasField("shape"):
        dims = [d.dim_value if _is_size(d) else d.dim_param or "?" for d in tensor.shape.dim]
        stated = type_label(dtype, dims)
        fits = fits and len(dims) == array.ndim
        fits = fits and all(
            isinstance(d, str) or d == n for d, n in zip(dims, array.shape, strict=True)
        )
    if not fits:
        raise ModelError(
            f"{where}: expected its initializer's type "
            f"{type_label(array.dtype.name, array.shape)}, got {stated}"
        )


def type_label(dtype: str, shape: Iterable[object]) -> str:
    return f"{dtype}[{', '.join(str(d) for d in shape)}]"


def dim_params(proto: onnx.GraphProto) -> frozenset[str]:
    """The dim names (``dim_param``) that the graph's inputs, value_info and outputs state."""
    infos = (*proto.input, *proto.value_info, *proto.output)
    return frozenset(
        dim.dim_param for info in infos for dim in info.type.tensor_type.shape.dim if dim.dim_param
    )


def tensor_type(
    info: onnx.ValueInfoProto, where: str, dim_names: Collection[str] = ()
) -> TensorType:
    """The `TensorType` that `info` states. An unknown dim is symbolic: its ``dim_param``, or,
    unnamed, ``<tensor>_d<index>``; where `dim_names` (the model's `dim_params`) hold that
    name, the first free ``<tensor>_d<index>_<n>`` (n = 1, 2, ...), so that it varies apart. A
    negative ``dim_value`` (-1, as some exporters write an unknown dim) is an unnamed one."""
    kind = info.type.WhichOneof("value")
    if kind != "tensor_type":
        raise ModelError(f"{where}: expected a tensor, got {kind or 'no type'}")
    tensor = info.type.tensor_type
    if not tensor.HasField("shape"):
        raise ModelError(f"{where}: expected a tensor of known rank, got no shape")
    shape: list[Dim] = []
    for index, dim in enumerate(tensor.shape.dim):
        if _is_size(dim):
            shape.append(int(dim.dim_value))
        else:
            shape.append(dim.dim_param or _unnamed_dim(f"{info.name}_d{index}", dim_names))
    return TensorType(tuple(shape), dtype_name(tensor.elem_type, where))


def _is_size(dim: onnx.TensorShapeProto.Dimension) -> bool:
    """Whether `dim` states a size: a ``dim_value`` >= 0 (onnx's checker and onnxruntime take
    a negative one as unknown)."""
    return dim.HasField("dim_value") and dim.dim_value >= 0


def _unnamed_dim(name: str, dim_names: Collection[str]) -> str:
    """`name`, or the first ``<name>_<n>`` that no dim of the model is named (an unnamed
    unknown dim still varies on its own: linked to a named one, it refused valid inputs)."""
    free, n = name, 1
    while free in dim_names:
        free, n = f"{name}_{n}", n + 1
    return free
