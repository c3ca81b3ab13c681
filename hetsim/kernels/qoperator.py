"""onnxruntime's quantized element-wise, pooling, concatenating and softmax ops (domain
``com.microsoft``): QLinearAdd, QLinearMul, QLinearAveragePool, QLinearGlobalAveragePool,
QLinearSigmoid, QLinearLeakyRelu, QLinearConcat and QLinearSoftmax.

onnxruntime runs an int8 model's Adds, Muls, pools, activations and Concats as these ops: its
quantizer writes them in the QOperator format, and its graph transformer makes them from the DQ
-> op -> Q groups of the QDQ format, as `hetsim.frontend.fuse_qdq` does. Each stands for such a
group and computes what the group states, with the group's own kernels: every operand
dequantized (DequantizeLinear: ``(x - zero_point) · scale`` in float32), the float op (`SPECS`:
its kernel, the same attributes), the result quantized (QuantizeLinear: round half to even, add
the zero point, saturate). The operands and the output share one dtype, int8 or uint8; every
scale is a float32 scalar and every zero point a scalar of that dtype (omitted: 0).
onnxruntime's kernels fold the scales into ratios (``a_scale / c_scale``) first, which moves a
value that falls within float rounding of a tie by one step.

The pools take ``channels_last`` = 0 only (NCHW, as both formats write them). QLinearConcat
is variadic: ``Y_scale, Y_zero_point``, then each operand with its scale and zero point, and
Concat's ``axis``. QLinearSoftmax's ``opset`` attribute names the Softmax version it follows
(before 13, the input is read as 2-D at ``axis``); without it, the model's. Its ``axis`` is -1
when not given, whatever that version (onnxruntime's schema: `_DEFAULTS`). An error of the float
op is said of the QLinear op (``op y (QLinearAveragePool): ...``).

Shapes: the float op's rule. Cost (the float op's class): its flops, plus 2 per operand element
(dequantize) and 4 per output element (quantize); bytes read and written at the quantized dtype.
The numpy lowering's further calls (`Cost.numpy_calls`) are the group's: each operand's
DequantizeLinear, the float op's and the QuantizeLinear's calls, less the op's first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetsim.errors import OpError
from hetsim.ir import Op, op_label
from hetsim.kernels.checks import int_attr, op_error
from hetsim.kernels.costs import Cost, nbytes
from hetsim.kernels.meta import Meta
from hetsim.kernels.quant import article, either_of, is_per_tensor
from hetsim.kernels.registry import OPS, Kernel, register

__all__ = ["MICROSOFT", "SPECS", "QLinearSpec"]

_INTEGER_DTYPES = (np.dtype("int8"), np.dtype("uint8"))
_FLOAT32 = np.dtype("float32")


@dataclass(frozen=True, slots=True)
class QLinearSpec:
    """Where a QLinear op's inputs are: the float op it stands for (and that op's class), the
    position of each quantized operand (its scale and zero point follow it), and of the
    output's scale (its zero point follows it). A `variadic` op (QLinearConcat) has its
    output's scale first and as many operands as it is given, from ``operands[0]`` on."""

    inner: str
    op_class: str
    operands: tuple[int, ...]
    output: int
    variadic: bool = False

    def operands_of(self, count: int) -> tuple[int, ...]:
        """The positions of the operands of such an op with `count` inputs.

        >>> SPECS["QLinearConcat"].operands_of(8), SPECS["QLinearAdd"].operands_of(8)
        ((2, 5), (0, 3))
        """
        return tuple(range(self.operands[0], count, 3)) if self.variadic else self.operands

    def scales_of(self, count: int) -> tuple[int, ...]:
        """The positions of every scale: each operand's, then the output's."""
        return (*(i + 1 for i in self.operands_of(count)), self.output)


