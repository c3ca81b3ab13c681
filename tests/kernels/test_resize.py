"""Resize and Upsample beyond the generic table: every error, rounding, costs, and a simulation."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import ModelError, UnknownValueError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import OPS, Meta, execute

F32 = np.dtype("float32")


def _op(*inputs: str, op_type: str = "Resize", **attrs: object) -> Op:
    return Op(op_type, "n0", inputs, ("y",), attrs)


def _const(values: list[float] | list[int], dtype: str) -> Meta:
    value = np.array(values, dtype)
    return Meta(value.shape, value.dtype, value)


X = Meta((1, 1, 2, 4), F32)
SCALES = _const([1, 1, 2, 2], "float32")


def _infer(op: Op, inputs: list[Meta | None], opset: int = 19) -> tuple[int, ...]:
    return OPS[op.type].infer(op, opset, inputs)[0].shape


def _run(op: Op, inputs: list[np.ndarray | None], opset: int = 19) -> np.ndarray:
    return OPS[op.type].compile(op, opset)(inputs)[0]


def _raises(message: str) -> pytest.RaisesContext[ModelError]:
    return pytest.raises(ModelError, match=f"^{re.escape(message)}$")


@pytest.mark.parametrize(
    ("attrs", "opset", "message"),
    [
        (
            {"mode": "bicubic"},
            19,
            "expected mode 'nearest', 'linear' or 'cubic', got 'bicubic' (did you mean 'cubic'?)",
        ),
        ({"mode": "cubic"}, 10, "expected mode 'nearest' or 'linear', got 'cubic'"),
        (
            {"coordinate_transformation_mode": "half-pixel"},
            19,
            "expected coordinate_transformation_mode 'half_pixel', 'half_pixel_symmetric', "
            "'pytorch_half_pixel', 'align_corners', 'asymmetric', 'tf_half_pixel_for_nn' or "
            "'tf_crop_and_resize', "
            "got 'half-pixel' (did you mean 'half_pixel'?)",
        ),
        (
            {"nearest_mode": "round"},
            19,
            "expected nearest_mode 'round_prefer_floor', 'round_prefer_ceil', 'floor' or "
            "'ceil', got 'round'",
        ),
        (
            {"keep_aspect_ratio_policy": "fit"},
            19,
            "expected keep_aspect_ratio_policy 'stretch', 'not_larger' or 'not_smaller', got 'fit'",
        ),
    ],
)
def test_a_bad_attribute_is_refused_at_compile(
    attrs: dict[str, object], opset: int, message: str
) -> None:
    # before opset 11 the scales are input 1: there is no roi
    op = _op("x", "s", **attrs) if opset < 11 else _op("x", "", "s", **attrs)
    with _raises(f"op n0 (Resize): {message}"):
        OPS["Resize"].compile(op, opset)
    with _raises(f"op n0 (Resize): {message}"):
        _infer(op, [X, SCALES] if opset < 11 else [X, None, SCALES], opset)


@pytest.mark.parametrize(
    ("inputs", "attrs", "message"),
    [
        ([X, None, SCALES, _const([1, 1, 4, 8], "int64")], {}, "expected one of scales and "
         "sizes, got both"),
        ([X, None, None, None], {}, "expected one of scales and sizes, got neither"),
        ([X, None, _const([2, 2], "float32")], {}, "expected 4 scales (one per resized axis), "
         "got [2.0, 2.0]"),
        ([X, None, None, _const([4, 8], "int64")], {"axes": [3]}, "expected 1 sizes (one per "
         "resized axis), got [4, 8]"),
        ([X, None, _const([1, 1, 0, 2], "float32")], {}, "expected positive scales, got "
         "[1.0, 1.0, 0.0, 2.0]"),
        ([X, None, None, _const([-2], "int64")], {"axes": [2]}, "expected non-negative sizes, "
         "got [-2]"),
        ([X, None, _const([2], "float32")], {"axes": [4]}, "expected an axis in [-4, 4), got 4"),
        ([X, None, _const([2, 2], "float32")], {"axes": [2, -2]}, "expected distinct axes, "
         "got [2, 2]"),
    ],
)  # fmt: skip
def test_bad_scales_or_sizes_are_refused_by_the_shape_rule(
    inputs: list[Meta | None], attrs: dict[str, object], message: str
) -> None:
    with _raises(f"op n0 (Resize): {message}"):
        _infer(_op("x", "", "s", "z", **attrs), inputs)


def test_bad_scales_are_refused_by_the_kernel_too() -> None:
    x = np.zeros((1, 1, 2, 4), np.float32)
    with _raises("op n0 (Resize): expected positive scales, got [1.0, 1.0, -1.0, 2.0]"):
        _run(_op("x", "", "s"), [x, None, np.array([1, 1, -1, 2], np.float32)])


def test_scales_of_unknown_value_give_unknown_value_error() -> None:
    message = (
        "op n0 (Resize): expected a known value for input 2 (scales), got a computed tensor 's'"
    )
    with pytest.raises(UnknownValueError, match=f"^{re.escape(message)}$"):
        _infer(_op("x", "", "s"), [X, None, Meta((4,), F32)])


def test_an_empty_scales_beside_sizes_counts_as_absent() -> None:
    # opset 11 made scales a required input: exporters pass an empty one with sizes
    inputs = [X, _const([], "float32"), Meta((0,), F32), _const([1, 1, 3, 2], "int64")]
    assert _infer(_op("x", "r", "s", "z"), inputs, 11) == (1, 1, 3, 2)


def test_crop_and_resize_needs_a_roi() -> None:
    op = _op("x", "", "s", coordinate_transformation_mode="tf_crop_and_resize")
    with _raises(
        "op n0 (Resize): expected a roi with coordinate_transformation_mode "
        "'tf_crop_and_resize', got none"
    ):
        _run(op, [np.zeros((2, 2), np.float32), None, np.array([2, 2], np.float32)])


def test_crop_and_resize_needs_a_roi_per_resized_axis() -> None:
    op = _op("x", "r", "s", coordinate_transformation_mode="tf_crop_and_resize")
    roi = np.array([0, 1], np.float32)
    with _raises("op n0 (Resize): expected a roi of 4 values (starts, then ends), got [0.0, 1.0]"):
        _run(op, [np.zeros((2, 2), np.float32), roi, np.array([2, 2], np.float32)])


def test_upsample_7_needs_its_scales_attribute() -> None:
    with _raises("op n0 (Upsample): missing required attribute 'scales'"):
        OPS["Upsample"].compile(_op("x", op_type="Upsample"), 7)


def test_negative_axes_count_from_the_end() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    scales = np.array([2, 0.5], np.float32)
    negative = _run(_op("x", "", "s", mode="linear", axes=[-1, -2]), [x, None, scales])
    positive = _run(_op("x", "", "s", mode="linear", axes=[2, 1]), [x, None, scales])
    np.testing.assert_array_equal(negative, positive)
    assert negative.shape == (2, 1, 8)


def test_integer_outputs_round_half_to_even() -> None:
    x = np.array([2, 3, 6], np.int64)
    op = _op("x", "", "s", mode="linear", coordinate_transformation_mode="asymmetric")
    # samples 2, 2.5, 3, 4.5, 6, 6: 2.5 and 4.5 round to the even 2 and 4
    assert _run(op, [x, None, np.array([2], np.float32)]).tolist() == [2, 2, 3, 4, 6, 6]


def test_an_unchanged_axis_is_left_as_is() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = _run(_op("x", "", "s", mode="cubic"), [x, None, np.array([1, 1], np.float32)])
    assert y is x


def test_opset_10_nearest_rounds_down_upscaling_and_up_downscaling() -> None:
    x = np.arange(5, dtype=np.float32)
    op = _op("x", "s")
    assert _run(op, [x, np.array([1.5], np.float32)], 10).tolist() == [0, 0, 1, 2, 2, 3, 4]
    assert _run(op, [x, np.array([0.6], np.float32)], 10).tolist() == [0, 2, 4]


def test_opset_11_tf_half_pixel_for_nn_shifts_by_half_a_pixel() -> None:
    # onnx's ReferenceEvaluator dropped this opset-11 mode: x = (y + 0.5) / scale, here
    # 0.25, 0.75, 1.25, ..., 3.75, rounded half to the floor and clamped to the axis
    op = _op("x", "r", "s", coordinate_transformation_mode="tf_half_pixel_for_nn")
    x = np.arange(4, dtype=np.float32)
    y = _run(op, [x, np.array([], np.float32), np.array([2], np.float32)], 11)
    assert y.tolist() == [0, 1, 1, 2, 2, 3, 3, 3]


def test_the_kernel_follows_a_change_of_input_shape() -> None:
    kernel = OPS["Resize"].compile(_op("x", "", "s", mode="linear"), 19)
    scales = np.array([2], np.float32)
    assert kernel([np.array([0.0, 4.0], np.float32), None, scales])[0].tolist() == [0, 1, 3, 4]
    assert kernel([np.array([4.0], np.float32), None, scales])[0].tolist() == [4, 4]


@pytest.mark.parametrize(
    ("attrs", "out", "flops", "op_class"),
    [
        ({}, (1, 1, 4, 8), 0.0, "data_movement"),
        # two resized axes, 2 taps each: 2 * (2 + 2) flops per output element
        ({"mode": "linear"}, (1, 1, 8, 8), 2.0 * (2 + 2) * 64, "elementwise"),
        ({"mode": "cubic"}, (1, 1, 8, 8), 2.0 * (4 + 4) * 64, "elementwise"),
        ({"mode": "cubic"}, (1, 1, 4, 8), 2.0 * 4 * 32, "elementwise"),  # one axis resized
        # antialias halving a width of 4: the cubic filter widens to 2 * ceil(2 * 4 / 2) taps
        ({"mode": "cubic", "antialias": 1}, (1, 1, 2, 2), 2.0 * (8 + 8) * 4, "elementwise"),
    ],
)
def test_cost_counts_two_flops_per_tap_and_resized_axis(
    attrs: dict[str, object], out: tuple[int, ...], flops: float, op_class: str
) -> None:
    op = _op("x", "", "s", **attrs)
    cost = OPS["Resize"].cost(op, [Meta((1, 1, 4, 4), F32), None, SCALES], [Meta(out, F32)])
    assert (cost.flops, cost.bytes_read, cost.bytes_written, cost.op_class) == (
        flops,
        64 + 16,
        4 * int(np.prod(out)),
        op_class,
    )


def test_a_resize_with_constant_scales_simulates_as_it_executes() -> None:
    graph = Graph(
        "upscale",
        (Op("Resize", "up", ("x", "", "s"), ("y",), {"mode": "linear"}),),
        {"x": TensorType((1, 2, 3, 3), "float32")},
        ("y",),
        {"s": np.array([1, 1, 2, 1.5], np.float32)},
        19,
    )
    inputs = {"x": np.random.default_rng(0).standard_normal((1, 2, 3, 3)).astype(np.float32)}
    expected = execute(graph, inputs)["y"]
    assert expected.shape == (1, 2, 6, 4)
    np.testing.assert_array_equal(simulate(graph, "x86-h100", inputs=inputs).outputs["y"], expected)


def test_an_empty_axis_resized_to_a_size_is_refused_and_to_zero_taken() -> None:
    # it divided by the empty axis: "expected attributes its shape rule can use, got
    # ZeroDivisionError"; onnx's reference fails too (there is nothing to sample)
    x = np.ones((1, 1, 0, 4), np.float32)

    def resized(sizes: list[int]) -> Graph:
        op = Op("Resize", "r", ("x", "", "", "s"), ("y",), {"mode": "linear"})
        return Graph("g", (op,), {"x": TensorType(x.shape, "float32")}, ("y",),
                     {"s": np.array(sizes, np.int64)}, opset=13)  # fmt: skip

    message = "op r (Resize): expected a non-empty axis 2 to resize to 3, got size 0"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        execute(resized([1, 1, 3, 4]), {"x": x})
    empty = resized([1, 1, 0, 8])
    assert execute(empty, {"x": x})["y"].shape == (1, 1, 0, 8)
    assert simulate(empty, "x86-h100", inputs={"x": x}).outputs["y"].shape == (1, 1, 0, 8)
