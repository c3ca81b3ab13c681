"""The element types each input of each default-domain op type takes, by opset: ONNX's type
constraints.

Without them numpy's type rules decided: a Sqrt of int32 came back float64 while its shape rule
(and so every byte count and cost) kept int32, an And of int32 and an Add of bools ran. `register`
checks each present input's dtype against `INPUT_TYPES` before the shape rule runs
(`types_check`), so such an op is a ModelError that names the input and what it takes.

The table is onnx's schemas (``onnx.defs.get_all_schemas_with_history``) from opset 1 to 28,
`hetsim.frontend.onnx.NEWEST_OPSET`, read by `schema_table`: for each version where an input's
types change, the inputs' formal names and the types numpy holds (bfloat16, the float8, int4 and
string types have no numpy dtype: hetsim refuses them when a model is read). A variadic input's
types hold for every input from it on. ``tests/kernels/test_input_types.py`` checks the table
against the installed onnx; this module is data and plain functions only: the core package
imports without onnx. The ``com.microsoft`` ops are not in it: their kernels check their own.

Types are written with four words for whole families: ``float`` (float16, float32, float64),
``int`` (int8 to int64), ``uint`` (uint8 to uint64) and ``complex`` (complex64, complex128).

Examples
--------
>>> sorted(INPUT_TYPES["Sqrt"][1][0][1])  # every version (13 adds bfloat16: numpy has none)
['float16', 'float32', 'float64']
>>> INPUT_TYPES["And"][1]
(('A', frozenset({'bool'})), ('B', frozenset({'bool'})))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hetsim.ir import Op
from hetsim.kernels.checks import op_error
from hetsim.kernels.meta import Meta
from hetsim.kernels.schema_checks import at_opset, from_opset_1

__all__ = [
    "EXTENSIONS",
    "FAMILIES",
    "INPUT_TYPES",
    "TypesCheck",
    "decode",
    "encode",
    "schema_table",
    "types_check",
]

FAMILIES: Mapping[str, tuple[str, ...]] = {
    "float": ("float16", "float32", "float64"),
    "int": ("int8", "int16", "int32", "int64"),
    "uint": ("uint8", "uint16", "uint32", "uint64"),
    "complex": ("complex64", "complex128"),
}
"""The words the table writes for whole families of numpy dtypes."""

_NUMPY_OF_ONNX = {
    "tensor(float)": "float32",
    "tensor(double)": "float64",
    "tensor(float16)": "float16",
    "tensor(bool)": "bool",
    "tensor(complex64)": "complex64",
    "tensor(complex128)": "complex128",
    **{f"tensor({n})": n for n in (*FAMILIES["int"], *FAMILIES["uint"])},
}
"""ONNX type strings -> the numpy dtype name of each that numpy holds."""


def encode(allowed: frozenset[str]) -> str:
    """`allowed` dtype names as the table writes them: a family's word where it is whole.

    >>> encode(frozenset({"float16", "float32", "float64", "int64", "bool"}))
    'float int64 bool'
    """
    words = []
    rest = set(allowed)
    for word, members in FAMILIES.items():
        if rest.issuperset(members):
            words.append(word)
            rest.difference_update(members)
    order = [n for members in FAMILIES.values() for n in members] + ["bool"]
    return " ".join([*words, *sorted(rest, key=order.index)])


def decode(text: str) -> frozenset[str]:
    """The dtype names `text` (`encode`'s form) stands for.

    >>> sorted(decode("float int64"))
    ['float16', 'float32', 'float64', 'int64']
    """
    return frozenset(n for word in text.split() for n in FAMILIES.get(word, (word,)))


def schema_table(
    defs: Any, op_types: Sequence[str], newest: int
) -> dict[str, dict[int, tuple[tuple[str, frozenset[str]], ...]]]:
    """For each of `op_types` (default domain), each version up to opset `newest` where its
    inputs' types change: (formal name, numpy dtype names) per formal input. `defs` is
    ``onnx.defs``, passed in so that this module does not import onnx."""
    versions: dict[str, list[Any]] = {}
    for schema in defs.get_all_schemas_with_history():
        if schema.domain == "" and schema.name in op_types and schema.since_version <= newest:
            versions.setdefault(schema.name, []).append(schema)
    table = {}
    for op_type in op_types:
        kept: dict[int, tuple[tuple[str, frozenset[str]], ...]] = {}
        for schema in sorted(versions[op_type], key=lambda s: s.since_version):
            constraints = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
            inputs = tuple(
                (
                    formal.name,
                    frozenset(
                        _NUMPY_OF_ONNX[t]
                        for t in constraints.get(formal.type_str, [formal.type_str])
                        if t in _NUMPY_OF_ONNX
                    ),
                )
                for formal in schema.inputs
            )
            if not kept or kept[max(kept)] != inputs:
                kept[schema.since_version] = inputs
        table[op_type] = kept
    return table


TypesCheck = Callable[[Op, int, Sequence[Meta | None]], None]
"""``check(op, opset, inputs)``: a ModelError unless each present input's dtype is one the op's
type takes there."""


def types_check(op_type: str) -> TypesCheck | None:
    """The check of an op's input dtypes against `INPUT_TYPES` at the op's opset (its version
    there; below its first version, which hetsim does not refuse, the first's); None for a type
    the table lacks (``com.microsoft``'s)."""
    by_opset = INPUT_TYPES.get(op_type)
    if by_opset is None:
        return None
    formals_at = at_opset(from_opset_1(by_opset))

    def check(op: Op, opset: int, inputs: Sequence[Meta | None]) -> None:
        formals = formals_at(opset)
        for index, meta in enumerate(inputs):
            if meta is None or not formals:
                continue
            name, allowed = formals[min(index, len(formals) - 1)]  # variadic: the last holds on
            if meta.dtype.name not in allowed:
                listed = _listed(allowed)
                raise op_error(op, f"expected input {index} ({name}) of {listed}", meta.dtype)

    return check


def _listed(allowed: frozenset[str]) -> str:
    """`allowed` in words: ``float16/32/64, int64 or bool``."""
    short = {"float": "float16/32/64", "int": "int8/16/32/64", "uint": "uint8/16/32/64",
             "complex": "complex64/128"}  # fmt: skip
    words = [short.get(w, w) for w in encode(allowed).split()]
    if not words:
        return "no type numpy holds"
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


_ONNX: dict[str, dict[int, tuple[tuple[str, str], ...]]] = {
    "Abs": {
        1: (("X", "float"),),
        6: (("X", "float int uint"),),
    },
    "Acos": {
        7: (("input", "float"),),
    },
    "Acosh": {
        9: (("input", "float"),),
    },
    "Add": {
        1: (("A", "float"), ("B", "float")),
        6: (("A", "float int32 int64 uint32 uint64"), ("B", "float int32 int64 uint32 uint64")),
        14: (("A", "float int uint"), ("B", "float int uint")),
    },
    "AffineGrid": {
        20: (("theta", "float"), ("size", "int64")),
    },
    "And": {
        1: (("A", "bool"), ("B", "bool")),
    },
    "ArgMax": {
        1: (("data", "float int uint"),),
    },
    "ArgMin": {
        1: (("data", "float int uint"),),
    },
    "Asin": {
        7: (("input", "float"),),
    },
    "Asinh": {
        9: (("input", "float"),),
    },
    "Atan": {
        7: (("input", "float"),),
    },
    "Atanh": {
        9: (("input", "float"),),
    },
    "Attention": {
        23: (
            ("Q", "float"),
            ("K", "float"),
            ("V", "float"),
            ("attn_mask", "float int uint bool"),
            ("past_key", "float"),
            ("past_value", "float"),
        ),
        24: (
            ("Q", "float"),
            ("K", "float"),
            ("V", "float"),
            ("attn_mask", "float int uint bool"),
            ("past_key", "float"),
            ("past_value", "float"),
            ("nonpad_kv_seqlen", "int64"),
        ),
    },
    "AveragePool": {
        1: (("X", "float"),),
    },
    "BatchNormalization": {
        1: (
            ("X", "float"),
            ("scale", "float"),
            ("B", "float"),
            ("mean", "float"),
            ("var", "float"),
        ),
        14: (
            ("X", "float"),
            ("scale", "float"),
            ("B", "float"),
            ("input_mean", "float"),
            ("input_var", "float"),
        ),
    },
    "BitShift": {
        11: (("X", "uint"), ("Y", "uint")),
        28: (("X", "int uint"), ("Y", "int uint")),
    },
    "BitwiseAnd": {
        18: (("A", "int uint"), ("B", "int uint")),
    },
    "BitwiseNot": {
        18: (("X", "int uint"),),
    },
    "BitwiseOr": {
        18: (("A", "int uint"), ("B", "int uint")),
    },
    "BitwiseXor": {
        18: (("A", "int uint"), ("B", "int uint")),
    },
    "Cast": {
        1: (("input", "float int uint bool"),),
    },
    "CastLike": {
        15: (("input", "float int uint bool"), ("target_type", "float int uint bool")),
    },
    "Ceil": {
        1: (("X", "float"),),
    },
    "Celu": {
        12: (("X", "float32"),),
        28: (("X", "float"),),
    },
    "CenterCropPad": {
        18: (("input_data", "float int uint complex bool"), ("shape", "int32 int64")),
    },
    "Clip": {
        1: (("input", "float"),),
        11: (("input", "float"), ("min", "float"), ("max", "float")),
        12: (("input", "float int uint"), ("min", "float int uint"), ("max", "float int uint")),
    },
    "Col2Im": {
        18: (
            ("input", "float int uint complex bool"),
            ("image_shape", "int64"),
            ("block_shape", "int64"),
        ),
    },
    "Concat": {
        1: (("inputs", "float"),),
        4: (("inputs", "float int uint complex bool"),),
    },
    "Constant": {
        1: (),
    },
    "ConstantOfShape": {
        9: (("input", "int64"),),
    },
    "Conv": {
        1: (("X", "float"), ("W", "float"), ("B", "float")),
    },
    "ConvInteger": {
        10: (
            ("x", "int8 uint8"),
            ("w", "int8 uint8"),
            ("x_zero_point", "int8 uint8"),
            ("w_zero_point", "int8 uint8"),
        ),
    },
    "ConvTranspose": {
        1: (("X", "float"), ("W", "float"), ("B", "float")),
    },
    "Cos": {
        7: (("input", "float"),),
    },
    "Cosh": {
        9: (("input", "float"),),
    },
    "CumProd": {
        26: (("x", "float int32 int64 uint32 uint64"), ("axis", "int32 int64")),
    },
    "CumSum": {
        11: (("x", "float32 float64 int32 int64 uint32 uint64"), ("axis", "int32 int64")),
        14: (("x", "float int32 int64 uint32 uint64"), ("axis", "int32 int64")),
    },
    "DepthToSpace": {
        1: (("input", "float int uint complex bool"),),
    },
    "DequantizeLinear": {
        10: (
            ("x", "int8 int32 uint8"),
            ("x_scale", "float32"),
            ("x_zero_point", "int8 int32 uint8"),
        ),
        19: (
            ("x", "int8 int32 uint8"),
            ("x_scale", "float16 float32"),
            ("x_zero_point", "int8 int32 uint8"),
        ),
        21: (
            ("x", "int8 int16 int32 uint8 uint16"),
            ("x_scale", "float16 float32"),
            ("x_zero_point", "int8 int16 int32 uint8 uint16"),
        ),
    },
    "Div": {
        1: (("A", "float"), ("B", "float")),
        6: (("A", "float int32 int64 uint32 uint64"), ("B", "float int32 int64 uint32 uint64")),
        14: (("A", "float int uint"), ("B", "float int uint")),
    },
    "Dropout": {
        1: (("data", "float"),),
        12: (("data", "float"), ("ratio", "float"), ("training_mode", "bool")),
    },
    "DynamicQuantizeLinear": {
        11: (("x", "float32"),),
    },
    "Einsum": {
        12: (("Inputs", "float int uint"),),
    },
    "Elu": {
        1: (("X", "float"),),
    },
    "Equal": {
        1: (("A", "int32 int64 bool"), ("B", "int32 int64 bool")),
        11: (("A", "float int uint bool"), ("B", "float int uint bool")),
    },
    "Erf": {
        9: (("input", "float int uint"),),
        13: (("input", "float"),),
    },
    "Exp": {
        1: (("input", "float"),),
    },
    "Expand": {
        8: (("input", "float int uint complex bool"), ("shape", "int64")),
    },
    "EyeLike": {
        9: (("input", "float int uint bool"),),
    },
    "Flatten": {
        1: (("input", "float"),),
        9: (("input", "float int uint complex bool"),),
    },
    "Floor": {
        1: (("X", "float"),),
    },
    "GRU": {
        1: (
            ("X", "float"),
            ("W", "float"),
            ("R", "float"),
            ("B", "float"),
            ("sequence_lens", "int32"),
            ("initial_h", "float"),
        ),
    },
    "Gather": {
        1: (("data", "float int uint complex bool"), ("indices", "int32 int64")),
    },
    "GatherElements": {
        11: (("data", "float int uint complex bool"), ("indices", "int32 int64")),
    },
    "GatherND": {
        11: (("data", "float int uint complex bool"), ("indices", "int64")),
    },
    "Gelu": {
        20: (("X", "float"),),
    },
    "Gemm": {
        1: (("A", "float"), ("B", "float"), ("C", "float")),
        9: (
            ("A", "float int32 int64 uint32 uint64"),
            ("B", "float int32 int64 uint32 uint64"),
            ("C", "float int32 int64 uint32 uint64"),
        ),
    },
    "GlobalAveragePool": {
        1: (("X", "float"),),
    },
    "GlobalLpPool": {
        1: (("X", "float"),),
    },
    "GlobalMaxPool": {
        1: (("X", "float"),),
    },
    "Greater": {
        1: (("A", "float"), ("B", "float")),
        9: (("A", "float int uint"), ("B", "float int uint")),
    },
    "GreaterOrEqual": {
        12: (("A", "float int uint"), ("B", "float int uint")),
    },
    "GridSample": {
        16: (("X", "float int uint complex bool"), ("grid", "float")),
    },
    "GroupNormalization": {
        18: (("X", "float"), ("scale", "float"), ("bias", "float")),
    },
    "HardSigmoid": {
        1: (("X", "float"),),
    },
    "HardSwish": {
        14: (("X", "float"),),
    },
    "Hardmax": {
        1: (("input", "float"),),
    },
    "Identity": {
        1: (("input", "float int uint complex bool"),),
    },
    "InstanceNormalization": {
        1: (("input", "float"), ("scale", "float"), ("B", "float")),
    },
    "IsInf": {
        10: (("X", "float32 float64"),),
        20: (("X", "float"),),
    },
    "IsNaN": {
        9: (("X", "float"),),
    },
    "LRN": {
        1: (("X", "float"),),
    },
    "LSTM": {
        1: (
            ("X", "float"),
            ("W", "float"),
            ("R", "float"),
            ("B", "float"),
            ("sequence_lens", "int32"),
            ("initial_h", "float"),
            ("initial_c", "float"),
            ("P", "float"),
        ),
    },
    "LayerNormalization": {
        17: (("X", "float"), ("Scale", "float"), ("B", "float")),
    },
    "LeakyRelu": {
        1: (("X", "float"),),
    },
    "Less": {
        1: (("A", "float"), ("B", "float")),
        9: (("A", "float int uint"), ("B", "float int uint")),
    },
    "LessOrEqual": {
        12: (("A", "float int uint"), ("B", "float int uint")),
    },
    "Log": {
        1: (("input", "float"),),
    },
    "LogSoftmax": {
        1: (("input", "float"),),
    },
    "LpNormalization": {
        1: (("input", "float"),),
    },
    "LpPool": {
        1: (("X", "float"),),
    },
    "MatMul": {
        1: (("A", "float"), ("B", "float")),
        9: (("A", "float int32 int64 uint32 uint64"), ("B", "float int32 int64 uint32 uint64")),
    },
    "MatMulInteger": {
        10: (
            ("A", "int8 uint8"),
            ("B", "int8 uint8"),
            ("a_zero_point", "int8 uint8"),
            ("b_zero_point", "int8 uint8"),
        ),
    },
    "Max": {
        1: (("data_0", "float"),),
        12: (("data_0", "float int uint"),),
    },
    "MaxPool": {
        1: (("X", "float"),),
        12: (("X", "float int8 uint8"),),
    },
    "MaxUnpool": {
        9: (("X", "float"), ("I", "int64"), ("output_shape", "int64")),
    },
    "Mean": {
        1: (("data_0", "float"),),
    },
    "MeanVarianceNormalization": {
        9: (("X", "float"),),
    },
    "Min": {
        1: (("data_0", "float"),),
        12: (("data_0", "float int uint"),),
    },
    "Mish": {
        18: (("X", "float"),),
    },
    "Mod": {
        10: (("A", "float int uint"), ("B", "float int uint")),
    },
    "Mul": {
        1: (("A", "float"), ("B", "float")),
        6: (("A", "float int32 int64 uint32 uint64"), ("B", "float int32 int64 uint32 uint64")),
        14: (("A", "float int uint"), ("B", "float int uint")),
    },
    "Neg": {
        1: (("X", "float"),),
        6: (("X", "float int"),),
    },
    "Not": {
        1: (("X", "bool"),),
    },
    "OneHot": {
        9: (
            ("indices", "float int uint"),
            ("depth", "float int uint"),
            ("values", "float int uint complex bool"),
        ),
    },
    "Or": {
        1: (("A", "bool"), ("B", "bool")),
    },
    "PRelu": {
        1: (("X", "float"), ("slope", "float")),
        9: (("X", "float int32 int64 uint32 uint64"), ("slope", "float int32 int64 uint32 uint64")),
    },
    "Pad": {
        1: (("data", "float"),),
        11: (("data", "float int uint"), ("pads", "int64"), ("constant_value", "float int uint")),
        13: (
            ("data", "float int uint complex bool"),
            ("pads", "int64"),
            ("constant_value", "float int uint complex bool"),
        ),
        18: (
            ("data", "float int uint complex bool"),
            ("pads", "int64"),
            ("constant_value", "float int uint complex bool"),
            ("axes", "int32 int64"),
        ),
    },
    "Pow": {
        1: (("X", "float"), ("Y", "float")),
        12: (("X", "float int32 int64"), ("Y", "float int uint")),
    },
    "QLinearConv": {
        10: (
            ("x", "int8 uint8"),
            ("x_scale", "float32"),
            ("x_zero_point", "int8 uint8"),
            ("w", "int8 uint8"),
            ("w_scale", "float32"),
            ("w_zero_point", "int8 uint8"),
            ("y_scale", "float32"),
            ("y_zero_point", "int8 uint8"),
            ("B", "int32"),
        ),
    },
    "QLinearMatMul": {
        10: (
            ("a", "int8 uint8"),
            ("a_scale", "float32"),
            ("a_zero_point", "int8 uint8"),
            ("b", "int8 uint8"),
            ("b_scale", "float32"),
            ("b_zero_point", "int8 uint8"),
            ("y_scale", "float32"),
            ("y_zero_point", "int8 uint8"),
        ),
        21: (
            ("a", "int8 uint8"),
            ("a_scale", "float16 float32"),
            ("a_zero_point", "int8 uint8"),
            ("b", "int8 uint8"),
            ("b_scale", "float16 float32"),
            ("b_zero_point", "int8 uint8"),
            ("y_scale", "float16 float32"),
            ("y_zero_point", "int8 uint8"),
        ),
    },
    "QuantizeLinear": {
        10: (("x", "float32 int32"), ("y_scale", "float32"), ("y_zero_point", "int8 uint8")),
        19: (
            ("x", "float16 float32 int32"),
            ("y_scale", "float16 float32 int32"),
            ("y_zero_point", "int8 uint8"),
        ),
        21: (
            ("x", "float16 float32 int32"),
            ("y_scale", "float16 float32 int32"),
            ("y_zero_point", "int8 int16 uint8 uint16"),
        ),
    },
    "RMSNormalization": {
        23: (("X", "float"), ("scale", "float")),
    },
    "RNN": {
        1: (
            ("X", "float"),
            ("W", "float"),
            ("R", "float"),
            ("B", "float"),
            ("sequence_lens", "int32"),
            ("initial_h", "float"),
        ),
    },
    "Range": {
        11: (
            ("start", "float32 float64 int16 int32 int64"),
            ("limit", "float32 float64 int16 int32 int64"),
            ("delta", "float32 float64 int16 int32 int64"),
        ),
        27: (
            ("start", "float int16 int32 int64"),
            ("limit", "float int16 int32 int64"),
            ("delta", "float int16 int32 int64"),
        ),
    },
    "Reciprocal": {
        1: (("X", "float"),),
    },
    "ReduceL1": {
        1: (("data", "float int32 int64 uint32 uint64"),),
        18: (("data", "float int32 int64 uint32 uint64"), ("axes", "int64")),
    },
    "ReduceL2": {
        1: (("data", "float int32 int64 uint32 uint64"),),
        18: (("data", "float int32 int64 uint32 uint64"), ("axes", "int64")),
    },
    "ReduceLogSum": {
        1: (("data", "float int32 int64 uint32 uint64"),),
        18: (("data", "float int32 int64 uint32 uint64"), ("axes", "int64")),
        28: (("data", "float"), ("axes", "int64")),
    },
    "ReduceLogSumExp": {
        1: (("data", "float int32 int64 uint32 uint64"),),
        18: (("data", "float int32 int64 uint32 uint64"), ("axes", "int64")),
        28: (("data", "float"), ("axes", "int64")),
    },
    "ReduceMax": {
        1: (("data", "float int32 int64 uint32 uint64"),),
        12: (("data", "float int8 int32 int64 uint8 uint32 uint64"),),
        18: (("data", "float int8 int32 int64 uint8 uint32 uint64"), ("axes", "int64")),
        20: (("data", "float int8 int32 int64 uint8 uint32 uint64 bool"), ("axes", "int64")),
    },
    "ReduceMean": {
        1: (("data", "float int32 int64 uint32 uint64"),),
        18: (("data", "float int32 int64 uint32 uint64"), ("axes", "int64")),
    },
    "ReduceMin": {
        1: (("data", "float int32 int64 uint32 uint64"),),
        12: (("data", "float int8 int32 int64 uint8 uint32 uint64"),),
        18: (("data", "float int8 int32 int64 uint8 uint32 uint64"), ("axes", "int64")),
        20: (("data", "float int8 int32 int64 uint8 uint32 uint64 bool"), ("axes", "int64")),
    },
    "ReduceProd": {
        1: (("data", "float int32 int64 uint32 uint64"),),
        18: (("data", "float int32 int64 uint32 uint64"), ("axes", "int64")),
    },
    "ReduceSum": {
        1: (("data", "float int32 int64 uint32 uint64"),),
        13: (("data", "float int32 int64 uint32 uint64"), ("axes", "int64")),
    },
    "ReduceSumSquare": {
        1: (("data", "float int32 int64 uint32 uint64"),),
        18: (("data", "float int32 int64 uint32 uint64"), ("axes", "int64")),
    },
    "Relu": {
        1: (("X", "float"),),
        14: (("X", "float int"),),
    },
    "Reshape": {
        1: (("data", "float"),),
        5: (("data", "float int uint complex bool"), ("shape", "int64")),
    },
    "Resize": {
        10: (("X", "float int uint complex bool"), ("scales", "float32")),
        11: (
            ("X", "float int uint complex bool"),
            ("roi", "float"),
            ("scales", "float32"),
            ("sizes", "int64"),
        ),
    },
    "ReverseSequence": {
        10: (("input", "float int uint complex bool"), ("sequence_lens", "int64")),
    },
    "RoiAlign": {
        10: (("X", "float"), ("rois", "float"), ("batch_indices", "int64")),
    },
    "RotaryEmbedding": {
        23: (
            ("X", "float16 float32"),
            ("cos_cache", "float16 float32"),
            ("sin_cache", "float16 float32"),
            ("position_ids", "int64"),
        ),
    },
    "Round": {
        11: (("X", "float"),),
    },
    "ScatterElements": {
        11: (
            ("data", "float int uint complex bool"),
            ("indices", "int32 int64"),
            ("updates", "float int uint complex bool"),
        ),
    },
    "ScatterND": {
        11: (
            ("data", "float int uint complex bool"),
            ("indices", "int64"),
            ("updates", "float int uint complex bool"),
        ),
    },
    "Selu": {
        1: (("X", "float"),),
    },
    "Shape": {
        1: (("data", "float int uint complex bool"),),
    },
    "Shrink": {
        9: (("input", "float int uint"),),
    },
    "Sigmoid": {
        1: (("X", "float"),),
    },
    "Sign": {
        9: (("input", "float int uint"),),
    },
    "Sin": {
        7: (("input", "float"),),
    },
    "Sinh": {
        9: (("input", "float"),),
    },
    "Size": {
        1: (("data", "float int uint complex bool"),),
    },
    "Slice": {
        1: (("data", "float int uint complex bool"),),
        10: (
            ("data", "float int uint complex bool"),
            ("starts", "int32 int64"),
            ("ends", "int32 int64"),
            ("axes", "int32 int64"),
            ("steps", "int32 int64"),
        ),
    },
    "Softmax": {
        1: (("input", "float"),),
    },
    "Softplus": {
        1: (("X", "float"),),
    },
    "Softsign": {
        1: (("input", "float"),),
    },
    "SpaceToDepth": {
        1: (("input", "float int uint complex bool"),),
    },
    "Split": {
        1: (("input", "float"), ("split", "float")),
        2: (("input", "float int uint complex bool"),),
        13: (("input", "float int uint complex bool"), ("split", "int64")),
    },
    "Sqrt": {
        1: (("X", "float"),),
    },
    "Squeeze": {
        1: (("data", "float int uint complex bool"),),
        13: (("data", "float int uint complex bool"), ("axes", "int64")),
    },
    "Sub": {
        1: (("A", "float"), ("B", "float")),
        6: (("A", "float int32 int64 uint32 uint64"), ("B", "float int32 int64 uint32 uint64")),
        14: (("A", "float int uint"), ("B", "float int uint")),
    },
    "Sum": {
        1: (("data_0", "float"),),
    },
    "SwiGLU": {
        28: (("A", "float"), ("B", "float")),
    },
    "Swish": {
        24: (("X", "float"),),
    },
    "Tan": {
        7: (("input", "float"),),
    },
    "Tanh": {
        1: (("input", "float"),),
    },
    "TensorScatter": {
        24: (
            ("past_cache", "float int uint complex bool"),
            ("update", "float int uint complex bool"),
            ("write_indices", "int64"),
        ),
    },
    "ThresholdedRelu": {
        10: (("X", "float"),),
    },
    "Tile": {
        1: (("input", "float"), ("tiles", "float"), ("axis", "float")),
        6: (("input", "float int uint complex bool"), ("repeats", "int64")),
    },
    "TopK": {
        1: (("X", "float"),),
        10: (("X", "float"), ("K", "int64")),
        11: (("X", "float int uint"), ("K", "int64")),
    },
    "Transpose": {
        1: (("data", "float int uint complex bool"),),
    },
    "Trilu": {
        14: (("input", "float int uint complex bool"), ("k", "int64")),
    },
    "Unsqueeze": {
        1: (("data", "float int uint complex bool"),),
        13: (("data", "float int uint complex bool"), ("axes", "int64")),
    },
    "Upsample": {
        1: (("X", "float int32 int64 bool"),),
        7: (("X", "float int uint complex bool"),),
        9: (("X", "float int uint complex bool"), ("scales", "float32")),
    },
    "Where": {
        9: (
            ("condition", "bool"),
            ("X", "float int uint complex bool"),
            ("Y", "float int uint complex bool"),
        ),
    },
    "Xor": {
        1: (("A", "bool"), ("B", "bool")),
    },
}

EXTENSIONS: Mapping[tuple[str, int], Mapping[int, str]] = {
    # Split-1's schema types its sizes T, the data's float types; every later version takes them
    # as int64, and so does hetsim's kernel (sizes of floats are refused, not truncated)
    ("Split", 1): {1: "int32 int64"},
}
"""(op type, version) -> input position -> the types hetsim takes there beyond its schema."""

INPUT_TYPES: Mapping[str, Mapping[int, tuple[tuple[str, frozenset[str]], ...]]] = {
    op_type: {
        since: tuple(
            (name, decode(f"{text} {EXTENSIONS.get((op_type, since), {}).get(index, '')}"))
            for index, (name, text) in enumerate(inputs)
        )
        for since, inputs in by_opset.items()
    }
    for op_type, by_opset in _ONNX.items()
}
"""Op type -> opset each set holds from -> (formal input name, dtype names) per formal input:
the schemas' (`_ONNX`) and `EXTENSIONS`."""
