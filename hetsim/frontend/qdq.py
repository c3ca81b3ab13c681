"""QDQ fusion: a float Conv, MatMul or Gemm between DequantizeLinear and QuantizeLinear ops becomes
the integer op an int8 device runs, and an op that only moves values runs on the quantized
tensor, as onnxruntime's QDQ transformer rewrites them.

A model quantized in QDQ form (onnxruntime's default format, and what PyTorch exports) keeps
each Conv, MatMul and Gemm in float: its inputs come from DequantizeLinear (DQ) ops and its
output goes to a QuantizeLinear (Q). As written, every such op computes float32, so an int8-only
accelerator (Gemmini, the Ethos-U65, an NPU) takes none of them. `fuse_qdq` rewrites each group
into one QLinearConv, QLinearMatMul or QGemm that reads the quantized tensors, named after the
float op and giving the Q's output; a DQ left with no reader is dropped.
`hetsim.frontend.load_onnx` applies it by default (``fuse_qdq=False`` keeps the model as
written).

A group is fused only when the integer op computes what it states (every value below is an
initializer; scales are finite float32, a Q's non-zero):

- **Conv**: X from a per-tensor DQ of int8 or uint8; W from a DQ of an int8 or uint8 weight,
  per tensor or per output channel (``axis=0``, one scale per output channel); the optional B
  from a DQ of an int32 bias with zero point 0 and scale ``x_scale · w_scale`` (to float32
  rounding, as quantizers make it); the Conv's output read by one per-tensor Q to int8 or
  uint8 and by nothing else.
- **MatMul**: A from a per-tensor DQ, B from a DQ per tensor or, for a 2-D B, per column
  (its last axis); the output read by one per-tensor Q only; int8 or uint8 throughout.
- **Gemm** (a Linear layer as PyTorch exports it): onnxruntime's QGemm (domain
  ``com.microsoft``, `hetsim.kernels.qgemm`). A from a per-tensor DQ; B from a DQ per tensor
  or per column of ``B'`` (axis 1, or 0 with ``transB``); int8 A with int8 B, uint8 A with
  either; the optional C from a DQ of an int32 bias with zero point 0 and scale
  ``alpha · a_scale · b_scale``, with ``beta`` 1. The output read by one per-tensor Q of A's
  dtype only is absorbed; otherwise QGemm gives float32 (``float32(acc) · alpha · a_scale ·
  b_scale``, which differs from the float path by float32 rounding only), as onnxruntime
  fuses a Gemm without a Q.

- **Relu before a Q whose zero point is its dtype's minimum** (and whose scale is positive)
  goes, the Q reading the Relu's input (onnxruntime's ReluQuantFusion): the Q clips what the
  Relu would, so the values are the same, and a Conv or MatMul before it (a fused Conv-ReLU as
  PyTorch exports it) then fuses.

- **Ops that only select or move values** (`DATA_MOVERS`: MaxPool, Reshape, Transpose,
  Gather...): between a per-tensor DQ and a Q of the same scale and zero point, the op reads the
  quantized tensor and gives the Q's output, exactly the values the float path gives, and the
  pair goes (onnxruntime drops it so). An int8 MaxPool thus stays on the int8 device (not
  with a negative scale, which reverses the order), as a Resize does in ``nearest`` mode (not
  cropping with ``tf_crop_and_resize``, whose float ``extrapolation_value`` the Q would map).

- **Add, Mul, AveragePool, GlobalAveragePool, Sigmoid, LeakyRelu, Concat, Softmax**: every
  operand from a per-tensor DQ, the output to a per-tensor Q, one 8-bit dtype throughout:
  onnxruntime's QLinearAdd, QLinearMul..., QLinearConcat, QLinearSoftmax (domain
  ``com.microsoft``, `hetsim.kernels.qoperator`), which compute what the group states.

Which DQ and Q ops are read at all, and what each states, is `hetsim.frontend.qdq_tensors`'s.
A group that does not qualify runs as the float ops it is: never a silently different
computation.

The integer op accumulates exactly and requantizes once (``round(acc · x_scale · w_scale /
y_scale) + y_zero_point``); the float path rounds each product and the division in float32
first. The two agree except where that rounding moves a value across a rounding boundary of
the output: there they differ by one quantization step, as in onnxruntime.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np

from hetsim.frontend.qdq_tensors import INT8_DTYPES, QdqReader, Quantized
from hetsim.ir import Graph, Op
from hetsim.kernels.qoperator import SPECS
from hetsim.kernels.quant import is_per_tensor

__all__ = ["DATA_MOVERS", "fuse_qdq"]

_SIGNED = np.dtype("int8")
_INT32 = np.dtype("int32")
_BIAS_RTOL = 1e-5
"""How close a bias scale must be to ``x_scale · w_scale`` (float32 rounding of the product)."""
_CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


class _Fuser(QdqReader):
    """One pass over a graph's ops: the groups found, the zero points the fused ops need."""

    def __init__(self, graph: Graph) -> None:
        super().__init__(graph)
        self.new_constants: dict[str, np.ndarray] = {}
        # (tensor, scale shape) -> the zero point made for it: a weight dequantized per column
        # and per tensor needs one of each shape
        self.zeros: dict[tuple[str, tuple[int, ...]], str] = {}

    def operands(self, first: Quantized, second: Quantized, output: Quantized) -> tuple[str, ...]:
        """A QLinear op's eight inputs: each operand's tensor, scale and zero point, then the
        output's scale and zero point."""
        return (
            first.tensor, first.scale, self.zero_point(first),
            second.tensor, second.scale, self.zero_point(second),
            output.scale, self.zero_point(output),
        )  # fmt: skip

    def zero_point(self, found: Quantized) -> str:
        """The zero point's name: the DQ's or Q's own, else a zero initializer of the scale's
        shape in the tensor's dtype, made once per tensor and scale shape."""
        if found.zero is not None:
            return found.zero
        key = (found.tensor, found.scale_value.shape)
        name = self.zeros.get(key)
        if name is None:
            name = f"{found.tensor}_zero_point"
            while (
                name in self.constants
                or name in self.producer
                or name in self.new_constants
                or name in self.graph.inputs
            ):
                name += "_"
            self.new_constants[name] = np.zeros(found.scale_value.shape, found.dtype)
            self.zeros[key] = name
        return name

    def conv(self, op: Op) -> tuple[Op, Op] | None:
        """The QLinearConv of a qualifying Conv group, and the Q it absorbs."""
        x = self.dequantized(op.inputs[0])
        w = self.dequantized(op.inputs[1]) if len(op.inputs) > 1 else None
        out = self.quantized_by(op.outputs[0])
        if x is None or w is None or out is None:
            return None
        if x.dtype not in INT8_DTYPES or not is_per_tensor(x.scale_value.shape):
            return None
        weight = self.constants.get(w.tensor)
        if (
            weight is None
            or w.dtype not in INT8_DTYPES
            or not _per_channel(w, weight.shape, axis=0)
        ):
            return None
        bias = ""
        if len(op.inputs) > 2 and op.inputs[2]:
            want = (x.scale_value * w.scale_value).ravel()
            bias = self._bias(op.inputs[2], want, weight.shape[0])
            if not bias:
                return None
        q, y = out
        inputs = self.operands(x, w, y)
        attrs = {k: v for k, v in op.attrs.items() if k in _CONV_ATTRS}
        fused = Op("QLinearConv", op.name, (*inputs, bias) if bias else inputs, (y.tensor,), attrs)
        return fused, q

    def _bias(
        self, name: str, want: np.ndarray, channels: int | None, *, any_shape: bool = False
    ) -> str:
        """The int32 bias a DQ makes `name` from, when its zero point is 0 and its scale is
        `want` (one, or one per output channel: ``x_scale · w_scale``, Gemm's ``alpha · a_scale
        · b_scale``): a constant of `channels` elements, per channel along its axis 0; with
        `any_shape` (Gemm's C), any shape when the scale and `want` are one each."""
        b = self.dequantized(name)
        if b is None or b.dtype != _INT32:
            return ""
        if b.zero is not None and np.any(self.constants[b.zero]):
            return ""
        scale = b.scale_value.ravel()
        if not (any_shape and scale.size == want.size == 1):
            weight = self.constants.get(b.tensor)
            if channels is None or weight is None or weight.shape != (channels,):
                return ""
            if scale.size not in (1, channels) or (scale.size > 1 and b.axis not in (0, -1)):
                return ""
            scale, want = np.broadcast_to(scale, (channels,)), np.broadcast_to(want, (channels,))
        if not np.allclose(scale, want, rtol=_BIAS_RTOL, atol=0):
            return ""
        return b.tensor

    def matmul(self, op: Op) -> tuple[Op, Op] | None:
        """The QLinearMatMul of a qualifying MatMul group, and the Q it absorbs."""
        a, b = self.dequantized(op.inputs[0]), self.dequantized(op.inputs[1])
        out = self.quantized_by(op.outputs[0])
        if a is None or b is None or out is None:
            return None
        if (
            a.dtype not in INT8_DTYPES
            or b.dtype not in INT8_DTYPES
            or not is_per_tensor(a.scale_value.shape)
        ):
            return None
        if not is_per_tensor(b.scale_value.shape):
            weight = self.constants.get(b.tensor)
            if weight is None or weight.ndim != 2 or not _per_channel(b, weight.shape, axis=1):
                return None
        q, y = out
        return Op("QLinearMatMul", op.name, self.operands(a, b, y), (y.tensor,)), q

    def gemm(self, op: Op) -> tuple[Op, Op | None] | None:
        """onnxruntime's QGemm of a qualifying Gemm group, and the Q it absorbs (``None``: the
        Gemm's output stays float, and so does QGemm's)."""
        a, b = self.dequantized(op.inputs[0]), self.dequantized(op.inputs[1])
        if a is None or b is None or a.dtype not in INT8_DTYPES or b.dtype not in INT8_DTYPES:
            return None
        if a.dtype == _SIGNED and b.dtype != _SIGNED:
            return None  # onnxruntime has int8 x int8, uint8 x uint8 and uint8 x int8 kernels
        alpha = float(op.attrs.get("alpha", 1.0))
        trans_b = bool(op.attrs.get("transB", 0))
        if not is_per_tensor(a.scale_value.shape):
            return None
        weight = self.constants.get(b.tensor)
        columns = 0 if trans_b else 1  # B' = B.T with transB: its columns are B's rows
        if not is_per_tensor(b.scale_value.shape) and (
            weight is None or weight.ndim != 2 or not _per_channel(b, weight.shape, axis=columns)
        ):
            return None
        bias = ""
        if len(op.inputs) > 2 and op.inputs[2]:
            if float(op.attrs.get("beta", 1.0)) != 1.0:
                return None
            n = weight.shape[columns] if weight is not None else None
            want = (alpha * a.scale_value * b.scale_value).ravel()
            bias = self._bias(op.inputs[2], want, n, any_shape=True)
            if not bias:
                return None
        operands = (
            a.tensor, a.scale, self.zero_point(a), b.tensor, b.scale, self.zero_point(b), bias
        )  # fmt: skip
        attrs = {k: op.attrs[k] for k in ("alpha", "transA", "transB") if k in op.attrs}
        out = self.quantized_by(op.outputs[0])
        if out is None or out[1].dtype != a.dtype:  # a float output: C is the last input
            return Op(
                "QGemm", op.name, operands[:-1] if not bias else operands, op.outputs, attrs
            ), None
        q, y = out
        inputs = (*operands, y.scale, self.zero_point(y))
        return Op("QGemm", op.name, inputs, (y.tensor,), attrs), q

    def moved(self, op: Op) -> tuple[Op, Op] | None:
        """`op` on the quantized tensor, when a DQ makes its data input and a Q of the same
        scale and zero point takes its output: an op that only selects or moves values gives
        the same values either way."""
        if op.type == "MaxPool" and (self.graph.opset < 12 or any(op.outputs[1:])):
            return None  # int8 MaxPool from opset 12; its Indices are no values to quantize
        if op.type == "Resize" and (
            op.attrs.get("mode", "nearest") != "nearest"
            or op.attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize"
        ):
            return None  # interpolating computes new values; a crop fills with a float value
        data = self.dequantized(op.inputs[0])
        out = self.quantized_by(op.outputs[0])
        if data is None or out is None or not is_per_tensor(data.scale_value.shape):
            return None
        q, y = out
        if data.dtype != y.dtype or not np.array_equal(data.scale_value, y.scale_value):
            return None
        if op.type == "MaxPool" and not np.all(data.scale_value > 0):
            return None  # a negative scale reverses the order: the int max is the float min
        if not np.array_equal(self.zero_value(data), self.zero_value(y)):
            return None
        return replace(op, inputs=(data.tensor, *op.inputs[1:]), outputs=(y.tensor,)), q

    def quantized_op(self, op: Op) -> tuple[Op, Op] | None:
        """onnxruntime's QLinear op of `op` (`hetsim.kernels.qoperator`): every operand from a
        per-tensor DQ and the output to a per-tensor Q, all of one 8-bit dtype."""
        kind = _QLINEAR[op.type]
        spec = SPECS[kind]
        operands = [self.dequantized(name) for name in op.inputs]
        out = self.quantized_by(op.outputs[0])
        if out is None or (not spec.variadic and len(operands) != len(spec.operands)):
            return None
        q, y = out
        found: list[Quantized] = []
        for operand in operands:
            if operand is None or operand.dtype != y.dtype:
                return None
            if not is_per_tensor(operand.scale_value.shape):
                return None
            found.append(operand)
        inputs = [name for o in found for name in (o.tensor, o.scale, self.zero_point(o))]
        output = (y.scale, self.zero_point(y))
        ordered = (*output, *inputs) if spec.variadic else (*inputs, *output)
        return Op(kind, op.name, ordered, (y.tensor,), op.attrs), q


