"""RotaryEmbedding, TensorScatter and SwiGLU: shape-rule errors (each message exact), costs, and
the kernel's behaviour where onnx's reference has no case (a linear write past the cache)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import OPS, Meta, execute
from hetsim.kernels.unary import TRANSCENDENTAL_FLOPS

F32 = np.dtype(np.float32)
I64 = np.dtype(np.int64)


def _meta(*shape: int, dtype: np.dtype = F32) -> Meta:
    return Meta(shape, dtype)


def _rotary(inputs: int = 4, **attrs: object) -> Op:
    names = ("x", "cos", "sin", "ids")[:inputs]
    return Op("RotaryEmbedding", "rope0", names, ("y",), dict(attrs))


def _scatter(**attrs: object) -> Op:
    return Op("TensorScatter", "ts0", ("past", "update", "at"), ("present",), dict(attrs))


def _infer_error(op: Op, opset: int, metas: list[Meta | None], message: str) -> None:
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        OPS[op.type].infer(op, opset, metas)


@pytest.mark.parametrize(
    ("attrs", "metas", "message"),
    [
        (
            {},
            [_meta(2, 3, 24), _meta(8, 4), _meta(8, 4), _meta(2, 3, dtype=I64)],
            "op rope0 (RotaryEmbedding): expected num_heads for a 3-D X, got none",
        ),
        (
            {"num_heads": 5},
            [_meta(2, 3, 24), _meta(8, 4), _meta(8, 4), _meta(2, 3, dtype=I64)],
            "op rope0 (RotaryEmbedding): expected a hidden size divisible by num_heads 5, got 24",
        ),
        (
            {},
            [_meta(2, 3, 5, 8), _meta(8, 4), _meta(8, 4), _meta(2, 3, dtype=I64)],
            "op rope0 (RotaryEmbedding): expected position_ids of shape [2, 5], got [2, 3]",
        ),
        (
            {},
            [_meta(2, 3, 5, 8), _meta(8, 3), _meta(8, 3), _meta(2, 5, dtype=I64)],
            "op rope0 (RotaryEmbedding): expected 2-D cos_cache and sin_cache of width 4 "
            "(rotary_embedding_dim / 2), got [8, 3] and [8, 3]",
        ),
        (
            {"rotary_embedding_dim": 4},
            [_meta(2, 3, 5, 8), _meta(8, 4), _meta(8, 4), _meta(2, 5, dtype=I64)],
            "op rope0 (RotaryEmbedding): expected 2-D cos_cache and sin_cache of width 2 "
            "(rotary_embedding_dim / 2), got [8, 4] and [8, 4]",
        ),
        (
            {"rotary_embedding_dim": 16},
            [_meta(2, 3, 5, 8), _meta(8, 8), _meta(8, 8), _meta(2, 5, dtype=I64)],
            "op rope0 (RotaryEmbedding): expected a rotary_embedding_dim of at most the head "
            "size 8, got 16",
        ),
        (
            {"rotary_embedding_dim": 3},
            [_meta(2, 3, 5, 8), _meta(8, 4), _meta(8, 4), _meta(2, 5, dtype=I64)],
            "op rope0 (RotaryEmbedding): expected an even rotary_embedding_dim of 0 or more, got 3",
        ),
        (
            {},
            [_meta(2, 3, 5, 7), _meta(8, 3), _meta(8, 3), _meta(2, 5, dtype=I64)],
            "op rope0 (RotaryEmbedding): expected an even head size to rotate, got 7",
        ),
        (
            {},
            [_meta(3, 8), _meta(8, 4), _meta(8, 4), _meta(3, dtype=I64)],
            "op rope0 (RotaryEmbedding): expected a 3-D or 4-D X, got [3, 8]",
        ),
        (
            {"num_heads": 0},
            [_meta(2, 3, 24), _meta(8, 4), _meta(8, 4), _meta(2, 3, dtype=I64)],
            "op rope0 (RotaryEmbedding): expected num_heads of 1 or more, got 0",
        ),
    ],
)
def test_rotary_shape_errors(attrs: dict, metas: list[Meta | None], message: str) -> None:
    _infer_error(_rotary(**attrs), 23, metas, message)


def test_rotary_gathered_caches_must_match_batch_and_sequence() -> None:
    metas = [_meta(2, 3, 5, 8), _meta(2, 4, 4), _meta(2, 4, 4), None]
    message = (
        "op rope0 (RotaryEmbedding): expected cos_cache and sin_cache of shape [2, 5, 4] "
        "(rotary_embedding_dim / 2), got [2, 4, 4] and [2, 4, 4]"
    )
    _infer_error(_rotary(inputs=3), 23, metas, message)


def test_rotary_cost_counts_rotated_elements_and_the_rows_read() -> None:
    op = _rotary(rotary_embedding_dim=4)
    metas = [_meta(2, 3, 5, 8), _meta(100, 2), _meta(100, 2), _meta(2, 5, dtype=I64)]
    outputs = OPS["RotaryEmbedding"].infer(op, 23, metas)
    cost = OPS["RotaryEmbedding"].cost(op, metas, outputs)
    rotated = 2 * 3 * 5 * 4
    rows = 2 * (2 * 5 * 2) * 4  # cos and sin, B·S·R/2 float32 values each
    assert cost.flops == 3 * rotated
    assert cost.bytes_read == 2 * 3 * 5 * 8 * 4 + rows + 2 * 5 * 8
    assert cost.bytes_written == 2 * 3 * 5 * 8 * 4
    assert cost.op_class == "elementwise"


def test_rotary_leaves_the_passthrough_as_is() -> None:
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 2, 8)
    cos, sin = np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)
    op = _rotary(rotary_embedding_dim=4)
    (y,) = OPS["RotaryEmbedding"].compile(op, 23)([x, cos, sin, np.array([[0, 1]])])
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize(
    ("attrs", "metas", "message"),
    [
        (
            {},
            [_meta(2, 3, 6, 4), _meta(2, 3, 7, 4), None],
            "op ts0 (TensorScatter): expected an update of past_cache's shape [2, 3, 6, 4] but "
            "at most 6 along axis 2, got [2, 3, 7, 4]",
        ),
        (
            {},
            [_meta(2, 3, 6, 4), _meta(2, 2, 2, 4), None],
            "op ts0 (TensorScatter): expected an update of past_cache's shape [2, 3, 6, 4] but "
            "at most 6 along axis 2, got [2, 2, 2, 4]",
        ),
        (
            {"axis": 1},
            [_meta(2, 3, 6, 4), _meta(2, 3, 6), None],
            "op ts0 (TensorScatter): expected an update of past_cache's shape [2, 3, 6, 4] but "
            "at most 3 along axis 1, got [2, 3, 6]",
        ),
        (
            {},
            [_meta(2, 3, 6, 4), _meta(2, 3, 2, 4), _meta(3, dtype=I64)],
            "op ts0 (TensorScatter): expected write_indices of shape [2], got [3]",
        ),
        (
            {"axis": 0},
            [_meta(2, 3, 6, 4), _meta(2, 3, 6, 4), None],
            "op ts0 (TensorScatter): expected a sequence axis other than the batch axis 0, got 0",
        ),
        (
            {"axis": 4},
            [_meta(2, 3, 6, 4), _meta(2, 3, 6, 4), None],
            "op ts0 (TensorScatter): expected an axis in [-4, 4), got 4",
        ),
        (
            {"mode": "ring"},
            [_meta(2, 3, 6, 4), _meta(2, 3, 2, 4), None],
            "op ts0 (TensorScatter): expected mode 'linear' or 'circular', got 'ring'",
        ),
    ],
)
def test_tensor_scatter_shape_errors(attrs: dict, metas: list[Meta | None], message: str) -> None:
    _infer_error(_scatter(**attrs), 24, metas, message)


def test_tensor_scatter_bad_mode_is_refused_at_compile() -> None:
    message = "op ts0 (TensorScatter): expected mode 'linear' or 'circular', got 'ring'"
    with pytest.raises(ModelError, match=f"^{re.escape(message)}$"):
        OPS["TensorScatter"].compile(_scatter(mode="ring"), 24)


def test_tensor_scatter_linear_write_past_the_end_fails_naming_the_op() -> None:
    op = _scatter()
    types = {"past": TensorType((1, 4, 2), "float32"), "update": TensorType((1, 2, 2), "float32")}
    graph = Graph("ts", (op,), {**types, "at": TensorType((1,), "int64")}, op.outputs, {}, 24)
    feeds = {"past": np.zeros((1, 4, 2), np.float32), "update": np.ones((1, 2, 2), np.float32)}
    message = "op ts0 (TensorScatter): expected its kernel to compute, got IndexError: "
    with pytest.raises(ModelError, match=f"^{re.escape(message)}"):
        execute(graph, {**feeds, "at": np.array([3])})


def test_tensor_scatter_circular_wraps_and_leaves_the_past_alone() -> None:
    kernel = OPS["TensorScatter"].compile(_scatter(mode="circular"), 24)
    past = np.zeros((2, 4, 1), np.float32)
    update = np.array([[[1], [2]], [[3], [4]]], np.float32)
    (present,) = kernel([past, update, np.array([3, 1])])
    assert present[..., 0].tolist() == [[2, 0, 0, 1], [0, 3, 4, 0]]
    assert not past.any()


def test_tensor_scatter_cost_copies_the_cache_and_reads_the_update() -> None:
    op = _scatter()
    metas = [_meta(2, 3, 6, 4), _meta(2, 3, 1, 4), _meta(2, dtype=I64)]
    outputs = OPS["TensorScatter"].infer(op, 24, metas)
    cost = OPS["TensorScatter"].cost(op, metas, outputs)
    assert (cost.flops, cost.op_class) == (0.0, "data_movement")
    assert cost.bytes_read == (2 * 3 * 6 * 4 + 2 * 3 * 4) * 4 + 2 * 8
    assert cost.bytes_written == 2 * 3 * 6 * 4 * 4


def test_swiglu_refuses_broadcasting() -> None:
    op = Op("SwiGLU", "sw0", ("a", "b"), ("y",))
    message = "op sw0 (SwiGLU): expected B of A's shape [2, 4] (no broadcasting), got [1, 4]"
    _infer_error(op, 28, [_meta(2, 4), _meta(1, 4)], message)


def test_swiglu_refuses_mixed_dtypes() -> None:
    op = Op("SwiGLU", "sw0", ("a", "b"), ("y",))
    message = "op sw0 (SwiGLU): expected inputs of one dtype, got float32 and float64"
    _infer_error(op, 28, [_meta(2, 4), _meta(2, 4, dtype=np.dtype(np.float64))], message)


def test_swiglu_cost_is_its_elementwise_math() -> None:
    op = Op("SwiGLU", "sw0", ("a", "b"), ("y",))
    metas = [_meta(2, 4), _meta(2, 4)]
    cost = OPS["SwiGLU"].cost(op, metas, OPS["SwiGLU"].infer(op, 28, metas))
    assert cost.flops == 8 * (5 + TRANSCENDENTAL_FLOPS)
    assert (cost.bytes_read, cost.bytes_written, cost.op_class) == (64, 32, "elementwise")


@pytest.mark.parametrize("position", [-1, 4])
def test_rotary_refuses_a_position_outside_the_cache(position: int) -> None:
    # a negative position had picked a cache row from the end, silently
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 8)).astype(np.float32)
    cache = rng.standard_normal((4, 4)).astype(np.float32)
    op = Op("RotaryEmbedding", "r", ("x", "c", "s", "p"), ("y",), {"num_heads": 1})
    message = "op r (RotaryEmbedding): expected position_ids in [0, 4) (cos_cache's rows), got "
    with pytest.raises(ModelError, match=f"^{re.escape(message)}{position}$"):
        OPS["RotaryEmbedding"].compile(op, 23)([x, cache, cache, np.array([[0, position]])])
