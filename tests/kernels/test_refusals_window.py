"""Shape rules of the windowed ops (Conv, ConvTranspose, the pools, Col2Im) refusing what ONNX
and onnxruntime refuse, in full, before any kernel runs: an audit found each of these passing
the rule and then failing inside numpy, or silently giving an output.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from hetsim.errors import OpError
from hetsim.ir import Op
from hetsim.kernels import OPS, Meta


def _op(op_type: str, count: int, **attrs: Any) -> Op:
    return Op(op_type, "w0", tuple(f"i{i}" for i in range(count)), ("y",), attrs)


def _floats(*shapes: tuple[int, ...]) -> list[Meta | None]:
    return [Meta(s, np.dtype("float32")) for s in shapes]


def _infer(op_type: str, metas: list[Meta | None], opset: int = 21, **attrs: Any) -> Any:
    return OPS[op_type].infer(_op(op_type, len(metas), **attrs), opset, metas)


def _quantized_conv_inputs(op_type: str) -> list[Meta | None]:
    """Inputs of a 2-D QLinearConv or ConvInteger over X [2, 3, 4, 5] with a W [2, 3, 0, 3]."""
    x, w = Meta((2, 3, 4, 5), np.dtype("uint8")), Meta((2, 3, 0, 3), np.dtype("uint8"))
    if op_type == "ConvInteger":
        return [x, w]
    scale, zero = Meta.of(np.array(0.1, np.float32)), Meta.of(np.array(0, np.uint8))
    return [x, scale, zero, w, scale, zero, scale, zero]


REFUSALS = [
    # (op, inputs, attrs, message after "op w0 (<op>): ")
    (  # a weight with no taps: a [2, 2, 5, 3] output of zeros, or a reshape error
        "Conv",
        _floats((2, 3, 4, 5), (2, 3, 0, 3)),
        {},
        "expected a kernel (the weight's spatial dims) of sizes >= 1, got [0, 3]",
    ),
    (
        "ConvInteger",
        _quantized_conv_inputs("ConvInteger"),
        {},
        "expected a kernel (the weight's spatial dims) of sizes >= 1, got [0, 3]",
    ),
    (
        "QLinearConv",
        _quantized_conv_inputs("QLinearConv"),
        {},
        "expected a kernel (the weight's spatial dims) of sizes >= 1, got [0, 3]",
    ),
    (
        "ConvTranspose",
        _floats((2, 3, 4, 5), (3, 2, 0, 3)),
        {},
        "expected a kernel (the weight's spatial dims) of sizes >= 1, got [0, 3]",
    ),
    (  # had failed with an IndexError while building its message
        "ConvTranspose",
        _floats((), (3, 2, 3, 3)),
        {},
        "expected input and weight of equal rank >= 3, got [] and [3, 2, 3, 3]",
    ),
    (
        "ConvTranspose",
        _floats((3,), (3,)),
        {},
        "expected input and weight of equal rank >= 3, got [3] and [3]",
    ),
    (  # no input pixel to scatter: numpy's broadcast error in the kernel
        "ConvTranspose",
        _floats((1, 1, 3, 0), (1, 2, 3, 3)),
        {"strides": [3, 2]},
        "expected spatial dims >= 1, got shape [1, 1, 3, 0]",
    ),
    (  # not (H, W): a zip error
        "ConvTranspose",
        _floats((1, 3, 4, 5), (3, 2, 3, 3)),
        {"output_shape": [6]},
        "expected 2 values in 'output_shape' (its spatial dims), got [6]",
    ),
    (  # had read as (C, H, W) of a 2-D output, silently
        "ConvTranspose",
        _floats((1, 3, 4, 5), (3, 2, 3, 3)),
        {"output_shape": [1, 6, 7]},
        "expected 2 values in 'output_shape' (its spatial dims), got [1, 6, 7]",
    ),
    (  # (N, C, H, W): taken as its last two dims, where onnxruntime and onnx's reference refuse
        "ConvTranspose",
        _floats((1, 3, 4, 5), (3, 2, 3, 3)),
        {"output_shape": [1, 2, 6, 7]},
        "expected 2 values in 'output_shape' (its spatial dims), got [1, 2, 6, 7]",
    ),
    (  # had read as the default, zeros
        "ConvTranspose",
        _floats((1, 3, 4, 5), (3, 2, 3, 3)),
        {"output_padding": []},
        "expected 2 values in 'output_padding', got []",
    ),
    (  # pads output_shape sets, but of a wrong count: ignored, silently
        "ConvTranspose",
        _floats((1, 3, 4, 5), (3, 2, 3, 3)),
        {"pads": [1], "output_shape": [6, 7]},
        "expected 4 values in 'pads', got [1]",
    ),
    (
        "ConvTranspose",
        _floats((1, 3, 4, 5), (3, 2, 3, 3)),
        {"pads": [1], "auto_pad": "SAME_UPPER"},
        "expected 4 values in 'pads', got [1]",
    ),
    (
        "Conv",
        _floats((2, 3, 4, 5), (2, 3, 3, 3)),
        {"pads": [1], "auto_pad": "SAME_UPPER"},
        "expected 4 values in 'pads', got [1]",
    ),
    (
        "MaxPool",
        _floats((2, 3, 4, 5)),
        {"pads": [1], "auto_pad": "VALID", "kernel_shape": [2, 2]},
        "expected 4 values in 'pads', got [1]",
    ),
    (
        "MaxPool",
        _floats((2, 3, 4, 5)),
        {"storage_order": 5, "kernel_shape": [2, 2]},
        "expected storage_order 0 or 1, got 5",
    ),
    (  # a max over no element: numpy's "zero-size array to reduction" error
        "GlobalMaxPool",
        _floats((2, 3, 0, 5)),
        {},
        "expected spatial dims >= 1, got shape [2, 3, 0, 5]",
    ),
    (  # the same shape rule: a mean over no element had been NaN, silently
        "GlobalAveragePool",
        _floats((2, 3, 4, 0)),
        {},
        "expected spatial dims >= 1, got shape [2, 3, 4, 0]",
    ),
    (  # had been flattened in the shape rule, then failed in the kernel with a TypeError
        "Col2Im",
        [
            *_floats((1, 4, 9)),
            Meta.of(np.array([[4], [4]], np.int64)),
            Meta.of(np.array([2, 2], np.int64)),
        ],
        {},
        "expected input 1 (image_shape) 1-D, got shape (2, 1)",
    ),
    (
        "Col2Im",
        [
            *_floats((1, 4, 9)),
            Meta.of(np.array([4, 4], np.int64)),
            Meta.of(np.array([[2], [2]], np.int64)),
        ],
        {},
        "expected input 2 (block_shape) 1-D, got shape (2, 1)",
    ),
]


@pytest.mark.parametrize(
    ("op_type", "metas", "attrs", "message"),
    REFUSALS,
    ids=[f"{r[0]}-{i}" for i, r in enumerate(REFUSALS)],
)
def test_shape_rule_refuses_what_onnx_forbids(
    op_type: str, metas: list[Meta | None], attrs: dict[str, Any], message: str
) -> None:
    opset = 18 if op_type == "Col2Im" else 21
    expected = f"op w0 ({op_type}): {message}"
    with pytest.raises(OpError, match=f"^{re.escape(expected)}$"):
        _infer(op_type, metas, opset, **attrs)


def test_max_pool_refuses_a_storage_order_at_compile() -> None:
    op = _op("MaxPool", 1, kernel_shape=[2], storage_order=2)
    expected = "op w0 (MaxPool): expected storage_order 0 or 1, got 2"
    with pytest.raises(OpError, match=f"^{re.escape(expected)}$"):
        OPS["MaxPool"].compile(op, 12)


def test_col2im_of_an_unknown_2d_image_shape_is_refused_by_its_rank() -> None:
    metas = [*_floats((1, 4, 9)), Meta((2, 1), np.dtype("int64")), Meta((2,), np.dtype("int64"))]
    expected = "op w0 (Col2Im): expected input 1 (image_shape) 1-D, got shape (2, 1)"
    with pytest.raises(OpError, match=f"^{re.escape(expected)}$"):
        _infer("Col2Im", metas, 18)


def test_conv_transpose_still_takes_pads_of_the_right_count_with_output_shape() -> None:
    metas = _floats((1, 3, 4, 5), (3, 2, 3, 3))
    (out,) = _infer("ConvTranspose", metas, pads=[1, 1, 1, 1], output_shape=[6, 7])
    assert out.shape == (1, 2, 6, 7)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "out_shape"),
    [((0, 1, 3, 3), (1, 2, 3, 3), (0, 2, 9, 7)), ((1, 1, 3, 3), (1, 0, 3, 3), (1, 0, 9, 7))],
    ids=["no-batch", "no-output-channels"],
)
def test_conv_transpose_of_an_empty_batch_or_m_gives_its_empty_output(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], out_shape: tuple[int, ...]
) -> None:
    # numpy's reshape had no -1 to infer from 0 elements; onnxruntime gives these shapes
    op = _op("ConvTranspose", 2, strides=[3, 2])
    x, w = np.ones(x_shape, np.float32), np.ones(w_shape, np.float32)
    (meta,) = OPS["ConvTranspose"].infer(op, 21, [Meta.of(x), Meta.of(w)])
    (y,) = OPS["ConvTranspose"].compile(op, 21)([x, w])
    assert y.shape == meta.shape == out_shape
    assert y.dtype == np.float32
