"""Focused tests of vision.py and unpool.py: shape-rule errors with their messages, costs, edges."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import Op
from hetsim.kernels import OPS
from hetsim.kernels.meta import Meta
from hetsim.kernels.unpool import col2im, max_unpool
from hetsim.kernels.vision import roi_align


def _op(op_type: str, n_inputs: int, **attrs: Any) -> Op:
    names = tuple(f"in{i}" for i in range(n_inputs))
    return Op(op_type, "v0", names, ("y",), attrs)


def _meta(shape: tuple[int, ...], dtype: Any = np.float32, value: Any = None) -> Meta:
    return Meta(shape, np.dtype(dtype), None if value is None else np.asarray(value))


def _raises(op: Op, metas: list[Meta | None], message: str, opset: int = 16) -> None:
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        OPS[op.type].infer(op, opset, metas)


def test_roi_align_shape_and_cost() -> None:
    op = _op("RoiAlign", 3, output_height=2, output_width=3, sampling_ratio=2)
    metas = [_meta((1, 4, 8, 8)), _meta((5, 4)), _meta((5,), np.int64)]
    (out,) = OPS["RoiAlign"].infer(op, 16, metas)
    assert out.shape == (5, 4, 2, 3)
    assert OPS["RoiAlign"].cost(op, metas, [out]).flops == out.size * 4 * 9


def test_roi_align_adaptive_cost_uses_known_rois() -> None:
    op = _op("RoiAlign", 3, output_height=2, output_width=2)
    rois = np.array([[0, 0, 4, 6]], np.float32)  # half_pixel: 4×6, grid 2×3
    metas = [_meta((1, 1, 8, 8)), _meta((1, 4), value=rois), _meta((1,), np.int64)]
    (out,) = OPS["RoiAlign"].infer(op, 16, metas)
    assert OPS["RoiAlign"].cost(op, metas, [out]).flops == out.size * 6 * 9


@pytest.mark.parametrize(
    ("attrs", "metas", "message"),
    [
        (
            {"mode": "mean"},
            [(1, 1, 4, 4), (1, 4), (1,)],
            "op v0 (RoiAlign): expected mode in ['avg', 'max'], got 'mean'",
        ),
        (
            {"coordinate_transformation_mode": "asymmetric"},
            [(1, 1, 4, 4), (1, 4), (1,)],
            "op v0 (RoiAlign): expected coordinate_transformation_mode in "
            "['half_pixel', 'output_half_pixel'], got 'asymmetric'",
        ),
        (
            {"output_height": -1},
            [(1, 1, 4, 4), (1, 4), (1,)],
            "op v0 (RoiAlign): expected output_height and output_width >= 0, got -1, 1",
        ),
        (
            {"sampling_ratio": -1},
            [(1, 1, 4, 4), (1, 4), (1,)],
            "op v0 (RoiAlign): expected sampling_ratio >= 0, got -1",
        ),
        (
            {},
            [(1, 4, 4), (1, 4), (1,)],
            "op v0 (RoiAlign): expected a rank-4 X (N, C, H, W), got shape [1, 4, 4]",
        ),
        (
            {},
            [(1, 1, 4, 4), (1, 5), (1,)],
            "op v0 (RoiAlign): expected rois of shape (R, 4), got shape [1, 5]",
        ),
        (
            {},
            [(1, 1, 4, 4), (2, 4), (3,)],
            "op v0 (RoiAlign): expected batch_indices of shape [2], got shape [3]",
        ),
    ],
)
def test_roi_align_errors(attrs: dict[str, Any], metas: list[Any], message: str) -> None:
    x, rois, batch = metas
    _raises(_op("RoiAlign", 3, **attrs), [_meta(x), _meta(rois), _meta(batch, np.int64)], message)


def test_roi_align_empty_roi_is_zero() -> None:
    x = np.ones((1, 2, 4, 4), np.float32)
    for mode in ("avg", "max"):
        y = roi_align(x, np.array([[1.0, 1.0, 1.0, 1.0]]), np.array([0]), 2, 2, 0, 1.0, mode)
        assert y.shape == (1, 2, 2, 2)
        assert not y.any()


def test_max_unpool_shape_and_cost() -> None:
    op = _op("MaxUnpool", 2, kernel_shape=[2, 2], strides=[2, 2])
    metas = [_meta((1, 3, 2, 2)), _meta((1, 3, 2, 2), np.int64)]
    (out,) = OPS["MaxUnpool"].infer(op, 11, metas)
    assert out.shape == (1, 3, 4, 4)
    cost = OPS["MaxUnpool"].cost(op, metas, [out])
    assert (cost.flops, cost.bytes_written, cost.op_class) == (0.0, 2 * out.nbytes, "data_movement")


@pytest.mark.parametrize(
    ("metas", "message"),
    [
        (
            [_meta((1, 3, 2)), _meta((1, 3, 2), np.int64)],
            "op v0 (MaxUnpool): expected a rank-4 X, got shape [1, 3, 2]",
        ),
        (
            [_meta((1, 3, 2, 2)), _meta((1, 3, 2, 1), np.int64)],
            "op v0 (MaxUnpool): expected I of X's shape [1, 3, 2, 2], got [1, 3, 2, 1]",
        ),
        (
            [
                _meta((1, 3, 2, 2)),
                _meta((1, 3, 2, 2), np.int64),
                _meta((4,), np.int64, [1, 3, 3, 4]),
            ],
            "op v0 (MaxUnpool): expected an output_shape of rank 4, each dim >= [1, 3, 4, 4], "
            "got [1, 3, 3, 4]",
        ),
    ],
)
def test_max_unpool_errors(metas: list[Meta | None], message: str) -> None:
    _raises(_op("MaxUnpool", len(metas), kernel_shape=[2, 2], strides=[2, 2]), metas, message, 11)


def test_max_unpool_strides_of_the_wrong_length() -> None:
    op = _op("MaxUnpool", 2, kernel_shape=[2, 2], strides=[2])
    metas = [_meta((1, 3, 2, 2)), _meta((1, 3, 2, 2), np.int64)]
    _raises(op, metas, "op v0 (MaxUnpool): expected 2 values of strides, got [2]", 11)


def test_max_unpool_scatters() -> None:
    y = max_unpool(np.array([[[[1.0, 2.0]]]]), np.array([[[[3, 0]]]]), (1, 1, 2, 2))
    assert y.tolist() == [[[[2.0, 0.0], [0.0, 1.0]]]]


def test_col2im_shape_and_cost() -> None:
    op = _op("Col2Im", 3)
    metas = [_meta((2, 8, 12)), _meta((2,), np.int64, [4, 5]), _meta((2,), np.int64, [2, 2])]
    (out,) = OPS["Col2Im"].infer(op, 18, metas)
    assert out.shape == (2, 2, 4, 5)
    cost = OPS["Col2Im"].cost(op, metas, [out])
    assert (cost.flops, cost.op_class) == (2 * 8 * 12, "data_movement")


@pytest.mark.parametrize(
    ("shape", "image", "block", "message"),
    [
        (
            (1, 4, 12),
            [4, 5],
            [2],
            "expected image_shape and block_shape of one length, got [4, 5] and [2]",
        ),
        ((4, 12), [4, 5], [2, 2], "expected a rank-3 input (N, C·prod(block), L), got [4, 12]"),
        (
            (1, 6, 12),
            [4, 5],
            [2, 2],
            "expected input dim 1 divisible by prod(block_shape) 4, got 6",
        ),
        (
            (1, 4, 10),
            [4, 5],
            [2, 2],
            "expected input dim 2 to be the number of blocks 12 (3 × 4), got 10",
        ),
    ],
)
def test_col2im_errors(shape: Any, image: list[int], block: list[int], message: str) -> None:
    metas = [
        _meta(shape),
        _meta((len(image),), np.int64, image),
        _meta((len(block),), np.int64, block),
    ]
    _raises(_op("Col2Im", 3), metas, f"op v0 (Col2Im): {message}", 18)


def test_col2im_sums_overlaps() -> None:
    data = np.ones((1, 4, 4), np.float32)  # a 2×2 block sliding over a 3×3 image
    y = col2im(data, (3, 3), (2, 2), (1, 1), (0, 0, 0, 0), (1, 1))
    assert y[0, 0].tolist() == [[1, 2, 1], [2, 4, 2], [1, 2, 1]]


@pytest.mark.parametrize(
    ("batch_index", "message"),
    [
        # a negative index had counted from the batch's end: roi 1 pooled image 1, silently
        (-1, "op v0 (RoiAlign): expected batch_indices in [0, 2) (X's batch), got -1 for roi 1"),
        (2, "op v0 (RoiAlign): expected batch_indices in [0, 2) (X's batch), got 2 for roi 1"),
    ],
)
def test_roi_align_refuses_a_batch_index_outside_the_batch(batch_index: int, message: str) -> None:
    kernel = OPS["RoiAlign"].compile(_op("RoiAlign", 3, output_height=1, output_width=1), 16)
    x = np.arange(32, dtype=np.float32).reshape(2, 1, 4, 4)
    rois = np.array([[0.0, 0.0, 4.0, 4.0]] * 2, np.float32)
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        kernel([x, rois, np.array([0, batch_index])])


@pytest.mark.parametrize(
    ("position", "message"),
    [
        # a negative position had counted from the output's end: y[0, 0, 1, 1] = 1, silently
        (-1, "got -1 at I[0, 0, 0, 1]"),
        (4, "got 4 at I[0, 0, 0, 1]"),
    ],
)
def test_max_unpool_refuses_a_position_outside_the_output(position: int, message: str) -> None:
    op = _op("MaxUnpool", 2, kernel_shape=[1, 2], strides=[1, 2])
    kernel = OPS["MaxUnpool"].compile(op, 11)
    x, indices = np.ones((1, 1, 1, 2), np.float32), np.array([[[[0, position]]]])
    expected = "op v0 (MaxUnpool): expected I's flat positions in [0, 4) of the unpooled output "
    with pytest.raises(ModelError, match=f"^{re.escape(expected + '[1, 1, 1, 4], ' + message)}$"):
        kernel([x, indices])
