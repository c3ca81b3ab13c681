"""Inputs and attributes the ONNX spec forbids, which shape rules (and a kernel, where a value is
known only when it runs) refuse with a message naming the op: each had passed silently, or failed
inside numpy, before. onnxruntime refuses every one of them too."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import OpError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import OPS, Meta, execute

F32 = np.dtype("float32")


def _op(op_type: str, n_inputs: int, n_outputs: int = 1, **attrs: Any) -> Op:
    outputs = tuple(f"y{i}" for i in range(n_outputs))
    return Op(op_type, "n0", tuple(f"x{i}" for i in range(n_inputs)), outputs, attrs)


def _meta(*shape: int) -> Meta:
    return Meta(shape, F32)


def _const(value: Any, dtype: str = "int64") -> Meta:
    return Meta.of(np.array(value, dtype))


def _refuses(message: str) -> Any:
    return pytest.raises(OpError, match=f"^{re.escape(message)}$")


def _infer(op: Op, opset: int, inputs: list[Meta | None]) -> list[Meta]:
    return OPS[op.type].infer(op, opset, inputs)


@pytest.mark.parametrize(
    ("k", "shown"), [(2, "[]"), ([[2], [1]], "[2, 1]"), (np.zeros(0, np.int64), "[0]")]
)
def test_top_k_refuses_a_k_not_of_shape_1(k: Any, shown: str) -> None:
    with _refuses(f"op n0 (TopK): expected input 1 (K) of shape [1], got shape {shown}"):
        _infer(_op("TopK", 2, 2), 11, [_meta(3, 4), _const(k)])


def test_top_k_refuses_a_k_of_unknown_value_by_its_shape() -> None:
    k = Meta((), np.dtype("int64"))  # a graph input: its shape is known before its value
    with _refuses("op n0 (TopK): expected input 1 (K) of shape [1], got shape []"):
        _infer(_op("TopK", 2, 2), 11, [_meta(3, 4), k])


def test_top_k_refuses_a_sorted_flag_other_than_0_or_1() -> None:
    with _refuses("op n0 (TopK): expected sorted 0 or 1, got -100"):
        _infer(_op("TopK", 2, 2, sorted=-100), 11, [_meta(3, 4), _const([2])])


def test_one_hot_refuses_scalar_indices() -> None:
    inputs = [_const(1), _const(4), _const([0.0, 1.0], "float32")]
    with _refuses("op n0 (OneHot): expected indices of rank >= 1, got shape []"):
        _infer(_op("OneHot", 3), 11, inputs)


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize(("opset", "axis"), [(13, -1), (11, 1)])
def test_softmaxes_refuse_a_scalar(op_type: str, opset: int, axis: int) -> None:
    expected = f"op n0 ({op_type}): expected an input of rank >= 1 (a scalar has no axis {axis})"
    with _refuses(f"{expected}, got shape []"):
        _infer(_op(op_type, 1), opset, [_meta()])


@pytest.mark.parametrize(
    ("index", "name", "value"),
    [(1, "ratio", _const([0.5, 0.5], "float32")), (2, "training_mode", _const([False], "bool"))],
)
def test_dropout_refuses_a_ratio_or_training_mode_not_a_scalar(
    index: int, name: str, value: Meta
) -> None:
    inputs: list[Meta | None] = [_meta(3, 4), _const(0.5, "float32"), None]
    inputs[index] = value
    shape = value.shape
    with _refuses(f"op n0 (Dropout): expected input {index} ({name}) a scalar, got shape {shape}"):
        _infer(_op("Dropout", 3), 13, inputs)


def test_constant_of_shape_refuses_a_negative_dim() -> None:
    with _refuses("op n0 (ConstantOfShape): expected a shape of non-negative dims, got [2, -3]"):
        _infer(_op("ConstantOfShape", 1), 21, [_const([2, -3])])


def test_constant_of_shape_kernel_refuses_a_negative_dim() -> None:
    kernel = OPS["ConstantOfShape"].compile(_op("ConstantOfShape", 1), 21)
    with _refuses("op n0 (ConstantOfShape): expected a shape of non-negative dims, got [-1]"):
        kernel([np.array([-1], np.int64)])


def test_pad_refuses_a_constant_value_of_two_elements() -> None:
    inputs = [_meta(3, 4), _const([1, 1, 1, 1]), _const([1.0, 2.0], "float32")]
    with _refuses("op n0 (Pad): expected input 2 (constant_value) of one element, got shape [2]"):
        _infer(_op("Pad", 3), 13, inputs)


def test_pad_takes_a_constant_value_of_shape_1_as_onnxruntime_does() -> None:
    x = np.arange(2, dtype=np.float32).reshape(1, 2)
    op = _op("Pad", 3)
    inputs = [Meta.of(x), _const([0, 1, 0, 0]), _const([7.0], "float32")]
    assert _infer(op, 13, inputs)[0].shape == (1, 3)
    y = OPS["Pad"].compile(op, 13)([x, np.array([0, 1, 0, 0]), np.array([7.0], np.float32)])[0]
    assert y.tolist() == [[7.0, 0.0, 1.0]]


def test_slice_refuses_attributes_of_different_lengths() -> None:
    op = _op("Slice", 1, starts=[0], ends=[1], axes=[0, 1])
    expected = "op n0 (Slice): expected starts, ends and axes of one length, got lengths 1, 1 and 2"
    with _refuses(expected):
        _infer(op, 9, [_meta(3, 4)])


def test_slice_refuses_inputs_of_different_lengths() -> None:
    inputs = [_meta(3, 4), _const([0]), _const([1]), _const([0]), _const([1, 1])]
    expected = (
        "op n0 (Slice): expected starts, ends, axes and steps of one length, "
        "got lengths 1, 1, 1 and 2"
    )
    with _refuses(expected):
        _infer(_op("Slice", 5), 13, inputs)


def test_slice_refuses_starts_longer_than_ends() -> None:
    inputs = [_meta(3, 4), _const([0, 0]), _const([1])]
    with _refuses("op n0 (Slice): expected starts and ends of one length, got lengths 2 and 1"):
        _infer(_op("Slice", 3), 13, inputs)


@pytest.mark.parametrize(
    ("shape", "opset"), [((), 9), ((), 13), ((3, 4), 9), ((3, 4), 13)], ids=str
)
def test_slice_refuses_more_starts_than_axes_with_axes_left_out(
    shape: tuple[int, ...], opset: int
) -> None:
    # the default axes are X's first len(starts): an IndexError in the rule had been wrapped
    starts = [0] * (len(shape) + 1)
    if opset < 10:
        op, inputs = _op("Slice", 1, starts=starts, ends=starts), [_meta(*shape)]
    else:
        op, inputs = _op("Slice", 3), [_meta(*shape), _const(starts), _const(starts)]
    rank = len(shape)
    expected = (
        f"op n0 (Slice): expected at most {rank} starts (no axes given: X's first ones, rank "
        f"{rank}), got {rank + 1}"
    )
    with _refuses(expected):
        _infer(op, opset, inputs)


def test_reshape_refuses_a_zero_past_the_input_rank() -> None:
    expected = (
        "op n0 (Reshape): expected a 0 (copy the input's dim) only within the input's rank 2, "
        "got [0, 0, 0]"
    )
    with _refuses(expected):
        _infer(_op("Reshape", 2), 14, [_meta(2, 3), _const([0, 0, 0])])


def test_reshape_honours_a_zero_past_the_input_rank_with_allowzero() -> None:
    op = _op("Reshape", 2, allowzero=1)
    assert _infer(op, 14, [_meta(2, 0), _const([0, 0, 0])])[0].shape == (0, 0, 0)


@pytest.mark.parametrize(("lengths", "got"), [([-1, 2, -3], -3), ([5, 2, 3], 5)])
def test_reverse_sequence_refuses_constant_lengths_out_of_range(
    lengths: list[int], got: int
) -> None:
    op = _op("ReverseSequence", 2, batch_axis=1, time_axis=0)
    expected = f"op n0 (ReverseSequence): expected sequence_lens in [0, 4] (time axis 0), got {got}"
    with _refuses(expected):
        _infer(op, 10, [_meta(4, 3), _const(lengths)])


def test_reverse_sequence_kernel_refuses_lengths_out_of_range() -> None:
    op = _op("ReverseSequence", 2, batch_axis=0, time_axis=1)
    kernel = OPS["ReverseSequence"].compile(op, 10)
    x = np.zeros((3, 4), np.float32)
    expected = "op n0 (ReverseSequence): expected sequence_lens in [0, 4] (time axis 1), got 5"
    with _refuses(expected):
        kernel([x, np.array([4, 5, 0], np.int64)])


@pytest.mark.parametrize(
    ("op_type", "x", "name"),
    [
        ("QuantizeLinear", _meta(4, 6), "y"),
        ("DequantizeLinear", _const(np.zeros((4, 6)), "int8"), "x"),
    ],
)
@pytest.mark.parametrize("scale_shape", [(), (1,)])
def test_quantize_ops_refuse_a_block_size_with_a_per_tensor_scale(
    op_type: str, x: Meta, name: str, scale_shape: tuple[int, ...]
) -> None:
    scale = Meta(scale_shape, F32)
    expected = (
        f"op n0 ({op_type}): expected block_size 0 with a one-element {name}_scale (per-tensor), "
        "got 2"
    )
    with _refuses(expected):
        _infer(_op(op_type, 2, block_size=2), 21, [x, scale])


INDEXING = [
    # (op, attrs, data shape, indices, updates shape or None, expected range, the index named)
    ("Gather", {"axis": 1}, (2, 3), [[0, 3]], None, "[-3, 3) (axis 1 of data [2, 3])", 3),
    ("Gather", {"axis": 1}, (2, 0), [0], None, "[0, 0) (axis 1 of data [2, 0])", 0),
    ("GatherElements", {"axis": 1}, (2, 3), [[0, -4]], None, "[-3, 3) (axis 1 of data [2, 3])", -4),
    ("GatherND", {"batch_dims": 1}, (2, 3, 4), [[1], [3]], None,
     "[-3, 3) (axis 1 of data [2, 3, 4])", 3),
    ("ScatterElements", {"axis": 0}, (2, 3), [[2, 0, 0]], (1, 3),
     "[-2, 2) (axis 0 of data [2, 3])", 2),
    ("ScatterND", {}, (4, 3), [[0, 1], [1, 3]], (2,), "[-3, 3) (axis 1 of data [4, 3])", 3),
]  # fmt: skip


@pytest.mark.parametrize(
    ("op_type", "attrs", "shape", "indices", "updates", "bounds", "named"),
    INDEXING,
    ids=[f"{case[0]}-{i}" for i, case in enumerate(INDEXING)],
)
@pytest.mark.parametrize("given", ["input", "constant"])
def test_an_index_out_of_range_is_refused_in_onnx_s_words(
    op_type: str,
    attrs: dict[str, Any],
    shape: tuple[int, ...],
    indices: list[Any],
    updates: tuple[int, ...] | None,
    bounds: str,
    named: int,
    given: str,
) -> None:
    # numpy's "IndexError: index 3 is out of bounds ..." had been the message (a run's index);
    # a constant one is refused by the rule, so a timing run, which runs no kernel, refuses it
    index = np.array(indices, np.int64)
    names = ("x", "i", "u")[: 3 if updates is not None else 2]
    op = Op(op_type, "n0", names, ("y",), attrs)
    types = {"x": TensorType(shape, "float32")}
    arrays = {"x": np.zeros(shape, np.float32)}
    if updates is not None:
        types["u"] = TensorType(updates, "float32")
        arrays["u"] = np.ones(updates, np.float32)
    weights = {}
    if given == "input":
        types["i"] = TensorType(index.shape, "int64")
        arrays["i"] = index
    else:
        weights["i"] = index
    graph = Graph("g", (op,), types, ("y",), weights)
    with _refuses(f"op n0 ({op_type}): expected indices in {bounds}, got {named}"):
        execute(graph, arrays)
    if given == "constant":
        with _refuses(f"op n0 ({op_type}): expected indices in {bounds}, got {named}"):
            simulate(graph, "x86-h100", mode="timing")
