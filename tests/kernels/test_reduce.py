"""Reductions beyond the generic table: dtype kept, empty axes, unknown axes, cost."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import Op
from hetsim.kernels import OPS, Meta


def _op(op_type: str, n_inputs: int = 1, **attrs: object) -> Op:
    return Op(op_type, "n0", tuple(f"x{i}" for i in range(n_inputs)), ("y",), attrs)


def test_reduce_mean_of_ints_keeps_int_dtype() -> None:
    x = np.array([[1, 2], [3, 5]], np.int64)
    (y,) = OPS["ReduceMean"].compile(_op("ReduceMean", axes=[1]), 13)([x])
    assert y.dtype == np.int64
    assert y.tolist() == [[1], [4]]


def test_reduce_sum_with_empty_axes_input_reduces_everything() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    kernel = OPS["ReduceSum"].compile(_op("ReduceSum", 2, keepdims=0), 13)
    (y,) = kernel([x, np.array([], np.int64)])
    assert y.shape == ()
    assert float(y) == 15.0


def test_reduce_noop_with_empty_axes_returns_the_input() -> None:
    x = np.arange(6, dtype=np.float32)
    kernel = OPS["ReduceMax"].compile(_op("ReduceMax", noop_with_empty_axes=1), 18)
    np.testing.assert_array_equal(kernel([x])[0], x)


@pytest.mark.parametrize(
    ("op_type", "x", "expected"),
    [
        ("ReduceL1", [-2.0, 3.0], [2.0, 3.0]),
        ("ReduceL2", [-2.0, 3.0], [2.0, 3.0]),
        ("ReduceSumSquare", [-2.0, 3.0], [4.0, 9.0]),
        ("ReduceLogSum", [1.0, math.e], [0.0, 1.0]),
        ("ReduceLogSumExp", [-2.0, 3.0], [-2.0, 3.0]),
        ("ReduceMean", [-2.0, 3.0], [-2.0, 3.0]),
    ],
)
@pytest.mark.parametrize("axes", [None, np.array([], np.int64)], ids=["omitted", "empty"])
def test_reduce_noop_with_empty_axes_keeps_the_non_reduction_steps(
    op_type: str, x: list[float], expected: list[float], axes: np.ndarray | None
) -> None:
    # ONNX (opset 18): "composite-reduction operators will still perform the non-reduction
    # steps"; ReduceSumSquare of [-2, 3] gave [-2, 3] back (onnxruntime: [4, 9])
    inputs = [np.array(x, np.float32)] + ([] if axes is None else [axes])
    kernel = OPS[op_type].compile(_op(op_type, len(inputs), noop_with_empty_axes=1), 18)
    np.testing.assert_allclose(kernel(inputs)[0], np.array(expected, np.float32), rtol=1e-6)


def test_reduce_needs_known_axes_to_infer_shape() -> None:
    metas = [Meta((2, 3), np.dtype("float32")), Meta((1,), np.dtype("int64"))]
    with pytest.raises(
        ModelError,
        match=r"^op n0 \(ReduceMean\): expected a known value for input 1 \(axes\), "
        r"got a computed tensor 'x1'$",
    ):
        OPS["ReduceMean"].infer(_op("ReduceMean", 2), 18, metas)


def test_reduce_cost_is_one_flop_per_input_element() -> None:
    x = Meta((4, 6), np.dtype("float32"))
    op = _op("ReduceSum", axes=[1], keepdims=0)
    out = OPS["ReduceSum"].infer(op, 11, [x])
    cost = OPS["ReduceSum"].cost(op, [x], out)
    assert out[0].shape == (4,)
    assert (cost.flops, cost.bytes_read, cost.bytes_written, cost.op_class) == (
        24.0,
        96,
        16,
        "reduction",
    )


@pytest.mark.parametrize(
    ("op_type", "dtype", "want"),
    [
        ("ReduceMax", "float32", -np.inf),
        ("ReduceMin", "float32", np.inf),
        ("ReduceMax", "int32", np.iinfo(np.int32).min),
        ("ReduceMin", "uint8", 255),
        ("ReduceMax", "bool", False),
        ("ReduceMin", "bool", True),
    ],
)
def test_extremes_of_an_empty_set_are_the_identity(op_type: str, dtype: str, want: object) -> None:
    # ONNX: the max of nothing is the lowest value of the type (-inf for floats); numpy raises
    x = np.zeros((2, 0, 4), dtype)
    (y,) = OPS[op_type].compile(_op(op_type, 2, keepdims=1), 18)([x, np.array([1], np.int64)])
    assert (y.dtype, y.shape) == (np.dtype(dtype), (2, 1, 4))
    assert (y == want).all()