SPECS: Mapping[str, QLinearSpec] = {
    "QLinearAdd": QLinearSpec("Add", "elementwise", (0, 3), 6),
    "QLinearMul": QLinearSpec("Mul", "elementwise", (0, 3), 6),
    "QLinearAveragePool": QLinearSpec("AveragePool", "reduction", (0,), 3),
    "QLinearGlobalAveragePool": QLinearSpec("GlobalAveragePool", "reduction", (0,), 3),
    "QLinearSigmoid": QLinearSpec("Sigmoid", "elementwise", (0,), 3),
    "QLinearLeakyRelu": QLinearSpec("LeakyRelu", "elementwise", (0,), 3),
    "QLinearConcat": QLinearSpec("Concat", "data_movement", (2,), 0, variadic=True),
    "QLinearSoftmax": QLinearSpec("Softmax", "normalization", (0,), 3),
}
"""Op type -> its layout; the ops onnxruntime's ``com.microsoft`` domain defines so."""

MICROSOFT = "com.microsoft"
"""onnxruntime's domain, where its quantized ops are defined."""


_OWN_ATTRS = frozenset({"channels_last", "opset"})
"""Attributes of the QLinear op itself, not of the float op it stands for."""

_DEFAULTS: Mapping[str, Mapping[str, Any]] = {"QLinearSoftmax": {"axis": -1}}
"""Attribute defaults of a QLinear op that differ from its float op's, as onnxruntime's
``com.microsoft`` schema states them: QLinearSoftmax's ``axis`` is -1 whatever Softmax version
it follows (Softmax's before 13 is 1: a [2, 3, 4] input had been normalized over axis 1)."""


def _inner_op(op: Op, spec: QLinearSpec) -> Op:
    """The float op of `op`: its operands' names, its attributes but `_OWN_ATTRS` over the
    QLinear op's own defaults (`_DEFAULTS`)."""
    attrs = {**_DEFAULTS.get(op.type, {}), **op.attrs}
    attrs = {k: v for k, v in attrs.items() if k not in _OWN_ATTRS}
    operands = tuple(op.inputs[i] for i in spec.operands_of(len(op.inputs)))
    return Op(spec.inner, op.name, operands, op.outputs, attrs)


@contextmanager
def _as_itself(op: Op, spec: QLinearSpec) -> Iterator[None]:
    """An error of the float op `op` stands for, said of `op` (``op y (QLinearAveragePool):``,
    where it named the float op's type, which the model does not have)."""
    try:
        yield
    except OpError as err:
        inner = f"{op_label(dataclasses.replace(op, type=spec.inner))}:"
        outer = f"{op_label(op)}:"
        text = str(err)
        if not text.startswith(inner):
            raise
        raise OpError(outer + text.removeprefix(inner), err.op) from err


def _inner_opset(op: Op, opset: int) -> int:
    """The opset the float op follows: QLinearSoftmax's ``opset`` attribute (the Softmax
    version whose semantics it has: before 13, the input is read as 2-D at ``axis``), else the
    model's."""
    given = int_attr(op, "opset", 0)
    if given < 0:
        raise op_error(op, "expected an opset >= 1", given)
    return given or opset


def _check_channels_first(op: Op) -> None:
    channels_last = int_attr(op, "channels_last", 0)
    if channels_last:
        raise op_error(op, "expected channels_last 0 (NCHW)", channels_last)


def _compile(op: Op, opset: int) -> Kernel:
    spec = SPECS[op.type]
    _check_channels_first(op)
    with _as_itself(op, spec):
        inner = OPS[spec.inner].compile(_inner_op(op, spec), _inner_opset(op, opset))
    dequantize = OPS["DequantizeLinear"].compile(
        Op("DequantizeLinear", op.name, ("x", "s", "z"), ("y",)), opset
    )
    quantize = OPS["QuantizeLinear"].compile(
        Op("QuantizeLinear", op.name, ("x", "s", "z"), ("y",)), opset
    )
    operands, out = spec.operands_of(len(op.inputs)), spec.output

    def kernel(inputs: Sequence[Any]) -> list[np.ndarray]:
        values = (*inputs, None, None)
        floats = [dequantize(values[i : i + 3])[0] for i in operands]
        (y,) = inner(floats)
        zero = values[out + 1]
        if zero is None:  # QuantizeLinear's default is uint8: give the operands' dtype
            zero = np.zeros((), inputs[operands[0]].dtype)
        return quantize([y, values[out], zero])

    return kernel


