"""Inputs the ONNX spec allows that shape rules had refused, found by the onnxruntime audit's
"hetsim refuses, onnxruntime runs" cases: each one-node model now runs, and gives what
onnxruntime gives.

- QLinearConv (and QLinearMatMul's b): a per-tensor scale with a per-channel zero point, which
  the spec allows as it gives each input its own granularity ("expected a one-element
  w_zero_point, as w_scale is").
- RotaryEmbedding: ``num_heads`` of 0 with a 4-D X, whose spec reads it only for a 3-D X.
- GRU and LSTM: an empty ``activations`` list, read as none given (the defaults), as
  onnxruntime and onnx's reference read it ("expected 2 activations (2 per direction), got 0").
- RoiAlign: an ``output_height`` or ``output_width`` of 0, an empty output (the adaptive grid
  had divided each roi by 0 and refused an infinite one).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hetsim
from hetsim.kernels import OPS, Meta
from tests.kernels.one_node import one_node_model

SEED = 5


def _agree(
    op_type: str, opset: int, inputs: dict[str, np.ndarray], n_outputs: int = 1, **attrs: Any
) -> list[np.ndarray]:
    """Run the model in hetsim and onnxruntime; assert equal outputs; return hetsim's."""
    ort = pytest.importorskip("onnxruntime")
    model = one_node_model(op_type, opset, inputs, n_outputs, **attrs)
    graph = hetsim.load_model(model)
    got = hetsim.execute(graph, inputs, fuse=False)
    ours = [np.asarray(got[name]) for name in graph.outputs]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    theirs = session.run(None, inputs)
    assert len(ours) == len(theirs)
    for mine, want in zip(ours, theirs, strict=True):
        assert mine.shape == want.shape
        assert mine.dtype == want.dtype
        np.testing.assert_allclose(mine, want, rtol=1e-5, atol=1e-6)
    return ours


def _random(*shape: int) -> np.ndarray:
    return np.random.default_rng(SEED).standard_normal(shape).astype(np.float32)


def _ints(low: int, high: int, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return np.random.default_rng(SEED).integers(low, high, shape).astype(dtype)


# --- QLinearConv, QLinearMatMul --------------------------------------------------------------


@pytest.mark.parametrize("scale_shape", [(), (1,)])
def test_qlinear_conv_per_tensor_w_scale_with_per_channel_zero_point(
    scale_shape: tuple[int, ...],
) -> None:
    inputs = {
        "x": _ints(0, 255, (1, 2, 5, 5), np.uint8),
        "x_scale": np.array(0.05, np.float32),
        "x_zero_point": np.array(128, np.uint8),
        "w": _ints(0, 255, (3, 2, 3, 3), np.uint8),
        "w_scale": np.full(scale_shape, 0.02, np.float32),
        "w_zero_point": np.array([120, 128, 135], np.uint8),
        "y_scale": np.array(0.5, np.float32),
        "y_zero_point": np.array(100, np.uint8),
    }
    (y,) = _agree("QLinearConv", 10, inputs)
    assert y.shape == (1, 3, 3, 3)
    assert len(np.unique(y)) > 3  # not saturated flat


def test_qlinear_matmul_per_tensor_b_scale_with_per_column_zero_point() -> None:
    inputs = {
        "a": _ints(0, 255, (2, 4), np.uint8),
        "a_scale": np.array(0.1, np.float32),
        "a_zero_point": np.array(3, np.uint8),
        "b": _ints(0, 255, (4, 3), np.uint8),
        "b_scale": np.array(0.02, np.float32),
        "b_zero_point": np.array([1, 128, 250], np.uint8),
        "y_scale": np.array(2.0, np.float32),
        "y_zero_point": np.array(7, np.uint8),
    }
    _agree("QLinearMatMul", 21, inputs)


# --- RotaryEmbedding -------------------------------------------------------------------------


def test_rotary_embedding_4d_ignores_num_heads_0() -> None:
    inputs = {
        "X": _random(2, 3, 4, 8),
        "cos_cache": _random(6, 4),
        "sin_cache": _random(6, 4) * 0.5,
        "position_ids": _ints(0, 6, (2, 4), np.int64),
    }
    _agree("RotaryEmbedding", 23, inputs, num_heads=0)


# --- GRU, LSTM -------------------------------------------------------------------------------


@pytest.mark.parametrize(("op_type", "gates", "n_outputs"), [("GRU", 3, 2), ("LSTM", 4, 3)])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_recurrent_empty_activations_are_the_defaults(
    op_type: str, gates: int, n_outputs: int, direction: str
) -> None:
    dirs, hidden = (2 if direction == "bidirectional" else 1), 4
    inputs = {
        "X": _random(3, 2, 5),
        "W": _random(dirs, gates * hidden, 5),
        "R": _random(dirs, gates * hidden, hidden),
    }
    attrs = {"hidden_size": hidden, "direction": direction}
    empty = _agree(op_type, 22, inputs, n_outputs, activations=[], **attrs)
    default = _agree(op_type, 22, inputs, n_outputs, **attrs)
    for a, b in zip(empty, default, strict=True):
        np.testing.assert_array_equal(a, b)


# --- RoiAlign --------------------------------------------------------------------------------


@pytest.mark.parametrize("sampling_ratio", [0, 2])
@pytest.mark.parametrize(("height", "width"), [(0, 3), (2, 0)])
def test_roi_align_output_size_0_is_empty(sampling_ratio: int, height: int, width: int) -> None:
    inputs = {
        "X": _random(1, 3, 6, 6),
        "rois": np.array([[0.0, 0.0, 4.0, 4.0], [1.0, 1.0, 5.0, 3.0]], np.float32),
        "batch_indices": np.array([0, 0], np.int64),
    }
    attrs = {"output_height": height, "output_width": width, "sampling_ratio": sampling_ratio}
    (y,) = _agree("RoiAlign", 16, inputs, **attrs)
    assert y.shape == (2, 3, height, width)


def test_roi_align_output_size_0_costs_nothing_to_sample() -> None:
    inputs = {
        "X": _random(1, 3, 6, 6),
        "rois": np.array([[0.0, 0.0, 4.0, 4.0]], np.float32),
        "batch_indices": np.array([0], np.int64),
    }
    model = one_node_model("RoiAlign", 16, inputs, output_height=0)
    op = hetsim.load_model(model).ops[0]
    metas = [Meta(a.shape, a.dtype) for a in inputs.values()]
    outputs = OPS["RoiAlign"].infer(op, 16, metas)
    assert outputs[0].shape == (1, 3, 0, 1)
    assert OPS["RoiAlign"].cost(op, metas, outputs).flops == 0
