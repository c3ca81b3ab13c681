"""Elementwise ops beyond the generic table: dtypes kept, numerics at the edges, every error."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.api import simulate
from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import OPS, Meta
from hetsim.kernels.checks import broadcast_shape
from hetsim.kernels.unary import erf

UNARY_FLOAT = [
    "Relu", "Neg", "Abs", "Sqrt", "Exp", "Log", "Reciprocal", "Floor", "Ceil", "Erf", "Tanh",
    "Sigmoid", "Softsign", "Softplus", "LeakyRelu", "Elu", "Selu", "HardSigmoid", "Gelu", "Sign",
    "Shrink", "Round", "HardSwish", "Mish", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
    "Cosh", "Asinh", "Acosh", "Atanh",
]  # fmt: skip


def _run(op: Op, *inputs: np.ndarray | None, opset: int = 17) -> list[np.ndarray]:
    return OPS[op.type].compile(op, opset)(list(inputs))


def _op(op_type: str, n_inputs: int = 1, **attrs: object) -> Op:
    return Op(op_type, "n0", tuple(f"x{i}" for i in range(n_inputs)), ("y",), attrs)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # Acosh of 0.25
@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")  # Atanh of 1
@pytest.mark.parametrize("op_type", UNARY_FLOAT)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_unary_keeps_float_dtype(op_type: str, dtype: type) -> None:
    x = np.linspace(0.25, 2.0, 8).astype(dtype)
    (y,) = _run(_op(op_type), x, opset=20)
    assert y.dtype == np.dtype(dtype)


def test_erf_matches_math_erf_to_float64_precision_scale() -> None:
    x = np.linspace(-6.0, 6.0, 2001)
    expected = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(erf(x), expected, rtol=1e-7, atol=6e-8)


def test_erf_is_relatively_accurate_near_zero() -> None:
    x = np.array([1e-8, -1e-5, 3e-3])
    expected = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(erf(x), expected, rtol=1e-12)


def test_sigmoid_and_softplus_do_not_overflow() -> None:
    x = np.array([-1e4, -100.0, 0.0, 100.0, 1e4], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (sig,) = _run(_op("Sigmoid"), x)
        (soft,) = _run(_op("Softplus"), x)
    assert sig.tolist() == [0.0, 0.0, 0.5, 1.0, 1.0]
    np.testing.assert_allclose(soft, [0.0, 0.0, math.log(2), 100.0, 1e4], rtol=1e-6, atol=1e-40)


def test_int_div_truncates_toward_zero() -> None:
    (y,) = _run(_op("Div", 2), np.array([7, -7, 7, -7, 6]), np.array([2, 2, -2, -2, 3]))
    assert y.tolist() == [3, -3, -3, 3, 2]


@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("dtype", ["int32", "uint32"])
@pytest.mark.parametrize("fmod", [None, 0, 1])
def test_integer_division_by_zero_is_refused_not_zero(fmod: int | None, dtype: str) -> None:
    # numpy gave 0 (with a warning), a number ONNX leaves undefined; a constant folded so
    op = _op("Div", 2) if fmod is None else _op("Mod", 2, fmod=fmod)
    with pytest.raises(ZeroDivisionError, match=r"^integer division by zero$"):
        _run(op, np.array([7, 6], dtype), np.array([2, 0], dtype))
    (y,) = _run(op, np.array([7.0], np.float32), np.array([0.0], np.float32))  # floats: inf/nan
    assert not np.isfinite(y).any()
    graph = Graph(
        "g",
        (op,),
        {"x0": TensorType((2,), dtype), "x1": TensorType((2,), dtype)},
        ("y",),
    )
    message = (
        f"^op {op.name} \\({op.type}\\): expected its kernel to compute, got ZeroDivisionError"
    )
    with pytest.raises(ModelError, match=message):
        simulate(graph, "x86-cpu", inputs={"x0": np.array([7, 6], dtype),
                                           "x1": np.array([2, 0], dtype)})  # fmt: skip


def test_pow_keeps_base_dtype_with_int_exponent() -> None:
    (y,) = _run(_op("Pow", 2), np.array([1.5, 2.0], np.float32), np.array(2, np.int64))
    assert y.dtype == np.float32
    assert y.tolist() == [2.25, 4.0]


def test_int_pow_to_a_negative_power_truncates_toward_zero() -> None:
    # numpy refuses integers to negative integer powers; the real power, truncated as
    # onnxruntime gives it: 2^-1 = 0.5 -> 0, (-1)^-3 = -1, (-1)^-2 = 1, 1^-3 = 1
    base = np.array([[2], [-1], [1], [-3]], np.int32)
    (y,) = _run(_op("Pow", 2), base, np.array([-1, -2, -3, 2], np.int64))
    expected = [[int(float(a) ** e) for e in (-1, -2, -3, 2)] for a in (2, -1, 1, -3)]
    assert y.dtype == np.int32
    assert y.tolist() == expected


def test_int_zero_to_a_negative_power_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^expected a nonzero base where the exponent is negat"):
        _run(_op("Pow", 2), np.array([0, 2]), np.array([-1, 1]))


def test_clip_attribute_form_reads_min_and_max() -> None:
    (y,) = _run(_op("Clip", min=-1.0, max=2.0), np.array([-3.0, 0.5, 3.0], np.float32), opset=6)
    assert y.tolist() == [-1.0, 0.5, 2.0]


def test_cast_accepts_a_numpy_dtype_name() -> None:
    (y,) = _run(_op("Cast", to="int32"), np.array([1.7, -1.7], np.float32))
    assert y.dtype == np.int32
    assert y.tolist() == [1, -1]


def test_a_cast_of_nan_inf_or_out_of_range_to_an_integer_warns_nothing() -> None:
    # implementation-defined in ONNX; numpy printed "RuntimeWarning: invalid value encountered
    # in cast" on hetsim run's stderr (a folded Cast of a NaN constant)
    x = np.array([np.nan, np.inf, -np.inf, 1e10, 1.5], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (y,) = _run(_op("Cast", to="int32"), x)
        (z,) = _run(Op("CastLike", "c", ("x", "like"), ("z",)), x, np.zeros(1, np.int32))
    assert (y.dtype, z.dtype) == (np.int32, np.int32)
    assert (y[-1], z[-1]) == (1, 1)


def test_dropout_mask_is_all_true_in_inference() -> None:
    op = Op("Dropout", "d", ("x",), ("y", "mask"))
    x = np.arange(4, dtype=np.float32)
    y, mask = _run(op, x, opset=13)
    assert y is x
    assert mask.dtype == np.bool_
    assert mask.all()


def test_sum_of_one_input_is_that_input() -> None:
    x = np.arange(3, dtype=np.float32)
    assert _run(_op("Sum"), x)[0] is x


def test_gelu_rejects_unknown_approximation() -> None:
    with pytest.raises(
        ModelError, match=r"^op n0 \(Gelu\): expected approximate 'none' or 'tanh', got 'fast'$"
    ):
        _run(_op("Gelu", approximate="fast"), np.zeros(1, np.float32))


def test_cast_rejects_unsupported_dtype_code() -> None:
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(Cast\): expected a supported dtype code \[1, 2, 3, 4, 5, 6, 7, 9, 10, "
        r"11, 12, 13\], got 8$",
    ):
        OPS["Cast"].compile(_op("Cast", to=8), 17)


def test_cast_requires_to() -> None:
    with pytest.raises(ModelError, match=r"^op n0 \(Cast\): missing required attribute 'to'$"):
        OPS["Cast"].compile(_op("Cast"), 17)


def test_dropout_ignores_the_old_is_test_flag() -> None:
    x = np.arange(3, dtype=np.float32)
    assert OPS["Dropout"].compile(_op("Dropout", is_test=0), 6)([x])[0] is x


def test_dropout_rejects_training_mode_input() -> None:
    op = Op("Dropout", "n0", ("x", "r", "t"), ("y",))
    kernel = OPS["Dropout"].compile(op, 13)
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(Dropout\): expected training_mode false \(inference\), got True$",
    ):
        kernel([np.zeros(2, np.float32), None, np.array(True)])


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_constant_training_mode_is_refused_in_both_modes(mode: str) -> None:
    # timing mode runs no kernel: a Dropout in training mode ran there, and failed functional
    graph = Graph(
        "g",
        (Op("Dropout", "n0", ("x", "", "t"), ("y",)),),
        {"x": TensorType((2,), "float32")},
        ("y",),
        {"t": np.array(True)},
    )
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(Dropout\): expected training_mode false \(inference\), got True$",
    ):
        simulate(graph, "x86-cpu", mode=mode)
    graph = dataclasses.replace(graph, initializers={"t": np.array(False)})
    assert simulate(graph, "x86-cpu", mode=mode).makespan_us > 0


def test_binary_shape_rule_rejects_unbroadcastable_shapes() -> None:
    metas = [Meta((2, 3), np.dtype("float32")), Meta((4,), np.dtype("float32"))]
    with pytest.raises(
        ModelError, match=r"^op n0 \(Add\): expected broadcastable shapes, got \[2, 3\] and \[4\]$"
    ):
        OPS["Add"].infer(_op("Add", 2), 17, metas)


def test_prelu_shape_rule_rejects_a_slope_wider_than_x() -> None:
    metas = [Meta((3,), np.dtype("float32")), Meta((2, 3), np.dtype("float32"))]
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(PRelu\): expected a slope that broadcasts to \[3\], got \[2, 3\]$",
    ):
        OPS["PRelu"].infer(_op("PRelu", 2), 17, metas)


def test_prelu_before_opset_7_applies_a_1d_slope_per_channel() -> None:
    # axis 1 has 3 channels, and so has the last axis: the slope goes along axis 1, not the last
    x = np.linspace(-2.0, 1.0, 18, dtype=np.float32).reshape(2, 3, 3)
    slope = np.array([0.5, 2.0, 4.0], np.float32)
    (y,) = _run(_op("PRelu", 2), x, slope, opset=6)
    by_channel = slope.reshape(1, 3, 1)
    np.testing.assert_array_equal(y, np.where(x < 0, x * by_channel, x))
    assert y[0, 2, 0] == x[0, 2, 0] * 4.0  # a negative input of channel 2
    metas = [Meta((2, 3, 4), np.dtype("float32")), Meta((3,), np.dtype("float32"))]
    assert OPS["PRelu"].infer(_op("PRelu", 2), 6, metas) == [Meta((2, 3, 4), np.dtype("float32"))]


def test_prelu_from_opset_7_broadcasts_as_numpy_does() -> None:
    x = np.linspace(-2.0, 1.0, 18, dtype=np.float32).reshape(2, 3, 3)
    slope = np.array([0.5, 2.0, 4.0], np.float32)
    (y,) = _run(_op("PRelu", 2), x, slope, opset=7)
    np.testing.assert_array_equal(y, np.where(x < 0, x * slope, x))  # along the last axis
    metas = [Meta((2, 3, 4), np.dtype("float32")), Meta((3,), np.dtype("float32"))]
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(PRelu\): expected broadcastable shapes, got \[2, 3, 4\] and \[3\]$",
    ):
        OPS["PRelu"].infer(_op("PRelu", 2), 7, metas)


def test_comparison_shape_rule_gives_bool() -> None:
    metas = [Meta((2, 1), np.dtype("float32")), Meta((3,), np.dtype("float32"))]
    (out,) = OPS["Less"].infer(_op("Less", 2), 17, metas)
    assert (out.shape, out.dtype) == ((2, 3), np.dtype(bool))


def test_unary_cost_counts_flops_per_element() -> None:
    x = Meta((4, 5), np.dtype("float32"))
    out = OPS["Sigmoid"].infer(_op("Sigmoid"), 17, [x])
    cost = OPS["Sigmoid"].cost(_op("Sigmoid"), [x], out)
    # 0.5·tanh(0.5·x) + 0.5: 3 passes and a tanh of 10 (docs/cost-model.md), 20 elements
    assert (cost.flops, cost.bytes_read, cost.bytes_written, cost.op_class) == (
        20 * 13,
        80,
        80,
        "elementwise",
    )


def test_sum_cost_is_one_add_per_extra_input() -> None:
    metas = [Meta((10,), np.dtype("float32"))] * 3
    op = _op("Sum", 3)
    cost = OPS["Sum"].cost(op, metas, OPS["Sum"].infer(op, 17, metas))
    assert (cost.flops, cost.bytes_read, cost.bytes_written) == (20.0, 120, 40)


_SHAPES = st.lists(st.lists(st.integers(0, 3), max_size=4).map(tuple), min_size=1, max_size=3)


@given(shapes=_SHAPES)
@settings(max_examples=300, deadline=None)
def test_broadcast_shape_is_numpys_rule(shapes: list[tuple[int, ...]]) -> None:
    op = Op("Add", "add", ("a", "b"), ("c",))
    try:
        expected: tuple[int, ...] | None = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        expected = None
    if expected is None:
        with pytest.raises(ModelError, match=r"^op add \(Add\): expected broadcastable shapes"):
            broadcast_shape(op, *shapes)
    else:
        assert broadcast_shape(op, *shapes) == expected


def test_broadcast_shape_of_sizes_numpy_cannot_index() -> None:
    # numpy's "broadcast dimensions too large" was reported as shapes not broadcastable
    op = Op("Div", "scale", ("a", "b"), ("c",))
    assert broadcast_shape(op, (1, 4, 10**11, 10**11), ()) == (1, 4, 10**11, 10**11)


@pytest.mark.parametrize("op_type", ["Relu", "Neg", "Sigmoid", "Gelu"])
def test_a_unary_op_with_two_inputs_is_an_error(op_type: str) -> None:
    # the second input was ignored: a model that says otherwise ran as if it did not
    op = Op(op_type, "u", ("x", "x"), ("y",))
    meta = Meta((1, 4), np.dtype("float32"))
    message = rf"^op u \({op_type}\): expected at most 1 input, got 2$"
    with pytest.raises(ModelError, match=message):
        OPS[op_type].infer(op, 20, [meta, meta])
    with pytest.raises(ModelError, match=message):
        OPS[op_type].compile(op, 20)


def test_celu_with_zero_alpha_is_an_error() -> None:
    with pytest.raises(ModelError, match=r"^op n0 \(Celu\): expected a non-zero alpha, got 0\.0$"):
        OPS["Celu"].compile(_op("Celu", alpha=0.0), 12)


@pytest.mark.parametrize(
    ("dtype", "direction", "x", "by", "want"),
    [
        ("int8", "RIGHT", [-128, -5, 64, -1], [7, 8, 1, -1], [-1, -1, 32, -1]),
        ("int8", "LEFT", [1, 64, -1, 3], [7, 1, 8, -2], [-128, -128, 0, 0]),
        ("uint8", "RIGHT", [255, 128, 7, 9], [7, 8, 1, 0], [1, 0, 3, 9]),
        ("int32", "LEFT", [1, 3, -1, 5], [31, 30, 32, 40], [-(2**31), -(2**30), 0, 0]),
    ],
)
def test_bit_shift_edges_follow_onnx(
    dtype: str, direction: str, x: list[int], by: list[int], want: list[int]
) -> None:
    # a signed right shift extends the sign; shifting by the width or more, or by a negative
    # amount, gives the fill alone; a left shift moves bits through the sign bit
    op = _op("BitShift", 2, direction=direction)
    (y,) = _run(op, np.array(x, dtype), np.array(by, dtype), opset=28)
    assert y.dtype == np.dtype(dtype)
    assert y.tolist() == want


def test_clip_bounds_are_scalars_or_one_element() -> None:
    # a min of shape (3,) broadcast a scalar x to (3,) where the shape rule said (); onnxruntime
    # takes a 1-D bound of one element as a scalar, and refuses any other
    op = _op("Clip", 3)
    x = np.array(5.0, np.float32)
    (y,) = _run(op, x, np.array([1.0], np.float32), np.array([2.0], np.float32))
    assert y.shape == ()
    assert y == 2.0
    metas = [Meta.of(x), Meta.of(np.array([1.0], np.float32)), None]
    assert OPS["Clip"].infer(op, 17, metas)[0].shape == ()
    wide = [Meta.of(x), Meta.of(np.zeros(3, np.float32)), None]
    message = (
        r"^op n0 \(Clip\): expected input 1 \(min\) a scalar \(or one element, 1-D\), "
        r"got shape \(3,\)$"
    )
    with pytest.raises(ModelError, match=message):
        OPS["Clip"].infer(op, 17, wide)
