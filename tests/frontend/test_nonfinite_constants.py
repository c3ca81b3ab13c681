"""Inputs that are inf or NaN where a shape rule needs a number (a Range's bounds, a Resize's
scales, a OneHot's depth): an `OpError` naming the op and the input, whether the values are
constants of the model (folded while it loads) or arrays given to the run."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402

import hetsim  # noqa: E402
from hetsim.errors import OpError  # noqa: E402
from hetsim.frontend import load_onnx  # noqa: E402
from hetsim.ir import Op  # noqa: E402
from hetsim.kernels import OPS, Meta  # noqa: E402
from tests.frontend.test_onnx import _model as onnx_model  # noqa: E402
from tests.frontend.test_onnx import _vi  # noqa: E402

TARGET = "x86-h100"
INF, NAN = float("inf"), float("nan")


def _raises(message: str) -> Any:
    return pytest.raises(OpError, match=f"^{re.escape(message)}$")


def _model(
    node: onnx.NodeProto,
    inputs: dict[str, list[int]],
    constants: dict[str, np.ndarray],
    *,
    opset: int = 17,
) -> onnx.ModelProto:
    """`node` with float graph inputs `inputs` (name -> shape) and initializers `constants`, its
    output y of unknown shape."""
    weights = [numpy_helper.from_array(value, name) for name, value in constants.items()]
    graph_inputs = [_vi(name, shape) for name, shape in inputs.items()]
    return onnx_model([node], graph_inputs, [_vi("y", None)], weights, opset=opset)


def _f32(*values: float) -> np.ndarray:
    return np.array(values if len(values) > 1 else values[0], np.float32)


RANGE = helper.make_node("Range", ["a", "b", "c"], ["y"], name="rg")
RANGES = [
    ((0, INF, 1), "op rg (Range): expected a finite limit, got inf"),
    ((0, NAN, 1), "op rg (Range): expected a finite limit, got nan"),
    ((-INF, 4, 1), "op rg (Range): expected a finite start, got -inf"),
    ((0, 4, NAN), "op rg (Range): expected a finite delta, got nan"),
]
RANGE_IDS = ["limit-inf", "limit-nan", "start-inf", "delta-nan"]


@pytest.mark.parametrize(("bounds", "message"), RANGES, ids=RANGE_IDS)
def test_a_range_of_nonfinite_constants_is_refused_while_folding(
    bounds: tuple[float, float, float], message: str
) -> None:
    # OverflowError: cannot convert float infinity to integer (ValueError for NaN), from load
    constants = {name: _f32(value) for name, value in zip("abc", bounds, strict=True)}
    with _raises(f"model g: {message}"):
        load_onnx(_model(RANGE, {}, constants))


@pytest.mark.parametrize(("bounds", "message"), RANGES, ids=RANGE_IDS)
def test_a_range_of_nonfinite_inputs_is_refused(
    bounds: tuple[float, float, float], message: str
) -> None:
    # it said "expected attributes its shape rule can use, got OverflowError: cannot convert
    # float infinity to integer", which names no input
    model = load_onnx(_model(RANGE, {"a": [], "b": [], "c": []}, {}))
    inputs = {name: _f32(value) for name, value in zip("abc", bounds, strict=True)}
    with _raises(message):
        hetsim.simulate(model, TARGET, inputs=inputs)


RESIZE = helper.make_node("Resize", ["x", "", "s"], ["y"], name="rz", mode="nearest")
UPSAMPLE = helper.make_node("Upsample", ["x", "s"], ["y"], name="up", mode="nearest")
FINITE = "expected finite scales, got"
SCALES = [
    (RESIZE, 17, (1, 1, INF, INF), f"op rz (Resize): {FINITE} [1.0, 1.0, inf, inf]"),
    (RESIZE, 17, (1, 1, NAN, 2), f"op rz (Resize): {FINITE} [1.0, 1.0, nan, 2.0]"),
    (UPSAMPLE, 9, (1, 1, 2, INF), f"op up (Upsample): {FINITE} [1.0, 1.0, 2.0, inf]"),
]
SCALES_IDS = ["resize-inf", "resize-nan", "upsample-inf"]
X = np.zeros((1, 1, 4, 4), np.float32)


@pytest.mark.parametrize(("node", "opset", "scales", "message"), SCALES, ids=SCALES_IDS)
def test_nonfinite_constant_scales_are_refused(
    node: onnx.NodeProto, opset: int, scales: tuple[float, ...], message: str
) -> None:
    # OverflowError: cannot convert float infinity to integer, from load (folding the shapes)
    model = load_onnx(_model(node, {"x": [1, 1, 4, 4]}, {"s": _f32(*scales)}, opset=opset))
    with _raises(message):
        hetsim.simulate(model, TARGET, mode="timing")


@pytest.mark.parametrize(("node", "opset", "scales", "message"), SCALES, ids=SCALES_IDS)
def test_nonfinite_input_scales_are_refused(
    node: onnx.NodeProto, opset: int, scales: tuple[float, ...], message: str
) -> None:
    # said "expected attributes its shape rule can use, got OverflowError: ..." (inf) or
    # "expected positive scales" (NaN, which is no more negative than positive)
    model = load_onnx(_model(node, {"x": [1, 1, 4, 4], "s": [4]}, {}, opset=opset))
    with _raises(message):
        hetsim.simulate(model, TARGET, inputs={"x": X, "s": _f32(*scales)})


def test_nonfinite_scales_attribute_is_refused() -> None:
    # Upsample-7 holds its scales as an attribute: OverflowError from load
    node = helper.make_node(
        "Upsample", ["x"], ["y"], name="up", mode="nearest", scales=[1.0, 1.0, INF, 2.0]
    )
    model = load_onnx(_model(node, {"x": [1, 1, 4, 4]}, {}, opset=7))
    with _raises(f"op up (Upsample): {FINITE} [1.0, 1.0, inf, 2.0]"):
        hetsim.simulate(model, TARGET, mode="timing")


ONE_HOT = helper.make_node("OneHot", ["i", "d", "v"], ["y"], name="oh")
DEPTHS = [(INF, "op oh (OneHot): expected a finite depth, got inf"),
          (NAN, "op oh (OneHot): expected a finite depth, got nan")]  # fmt: skip
VALUES = np.array([0, 1], np.float32)


@pytest.mark.parametrize(("depth", "message"), DEPTHS, ids=["inf", "nan"])
def test_a_nonfinite_constant_depth_is_refused_while_folding(depth: float, message: str) -> None:
    # OverflowError: cannot convert float infinity to integer (ValueError for NaN), from load
    constants = {"i": np.array([0, 2], np.int64), "d": _f32(depth), "v": VALUES}
    with _raises(f"model g: {message}"):
        load_onnx(_model(ONE_HOT, {}, constants))


@pytest.mark.parametrize(("depth", "message"), DEPTHS, ids=["inf", "nan"])
def test_a_nonfinite_input_depth_is_refused(depth: float, message: str) -> None:
    # OverflowError (ValueError for NaN), named "expected attributes its shape rule can use"
    model = load_onnx(_model(ONE_HOT, {"d": []}, {"i": np.array([0, 2], np.int64), "v": VALUES}))
    with _raises(message):
        hetsim.simulate(model, TARGET, inputs={"d": _f32(depth)})


class _Unexpected(Exception):
    """What a shape rule raises that none of its own checks foresaw."""


def test_a_shape_rule_failing_while_folding_names_the_op(monkeypatch: pytest.MonkeyPatch) -> None:
    # the exception itself came out of load_onnx, where propagate() names the op
    def infer(op: Op, opset: int, inputs: list[Meta | None]) -> list[Meta]:
        raise _Unexpected("cannot convert float infinity to integer")

    monkeypatch.setitem(OPS, "Range", replace(OPS["Range"], infer=infer))
    constants = {name: _f32(value) for name, value in zip("abc", (0, 4, 1), strict=True)}
    with _raises(
        "model g: op rg (Range): expected attributes its shape rule can use, got _Unexpected: "
        "cannot convert float infinity to integer"
    ):
        load_onnx(_model(RANGE, {}, constants))


def test_a_shape_rule_failing_on_an_op_of_graph_inputs_names_the_op_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # folding reads the shapes of ops it cannot compute, to fold what follows from them: the
    # exception came out of load_onnx there as well
    def infer(op: Op, opset: int, inputs: list[Meta | None]) -> list[Meta]:
        raise _Unexpected("boom")

    monkeypatch.setitem(OPS, "Range", replace(OPS["Range"], infer=infer))
    model = load_onnx(_model(RANGE, {"a": [], "b": [], "c": []}, {}))  # the op stays
    inputs = {name: _f32(value) for name, value in zip("abc", (0, 4, 1), strict=True)}
    expected = "expected attributes its shape rule can use, got _Unexpected: boom"
    with _raises(f"op rg (Range): {expected}"):
        hetsim.simulate(model, TARGET, inputs=inputs)


def test_a_range_of_finite_bounds_too_far_apart_is_refused() -> None:
    # (1e308 - -1e308) / 1 overflows to inf: the catch-all's OverflowError message came out
    constants = {"a": np.array(-1e308), "b": np.array(1e308), "c": np.array(1.0)}
    with _raises("model g: op rg (Range): expected a count of elements that fits a float, got inf"):
        load_onnx(_model(RANGE, {}, constants))
