"""The quantized tensors a QDQ graph states: what each DequantizeLinear (DQ) and QuantizeLinear
(Q) op says about the integer tensor it reads or gives, read from the graph without running it.

`QdqReader` indexes one graph's producers and readers and answers, for a tensor: the DQ that
makes it (`QdqReader.dequantized`), the one Q that alone reads it, per tensor to int8 or uint8
(`QdqReader.quantized_by`), and its dtype where the graph fixes it, a Q's or a quantized op's
output included, a ``value_info`` entry not (`QdqReader.dtype_of`). Each answer is a
`Quantized`: the integer tensor, its scale and zero point (initializer names) and their values.
A DQ or Q is read only when its scale is a finite float32 initializer (a Q's non-zero too: it
divides by it) and its zero point, if it has one, an initializer.

Blocked quantization (``block_size``), DQ's ``output_dtype`` and Q's ``precision`` (opset 21
and 23 attributes) are not read, so a group with one keeps as written. Which groups fuse, and
rewriting them into integer ops, is `hetsim.frontend.qdq`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hetsim.ir import Graph, Op
from hetsim.kernels.checks import ONNX_DTYPES
from hetsim.kernels.qoperator import SPECS
from hetsim.kernels.quant import is_per_tensor

__all__ = ["INT8_DTYPES", "QdqReader", "Quantized"]

INT8_DTYPES = (np.dtype("int8"), np.dtype("uint8"))
"""The 8-bit dtypes of a quantized tensor that an integer op reads or gives."""
_FLOAT32 = np.dtype("float32")
_UINT8 = np.dtype("uint8")
_OUTPUT_ZERO = {
    "QuantizeLinear": 2,
    "QLinearConv": 7,
    "QLinearMatMul": 7,
    "QGemm": 8,
    **{name: spec.output + 1 for name, spec in SPECS.items()},
}
"""Op type -> the input index of its output's zero point, which sets its output dtype."""


@dataclass(frozen=True, slots=True)
class Quantized:
    """A quantized tensor as one DQ (or Q) states it: the integer tensor, its scale and zero
    point (initializer names; ``zero`` is ``None`` where the op omits it) and their values."""

    tensor: str
    scale: str
    zero: str | None
    scale_value: np.ndarray
    dtype: np.dtype[Any]
    axis: int


class QdqReader:
    """One graph's DQ and Q ops, read: the quantized tensor each states, and who reads what."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.constants = graph.initializers
        self.producer = {name: op for op in graph.ops for name in op.outputs if name}
        self.outputs = frozenset(graph.outputs)
        self.readers: dict[str, list[Op]] = {}  # tensor -> its readers, once per read
        for op in graph.ops:
            for name in op.inputs:
                if name:
                    self.readers.setdefault(name, []).append(op)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.graph.name} ops={len(self.graph.ops)}>"

    def dtype_of(self, name: str) -> np.dtype[Any] | None:
        """The dtype of tensor `name` where the graph fixes it without running anything: an
        initializer's, a graph input's, a quantized op's output's. A ``value_info`` entry is no
        such fact (nothing checks it against the op that makes the tensor): trusted, one that
        said uint8 of an int8 tensor fused a group the float path computes otherwise."""
        if name in self.constants:
            return self.constants[name].dtype
        if name in self.graph.inputs:
            return np.dtype(self.graph.inputs[name].dtype)
        op = self.producer.get(name)
        if op is not None and op.type in _OUTPUT_ZERO:
            return self.quantized_output(op)
        return None

    def quantized_output(self, op: Op) -> np.dtype[Any] | None:
        """The dtype a Q or a quantized op gives: its output zero point's; without one, a Q's
        ``output_dtype`` or uint8, a QGemm's float32, another's its first operand's."""
        index = _OUTPUT_ZERO[op.type]
        zero = op.inputs[index] if len(op.inputs) > index else ""
        if zero:
            return self.dtype_of(zero)
        if op.type == "QuantizeLinear":
            code = int(op.attrs.get("output_dtype", 0))
            return ONNX_DTYPES.get(code) if code else _UINT8
        if op.type == "QGemm":
            return _FLOAT32
        first = SPECS[op.type].operands[0] if op.type in SPECS else 0  # QLinearConcat's: 2
        return self.dtype_of(op.inputs[first])

    def dequantized(self, name: str) -> Quantized | None:
        """What DQ makes `name`, when a DQ does and its scale and zero point are constants."""
        op = self.producer.get(name)
        if op is None or op.type != "DequantizeLinear":
            return None
        if op.attrs.get("block_size", 0) or "output_dtype" in op.attrs:
            return None
        return self._quantized(op, op.inputs[0], op.inputs[1:])

    def _quantized(self, op: Op, tensor: str, params: tuple[str, ...]) -> Quantized | None:
        scale = params[0]
        zero = params[1] if len(params) > 1 and params[1] else None
        if scale not in self.constants or (zero is not None and zero not in self.constants):
            return None
        scale_value = self.constants[scale]
        if scale_value.dtype != _FLOAT32 or not np.all(np.isfinite(scale_value)):
            return None  # an inf or NaN scale: the fused op gives other values than the float ops
        if op.type == "QuantizeLinear" and not np.all(scale_value):
            return None  # a zero scale, which the float Q divides by (-128 where fused gave 0)
        dtype: np.dtype[Any] | None
        if zero is not None:
            dtype = self.constants[zero].dtype
        elif op.type == "QuantizeLinear":
            dtype = self.quantized_output(op)
        else:
            dtype = self.dtype_of(tensor)
        if dtype is None:
            return None
        return Quantized(tensor, scale, zero, scale_value, dtype, int(op.attrs.get("axis", 1)))

    def quantized_by(self, name: str) -> tuple[Op, Quantized] | None:
        """The one Q that reads `name`, when nothing else does and it is per tensor to 8 bits."""
        readers = self.readers.get(name, [])
        if len(readers) != 1 or name in self.outputs:
            return None
        (op,) = readers
        if op.type != "QuantizeLinear" or "precision" in op.attrs or op.inputs[0] != name:
            return None
        found = self._quantized(op, op.outputs[0], op.inputs[1:])
        if (
            found is None
            or found.dtype not in INT8_DTYPES
            or not is_per_tensor(found.scale_value.shape)
        ):
            return None
        return op, found

    def zero_value(self, found: Quantized) -> np.ndarray:
        """The zero point's value (0 where the op omits it)."""
        return self.constants[found.zero] if found.zero is not None else np.zeros((), found.dtype)
