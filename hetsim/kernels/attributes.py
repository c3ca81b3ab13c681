"""The attribute names each op type in `hetsim.kernels.OPS` takes, by opset.

An attribute an op does not take would be ignored by its kernel (a Softmax ``axs`` of 0 runs with
the default axis) or read by a helper several ops share where ONNX has no such attribute;
`register` checks an op's attribute names against `ATTRIBUTES` before its shape rule or kernel
compiles, so such an op is a ModelError instead.

The names are those of each version of the op, not one union over them. Many attributes became
inputs (ReduceSum's ``axes`` at opset 13, Clip's ``min`` and ``max`` at 11, Slice's ``starts`` at
10) and the kernel of the newer version no longer reads them: a union would still run
``ReduceSum(axes=[1])`` at opset 17 as a sum over every axis. An op at an opset takes the names of
its version at that opset and those of every later version: the kernels follow the newest version
and read a newer attribute at any opset (Attention's ``left_window_size`` at opset 23, Reshape's
``allowzero`` at 13), except the ops of `STRICT_BY_OPSET`. An entry maps the opset each set of
names holds from to the names; an op used below its first version (hetsim does not refuse that)
takes those of its first.

The default domain's names are those of onnx's schemas (``onnx.defs.get_all_schemas_with_history``)
from opset 1 to 28, `hetsim.frontend.onnx.NEWEST_OPSET`, with a version kept only where its names
change; ``tests/kernels/test_attributes.py`` checks them against the installed onnx. The
``com.microsoft`` ops' names are onnxruntime's (its contrib op schemas, docs/ContribOperators.md:
one version each), checked against onnxruntime's schemas where it is installed. `EXTENSIONS` holds
the names hetsim takes beyond a schema, each with the reason. This module is data only: the core
package imports without onnx.

Examples
--------
>>> [(since, sorted(names)) for since, names in ATTRIBUTES["ReduceSum"].items()]
[(1, ['axes', 'keepdims']), (13, ['keepdims', 'noop_with_empty_axes'])]
>>> sorted(ATTRIBUTES["QLinearSoftmax"][1])
['axis', 'opset']
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["ATTRIBUTES", "EXTENSIONS", "STRICT_BY_OPSET"]

_ONNX: dict[str, dict[int, str]] = {
    "Abs": {1: "consumed_inputs", 6: ""},
    "Acos": {7: ""},
    "Acosh": {9: ""},
    "Add": {1: "axis broadcast consumed_inputs", 6: "axis broadcast", 7: ""},
    "AffineGrid": {20: "align_corners"},
    "And": {1: "axis broadcast", 7: ""},
    "ArgMax": {1: "axis keepdims", 12: "axis keepdims select_last_index"},
    "ArgMin": {1: "axis keepdims", 12: "axis keepdims select_last_index"},
    "Asin": {7: ""},
    "Asinh": {9: ""},
    "Atan": {7: ""},
    "Atanh": {9: ""},
    "Attention": {
        23: (
            "is_causal kv_num_heads q_num_heads qk_matmul_output_mode scale softcap "
            "softmax_precision"
        ),
        25: (
            "is_causal kv_num_heads left_window_size q_num_heads qk_matmul_output_mode "
            "right_window_size scale softcap softmax_precision"
        ),
    },
    "AveragePool": {
        1: "auto_pad kernel_shape pads strides",
        7: "auto_pad count_include_pad kernel_shape pads strides",
        10: "auto_pad ceil_mode count_include_pad kernel_shape pads strides",
        19: "auto_pad ceil_mode count_include_pad dilations kernel_shape pads strides",
    },
    "BatchNormalization": {
        1: "consumed_inputs epsilon is_test momentum spatial",
        6: "epsilon is_test momentum spatial",
        7: "epsilon momentum spatial",
        9: "epsilon momentum",
        14: "epsilon momentum training_mode",
    },
    "BitShift": {11: "direction"},
    "BitwiseAnd": {18: ""},
    "BitwiseNot": {18: ""},
    "BitwiseOr": {18: ""},
    "BitwiseXor": {18: ""},
    "Cast": {1: "to", 19: "saturate to", 24: "round_mode saturate to"},
    "CastLike": {15: "", 19: "saturate", 24: "round_mode saturate"},
    "Ceil": {1: "consumed_inputs", 6: ""},
    "Celu": {12: "alpha"},
    "CenterCropPad": {18: "axes"},
    "Clip": {1: "consumed_inputs max min", 6: "max min", 11: ""},
    "Col2Im": {18: "dilations pads strides"},
    "Concat": {1: "axis"},
    "Constant": {
        1: "value",
        11: "sparse_value value",
        12: (
            "sparse_value value value_float value_floats value_int value_ints value_string "
            "value_strings"
        ),
    },
    "ConstantOfShape": {9: "value"},
    "Conv": {1: "auto_pad dilations group kernel_shape pads strides"},
    "ConvInteger": {10: "auto_pad dilations group kernel_shape pads strides"},
    "ConvTranspose": {
        1: "auto_pad dilations group kernel_shape output_padding output_shape pads strides",
    },
    "Cos": {7: ""},
    "Cosh": {9: ""},
    "CumProd": {26: "exclusive reverse"},
    "CumSum": {11: "exclusive reverse"},
    "DepthToSpace": {1: "blocksize", 11: "blocksize mode"},
    "DequantizeLinear": {
        10: "",
        13: "axis",
        21: "axis block_size",
        23: "axis block_size output_dtype",
    },
    "Div": {1: "axis broadcast consumed_inputs", 6: "axis broadcast", 7: ""},
    "Dropout": {1: "consumed_inputs is_test ratio", 6: "is_test ratio", 7: "ratio", 12: "seed"},
    "DynamicQuantizeLinear": {11: ""},
    "Einsum": {12: "equation"},
    "Elu": {1: "alpha consumed_inputs", 6: "alpha"},
    "Equal": {1: "axis broadcast", 7: ""},
    "Erf": {9: ""},
    "Exp": {1: "consumed_inputs", 6: ""},
    "Expand": {8: ""},
    "EyeLike": {9: "dtype k"},
    "Flatten": {1: "axis"},
    "Floor": {1: "consumed_inputs", 6: ""},
    "GRU": {
        1: (
            "activation_alpha activation_beta activations clip direction hidden_size "
            "output_sequence"
        ),
        3: (
            "activation_alpha activation_beta activations clip direction hidden_size "
            "linear_before_reset output_sequence"
        ),
        7: (
            "activation_alpha activation_beta activations clip direction hidden_size "
            "linear_before_reset"
        ),
        14: (
            "activation_alpha activation_beta activations clip direction hidden_size layout "
            "linear_before_reset"
        ),
    },
    "Gather": {1: "axis"},
    "GatherElements": {11: "axis"},
    "GatherND": {11: "", 12: "batch_dims"},
    "Gelu": {20: "approximate"},
    "Gemm": {1: "alpha beta broadcast transA transB", 7: "alpha beta transA transB"},
    "GlobalAveragePool": {1: ""},
    "GlobalLpPool": {1: "p"},
    "GlobalMaxPool": {1: ""},
    "Greater": {1: "axis broadcast", 7: ""},
    "GreaterOrEqual": {12: ""},
    "GridSample": {16: "align_corners mode padding_mode"},
    "GroupNormalization": {18: "epsilon num_groups", 21: "epsilon num_groups stash_type"},
    "HardSigmoid": {1: "alpha beta consumed_inputs", 6: "alpha beta"},
    "HardSwish": {14: ""},
    "Hardmax": {1: "axis"},
    "Identity": {1: ""},
    "InstanceNormalization": {1: "consumed_inputs epsilon", 6: "epsilon"},
    "IsInf": {10: "detect_negative detect_positive"},
    "IsNaN": {9: ""},
    "LRN": {1: "alpha beta bias size"},
    "LSTM": {
        1: (
            "activation_alpha activation_beta activations clip direction hidden_size "
            "input_forget output_sequence"
        ),
        7: "activation_alpha activation_beta activations clip direction hidden_size input_forget",
        14: (
            "activation_alpha activation_beta activations clip direction hidden_size "
            "input_forget layout"
        ),
    },
    "LayerNormalization": {17: "axis epsilon stash_type"},
    "LeakyRelu": {1: "alpha consumed_inputs", 6: "alpha"},
    "Less": {1: "axis broadcast", 7: ""},
    "LessOrEqual": {12: ""},
    "Log": {1: "consumed_inputs", 6: ""},
    "LogSoftmax": {1: "axis"},
    "LpNormalization": {1: "axis p"},
    "LpPool": {
        1: "auto_pad kernel_shape p pads strides",
        18: "auto_pad ceil_mode dilations kernel_shape p pads strides",
    },
    "MatMul": {1: ""},
    "MatMulInteger": {10: ""},
    "Max": {1: "consumed_inputs", 6: ""},
    "MaxPool": {
        1: "auto_pad kernel_shape pads strides",
        8: "auto_pad kernel_shape pads storage_order strides",
        10: "auto_pad ceil_mode dilations kernel_shape pads storage_order strides",
    },
    "MaxUnpool": {9: "kernel_shape pads strides"},
    "Mean": {1: "consumed_inputs", 6: ""},
    "MeanVarianceNormalization": {9: "axes"},
    "Min": {1: "consumed_inputs", 6: ""},
    "Mish": {18: ""},
    "Mod": {10: "fmod"},
    "Mul": {1: "axis broadcast consumed_inputs", 6: "axis broadcast", 7: ""},
    "Neg": {1: "consumed_inputs", 6: ""},
    "Not": {1: ""},
    "OneHot": {9: "axis"},
    "Or": {1: "axis broadcast", 7: ""},
    "PRelu": {1: "consumed_inputs", 6: ""},
    "Pad": {1: "mode paddings value", 2: "mode pads value", 11: "mode"},
    "Pow": {1: "axis broadcast", 7: ""},
    "QLinearConv": {10: "auto_pad dilations group kernel_shape pads strides"},
    "QLinearMatMul": {10: ""},
    "QuantizeLinear": {
        10: "",
        13: "axis",
        19: "axis saturate",
        21: "axis block_size output_dtype saturate",
        23: "axis block_size output_dtype precision saturate",
    },
    "RMSNormalization": {23: "axis epsilon stash_type"},
    "RNN": {
        1: (
            "activation_alpha activation_beta activations clip direction hidden_size "
            "output_sequence"
        ),
        7: "activation_alpha activation_beta activations clip direction hidden_size",
        14: "activation_alpha activation_beta activations clip direction hidden_size layout",
    },
    "Range": {11: "", 27: "stash_type"},
    "Reciprocal": {1: "consumed_inputs", 6: ""},
    "ReduceL1": {1: "axes keepdims", 18: "keepdims noop_with_empty_axes"},
    "ReduceL2": {1: "axes keepdims", 18: "keepdims noop_with_empty_axes"},
    "ReduceLogSum": {1: "axes keepdims", 18: "keepdims noop_with_empty_axes"},
    "ReduceLogSumExp": {1: "axes keepdims", 18: "keepdims noop_with_empty_axes"},
    "ReduceMax": {1: "axes keepdims", 18: "keepdims noop_with_empty_axes"},
    "ReduceMean": {1: "axes keepdims", 18: "keepdims noop_with_empty_axes"},
    "ReduceMin": {1: "axes keepdims", 18: "keepdims noop_with_empty_axes"},
    "ReduceProd": {1: "axes keepdims", 18: "keepdims noop_with_empty_axes"},
    "ReduceSum": {1: "axes keepdims", 13: "keepdims noop_with_empty_axes"},
    "ReduceSumSquare": {1: "axes keepdims", 18: "keepdims noop_with_empty_axes"},
    "Relu": {1: "consumed_inputs", 6: ""},
    "Reshape": {1: "consumed_inputs shape", 5: "", 14: "allowzero"},
    "Resize": {
        10: "mode",
        11: (
            "coordinate_transformation_mode cubic_coeff_a exclude_outside extrapolation_value "
            "mode nearest_mode"
        ),
        18: (
            "antialias axes coordinate_transformation_mode cubic_coeff_a exclude_outside "
            "extrapolation_value keep_aspect_ratio_policy mode nearest_mode"
        ),
    },
    "ReverseSequence": {10: "batch_axis time_axis"},
    "RoiAlign": {
        10: "mode output_height output_width sampling_ratio spatial_scale",
        16: (
            "coordinate_transformation_mode mode output_height output_width sampling_ratio "
            "spatial_scale"
        ),
    },
    "RotaryEmbedding": {23: "interleaved num_heads rotary_embedding_dim"},
    "Round": {11: ""},
    "ScatterElements": {11: "axis", 16: "axis reduction"},
    "ScatterND": {11: "", 16: "reduction"},
    "Selu": {1: "alpha consumed_inputs gamma", 6: "alpha gamma"},
    "Shape": {1: "", 15: "end start"},
    "Shrink": {9: "bias lambd"},
    "Sigmoid": {1: "consumed_inputs", 6: ""},
    "Sign": {9: ""},
    "Sin": {7: ""},
    "Sinh": {9: ""},
    "Size": {1: ""},
    "Slice": {1: "axes ends starts", 10: ""},
    "Softmax": {1: "axis"},
    "Softplus": {1: ""},
    "Softsign": {1: ""},
    "SpaceToDepth": {1: "blocksize", 28: "blocksize mode"},
    "Split": {1: "axis split", 13: "axis", 18: "axis num_outputs"},
    "Sqrt": {1: "consumed_inputs", 6: ""},
    "Squeeze": {1: "axes", 13: ""},
    "Sub": {1: "axis broadcast consumed_inputs", 6: "axis broadcast", 7: ""},
    "Sum": {1: "consumed_inputs", 6: ""},
    "SwiGLU": {28: "alpha"},
    "Swish": {24: "alpha"},
    "Tan": {7: ""},
    "Tanh": {1: "consumed_inputs", 6: ""},
    "TensorScatter": {24: "axis mode"},
    "ThresholdedRelu": {10: "alpha"},
    "Tile": {1: ""},
    "TopK": {1: "axis k", 10: "axis", 11: "axis largest sorted"},
    "Transpose": {1: "perm"},
    "Trilu": {14: "upper"},
    "Unsqueeze": {1: "axes", 13: ""},
    "Upsample": {1: "height_scale mode width_scale", 7: "mode scales", 9: "mode"},
    "Where": {9: ""},
    "Xor": {1: "axis broadcast", 7: ""},
}
"""Default-domain op type -> {opset the names hold from: the names, space-separated}."""

_MICROSOFT: dict[str, dict[int, str]] = {
    "QGemm": {1: "alpha transA transB"},
    "QLinearAdd": {1: ""},
    "QLinearAveragePool": {
        1: "auto_pad ceil_mode channels_last count_include_pad kernel_shape pads strides"
    },
    "QLinearConcat": {1: "axis"},
    "QLinearGlobalAveragePool": {1: "channels_last"},
    "QLinearLeakyRelu": {1: "alpha"},
    "QLinearMul": {1: ""},
    "QLinearSigmoid": {1: ""},
    "QLinearSoftmax": {1: "axis opset"},
}
"""onnxruntime's ``com.microsoft`` op type -> {1: its names} (onnxruntime's contrib op schemas,
as docs/ContribOperators.md in microsoft/onnxruntime lists them; each has version 1 only, and the
graph's opset, that of the default domain, does not change them)."""