def _infer(op: Op, opset: int, inputs: Sequence[Meta | None]) -> list[Meta]:
    spec = SPECS[op.type]
    _check_channels_first(op)
    metas = (*inputs, None, None, None)
    at_least = spec.operands[0] + 1 if spec.variadic else 0  # an operand past y's zero point
    operands = [_operand(op, metas, at) for at in spec.operands_of(max(len(inputs), at_least))]
    dtype = operands[0].dtype
    if dtype not in _INTEGER_DTYPES:
        raise op_error(op, f"expected an input of {either_of(_INTEGER_DTYPES)}", dtype.name)
    for operand in operands[1:]:
        if operand.dtype != dtype:
            raise op_error(op, f"expected every operand of {dtype.name}", operand.dtype.name)
    for at in spec.scales_of(len(inputs)):
        _check_scale(op, metas, at, dtype)
    floats: list[Meta | None] = [Meta(operand.shape, _FLOAT32) for operand in operands]
    with _as_itself(op, spec):
        (out,) = OPS[spec.inner].infer(_inner_op(op, spec), _inner_opset(op, opset), floats)
    return [Meta(out.shape, dtype)]


def _operand(op: Op, metas: Sequence[Meta | None], at: int) -> Meta:
    operand = metas[at]
    if operand is None:
        raise op_error(op, f"expected an operand at input {at}", "none")
    return operand


def _check_scale(op: Op, metas: Sequence[Meta | None], at: int, dtype: np.dtype[Any]) -> None:
    """The scale at input `at` and the zero point after it: per tensor, float32 and `dtype`."""
    scale, zero = metas[at], metas[at + 1]
    if scale is None:
        raise op_error(op, f"expected a scale at input {at}", "none")
    if scale.dtype != _FLOAT32:
        raise op_error(op, f"expected a scale of float32 at input {at}", scale.dtype.name)
    for name, meta in (("scale", scale), ("zero point", zero)):
        if meta is not None and not is_per_tensor(meta.shape):
            raise op_error(op, f"expected {article(name)} of one element", meta.shape)
    if zero is not None and zero.dtype != dtype:
        raise op_error(op, f"expected a zero point of {dtype.name}", zero.dtype.name)


_DEQUANTIZE = Op("DequantizeLinear", "dequantize", ("x", "s", "z"), ("y",))
_QUANTIZE = Op("QuantizeLinear", "quantize", ("x", "s", "z"), ("y",))


def _cost(op: Op, inputs: Sequence[Meta | None], outputs: Sequence[Meta]) -> Cost:
    """The group's: each operand's DequantizeLinear, the float op, the QuantizeLinear (its zero
    point always given, as the kernel gives it), at the float op's class and quantized bytes."""
    spec = SPECS[op.type]
    metas = (*inputs, None, None)
    (out,) = outputs
    floats: list[Meta] = []
    parts: list[Cost] = []
    for at in spec.operands_of(len(inputs)):
        operand = metas[at]
        if operand is not None:
            floats.append(Meta(operand.shape, _FLOAT32))
            parts.append(OPS["DequantizeLinear"].cost(_DEQUANTIZE, metas[at : at + 3], floats[-1:]))
    out_float = Meta(out.shape, _FLOAT32)
    inner = OPS[spec.inner].cost(_inner_op(op, spec), floats, [out_float])
    zero = Meta((), out.dtype)
    parts += (
        inner,
        OPS["QuantizeLinear"].cost(_QUANTIZE, [out_float, metas[spec.output], zero], outputs),
    )
    return dataclasses.replace(
        inner,
        flops=sum(part.flops for part in parts),
        bytes_read=nbytes(inputs),
        bytes_written=nbytes(outputs),
        scratch_bytes=0,
        # every part's kernel makes 1 + its numpy_calls calls; the op's first is its own
        numpy_calls=sum(1 + part.numpy_calls for part in parts) - 1,
        numpy_bytes=sum(part.numpy_bytes for part in parts),
    )


for _type, _spec in SPECS.items():
    register(_type, _spec.op_class, compile=_compile, infer=_infer, cost=_cost, domain=MICROSOFT)