def _per_channel(found: Quantized, shape: tuple[int, ...], *, axis: int) -> bool:
    """Per tensor, or one scale per index of `shape`'s `axis` as the DQ's own axis states."""
    scale = found.scale_value
    if is_per_tensor(scale.shape):
        return True
    stated = found.axis + len(shape) if found.axis < 0 else found.axis
    return stated == axis and scale.shape == (shape[axis],)


DATA_MOVERS = frozenset(
    {"Expand", "Flatten", "Gather", "GatherElements", "MaxPool", "Reshape", "Resize", "Squeeze",
     "Tile", "Transpose", "Unsqueeze"}
)  # fmt: skip
"""Ops that only select or move values: between a DQ and a Q of one scale and zero point they
run on the quantized tensor (onnxruntime's list of ops that "do not change the data"; Resize in
``nearest`` mode only, not cropping; MaxPool with a positive scale only)."""

_QLINEAR = {spec.inner: name for name, spec in SPECS.items()}
"""Float op type -> onnxruntime's QLinear op that stands for its QDQ group (QLinearAdd...)."""

_FUSERS: dict[str, Callable[[_Fuser, Op], tuple[Op, Op | None] | None]] = {
    "Conv": _Fuser.conv,
    "MatMul": _Fuser.matmul,
    "Gemm": _Fuser.gemm,
    **dict.fromkeys(DATA_MOVERS, _Fuser.moved),
    **dict.fromkeys(_QLINEAR, _Fuser.quantized_op),
}