EXTENSIONS: Mapping[str, frozenset[str]] = {
    # `hetsim.frontend.fuse_qdq` makes a QLinearAveragePool of a DQ -> AveragePool -> Q group
    # with the AveragePool's attributes, whose ``dilations`` (from opset 19) onnxruntime's
    # schema lacks; the kernel hands them to that AveragePool, which applies them
    "QLinearAveragePool": frozenset({"dilations"}),
}
"""Op type -> the names hetsim takes at every opset beyond those of the op's schema."""

STRICT_BY_OPSET = frozenset({"Resize"})
"""Op types that take a name only at the opsets of the versions that have it: their kernels read a
newer attribute only from its version on, and would ignore it at an older opset (Resize reads
``antialias``, ``axes`` and ``keep_aspect_ratio_policy`` from opset 18 on, and
``coordinate_transformation_mode`` and the other names of its version 11 from opset 11 on)."""


def _by_opset(names: Mapping[int, str], extra: frozenset[str]) -> dict[int, frozenset[str]]:
    return {since: frozenset(listed.split()) | extra for since, listed in names.items()}


ATTRIBUTES: Mapping[str, Mapping[int, frozenset[str]]] = {
    op_type: _by_opset(names, EXTENSIONS.get(op_type, frozenset()))
    for op_type, names in {**_ONNX, **_MICROSOFT}.items()
}
"""Op type -> {opset the names hold from: the attribute names the op takes from that opset on}."""
