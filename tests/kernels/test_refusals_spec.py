"""Inputs the ONNX spec forbids and onnxruntime refuses, which hetsim's shape rules had taken: a
fuzz audit against onnxruntime found each running in hetsim. Their neighbours that the spec allows
(and onnxruntime runs, or hetsim runs as onnx's reference does) still run."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from hetsim.errors import OpError
from hetsim.ir import Op
from hetsim.kernels import OPS, Meta

F32, I64, U8 = np.dtype("float32"), np.dtype("int64"), np.dtype("uint8")


def _op(op_type: str, inputs: int | tuple[str, ...], **attrs: Any) -> Op:
    names = tuple(f"x{i}" for i in range(inputs)) if isinstance(inputs, int) else inputs
    return Op(op_type, "n0", names, ("y",), attrs)


def _floats(*shapes: tuple[int, ...]) -> list[Meta | None]:
    return [Meta(s, F32) for s in shapes]


def _refuses(message: str) -> Any:
    return pytest.raises(OpError, match=f"^{re.escape(message)}$")


def _infer(op: Op, opset: int, inputs: list[Meta | None]) -> list[Meta]:
    return OPS[op.type].infer(op, opset, inputs)


def _quantized_conv_inputs(op_type: str) -> list[Meta | None]:
    x, w = Meta((1, 2, 6, 6), U8), Meta((2, 2, 3, 3), U8)
    if op_type == "ConvInteger":
        return [x, w]
    scale, zero = Meta.of(np.array(0.1, np.float32)), Meta.of(np.array(0, np.uint8))
    return [x, scale, zero, w, scale, zero, scale, zero]


# pads with auto_pad: "This attribute cannot be used simultaneously with auto_pad attribute"


@pytest.mark.parametrize(
    ("op_type", "inputs", "auto_pad", "pads"),
    [
        ("Conv", _floats((1, 2, 6, 6), (2, 2, 3, 3)), "SAME_UPPER", [1, 1, 1, 1]),
        ("Conv", _floats((1, 2, 6, 6), (2, 2, 3, 3)), "VALID", [0, 0, 0, 0]),
        ("ConvTranspose", _floats((1, 2, 6, 6), (2, 2, 3, 3)), "SAME_LOWER", [1, 1, 1, 1]),
        ("ConvInteger", _quantized_conv_inputs("ConvInteger"), "SAME_UPPER", [2, 2, 2, 2]),
        ("QLinearConv", _quantized_conv_inputs("QLinearConv"), "SAME_LOWER", [0, 0, 0, 0]),
    ],
)
def test_convs_refuse_pads_with_an_auto_pad_other_than_notset(
    op_type: str, inputs: list[Meta | None], auto_pad: str, pads: list[int]
) -> None:
    op = _op(op_type, len(inputs), auto_pad=auto_pad, pads=pads)
    expected = f"expected no 'pads' with auto_pad, got auto_pad {auto_pad!r} and pads {pads}"
    with _refuses(f"op n0 ({op_type}): {expected}"):
        _infer(op, 21, inputs)


def test_conv_takes_pads_with_auto_pad_notset() -> None:
    op = _op("Conv", 2, auto_pad="NOTSET", pads=[1, 1, 1, 1])
    (out,) = _infer(op, 21, _floats((1, 2, 6, 6), (2, 2, 3, 3)))
    assert out.shape == (1, 2, 6, 6)


@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool", "LpPool"])
def test_pools_take_pads_with_auto_pad_as_onnxruntime_does(op_type: str) -> None:
    # the pools' spec says the same, but onnxruntime reads the pads and ignores them
    op = _op(op_type, 1, kernel_shape=[3, 3], auto_pad="SAME_UPPER", pads=[1, 1, 1, 1])
    (out,) = _infer(op, 18, _floats((1, 2, 6, 6)))
    assert out.shape == (1, 2, 6, 6)


# inputs the schema requires


def test_gemm_refuses_no_c_before_opset_11() -> None:
    with _refuses("op n0 (Gemm): expected at least 3 inputs, got 2"):
        _infer(_op("Gemm", 2), 9, _floats((2, 3), (3, 4)))


def test_gemm_refuses_an_omitted_c_before_opset_11() -> None:
    with _refuses("op n0 (Gemm): expected input 2 (a tensor), got none (an omitted input)"):
        _infer(_op("Gemm", ("a", "b", "")), 7, [*_floats((2, 3), (3, 4)), None])


def test_gemm_takes_no_c_from_opset_11() -> None:
    (out,) = _infer(_op("Gemm", 2), 11, _floats((2, 3), (3, 4)))
    assert out.shape == (2, 4)


def test_qlinear_matmul_refuses_no_y_zero_point() -> None:
    scale, zero = Meta.of(np.array(0.1, np.float32)), Meta.of(np.array(0, np.uint8))
    inputs = [Meta((2, 3), U8), scale, zero, Meta((3, 4), U8), scale, zero, scale]
    with _refuses("op n0 (QLinearMatMul): expected at least 8 inputs, got 7"):
        _infer(_op("QLinearMatMul", 7), 21, inputs)


def test_qlinear_conv_refuses_an_omitted_zero_point() -> None:
    inputs = _quantized_conv_inputs("QLinearConv")
    inputs[2] = None
    names = ("x", "x_scale", "", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point")
    message = "op n0 (QLinearConv): expected input 2 (a tensor), got none (an omitted input)"
    with _refuses(message):
        _infer(_op("QLinearConv", names), 10, inputs)


# Resize's sizes: 1-D (onnx's shape inference: "shape input must be 1D tensor")


def test_resize_refuses_sizes_not_1d() -> None:
    op = _op("Resize", ("x", "", "", "sizes"), axes=[2, 3])
    inputs = [*_floats((1, 1, 2, 4)), None, None, Meta.of(np.array([[1], [2]], np.int64))]
    with _refuses("op n0 (Resize): expected input 3 (sizes) 1-D, got shape (2, 1)"):
        _infer(op, 19, inputs)


def test_resize_kernel_refuses_sizes_not_1d() -> None:
    # sizes a graph input: its value comes only as the kernel runs
    op = _op("Resize", ("x", "", "", "sizes"), axes=[2, 3])
    run = OPS["Resize"].compile(op, 19)
    x, sizes = np.ones((1, 1, 2, 4), np.float32), np.array([[1], [2]], np.int64)
    with _refuses("op n0 (Resize): expected input 3 (sizes) 1-D, got shape (2, 1)"):
        run([x, None, None, sizes])


# Attention's attn_mask: broadcastable to the scores at opset 23; shorter keys only from 24


def _attention_inputs(mask: tuple[int, ...]) -> list[Meta | None]:
    return _floats((1, 4, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8), mask)


@pytest.mark.parametrize("mask", [(3, 4), (3, 0), (4,)])
def test_attention_refuses_a_mask_shorter_than_the_keys_at_opset_23(
    mask: tuple[int, ...],
) -> None:
    expected = "expected an attn_mask broadcastable to [1, 4, 3, 5]"
    with _refuses(f"op n0 (Attention): {expected}, got shape {list(mask)}"):
        _infer(_op("Attention", 4), 23, _attention_inputs(mask))


@pytest.mark.parametrize(("opset", "mask"), [(23, (3, 1)), (23, (5,)), (24, (3, 4))])
def test_attention_takes_a_broadcastable_mask_or_from_opset_24_a_shorter_one(
    opset: int, mask: tuple[int, ...]
) -> None:
    (out,) = _infer(_op("Attention", 4), opset, _attention_inputs(mask))
    assert out.shape == (1, 4, 3, 8)