def fuse_qdq(graph: Graph) -> Graph:
    """`graph` with every qualifying DQ -> Conv/MatMul/Gemm -> Q group as one integer op, and every
    DQ -> data mover -> Q group as the data mover on the quantized tensor.

    Ops keep their order: the fused op takes the float op's place and name and gives the Q's
    output. Initializers that no op reads any more (a DQ's weight once its DQ is dropped) go.

    Examples
    --------
    >>> from hetsim.ir import GraphBuilder
    >>> b = GraphBuilder("qdq")
    >>> x = b.input("x", (1, 4), dtype="int8")
    >>> scale, zero = np.array(0.05, np.float32), np.array(0, np.int8)
    >>> a = b.op("DequantizeLinear", x, scale, zero)
    >>> w = b.op("DequantizeLinear", np.ones((4, 2), np.int8), scale, zero)
    >>> y = b.op("QuantizeLinear", b.op("MatMul", a, w), np.array(0.1, np.float32), zero)
    >>> [(op.type, op.name) for op in fuse_qdq(b.build(y)).ops]
    [('QLinearMatMul', 'matmul0')]
    """
    graph = _without_clipped_relus(graph)
    fuser = _Fuser(graph)
    fused: dict[str, Op] = {}  # float op name -> the integer op in its place
    absorbed: set[str] = set()  # the Qs fused ops absorb
    for op in graph.ops:
        rewrite = _FUSERS.get(op.type)
        found = rewrite(fuser, op) if rewrite is not None else None
        if found is not None:
            fused[op.name], q = found
            if q is not None:
                absorbed.add(q.name)
    if not fused:
        return graph
    ops = [fused.get(op.name, op) for op in graph.ops if op.name not in absorbed]
    ops = _without_unread(ops, graph.outputs, "DequantizeLinear")
    initializers: Mapping[str, np.ndarray] = {**graph.initializers, **fuser.new_constants}
    read = {name for op in ops for name in op.inputs} | set(graph.outputs)
    made = {name for op in ops for name in op.outputs}
    types, dtypes = graph.declared_for((read | made).__contains__)
    return replace(
        graph,
        ops=tuple(ops),
        initializers={n: v for n, v in initializers.items() if n in read},
        value_types=types,
        value_dtypes=dtypes,
    )


