"""The shape rules of the normalization ops refuse what ONNX forbids, before any kernel runs.

Each case had reached numpy (a broadcast or reshape error wrapped as "expected its kernel to
compute") or had given an output for a forbidden input (a scale larger than X broadcast Y up to
its shape; a scalar InstanceNormalization scale broadcast across the channels); onnxruntime
refuses every one but MeanVarianceNormalization's repeated axis, which it merges.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from hetsim.errors import OpError
from hetsim.ir import Op
from hetsim.kernels import OPS, Meta

X = (2, 3, 4, 5)


def _infer(op_type: str, shapes: list[tuple[int, ...]], opset: int, **attrs: Any) -> list[Meta]:
    names = tuple(f"i{i}" for i in range(len(shapes)))
    op = Op(op_type, "n0", names, ("y",), attrs)
    return OPS[op_type].infer(op, opset, [Meta(s, np.dtype("float32")) for s in shapes])


def _refused(
    op_type: str, shapes: list[tuple[int, ...]], opset: int, expected: str, **attrs: Any
) -> None:
    message = f"op n0 ({op_type}): {expected}"
    with pytest.raises(OpError, match=f"^{re.escape(message)}$"):
        _infer(op_type, shapes, opset, **attrs)


@pytest.mark.parametrize(
    ("op_type", "opset", "shapes", "axis", "expected"),
    [
        # a scale larger than X: RMSNormalization's Y came out [2, 3, 4, 5]
        (
            "RMSNormalization",
            23,
            [(1, 3, 4, 5), (2, 3, 4, 5)],
            0,
            "expected scale broadcastable to X's shape [1, 3, 4, 5], got shape [2, 3, 4, 5]",
        ),
        (
            "LayerNormalization",
            17,
            [(1, 3, 4, 5), (2, 3, 4, 5)],
            0,
            "expected scale broadcastable to X's shape [1, 3, 4, 5], got shape [2, 3, 4, 5]",
        ),
        (
            "LayerNormalization",
            17,
            [X, (5,), (2, 1, 5)],
            -1,
            "expected B broadcastable to X's shape [2, 3, 4, 5], got shape [2, 1, 5]",
        ),
        # of a higher rank than X
        (
            "RMSNormalization",
            23,
            [X, (1, 1, 1, 1, 5)],
            -1,
            "expected scale broadcastable to X's shape [2, 3, 4, 5], got shape [1, 1, 1, 1, 5]",
        ),
        # not broadcastable at all: numpy's ValueError in the kernel
        (
            "RMSNormalization",
            23,
            [X, (4,)],
            -1,
            "expected scale broadcastable to X's shape [2, 3, 4, 5], got shape [4]",
        ),
        (
            "LayerNormalization",
            17,
            [X, (4,)],
            -1,
            "expected scale broadcastable to X's shape [2, 3, 4, 5], got shape [4]",
        ),
        (
            "LayerNormalization",
            17,
            [X, (5,), (4,)],
            -1,
            "expected B broadcastable to X's shape [2, 3, 4, 5], got shape [4]",
        ),
    ],
)
def test_layer_and_rms_norm_refuse_a_scale_or_bias_not_broadcastable_to_x(
    op_type: str, opset: int, shapes: list[tuple[int, ...]], axis: int, expected: str
) -> None:
    _refused(op_type, shapes, opset, expected, axis=axis)


@pytest.mark.parametrize("op_type", ["LayerNormalization", "RMSNormalization"])
@pytest.mark.parametrize(
    ("axis", "scale"),
    [(-1, (5,)), (-1, ()), (-1, (1,)), (-1, (3, 1, 5)), (-1, (2, 3, 4, 1)), (-2, (4, 1)), (0, X)],
)
def test_layer_and_rms_norm_take_a_scale_that_broadcasts_to_x(
    op_type: str, axis: int, scale: tuple[int, ...]
) -> None:
    # onnxruntime runs each of these: its rule, and the spec's, is a scale (and B) that
    # broadcasts one way to X, not only one of X's normalized shape
    opset = 17 if op_type == "LayerNormalization" else 23
    (y,) = _infer(op_type, [X, scale], opset, axis=axis)
    assert y.shape == X


@pytest.mark.parametrize(
    ("scale", "bias", "expected"),
    [
        ((), (3,), "expected scale of shape [3], got shape []"),
        ((3, 1), (3,), "expected scale of shape [3], got shape [3, 1]"),
        ((1,), (1,), "expected scale of shape [3], got shape [1]"),
        ((4,), (3,), "expected scale of shape [3], got shape [4]"),
        ((3,), (1,), "expected B of shape [3], got shape [1]"),
    ],
)
def test_instance_norm_refuses_a_scale_or_bias_not_of_shape_c(
    scale: tuple[int, ...], bias: tuple[int, ...], expected: str
) -> None:
    _refused("InstanceNormalization", [X, scale, bias], 6, expected)


@pytest.mark.parametrize(
    ("x", "opset", "groups"),
    [((0, 3, 4, 5), 21, 1), ((0, 3, 4, 5), 18, 3), ((2, 0, 4), 21, 1), ((2, 3, 0), 21, 1)],
)
def test_group_norm_refuses_an_empty_input(x: tuple[int, ...], opset: int, groups: int) -> None:
    # its function reshapes X to [N, num_groups, -1] first; onnxruntime and onnx's reference
    # both fail there on an empty X (hetsim's kernel failed on N = 0 alike)
    per = x[1] if opset >= 21 else groups
    expected = f"expected an input of nonzero size, got shape {list(x)}"
    _refused("GroupNormalization", [x, (per,), (per,)], opset, expected, num_groups=groups)


def test_mean_variance_norm_refuses_a_repeated_axis() -> None:
    # 1 and -3 are the same axis of a rank-4 input: numpy's "duplicate value in 'axis'"
    _refused(
        "MeanVarianceNormalization", [X], 13, "expected distinct axes, got [1, 1]", axes=[1, -3]
    )


def test_mean_variance_norm_refuses_no_axes() -> None:
    # it normalized over none: NaN everywhere, where onnxruntime refuses it
    _refused(
        "MeanVarianceNormalization", [X], 13, "expected at least one axis, got axes []", axes=[]
    )


def test_mean_variance_norm_refuses_an_axis_out_of_range() -> None:
    # its default axes [0, 2, 3] on a rank-3 input
    _refused("MeanVarianceNormalization", [(2, 3, 4)], 13, "expected an axis in [-3, 3), got 3")


@pytest.mark.parametrize("x", [(), (3,), (2, 3)])
def test_lrn_refuses_an_input_below_rank_3(x: tuple[int, ...]) -> None:
    _refused("LRN", [x], 13, f"expected an input of rank >= 3, got shape {list(x)}", size=3)


@pytest.mark.parametrize("stash", [-1, 4])
def test_rms_norm_refuses_a_stash_type_in_its_shape_rule(stash: int) -> None:
    # only its kernel checked it, so a timing run (no kernel) took any
    message = f"expected stash_type 1 (float32), got {stash}"
    _refused("RMSNormalization", [(2, 3, 5), (3, 5)], 23, message, axis=1, stash_type=stash)
