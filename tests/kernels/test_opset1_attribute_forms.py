"""Opset-1 attribute forms that later versions replaced: Upsample-1's ``height_scale`` and
``width_scale`` (Upsample-7's ``scales``) and its ``bilinear`` mode, LpPool-1's and
GlobalLpPool-1's FLOAT ``p`` (an INT from opset 2). Each was accepted by the attribute table
and then refused by a kernel that read only the later form."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import Op
from hetsim.kernels import OPS, Meta


def _run(op: Op, x: np.ndarray, opset: int = 1) -> np.ndarray:
    return OPS[op.type].compile(op, opset)([x])[0]


def _raises(message: str) -> pytest.RaisesContext[ModelError]:
    return pytest.raises(ModelError, match=f"^{re.escape(message)}$")


def _upsample(**attrs: object) -> Op:
    return Op("Upsample", "up", ("x",), ("y",), attrs)


def test_upsample_1_nearest_is_the_spec_s_example() -> None:
    # missing required attribute 'scales': Upsample-7's, which opset 1 does not take
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    y = _run(_upsample(height_scale=2.0, width_scale=2.0, mode="nearest"), x)
    expected = [[[[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]]]  # onnx's Upsample-1 doc
    assert y.tolist() == expected


def test_upsample_1_scales_height_and_width_apart() -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 2, 2)).astype(np.float32)
    y = _run(_upsample(height_scale=2.0, width_scale=3.0), x)  # mode defaults to nearest
    np.testing.assert_array_equal(y, np.repeat(np.repeat(x, 2, axis=2), 3, axis=3))


def test_upsample_1_bilinear_interpolates_asymmetric_coordinates() -> None:
    # Upsample-7's linear under its old name: output i samples input i / scale, edges clamped
    x = np.array([[[[1, 3], [5, 7]]]], np.float32)
    y = _run(_upsample(height_scale=2.0, width_scale=3.0, mode="bilinear"), x)
    rows = [np.interp(np.arange(6) / 3, [0, 1], row) for row in x[0, 0]]
    expected = [np.interp(np.arange(4) / 2, [0, 1], column) for column in np.array(rows).T]
    np.testing.assert_allclose(y[0, 0], np.array(expected).T, rtol=1e-6)
    assert y[0, 0, 1].tolist() == pytest.approx([3, 11 / 3, 13 / 3, 5, 5, 5])


def test_upsample_1_bilinear_costs_as_linear() -> None:
    # its cost rule read the mode's name alone: 'bilinear' cost as nearest, a copy (0 flops)
    metas = [Meta((1, 1, 2, 2), np.dtype("float32"))]
    old = _upsample(height_scale=2.0, width_scale=3.0, mode="bilinear")
    (out,) = OPS["Upsample"].infer(old, 1, metas)
    cost = OPS["Upsample"].cost(old, metas, [out])
    new = Op("Upsample", "up", ("x",), ("y",), {"mode": "linear", "scales": [1.0, 1.0, 2.0, 3.0]})
    assert cost == OPS["Upsample"].cost(new, metas, [out])
    assert cost.flops == 2 * 4 * 24  # 2 taps per resized axis, 2 flops each, per output element


def test_upsample_1_output_shape_floors_dim_times_scale() -> None:
    op = _upsample(height_scale=1.5, width_scale=2.5)
    (out,) = OPS["Upsample"].infer(op, 1, [Meta((1, 1, 3, 3), np.dtype("float32"))])
    assert out.shape == (1, 1, 4, 7)


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        (
            {"height_scale": 2.0},
            "op up (Upsample): missing required attribute 'width_scale'",
        ),
        (
            {"height_scale": 2.0, "width_scale": 2.0, "mode": "linear"},
            "op up (Upsample): expected mode 'nearest' or 'bilinear', got 'linear' (did you "
            "mean 'bilinear'?)",
        ),
    ],
    ids=["no-width-scale", "linear-is-opset-7-s-name"],
)
def test_upsample_1_refuses_what_its_spec_does_not_take(
    attrs: dict[str, object], message: str
) -> None:
    with _raises(message):
        OPS["Upsample"].compile(_upsample(**attrs), 1)


def _lp_pool(p: float, op_type: str = "LpPool") -> Op:
    attrs: dict[str, object] = {"p": p}
    if op_type == "LpPool":
        attrs["kernel_shape"] = [2, 2]
    return Op(op_type, "lp", ("x",), ("y",), attrs)


X = np.abs(np.random.default_rng(0).standard_normal((1, 2, 3, 3)).astype(np.float32))


@pytest.mark.parametrize("p", [3.0, 2.5])
def test_lp_pool_1_takes_a_float_p_as_the_reference_evaluator_does(p: float) -> None:
    # "expected attribute 'p' to be an integer, got 3.0": LpPool-2's INT, not LpPool-1's FLOAT
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2])
    node.attribute.append(helper.make_attribute("p", p))
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(X.shape))],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 1)])
    model.ir_version = 3
    (expected,) = ReferenceEvaluator(model).run(None, {"x": X})
    np.testing.assert_allclose(_run(_lp_pool(p), X), expected, rtol=1e-5)


def test_global_lp_pool_1_takes_a_float_p() -> None:
    expected = (X.astype(np.float64) ** 3).sum(axis=(2, 3), keepdims=True) ** (1 / 3)
    np.testing.assert_allclose(_run(_lp_pool(3.0, "GlobalLpPool"), X), expected, rtol=1e-6)


@pytest.mark.parametrize(
    ("op_type", "p", "opset", "message"),
    [
        ("LpPool", 0.5, 1, "op lp (LpPool): expected p >= 1, got 0.5"),
        ("GlobalLpPool", 0.5, 1, "op lp (GlobalLpPool): expected p >= 1, got 0.5"),
        (
            "LpPool",
            3.0,
            2,
            "op lp (LpPool): expected attribute 'p' to be an integer, got 3.0",
        ),
    ],
    ids=["lp-pool-1-below-1", "global-lp-pool-1-below-1", "lp-pool-2-float"],
)
def test_lp_pool_p_is_checked_by_its_version_s_type(
    op_type: str, p: float, opset: int, message: str
) -> None:
    with _raises(message):
        OPS[op_type].compile(_lp_pool(p, op_type), opset)