def _without_clipped_relus(graph: Graph) -> Graph:
    """`graph` less each Relu whose one reader is a per-tensor Q with its dtype's minimum as
    zero point, the Q reading the Relu's input instead (onnxruntime's ReluQuantFusion): the Q
    clips everything below 0 to that minimum already, so the two give the same values, and a
    Conv or MatMul before the Relu (PyTorch exports a fused Conv-ReLU so) can then fuse."""
    reader = QdqReader(graph)
    through: dict[str, str] = {}  # a dropped Relu's output -> its input
    for op in graph.ops:
        if op.type != "Relu" or not op.inputs[0]:
            continue
        found = reader.quantized_by(op.outputs[0])
        if found is None:
            continue
        _, y = found
        # only a positive scale sends every negative value to the zero point, the dtype's min
        is_clipped = np.all(y.scale_value > 0)
        if is_clipped and np.all(reader.zero_value(y) == np.iinfo(y.dtype).min):
            through[op.outputs[0]] = op.inputs[0]
    if not through:
        return graph
    ops = tuple(
        replace(op, inputs=tuple(through.get(name, name) for name in op.inputs))
        for op in graph.ops
        if not (op.type == "Relu" and op.outputs[0] in through)
    )
    types, dtypes = graph.declared_for(lambda name: name not in through)
    return replace(graph, ops=ops, value_types=types, value_dtypes=dtypes)


def _without_unread(ops: list[Op], outputs: tuple[str, ...], op_type: str) -> list[Op]:
    """`ops` less those of `op_type` whose outputs nothing reads (a DQ no op needs any more)."""
    read = Counter(name for op in ops for name in op.inputs)
    read.update(outputs)
    kept = []
    for op in reversed(ops):  # readers first: a dropped op's inputs are read once less
        if op.type == op_type and not any(read[name] for name in op.outputs if name):
            read.subtract(op.inputs)
            continue
        kept.append(op)
    return kept[::-1]
