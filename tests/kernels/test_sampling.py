"""GridSample's and AffineGrid's shape rules, errors and costs (values: cases_sampling.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetsim.errors import ModelError, UnknownValueError
from hetsim.ir import Op
from hetsim.kernels import OPS
from hetsim.kernels.meta import Meta

F32 = np.dtype(np.float32)


def _sample(**attrs: object) -> Op:
    return Op("GridSample", "gs", ("x", "grid"), ("y",), attrs)


def _affine(**attrs: object) -> Op:
    return Op("AffineGrid", "ag", ("theta", "size"), ("grid",), attrs)


def _meta(*shape: int) -> Meta:
    return Meta(shape, F32)


def _size(*values: int) -> Meta:
    return Meta.of(np.array(values, np.int64))


def test_grid_sample_gives_n_c_and_the_grid_points() -> None:
    rule = OPS["GridSample"].infer
    assert rule(_sample(), 20, [_meta(2, 3, 4, 5), _meta(2, 6, 7, 2)]) == [_meta(2, 3, 6, 7)]
    (out,) = rule(_sample(), 20, [_meta(1, 2, 3, 4, 5), _meta(1, 6, 7, 8, 3)])
    assert out.shape == (1, 2, 6, 7, 8)


@pytest.mark.parametrize(
    ("opset", "x", "grid", "message"),
    [
        (20, (2, 3, 4, 5), (2, 6, 2), "expected grid of rank 4 (X's rank), got shape [2, 6, 2]"),
        (20, (2, 3, 4, 5), (1, 6, 7, 2), "expected grid of batch 2 (X's), got 1"),
        (
            20,
            (2, 3, 4, 5),
            (2, 6, 7, 3),
            "expected grid's last dimension 2 (X's spatial rank), got 3",
        ),
        (16, (1, 2, 3, 4, 5), (1, 6, 7, 8, 3), "expected X of rank 4, got shape [1, 2, 3, 4, 5]"),
        (20, (1, 2, 3), (1, 6, 1), "expected X of rank 4 or 5, got shape [1, 2, 3]"),
    ],
)
def test_grid_sample_shape_errors(opset: int, x: tuple, grid: tuple, message: str) -> None:
    full = f"op gs (GridSample): {message}"
    with pytest.raises(ModelError, match=f"^{re.escape(full)}$"):
        OPS["GridSample"].infer(_sample(), opset, [_meta(*x), _meta(*grid)])


@pytest.mark.parametrize(
    ("opset", "attrs", "message"),
    [
        (
            20,
            {"mode": "bilinear"},
            "expected mode 'linear', 'nearest' or 'cubic', got 'bilinear' (did you mean 'linear'?)",
        ),
        (
            16,
            {"mode": "cubic"},
            "expected mode 'bilinear', 'nearest' or 'bicubic', got 'cubic'"
            " (did you mean 'bicubic'?)",
        ),
        (
            20,
            {"padding_mode": "edge"},
            "expected padding_mode 'zeros', 'border' or 'reflection', got 'edge'",
        ),
    ],
)
def test_grid_sample_names_bad_modes(opset: int, attrs: dict, message: str) -> None:
    full = f"op gs (GridSample): {message}"
    with pytest.raises(ModelError, match=f"^{re.escape(full)}$"):
        OPS["GridSample"].compile(_sample(**attrs), opset)


@pytest.mark.parametrize(("mode", "taps"), [("nearest", 1), ("linear", 4), ("cubic", 16)])
def test_grid_sample_costs_two_flops_a_tap_and_ten_for_the_coordinates(
    mode: str, taps: int
) -> None:
    inputs, outputs = [_meta(2, 3, 4, 5), _meta(2, 6, 7, 2)], [_meta(2, 3, 6, 7)]
    cost = OPS["GridSample"].cost(_sample(mode=mode), inputs, outputs)
    assert cost.flops == (2 * taps + 10) * 2 * 3 * 6 * 7
    assert cost.op_class == "elementwise"
    assert (cost.bytes_read, cost.bytes_written) == (4 * (120 + 168), 4 * 252)


def test_grid_sample_nearest_rounds_half_to_even() -> None:
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4)
    # x coordinates 0.5 and 1.5 (align_corners): to 0 and 2
    grid = np.array([[[[-2 / 3, -1.0], [0.0, -1.0]]]], np.float32)
    kernel = OPS["GridSample"].compile(_sample(mode="nearest", align_corners=1), 20)
    assert kernel([x, grid])[0].tolist() == [[[[0.0, 2.0]]]]


def test_grid_sample_reflects_cubic_taps_onto_a_dim_of_one() -> None:
    # align_corners on a height of 1: the reflection range has no width, and the taps went to
    # rows 2 and -1 (IndexError); every row tap reads row 0, as with two equal rows
    kernel = OPS["GridSample"].compile(
        _sample(mode="cubic", padding_mode="reflection", align_corners=1), 20
    )
    x = np.arange(3, dtype=np.float32).reshape(1, 1, 1, 3)
    grid = np.array([[[[0.3, 0.2], [-0.6, -0.9]]]], np.float32)
    y = kernel([x, grid])[0]
    two_rows = kernel([np.concatenate([x, x], axis=2), grid])[0]
    np.testing.assert_allclose(y, two_rows, rtol=1e-6)
    assert y[0, 0, 0, 0] == pytest.approx(1.4365, abs=1e-4)  # onnxruntime's value


def test_affine_grid_gives_the_points_of_size() -> None:
    rule = OPS["AffineGrid"].infer
    assert rule(_affine(), 20, [_meta(2, 2, 3), _size(2, 3, 4, 5)]) == [_meta(2, 4, 5, 2)]
    assert rule(_affine(), 20, [_meta(1, 3, 4), _size(1, 3, 4, 5, 6)]) == [_meta(1, 4, 5, 6, 3)]


@pytest.mark.parametrize(
    ("theta", "size", "message"),
    [
        (
            (2, 3, 4),
            (2, 3, 4, 5),
            "expected theta of shape [2, 2, 3] (from size [2, 3, 4, 5]), got shape [2, 3, 4]",
        ),
        (
            (1, 2, 3),
            (2, 3, 4, 5),
            "expected theta of shape [2, 2, 3] (from size [2, 3, 4, 5]), got shape [1, 2, 3]",
        ),
        ((1, 2, 3), (1, 3, 4), "expected size [N, C, H, W] or [N, C, D, H, W], got [1, 3, 4]"),
    ],
)
def test_affine_grid_shape_errors(theta: tuple, size: tuple, message: str) -> None:
    full = f"op ag (AffineGrid): {message}"
    with pytest.raises(ModelError, match=f"^{re.escape(full)}$"):
        OPS["AffineGrid"].infer(_affine(), 20, [_meta(*theta), _size(*size)])


def test_affine_grid_needs_the_value_of_size() -> None:
    size = Meta((4,), np.dtype(np.int64))
    message = "op ag (AffineGrid): expected a known value for input 1 (size)"
    with pytest.raises(UnknownValueError, match=f"^{re.escape(message)}"):
        OPS["AffineGrid"].infer(_affine(), 20, [_meta(2, 2, 3), size])


def test_affine_grid_costs_two_flops_a_theta_entry_per_point() -> None:
    cost = OPS["AffineGrid"].cost(
        _affine(), [_meta(2, 2, 3), _size(2, 3, 4, 5)], [_meta(2, 4, 5, 2)]
    )
    assert cost.flops == 2 * 6 * 2 * 4 * 5
    assert cost.op_class == "elementwise"


def test_a_cubic_grid_sample_of_integers_saturates_its_overshoot() -> None:
    # Keys' kernel overshoots a step: 155.1 and -156.1 wrapped in int8 to -101 and 100
    op = Op("GridSample", "g", ("x", "grid"), ("y",), {"mode": "cubic", "align_corners": 1})
    step = np.array([[[[-128, -128, -128, 127, 127, 127]]]], np.int8)
    grid = np.array([[[[0.32, 0.0], [-0.32, 0.0]]]], np.float32)  # x = 3.3 and 1.7
    kernel = OPS["GridSample"].compile(op, 22)
    (floats,) = kernel([step.astype(np.float32), grid])
    assert floats.ravel().tolist() == pytest.approx([155.1137, -156.1137], abs=1e-3)
    (y,) = kernel([step, grid])
    assert y.dtype == np.int8
    assert y.ravel().tolist() == [127, -128]
