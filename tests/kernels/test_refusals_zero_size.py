"""Zero-size inputs and degenerate values of RNN, GRU, LSTM, GridSample, AffineGrid, RoiAlign and
Attention: where onnxruntime computes an empty (or all-zero) output and the spec allows it, the
kernel computes the same; where onnxruntime (or the spec) refuses, the shape rule (or the kernel,
for a value known only when it runs) refuses with a message naming the op. Each had failed
inside numpy, run for minutes, or passed silently before."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from hetsim.errors import OpError
from hetsim.ir import Op
from hetsim.kernels import OPS, Meta
from tests.kernels.one_node import one_node_model

F32 = np.dtype("float32")
SEED = 3
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _op(op_type: str, n_inputs: int, n_outputs: int = 1, **attrs: Any) -> Op:
    outputs = tuple(f"y{i}" for i in range(n_outputs))
    return Op(op_type, "n0", tuple(f"x{i}" for i in range(n_inputs)), outputs, attrs)


def _refuses(message: str) -> Any:
    return pytest.raises(OpError, match=f"^{re.escape(message)}$")


def _infer(op: Op, opset: int, inputs: list[Meta | None]) -> list[Meta]:
    return OPS[op.type].infer(op, opset, inputs)


def _run(op: Op, opset: int, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    return OPS[op.type].compile(op, opset)(inputs)


def _random(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return np.random.default_rng(SEED).standard_normal(shape).astype(dtype)


def _onnxruntime(
    op_type: str, opset: int, inputs: dict[str, np.ndarray], n_outputs: int = 1, **attrs: Any
) -> list[np.ndarray]:
    ort = pytest.importorskip("onnxruntime")
    model = one_node_model(op_type, opset, inputs, n_outputs, **attrs)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs: list[np.ndarray] = session.run(None, inputs)
    return outputs


# --- RNN, GRU and LSTM -------------------------------------------------------------------------


def _recurrent_inputs(
    op_type: str, seq: int, batch: int, dirs: int, hidden: int = 4, size: int = 3
) -> dict[str, np.ndarray]:
    """X, W, R, B and an initial state of ones (initial_c of twos, for LSTM), sequence first."""
    width = GATES[op_type] * hidden
    inputs = {
        "X": _random(seq, batch, size),
        "W": _random(dirs, width, size),
        "R": _random(dirs, width, hidden),
        "B": _random(dirs, 2 * width),
        "sequence_lens": np.full(batch, seq, np.int32),
        "initial_h": np.ones((dirs, batch, hidden), np.float32),
    }
    if op_type == "LSTM":
        inputs["initial_c"] = np.full((dirs, batch, hidden), 2, np.float32)
    return inputs


def _recurrent_op(op_type: str, inputs: dict[str, np.ndarray], **attrs: Any) -> Op:
    outputs = 3 if op_type == "LSTM" else 2
    return _op(op_type, len(inputs), outputs, hidden_size=4, **attrs)


@pytest.mark.parametrize("op_type", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_recurrent_op_of_no_time_steps_gives_zero_states(op_type: str, direction: str) -> None:
    dirs = 2 if direction == "bidirectional" else 1
    inputs = _recurrent_inputs(op_type, 0, 2, dirs)
    op = _recurrent_op(op_type, inputs, direction=direction)
    outputs = _run(op, 14, list(inputs.values()))
    metas = _infer(op, 14, [Meta.of(a) for a in inputs.values()])
    assert [a.shape for a in outputs] == [m.shape for m in metas]
    assert outputs[0].shape == (0, dirs, 2, 4)
    for state in outputs[1:]:  # zeros, not initial_h and initial_c: onnxruntime's
        np.testing.assert_array_equal(state, np.zeros((dirs, 2, 4), np.float32))


@pytest.mark.parametrize("op_type", ["RNN", "LSTM"])  # onnxruntime aborts on GRU's
def test_recurrent_op_of_no_time_steps_matches_onnxruntime(op_type: str) -> None:
    inputs = _recurrent_inputs(op_type, 0, 2, 2)
    op = _recurrent_op(op_type, inputs, direction="bidirectional")
    expected = _onnxruntime(
        op_type, 14, inputs, len(op.outputs), hidden_size=4, direction="bidirectional"
    )
    for got, want in zip(_run(op, 14, list(inputs.values())), expected, strict=True):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op_type", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize(("seq", "batch"), [(5, 0), (0, 0)])
def test_recurrent_op_of_an_empty_batch_gives_empty_outputs(
    op_type: str, seq: int, batch: int
) -> None:
    inputs = _recurrent_inputs(op_type, seq, batch, 2)
    op = _recurrent_op(op_type, inputs, direction="bidirectional")
    outputs = _run(op, 14, list(inputs.values()))
    state = (2, batch, 4)
    assert [a.shape for a in outputs] == [(seq, 2, batch, 4), state, state][: len(outputs)]


@pytest.mark.parametrize("op_type", ["RNN", "GRU", "LSTM"])
def test_batch_first_recurrent_op_of_no_time_steps_gives_zero_states(op_type: str) -> None:
    inputs = {
        name: value.swapaxes(0, 1) if name in ("X", "initial_h", "initial_c") else value
        for name, value in _recurrent_inputs(op_type, 0, 2, 1).items()
    }
    op = _recurrent_op(op_type, inputs, layout=1)
    y, *states = _run(op, 14, list(inputs.values()))
    assert y.shape == (2, 0, 1, 4)
    for state in states:
        np.testing.assert_array_equal(state, np.zeros((2, 1, 4), np.float32))


# --- GridSample and AffineGrid -----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize(
    ("x", "grid"), [((1, 0, 3, 3), (1, 2, 2, 2)), ((0, 2, 3, 3), (0, 2, 2, 2))]
)
def test_grid_sample_of_no_channels_or_batch_matches_onnxruntime(
    mode: str, x: tuple[int, ...], grid: tuple[int, ...]
) -> None:
    inputs = {"X": _random(*x), "grid": _random(*grid)}
    (expected,) = _onnxruntime("GridSample", 20, inputs, mode=mode)
    (got,) = _run(_op("GridSample", 2, mode=mode), 20, list(inputs.values()))
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype


@pytest.mark.parametrize(
    ("x", "grid", "axis"),
    [
        ((1, 2, 0, 3), (1, 2, 2, 2), 2),
        ((1, 2, 3, 0), (1, 2, 2, 2), 3),
        ((1, 0, 0, 3), (1, 2, 2, 2), 2),  # no channels either: onnxruntime refuses it still
        ((1, 2, 0, 3), (1, 0, 2, 2), 2),  # no grid points either: refused too
        ((1, 2, 3, 3, 0), (1, 2, 2, 2, 3), 4),
    ],
)
def test_grid_sample_refuses_an_empty_spatial_axis(
    x: tuple[int, ...], grid: tuple[int, ...], axis: int
) -> None:
    message = f"op n0 (GridSample): expected a non-empty spatial axis {axis} of X, got shape "
    with _refuses(f"{message}{list(x)}"):
        _infer(_op("GridSample", 2), 20, [Meta(x, F32), Meta(grid, F32)])


@pytest.mark.parametrize(("size", "shown"), [([[2], [3], [4], [5]], "(4, 1)"), (2, "()")])
def test_affine_grid_refuses_a_size_not_1d(size: Any, shown: str) -> None:
    message = f"op n0 (AffineGrid): expected input 1 (size) 1-D, got shape {shown}"
    value = np.array(size, np.int64)
    with _refuses(message):
        _infer(_op("AffineGrid", 2), 20, [Meta((2, 2, 3), F32), Meta.of(value)])
    with _refuses(message):  # a size given at run time, in the kernel
        _run(_op("AffineGrid", 2), 20, [_random(2, 2, 3), value])


# --- RoiAlign ----------------------------------------------------------------------------------

ROIS = np.array([[0, 0, 2, 2], [1, 1, 3, 3]], np.float32)
BATCH = np.zeros(2, np.int64)


def _roi_metas(x: tuple[int, ...], rois: np.ndarray | None = None) -> list[Meta | None]:
    known = Meta.of(rois) if rois is not None else Meta(ROIS.shape, F32)
    return [Meta(x, F32), known, Meta((len(BATCH),), np.dtype(np.int64))]


@pytest.mark.parametrize(("x", "axis"), [((1, 2, 0, 4), 2), ((1, 2, 4, 0), 3)])
def test_roi_align_refuses_an_empty_spatial_axis(x: tuple[int, ...], axis: int) -> None:
    # onnxruntime computes it, from memory outside X; onnx's reference fails indexing
    message = (
        f"op n0 (RoiAlign): expected a non-empty spatial axis {axis} of X, got shape {list(x)}"
    )
    with _refuses(message):
        _infer(_op("RoiAlign", 3, output_height=2, output_width=2), 16, _roi_metas(x))


def test_roi_align_of_no_channels_on_an_empty_axis_gives_an_empty_output() -> None:
    op = _op("RoiAlign", 3)
    (meta,) = _infer(op, 16, _roi_metas((1, 0, 0, 4)))
    (y,) = _run(op, 16, [_random(1, 0, 0, 4), ROIS, BATCH])
    assert y.shape == meta.shape == (2, 0, 1, 1)


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_refuses_a_non_finite_spatial_scale(scale: float, ratio: int) -> None:
    op = _op("RoiAlign", 3, spatial_scale=scale, sampling_ratio=ratio)
    message = f"op n0 (RoiAlign): expected a finite spatial_scale, got {scale}"
    with _refuses(message):
        _infer(op, 16, _roi_metas((1, 2, 4, 4)))
    with _refuses(message):
        _run(op, 16, [_random(1, 2, 4, 4), ROIS, BATCH])


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_roi_align_refuses_a_non_finite_roi(value: float) -> None:
    rois = ROIS.copy()
    rois[1, 2] = value
    message = f"op n0 (RoiAlign): expected finite rois, got [1.0, 1.0, {value}, 3.0] for roi 1"
    with _refuses(message):  # onnxruntime: "All 'rois' values must be finite."
        _run(_op("RoiAlign", 3), 16, [_random(1, 2, 4, 4), rois, BATCH])
    with _refuses(message):  # rois known to the shape rule
        _infer(_op("RoiAlign", 3), 16, _roi_metas((1, 2, 4, 4), rois))


def test_roi_align_refuses_a_huge_adaptive_grid() -> None:
    # 2e10 sampling points a side (onnxruntime: "Integer overflow"); this had run for minutes
    op = _op("RoiAlign", 3, spatial_scale=1e10)
    message = (
        "op n0 (RoiAlign): expected at most 65536 sampling points per bin, got "
        "400000081920004194304 (a 20000002048 by 20000002048 grid)"
    )
    with _refuses(message):
        _run(op, 16, [_random(1, 2, 4, 4), ROIS, BATCH])
    with _refuses(message):
        _infer(op, 16, _roi_metas((1, 2, 4, 4), ROIS))


def test_roi_align_refuses_an_overflowing_adaptive_grid() -> None:
    rois = np.array([[1e30, 1e30, 2e30, 2e30]], np.float32)  # x 1e30: inf - inf in float32
    op = _op("RoiAlign", 3, spatial_scale=1e30)
    message = (
        "op n0 (RoiAlign): expected at most 65536 sampling points per bin, got nan "
        "(roi sizes times spatial_scale overflow float32)"
    )
    with _refuses(message):
        _run(op, 16, [_random(1, 2, 4, 4), rois, BATCH[:1]])


def test_roi_align_refuses_a_huge_sampling_ratio() -> None:
    message = (
        "op n0 (RoiAlign): expected at most 65536 sampling points per bin, got 1000000 "
        "(sampling_ratio 1000)"
    )
    with _refuses(message):
        _infer(_op("RoiAlign", 3, sampling_ratio=1000), 16, _roi_metas((1, 2, 4, 4)))


def test_roi_align_of_points_far_outside_x_matches_onnxruntime() -> None:
    # coordinates of 1e30 had wrapped to a negative int64 index
    inputs = {"X": _random(1, 2, 4, 4), "rois": ROIS, "batch_indices": BATCH}
    attrs = {"spatial_scale": 1e30, "sampling_ratio": 2}
    (expected,) = _onnxruntime("RoiAlign", 16, inputs, **attrs)
    (got,) = _run(_op("RoiAlign", 3, **attrs), 16, list(inputs.values()))
    np.testing.assert_array_equal(got, expected)


# --- Attention ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shapes", "attrs"),
    [
        ([(1, 2, 3, 4), (1, 2, 0, 4), (1, 2, 0, 5)], {}),
        ([(1, 3, 8), (1, 0, 8), (1, 0, 10)], {"q_num_heads": 2, "kv_num_heads": 2}),
        ([(1, 2, 3, 4), (1, 2, 0, 4), (1, 2, 0, 5), None, (1, 2, 0, 4), (1, 2, 0, 5)], {}),
    ],
    ids=["4d", "3d", "empty_past"],
)
def test_attention_refuses_no_keys(
    shapes: list[tuple[int, ...] | None], attrs: dict[str, int]
) -> None:
    # onnxruntime and onnx's reference refuse it too: a softmax over no key
    names = tuple("" if s is None else f"x{i}" for i, s in enumerate(shapes))
    op = Op("Attention", "n0", names, ("y",), attrs)
    metas = [None if s is None else Meta(s, F32) for s in shapes]
    message = "op n0 (Attention): expected a key length (past_key's plus K's) of 1 or more, got 0"
    with _refuses(message):
        _infer(op, 23, metas)


@pytest.mark.parametrize("attrs", [{}, {"is_causal": 1, "left_window_size": 2}])
def test_attention_of_an_empty_query_sequence_gives_its_empty_output(
    attrs: dict[str, int],
) -> None:
    # 3-D: numpy's reshape of Y back to (B, Sq, H*Dv) had no -1 to infer from 0 elements
    op = Op(
        "Attention", "n0", ("q", "k", "v"), ("y",), {"q_num_heads": 4, "kv_num_heads": 1, **attrs}
    )
    inputs = [_random(2, 0, 32), _random(2, 6, 8), _random(2, 6, 6)]
    (meta,) = _infer(op, 25, [Meta.of(a) for a in inputs])
    (y,) = _run(op, 25, inputs)
    assert y.shape == meta.shape == (2, 0, 24)
    assert y.dtype == np.float32
