"""How many inputs each op type in `hetsim.kernels.OPS` takes at most, by opset.

An input past an op's last one would be ignored by its kernel and its shape rule (an Add of three
inputs ran as the sum of the first two); `register` checks an op's input count against
`MAX_INPUTS` before its shape rule or kernel compiles, next to its required inputs (its
``required``), so such an op is a ModelError instead. A trailing omitted input (``""``) past the
last is taken: ONNX reads an omitted input as absent, so nothing is ignored (onnx's checker and
onnxruntime refuse it, counting the names). An op of a variadic input (Concat, Sum) takes any
number: `VARIADIC`, ONNX's own count for one.

Several counts change across versions, most where an attribute became an input (Clip's ``min`` and
``max`` at opset 11, Slice's ``starts`` at 10, ReduceSum's ``axes`` at 13); an entry maps the
opset each count holds from to the count, and an op used below its first version (hetsim does not
refuse that) takes the count of its first.

The default domain's counts are the ``max_input`` of onnx's schemas
(``onnx.defs.get_all_schemas_with_history``) from opset 1 to 28,
`hetsim.frontend.onnx.NEWEST_OPSET`, with a version kept only where its count changes; the
``com.microsoft`` ops' are onnxruntime's (its contrib op schemas: one version each).
``tests/kernels/test_arity.py`` checks both against the installed onnx and onnxruntime. This
module is data only: the core package imports without onnx.

Examples
--------
>>> MAX_INPUTS["Clip"], MAX_INPUTS["QLinearAdd"]
({1: 1, 11: 3}, {1: 8})
>>> MAX_INPUTS["Sum"][1] == VARIADIC
True
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["MAX_INPUTS", "VARIADIC"]

VARIADIC = 2**31 - 1
"""The count of an op whose last input is variadic: any number (ONNX's ``max_input`` for one)."""

_ONNX: dict[str, dict[int, int]] = {
    "Abs": {1: 1},
    "Acos": {7: 1},
    "Acosh": {9: 1},
    "Add": {1: 2},
    "AffineGrid": {20: 2},
    "And": {1: 2},
    "ArgMax": {1: 1},
    "ArgMin": {1: 1},
    "Asin": {7: 1},
    "Asinh": {9: 1},
    "Atan": {7: 1},
    "Atanh": {9: 1},
    "Attention": {23: 6, 24: 7},
    "AveragePool": {1: 1},
    "BatchNormalization": {1: 5},
    "BitShift": {11: 2},
    "BitwiseAnd": {18: 2},
    "BitwiseNot": {18: 1},
    "BitwiseOr": {18: 2},
    "BitwiseXor": {18: 2},
    "Cast": {1: 1},
    "CastLike": {15: 2},
    "Ceil": {1: 1},
    "Celu": {12: 1},
    "CenterCropPad": {18: 2},
    "Clip": {1: 1, 11: 3},
    "Col2Im": {18: 3},
    "Concat": {1: VARIADIC},
    "Constant": {1: 0},
    "ConstantOfShape": {9: 1},
    "Conv": {1: 3},
    "ConvInteger": {10: 4},
    "ConvTranspose": {1: 3},
    "Cos": {7: 1},
    "Cosh": {9: 1},
    "CumProd": {26: 2},
    "CumSum": {11: 2},
    "DepthToSpace": {1: 1},
    "DequantizeLinear": {10: 3},
    "Div": {1: 2},
    "Dropout": {1: 1, 12: 3},
    "DynamicQuantizeLinear": {11: 1},
    "Einsum": {12: VARIADIC},
    "Elu": {1: 1},
    "Equal": {1: 2},
    "Erf": {9: 1},
    "Exp": {1: 1},
    "Expand": {8: 2},
    "EyeLike": {9: 1},
    "Flatten": {1: 1},
    "Floor": {1: 1},
    "GRU": {1: 6},
    "Gather": {1: 2},
    "GatherElements": {11: 2},
    "GatherND": {11: 2},
    "Gelu": {20: 1},
    "Gemm": {1: 3},
    "GlobalAveragePool": {1: 1},
    "GlobalLpPool": {1: 1},
    "GlobalMaxPool": {1: 1},
    "Greater": {1: 2},
    "GreaterOrEqual": {12: 2},
    "GridSample": {16: 2},
    "GroupNormalization": {18: 3},
    "HardSigmoid": {1: 1},
    "HardSwish": {14: 1},
    "Hardmax": {1: 1},
    "Identity": {1: 1},
    "InstanceNormalization": {1: 3},
    "IsInf": {10: 1},
    "IsNaN": {9: 1},
    "LRN": {1: 1},
    "LSTM": {1: 8},
    "LayerNormalization": {17: 3},
    "LeakyRelu": {1: 1},
    "Less": {1: 2},
    "LessOrEqual": {12: 2},
    "Log": {1: 1},
    "LogSoftmax": {1: 1},
    "LpNormalization": {1: 1},
    "LpPool": {1: 1},
    "MatMul": {1: 2},
    "MatMulInteger": {10: 4},
    "Max": {1: VARIADIC},
    "MaxPool": {1: 1},
    "MaxUnpool": {9: 3},
    "Mean": {1: VARIADIC},
    "MeanVarianceNormalization": {9: 1},
    "Min": {1: VARIADIC},
    "Mish": {18: 1},
    "Mod": {10: 2},
    "Mul": {1: 2},
    "Neg": {1: 1},
    "Not": {1: 1},
    "OneHot": {9: 3},
    "Or": {1: 2},
    "PRelu": {1: 2},
    "Pad": {1: 1, 11: 3, 18: 4},
    "Pow": {1: 2},
    "QLinearConv": {10: 9},
    "QLinearMatMul": {10: 8},
    "QuantizeLinear": {10: 3},
    "RMSNormalization": {23: 2},
    "RNN": {1: 6},
    "Range": {11: 3},
    "Reciprocal": {1: 1},
    "ReduceL1": {1: 1, 18: 2},
    "ReduceL2": {1: 1, 18: 2},
    "ReduceLogSum": {1: 1, 18: 2},
    "ReduceLogSumExp": {1: 1, 18: 2},
    "ReduceMax": {1: 1, 18: 2},
    "ReduceMean": {1: 1, 18: 2},
    "ReduceMin": {1: 1, 18: 2},
    "ReduceProd": {1: 1, 18: 2},
    "ReduceSum": {1: 1, 13: 2},
    "ReduceSumSquare": {1: 1, 18: 2},
    "Relu": {1: 1},
    "Reshape": {1: 1, 5: 2},
    "Resize": {10: 2, 11: 4},
    "ReverseSequence": {10: 2},
    "RoiAlign": {10: 3},
    "RotaryEmbedding": {23: 4},
    "Round": {11: 1},
    "ScatterElements": {11: 3},
    "ScatterND": {11: 3},
    "Selu": {1: 1},
    "Shape": {1: 1},
    "Shrink": {9: 1},
    "Sigmoid": {1: 1},
    "Sign": {9: 1},
    "Sin": {7: 1},
    "Sinh": {9: 1},
    "Size": {1: 1},
    "Slice": {1: 1, 10: 5},
    "Softmax": {1: 1},
    "Softplus": {1: 1},
    "Softsign": {1: 1},
    "SpaceToDepth": {1: 1},
    "Split": {1: 2, 2: 1, 13: 2},
    "Sqrt": {1: 1},
    "Squeeze": {1: 1, 13: 2},
    "Sub": {1: 2},
    "Sum": {1: VARIADIC},
    "SwiGLU": {28: 2},
    "Swish": {24: 1},
    "Tan": {7: 1},
    "Tanh": {1: 1},
    "TensorScatter": {24: 3},
    "ThresholdedRelu": {10: 1},
    "Tile": {1: 3, 6: 2},
    "TopK": {1: 1, 10: 2},
    "Transpose": {1: 1},
    "Trilu": {14: 2},
    "Unsqueeze": {1: 1, 13: 2},
    "Upsample": {1: 1, 9: 2},
    "Where": {9: 3},
    "Xor": {1: 2},
}
"""Default-domain op type -> {opset the count holds from: the most inputs it takes}."""

_MICROSOFT: dict[str, dict[int, int]] = {
    "QGemm": {1: 9},
    "QLinearAdd": {1: 8},
    "QLinearAveragePool": {1: 5},
    "QLinearConcat": {1: VARIADIC},
    "QLinearGlobalAveragePool": {1: 5},
    "QLinearLeakyRelu": {1: 5},
    "QLinearMul": {1: 8},
    "QLinearSigmoid": {1: 5},
    "QLinearSoftmax": {1: 5},
}
"""onnxruntime's ``com.microsoft`` op type -> {1: its count} (each has version 1 only, and the
graph's opset, that of the default domain, does not change it)."""

MAX_INPUTS: Mapping[str, Mapping[int, int]] = {**_ONNX, **_MICROSOFT}
"""Op type -> {opset the count holds from: the most inputs the op takes from that opset on}."""
