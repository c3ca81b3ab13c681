"""Reductions beyond the generic table: dtype kept, empty axes, unknown axes, cost."""

from __future__ import annotations

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
    assert kernel([x])[0] is x


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
