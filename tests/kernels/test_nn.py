"""The NN kernels beyond the single-op table: slow loop references, banding, costs, errors.

`cases_nn.py` checks every NN op against onnx's ReferenceEvaluator; here each conv and pool is
also checked against a direct Python loop over output positions written below (independent of
hetsim's im2col and window code), on corners the evaluator gets wrong (ConvTranspose groups with
several output channels per group, ceil-mode overhang of two or more), and every ModelError is
checked in full.
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import Op
from hetsim.kernels import OPS, Meta
from hetsim.kernels import conv as conv_module

SEED = 7


def _run(op_type: str, inputs: list[np.ndarray | None], opset: int = 13, **attrs: Any) -> Any:
    names = tuple("" if a is None else f"i{i}" for i, a in enumerate(inputs))
    op = Op(op_type, f"{op_type.lower()}0", names, ("y",), attrs)
    return OPS[op_type].compile(op, opset)(inputs)[0]


def _metas(*shapes: tuple[int, ...]) -> list[Meta | None]:
    return [Meta(s, np.dtype("float32")) for s in shapes]


def _infer(op_type: str, shapes: list[tuple[int, ...]], opset: int = 13, **attrs: Any) -> Any:
    names = tuple(f"i{i}" for i in range(len(shapes)))
    op = Op(op_type, f"{op_type.lower()}0", names, ("y",), attrs)
    return OPS[op_type].infer(op, opset, _metas(*shapes))


def _random(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def loop_conv(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    strides: tuple[int, ...],
    pads: tuple[int, ...],
    dilations: tuple[int, ...],
    group: int,
) -> np.ndarray:
    """Conv by definition: one tensordot per output position and output channel, in float64."""
    rank = x.ndim - 2
    padded = np.pad(
        x.astype(np.float64), [(0, 0), (0, 0), *zip(pads[:rank], pads[rank:], strict=True)]
    )
    kernel = w.shape[2:]
    out = [
        (padded.shape[2 + d] - (kernel[d] - 1) * dilations[d] - 1) // strides[d] + 1
        for d in range(rank)
    ]
    cg, mg = x.shape[1] // group, w.shape[0] // group
    y = np.zeros((x.shape[0], w.shape[0], *out))
    for position in itertools.product(*(range(o) for o in out)):
        window = tuple(
            slice(p * s, p * s + (k - 1) * d + 1, d)
            for p, s, k, d in zip(position, strides, kernel, dilations, strict=True)
        )
        for channel in range(w.shape[0]):
            g = channel // mg
            patch = padded[(slice(None), slice(g * cg, (g + 1) * cg), *window)]
            y[(slice(None), channel, *position)] = np.tensordot(patch, w[channel], rank + 1)
    if b is not None:
        y += b.reshape(-1, *(1,) * rank)
    return y


def loop_conv_transpose(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    strides: tuple[int, ...],
    pads: tuple[int, ...],
    dilations: tuple[int, ...],
    group: int,
    output_padding: tuple[int, ...],
) -> np.ndarray:
    """ConvTranspose by definition: every input element scatters itself times each tap."""
    rank = x.ndim - 2
    kernel = w.shape[2:]
    cg, mg = x.shape[1] // group, w.shape[1]
    full = [
        s * (n - 1) + a + (k - 1) * d + 1
        for s, n, a, k, d in zip(
            strides, x.shape[2:], output_padding, kernel, dilations, strict=True
        )
    ]
    y = np.zeros((x.shape[0], mg * group, *full))
    for position in itertools.product(*(range(n) for n in x.shape[2:])):
        for channel in range(x.shape[1]):
            g = channel // cg
            value = x[(slice(None), channel, *position)].astype(np.float64)
            for tap in itertools.product(*(range(k) for k in kernel)):
                where = tuple(
                    p * s + t * d
                    for p, s, t, d in zip(position, strides, tap, dilations, strict=True)
                )
                taps = w[(channel, slice(None), *tap)]
                y[(slice(None), slice(g * mg, (g + 1) * mg), *where)] += np.outer(value, taps)
    crop = tuple(slice(p, f - e) for p, e, f in zip(pads[:rank], pads[rank:], full, strict=True))
    y = y[(slice(None), slice(None), *crop)]
    if b is not None:
        y += b.reshape(-1, *(1,) * rank)
    return y


def loop_pool(
    x: np.ndarray,
    kernel: tuple[int, ...],
    strides: tuple[int, ...],
    pads: tuple[int, ...],
    out: tuple[int, ...],
    mode: str,
    include_pad: bool = False,
) -> np.ndarray:
    """A pool by definition; a window clipped to the input (or, with `include_pad`, to the
    explicitly padded input) at each of the given `out` positions."""
    rank = x.ndim - 2
    begin, end = pads[:rank], pads[rank:]
    y = np.zeros((*x.shape[:2], *out))
    for position in itertools.product(*(range(o) for o in out)):
        starts = [p * s - b for p, s, b in zip(position, strides, begin, strict=True)]
        inside = tuple(
            slice(max(0, lo), min(n, lo + k))
            for lo, k, n in zip(starts, kernel, x.shape[2:], strict=True)
        )
        values = x[(slice(None), slice(None), *inside)].astype(np.float64)
        axes = tuple(range(2, x.ndim))
        if mode == "max":
            y[(slice(None), slice(None), *position)] = values.max(axis=axes)
            continue
        if include_pad:
            counts = [
                min(lo + k, n + e) - max(lo, -b)
                for lo, k, n, b, e in zip(starts, kernel, x.shape[2:], begin, end, strict=True)
            ]
        else:
            counts = [s.stop - s.start for s in inside]
        y[(slice(None), slice(None), *position)] = values.sum(axis=axes) / np.prod(counts)
    return y


CONV_CORNERS = [
    # (x shape, w shape, strides, pads, dilations, group)
    ((2, 4, 7, 6), (6, 2, 3, 2), (2, 1), (1, 0, 2, 1), (1, 2), 2),
    ((1, 3, 9), (5, 3, 4), (3,), (2, 1), (2,), 1),
    ((1, 4, 5, 6, 4), (4, 1, 2, 3, 2), (1, 2, 1), (0, 1, 1, 1, 0, 1), (2, 1, 1), 4),
    ((1, 6, 6, 6), (12, 1, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 6),
    ((3, 5, 6, 7), (4, 5, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
]


@pytest.mark.parametrize("column_bytes", [1 << 30, 64], ids=["whole", "banded"])
@pytest.mark.parametrize("corner", CONV_CORNERS, ids=lambda c: f"x{list(c[0])}w{list(c[1])}")
def test_conv_matches_loop_reference(
    corner: tuple[Any, ...], column_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conv_module, "COLUMN_BYTES", column_bytes)
    x_shape, w_shape, strides, pads, dilations, group = corner
    rng = np.random.default_rng(SEED)
    x, w, b = _random(rng, *x_shape), _random(rng, *w_shape), _random(rng, w_shape[0])
    attrs = {"strides": list(strides), "pads": list(pads), "dilations": list(dilations)}
    got = _run("Conv", [x, w, b], group=group, **attrs)
    expected = loop_conv(x, w, b, strides, pads, dilations, group)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_conv_by_hand() -> None:
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    w = np.array([[[[1.0, 0.0], [0.0, -1.0]]]], np.float32)
    got = _run("Conv", [x, w, np.array([10.0], np.float32)], pads=[0, 0, 1, 1])
    # x[i, j] - x[i + 1, j + 1] + 10, with zeros past the end
    assert got.tolist() == [[[[6.0, 6.0, 12.0], [6.0, 6.0, 15.0], [16.0, 17.0, 18.0]]]]


CONV_T_CORNERS = [
    # (x shape, w shape, strides, pads, dilations, group, output_padding)
    ((1, 4, 3, 3), (4, 3, 3, 3), (2, 2), (1, 0, 0, 1), (1, 1), 2, (1, 0)),
    ((2, 2, 4), (2, 3, 3), (3,), (1, 2), (2,), 1, (2,)),
    ((1, 2, 2, 3, 2), (2, 2, 2, 1, 2), (2, 1, 2), (0, 0, 1, 1, 0, 0), (1, 1, 2), 2, (1, 0, 0)),
    # stride 1: an output_padding within max(stride, dilation) of its dim, the dilation's 2
    ((1, 1, 3, 3), (1, 1, 2, 2), (1, 1), (0, 0, 0, 0), (1, 2), 1, (0, 1)),
]


@pytest.mark.parametrize("corner", CONV_T_CORNERS, ids=lambda c: f"x{list(c[0])}w{list(c[1])}")
def test_conv_transpose_matches_loop_reference(corner: tuple[Any, ...]) -> None:
    x_shape, w_shape, strides, pads, dilations, group, output_padding = corner
    rng = np.random.default_rng(SEED)
    x, w = _random(rng, *x_shape), _random(rng, *w_shape)
    b = _random(rng, w_shape[1] * group)
    attrs = {
        "strides": list(strides),
        "pads": list(pads),
        "dilations": list(dilations),
        "output_padding": list(output_padding),
    }
    got = _run("ConvTranspose", [x, w, b], group=group, **attrs)
    expected = loop_conv_transpose(x, w, b, strides, pads, dilations, group, output_padding)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("attrs", "pads"),
    [
        ({"auto_pad": "SAME_UPPER"}, (0, 0, 1, 1)),
        ({"auto_pad": "SAME_LOWER"}, (1, 1, 0, 0)),
        ({"output_shape": [5, 6]}, (1, 1, 1, 0)),
        ({"output_shape": [6, 6], "auto_pad": "SAME_UPPER"}, (0, 0, 1, 1)),
    ],
    ids=["same_upper", "same_lower", "output_shape", "output_shape_with_same_upper"],
)
def test_conv_transpose_derives_pads(attrs: dict[str, Any], pads: tuple[int, ...]) -> None:
    # 3x3 input, 3x3 kernel, stride 2: uncropped 7x7; total padding 7 - out, odd element at the
    # end for SAME_UPPER and at the beginning otherwise (onnxruntime's rule for output_shape)
    rng = np.random.default_rng(SEED)
    x, w = _random(rng, 1, 2, 3, 3), _random(rng, 2, 2, 3, 3)
    got = _run("ConvTranspose", [x, w], strides=[2, 2], **attrs)
    expected = loop_conv_transpose(x, w, None, (2, 2), pads, (1, 1), 1, (0, 0))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def _conv_transpose_model(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, opset: int, **attrs: Any
) -> Any:
    """A one-node ONNX model, y = ConvTranspose(x, w, b) with `attrs`, at `opset`."""
    from onnx import TensorProto, helper

    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, a.shape)
        for name, a in (("x", x), ("w", w), ("b", b))
    ]
    graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info("y")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize(
    ("output_shape", "auto_pad", "stride"),
    [
        ([5, 6], "NOTSET", 2),
        # past the uncropped 7x7 by less than the stride: zeros (and the bias) at the end, in
        # every mode (ONNX's reference puts them at the beginning for SAME_UPPER, SAME_LOWER)
        ([8, 8], "NOTSET", 2),
        ([8, 7], "SAME_UPPER", 2),
        ([7, 8], "SAME_LOWER", 2),
        ([13, 14], "SAME_UPPER", 4),  # uncropped 11x11: up to a stride less one past it
    ],
    ids=["inside", "past", "past_same_upper", "past_same_lower", "past_by_three"],
)
def test_conv_transpose_output_shape_matches_onnxruntime(
    output_shape: list[int], auto_pad: str, stride: int
) -> None:
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(SEED)
    x, w, b = _random(rng, 1, 2, 3, 3), _random(rng, 2, 2, 3, 3), _random(rng, 2)
    attrs = {"strides": [stride, stride], "output_shape": output_shape, "auto_pad": auto_pad}
    model = _conv_transpose_model(x, w, b, 13, **attrs)
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": x, "w": w, "b": b})[0]
    got = _run("ConvTranspose", [x, w, b], **attrs)
    assert got.shape == (1, 2, *output_shape)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize(
    ("x_shape", "kernel", "stride"),
    [((1, 2, 1), (1,), 3), ((1, 2, 3), (2,), 5), ((1, 2, 3), (1,), 2), ((1, 2, 2, 3), (1, 2), 4)],
)
def test_conv_transpose_same_with_a_kernel_shorter_than_its_stride_matches_onnx_reference(
    auto_pad: str, x_shape: tuple[int, ...], kernel: tuple[int, ...], stride: int
) -> None:
    # the spec's SAME size (input times stride) exceeds the uncropped output: its zeros split
    # by the spec's pads formula (floor division, as onnx's reference), where they had all
    # gone at the end (a kernel of 1 at stride 3 put its value first, not in the middle)
    pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(SEED)
    x, w, b = _random(rng, *x_shape), _random(rng, 2, 3, *kernel), _random(rng, 3)
    strides = [stride] * len(kernel)
    model = _conv_transpose_model(x, w, b, 22, auto_pad=auto_pad, strides=strides)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x, "w": w, "b": b})
    got = _run("ConvTranspose", [x, w, b], opset=22, auto_pad=auto_pad, strides=strides)
    assert got.shape == (x_shape[0], 3, *(n * stride for n in x_shape[2:]))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    inferred = _infer("ConvTranspose", [x.shape, w.shape, b.shape], opset=22,
                      auto_pad=auto_pad, strides=strides)  # fmt: skip
    assert inferred[0].shape == got.shape


POOL_CORNERS = [
    # (op, x shape, kernel, strides, pads, ceil_mode, count_include_pad, out); the 7x7 ceil-mode
    # cases overhang the input by 2, where onnx's ReferenceEvaluator shifts the windows
    ("MaxPool", (1, 2, 7, 7), (3, 3), (3, 3), (0, 0, 0, 0), 1, 0, (3, 3)),
    ("MaxPool", (1, 1, 9), (2,), (4,), (1, 1), 1, 0, (3,)),
    ("AveragePool", (1, 2, 7, 7), (3, 3), (3, 3), (0, 0, 0, 0), 1, 0, (3, 3)),
    ("AveragePool", (1, 2, 8, 7), (3, 2), (3, 3), (1, 1, 1, 0), 1, 1, (3, 3)),
    ("AveragePool", (2, 1, 5, 4, 6), (2, 3, 2), (2, 1, 3), (1, 1, 0, 0, 1, 1), 0, 1, (3, 4, 2)),
]


@pytest.mark.parametrize("corner", POOL_CORNERS, ids=lambda c: f"{c[0]}{list(c[1])}")
def test_pool_matches_loop_reference(corner: tuple[Any, ...]) -> None:
    op_type, x_shape, kernel, strides, pads, ceil_mode, include_pad, out = corner
    x = _random(np.random.default_rng(SEED), *x_shape)
    attrs = {"kernel_shape": list(kernel), "strides": list(strides), "pads": list(pads)}
    if op_type == "AveragePool":
        attrs["count_include_pad"] = include_pad
    got = _run(op_type, [x], ceil_mode=ceil_mode, **attrs)
    mode = "max" if op_type == "MaxPool" else "average"
    expected = loop_pool(x, kernel, strides, pads, out, mode, bool(include_pad))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_ceil_mode_drops_a_window_that_starts_in_the_end_pad() -> None:
    # room 4 + 1 + 1 - 2 = 4. Stride 2: ceil(4 / 2) + 1 = 3 windows at padded 0, 2, 4, the last
    # starting inside the input. Stride 3: ceil(4 / 3) + 1 = 3, but the third would start at
    # padded index 6 >= 1 + 4, in the end pad only, so onnx and PyTorch drop it: 2 windows.
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 4)
    got = _run("MaxPool", [x], kernel_shape=[2], strides=[2], pads=[1, 1], ceil_mode=1)
    assert got.tolist() == [[[0.0, 2.0, 3.0]]]
    assert _infer("MaxPool", [(1, 1, 4)], kernel_shape=[2], strides=[3], pads=[1, 1], ceil_mode=1)[
        0
    ].shape == (1, 1, 2)


@pytest.mark.parametrize(
    ("x", "strides", "pads", "expected"),
    [
        # every window padding alone: a ZeroDivisionError had failed the op
        ([1.0], [3], [2, 2], [np.nan, np.nan]),
        # some windows: NaN for those (the values of onnx's reference)
        ([1.0, 2.0, 3.0], [1], [0, 2], [1.5, 2.5, 3.0, np.nan]),
    ],
)
def test_an_average_over_a_window_of_padding_alone_is_nan(
    x: list[float], strides: list[int], pads: list[int], expected: list[float]
) -> None:
    # count_include_pad=0 averages over no element there: 0 / 0, NaN, as onnx's reference
    attrs = {"kernel_shape": [2], "strides": strides, "pads": pads, "count_include_pad": 0}
    op = Op("AveragePool", "p", ("x",), ("y",), attrs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and quietly: no RuntimeWarning from the division
        (y,) = OPS["AveragePool"].compile(op, 19)([np.array([[x]], np.float32)])
    np.testing.assert_array_equal(y[0, 0], expected)


def test_global_average_pool_keeps_float32() -> None:
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    got = _run("GlobalAveragePool", [x])
    assert got.dtype == np.float32
    assert got.ravel().tolist() == [5.5, 17.5]


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax"])
def test_softmax_flattens_before_opset_13_only(op_type: str) -> None:
    x = np.log(np.array([[[1.0, 3.0], [2.0, 2.0]]], np.float32))
    legacy = _run(op_type, [x], opset=11)
    current = _run(op_type, [x], opset=13)
    flat, rows = np.array([1.0, 3.0, 2.0, 2.0]) / 8, np.array([0.25, 0.75, 0.5, 0.5])
    if op_type == "LogSoftmax":
        flat, rows = np.log(flat), np.log(rows)
    np.testing.assert_allclose(legacy.ravel(), flat, rtol=1e-6)
    np.testing.assert_allclose(current.ravel(), rows, rtol=1e-6)


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("shape", [(2, 0), (0, 3), (1, 0, 4)])
def test_softmax_of_an_empty_set_is_empty(op_type: str, opset: int, shape: tuple[int, ...]) -> None:
    # numpy's max (Softmax, LogSoftmax) and argmax (Hardmax) refuse a zero-size axis ("zero-size
    # array to reduction operation maximum"); ONNX Runtime and onnx's reference give the empty
    # output of the input's shape
    got = _run(op_type, [np.zeros(shape, np.float32)], opset=opset)
    assert (got.shape, got.dtype) == (shape, np.float32)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_layer_norm_computes_in_its_stash_type(dtype: str) -> None:
    # a float16 input's statistics were computed in float16: a spread of 600 squared (90000)
    # overflows it, and Y came out all zeros; Mean and InvStdDev came out float16 (and float64
    # for a float64 input), where ONNX types them float32 (stash_type 1) as onnxruntime does
    op = Op("LayerNormalization", "ln", ("x", "s"), ("y", "mean", "inv"))
    x = np.array([[0, 600, 0, 600]], dtype)
    y, mean, inv = OPS["LayerNormalization"].compile(op, 17)([x, np.ones(4, dtype)])
    assert (y.dtype, mean.dtype, inv.dtype) == (np.dtype(dtype), np.float32, np.float32)
    np.testing.assert_allclose(y, [[-1, 1, -1, 1]], rtol=1e-3)
    np.testing.assert_allclose([mean.item(), inv.item()], [300, 1 / 300], rtol=1e-6)
    metas = [Meta((1, 4), np.dtype(dtype)), Meta((4,), np.dtype(dtype))]
    inferred = OPS["LayerNormalization"].infer(op, 17, metas)
    assert [m.dtype for m in inferred] == [y.dtype, mean.dtype, inv.dtype]


def _group_norm_reference(x: np.ndarray, dtype: str) -> np.ndarray:
    """GroupNormalization of `x` (N, C) in two groups, scale 1 and bias 0, its statistics and
    normalized values computed in `dtype`, then cast back to `x`'s type, as ONNX's spec says."""
    grouped = x.astype(dtype).reshape(x.shape[0], 2, -1)
    mean = grouped.mean(axis=2, keepdims=True)
    var = np.square(grouped - mean).mean(axis=2, keepdims=True)
    normalized = (grouped - mean) / np.sqrt(var + np.dtype(dtype).type(1e-5))
    return normalized.reshape(x.shape).astype(x.dtype)


@pytest.mark.parametrize(
    ("stash_type", "dtype"), [(1, "float32"), (11, "float64"), (10, "float16")]
)
def test_group_norm_computes_in_its_stash_type(stash_type: int, dtype: str) -> None:
    # a float64 input's first stage ran in float64 whatever its stash_type (1, float32, by
    # default), where the spec casts the input to the stash type, as onnxruntime and onnx's
    # reference do; stash_type 11 was refused. A mean of 1000 and a spread of 3 set float32
    # and float64 apart at the fourth digit.
    x = np.random.default_rng(0).normal(1000.0, 3.0, (2, 8))
    attrs = {"num_groups": 2} if stash_type == 1 else {"num_groups": 2, "stash_type": stash_type}
    op = Op("GroupNormalization", "gn", ("x", "s", "b"), ("y",), attrs)
    y = OPS["GroupNormalization"].compile(op, 21)([x, np.ones(8), np.zeros(8)])[0]
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, _group_norm_reference(x, dtype), rtol=1e-6, atol=1e-6)
    for other in {"float16", "float32", "float64"} - {dtype}:  # the stash type shows
        assert np.abs(y - _group_norm_reference(x, other)).max() > 1e-5


def test_group_norm_before_opset_21_computes_in_the_input_type() -> None:
    # no stash_type before opset 21 (scale and bias per group then): a float64 input's stays
    x = np.random.default_rng(0).normal(1000.0, 3.0, (2, 8))
    op = Op("GroupNormalization", "gn", ("x", "s", "b"), ("y",), {"num_groups": 2})
    y = OPS["GroupNormalization"].compile(op, 18)([x, np.ones(2), np.zeros(2)])[0]
    np.testing.assert_allclose(y, _group_norm_reference(x, "float64"), rtol=1e-12, atol=1e-12)


def test_group_norm_refuses_a_stash_type_it_has_no_dtype_for() -> None:
    op = Op(
        "GroupNormalization", "gn", ("x", "s", "b"), ("y",), {"num_groups": 1, "stash_type": 16}
    )
    expected = (
        r"^op gn \(GroupNormalization\): expected stash_type 1 \(float32\), 10 \(float16\) or "
        r"11 \(float64\), got 16$"
    )
    with pytest.raises(ModelError, match=expected):
        OPS["GroupNormalization"].compile(op, 21)
    x, per_channel = Meta((1, 2), np.dtype("float32")), Meta((2,), np.dtype("float32"))
    with pytest.raises(ModelError, match=expected):  # timing mode refuses it alike
        OPS["GroupNormalization"].infer(op, 21, [x, per_channel, per_channel])


def test_gemm_by_hand() -> None:
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b = np.array([[1.0, 0.0], [1.0, 1.0]], np.float32)
    got = _run("Gemm", [a, b, np.array([[1.0], [2.0]], np.float32)], alpha=2.0, beta=3.0, transA=1)
    # A^T = [[1, 3], [2, 4]]; A^T B = [[4, 3], [6, 4]]; times 2 plus 3 * [[1], [2]]
    assert got.tolist() == [[11.0, 9.0], [18.0, 14.0]]
    assert got.dtype == np.float32


@pytest.mark.parametrize(
    ("alpha", "beta", "expected"),
    [
        # A·B = [[6], [15]], C = 1: 0.5·6 + 1 = 4, 0.5·15 + 1 = 8.5 -> 8 (toward zero, as onnx's
        # reference casts); alpha cast to int64 first had made it 0, the output [[1], [1]]
        (0.5, 1.0, [[4], [8]]),
        (1.0, 2.5, [[8], [17]]),
        (-0.5, 0.0, [[-3], [-7]]),
        (2.0, 3.0, [[15], [33]]),  # whole numbers stay integer arithmetic
    ],
)
def test_integer_gemm_scales_by_a_fractional_alpha_or_beta(
    alpha: float, beta: float, expected: list[list[int]]
) -> None:
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    got = _run("Gemm", [a, np.ones((3, 1), np.int64), np.array([1], np.int64)], alpha=alpha,
               beta=beta)  # fmt: skip
    assert got.dtype == np.int64
    assert got.tolist() == expected


COSTS = [
    # (op, attrs, input shapes, flops, im2col column elements): 2 flops per MAC plus the
    # documented extras; a non-pointwise Conv's numpy kernel also writes and reads
    # N·C·taps·out-pixels columns (scratch)
    (
        "Conv",
        {"pads": [1, 1, 1, 1]},
        [(1, 4, 5, 5), (6, 4, 3, 3), (6,)],
        2 * 150 * 36 + 150,
        4 * 9 * 25,
    ),
    ("Conv", {"group": 2}, [(2, 4, 5, 5), (6, 2, 3, 3)], 2 * 2 * 6 * 9 * 18, 2 * 4 * 9 * 9),
    ("Conv", {}, [(1, 4, 5, 5), (6, 4, 1, 1)], 2 * 150 * 4, 0),  # pointwise: no columns
    (
        "ConvTranspose",
        {"strides": [2, 2]},
        [(1, 2, 3, 3), (2, 3, 2, 2), (3,)],
        2 * 18 * 12 + 3 * 36,
        0,
    ),
    ("Gemm", {"alpha": 0.5}, [(3, 4), (4, 5), (5,)], 2 * 3 * 4 * 5 + 15 + 15, 0),
    ("MatMul", {}, [(2, 3, 4), (4, 5)], 2 * 2 * 3 * 4 * 5, 0),
    ("MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2]}, [(1, 3, 4, 4)], 12 * 4, 0),
    ("AveragePool", {"kernel_shape": [2, 2], "strides": [2, 2]}, [(1, 3, 4, 4)], 12 * 5, 0),
    ("GlobalAveragePool", {}, [(1, 3, 4, 4)], 48 + 3, 0),
    ("BatchNormalization", {}, [(1, 3, 4, 4), (3,), (3,), (3,), (3,)], 2 * 48, 0),
    ("LRN", {"size": 3}, [(1, 3, 4, 4)], 48 * 8, 0),
    ("Softmax", {}, [(2, 5)], 5 * 10, 0),
]


@pytest.mark.parametrize(
    ("op_type", "attrs", "shapes", "flops", "columns"), COSTS, ids=[c[0] for c in COSTS]
)
def test_cost_counts_flops_and_bytes(
    op_type: str, attrs: dict[str, Any], shapes: list[tuple[int, ...]], flops: int, columns: int
) -> None:
    names = tuple(f"i{i}" for i in range(len(shapes)))
    op = Op(op_type, "op0", names, ("y",), attrs)
    inputs = _metas(*shapes)
    outputs = OPS[op_type].infer(op, 13, inputs)
    cost = OPS[op_type].cost(op, inputs, outputs)
    assert cost.flops == flops
    assert cost.bytes_read == 4 * sum(int(np.prod(s)) for s in shapes)
    assert cost.bytes_written == 4 * sum(m.size for m in outputs)
    assert cost.scratch_bytes == 2 * 4 * columns  # written, then read by the GEMM
    assert cost.op_class == OPS[op_type].op_class


ERRORS = [
    (
        "Conv",
        {"auto_pad": "SAME"},
        [(1, 1, 4, 4), (1, 1, 3, 3)],
        r"op conv0 \(Conv\): expected auto_pad in NOTSET, SAME_UPPER, SAME_LOWER, VALID, "
        r"got 'SAME'$",
    ),
    (
        "Conv",
        {"strides": [0, 1]},
        [(1, 1, 4, 4), (1, 1, 3, 3)],
        r"op conv0 \(Conv\): expected 'strides' to hold ints >= 1, got \[0, 1\]$",
    ),
    (
        "Conv",
        {"pads": [1, 1]},
        [(1, 1, 4, 4), (1, 1, 3, 3)],
        r"op conv0 \(Conv\): expected 4 values in 'pads', got \[1, 1\]$",
    ),
    (
        "Conv",
        {"group": 2},
        [(1, 3, 4, 4), (2, 1, 3, 3)],
        r"op conv0 \(Conv\): expected weight \(M, C/group, \.\.\.\) with group 2 and C=3, "
        r"got weight \[2, 1, 3, 3\]$",
    ),
    (
        "Conv",
        {"kernel_shape": [2, 2]},
        [(1, 1, 4, 4), (1, 1, 3, 3)],
        r"op conv0 \(Conv\): expected kernel_shape \[3, 3\], got \[2, 2\]$",
    ),
    (
        "Conv",
        {},
        [(1, 1, 2, 2), (1, 1, 3, 3)],
        r"op conv0 \(Conv\): expected a window that fits its padded input, got input \[2, 2\] "
        r"with kernel \[3, 3\] and pads \[0, 0, 0, 0\]$",
    ),
    (
        "ConvTranspose",
        {"output_shape": [9, 8], "strides": [2, 2]},
        [(1, 1, 3, 3), (1, 1, 3, 3)],
        r"op convtranspose0 \(ConvTranspose\): expected output_shape from 1 to \[8, 8\], "
        r"got \[9, 8\]$",
    ),
    (
        "ConvTranspose",
        {"output_padding": [2, 0], "strides": [2, 2]},
        [(1, 1, 3, 3), (1, 1, 2, 2)],
        r"op convtranspose0 \(ConvTranspose\): expected output_padding from 0 to below "
        r"max\(stride, dilation\) \[2, 2\], got \[2, 0\]$",
    ),
    (
        "ConvTranspose",
        {"output_padding": [-1, 0]},
        [(1, 1, 3, 3), (1, 1, 2, 2)],
        r"op convtranspose0 \(ConvTranspose\): expected output_padding from 0 to below "
        r"max\(stride, dilation\) \[1, 1\], got \[-1, 0\]$",
    ),
    (
        "MaxPool",
        {},
        [(1, 1, 4, 4)],
        r"op maxpool0 \(MaxPool\): missing required attribute 'kernel_shape'$",
    ),
    (
        "MaxPool",
        {"kernel_shape": [2, 2], "auto_pad": "VALID", "ceil_mode": 1},
        [(1, 1, 4, 4)],
        r"op maxpool0 \(MaxPool\): expected ceil_mode 0 with auto_pad, got auto_pad 'VALID'$",
    ),
    (
        "AveragePool",
        {"kernel_shape": [2, 2]},
        [(1, 1, 4)],
        r"op averagepool0 \(AveragePool\): expected a rank-4 input, got shape \[1, 1, 4\]$",
    ),
    (
        "BatchNormalization",
        {},
        [(1, 3, 2, 2), (3,), (3,), (2,), (3,)],
        r"op batchnormalization0 \(BatchNormalization\): expected mean of shape \[3\], "
        r"got shape \[2\]$",
    ),
    (
        "Gemm",
        {"transB": 1},
        [(2, 3), (3, 4)],
        r"op gemm0 \(Gemm\): expected inner dims of A' and B' to match, "
        r"got A' \[2, 3\] and B' \[4, 3\]$",
    ),
    (
        "MatMul",
        {},
        [(2, 3), (4, 5)],
        r"op matmul0 \(MatMul\): expected the last dim of A to match the rows of B, "
        r"got \[2, 3\] and \[4, 5\]$",
    ),
    (
        "Softmax",
        {"axis": 3},
        [(2, 3)],
        r"op softmax0 \(Softmax\): expected an axis in \[-2, 2\), got 3$",
    ),
    (
        "LayerNormalization",
        {"axis": -3},
        [(2, 3), (3,)],
        r"op layernormalization0 \(LayerNormalization\): expected an axis in \[-2, 2\), got -3$",
    ),
    (
        "GroupNormalization",
        {"num_groups": 3},
        [(1, 4, 2), (4,), (4,)],
        r"op groupnormalization0 \(GroupNormalization\): expected a num_groups that divides "
        r"the 4 channels, got 3$",
    ),
    (
        "GroupNormalization",
        {"num_groups": 2},
        [(1, 4, 2), (4,), (4,)],  # opset 13: one per group, as before opset 21
        r"op groupnormalization0 \(GroupNormalization\): expected a scale of shape \[2\], "
        r"got \[4\]$",
    ),
    (
        "GroupNormalization",
        {"num_groups": 2},
        [(4,), (4,), (4,)],
        r"op groupnormalization0 \(GroupNormalization\): expected an input of rank >= 2 "
        r"\(N, C, ...\), got shape \[4\]$",
    ),
    (  # a B of another shape ran broadcast (here over 4 channels), or failed fused
        "Conv",
        {},
        [(1, 3, 5, 5), (4, 3, 3, 3), (2, 2)],
        r"op conv0 \(Conv\): expected a B of shape \[4\] \(one per output channel\), got "
        r"shape \[2, 2\]$",
    ),
    (
        "ConvTranspose",
        {"group": 2},
        [(1, 4, 5, 5), (4, 3, 3, 3), (3,)],
        r"op convtranspose0 \(ConvTranspose\): expected a B of shape \[6\] \(one per output "
        r"channel\), got shape \[3\]$",
    ),
    (
        "Einsum",
        {"equation": "ij,jk->ik"},
        [(2, 3), (4, 5)],
        r"op einsum0 \(Einsum\): expected label 'j' of one size, got 3 and 4$",
    ),
    (
        "Einsum",
        {"equation": "ij,jk->iz"},
        [(2, 3), (3, 5)],
        r"op einsum0 \(Einsum\): expected output labels among the inputs' \['i', 'j', 'k'\], "
        r"got z$",
    ),
    (  # it passed the rule (a timing run ran it) and numpy's einsum refused it in the kernel
        "Einsum",
        {"equation": "ij->jj"},
        [(3, 3)],
        r"op einsum0 \(Einsum\): expected each output label once in 'jj', got 'j'$",
    ),
    (
        "Einsum",
        {"equation": "ij->ji"},
        [(2, 3), (3, 5)],
        r"op einsum0 \(Einsum\): expected an equation of 2 input terms, got 'ij->ji'$",
    ),
    (
        "Einsum",
        {"equation": "ij->ji"},
        [(2, 3, 4)],
        r"op einsum0 \(Einsum\): expected an input of rank 2 for 'ij', got 3$",
    ),
    (
        "Einsum",
        {"equation": "...ij->ij"},
        [(2, 3, 4)],
        r"op einsum0 \(Einsum\): expected '\.\.\.' in the output, as the inputs have it, "
        r"got \[2\]$",
    ),
    (
        "Einsum",
        {"equation": "i1,j->ij"},
        [(2,), (3,)],
        r"op einsum0 \(Einsum\): expected terms of letters and at most one '\.\.\.', "
        r"got 'i1,j->ij'$",
    ),
    (
        "RMSNormalization",
        {"axis": 2},
        [(4, 2), (2,)],
        r"op rmsnormalization0 \(RMSNormalization\): expected an axis in \[-2, 2\), got 2$",
    ),
]


@pytest.mark.parametrize(
    ("op_type", "attrs", "shapes", "message"),
    ERRORS,
    ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)],
)
def test_shape_rule_errors_name_the_op(
    op_type: str, attrs: dict[str, Any], shapes: list[tuple[int, ...]], message: str
) -> None:
    with pytest.raises(ModelError, match=message):
        _infer(op_type, shapes, **attrs)


COMPILE_ERRORS = [
    (
        "BatchNormalization",
        {"training_mode": 1},
        ("y", "mean", "var"),
        r"op bad \(BatchNormalization\): expected training_mode 0 \(inference\), got "
        r"training_mode 1$",
    ),
    (  # one output in training mode: it had said "expected ... one output, got 1 outputs"
        "BatchNormalization",
        {"training_mode": 1},
        ("y",),
        r"op bad \(BatchNormalization\): expected training_mode 0 \(inference\), got "
        r"training_mode 1$",
    ),
    (
        "BatchNormalization",
        {},
        ("y", "mean", "var"),
        r"op bad \(BatchNormalization\): expected inference mode \(one output\), got 3 outputs$",
    ),
    (
        "MaxPool",
        {"kernel_shape": [2]},
        ("y", "indices"),
        r"op bad \(MaxPool\): expected 1 output \(Indices is not supported\), got 2$",
    ),
    ("LRN", {"size": 0}, ("y",), r"op bad \(LRN\): expected size >= 1, got 0$"),
    ("LpNormalization", {"p": 3}, ("y",), r"op bad \(LpNormalization\): expected p 1 or 2, got 3$"),
    (
        "LpPool",
        {"kernel_shape": [2], "p": 0},
        ("y",),
        r"op bad \(LpPool\): expected p >= 1, got 0$",
    ),
    ("Conv", {"group": 0}, ("y",), r"op bad \(Conv\): expected group >= 1, got 0$"),
    (
        "Conv",
        {"dilations": [1, -1]},
        ("y",),
        r"op bad \(Conv\): expected 'dilations' to hold ints >= 1, got \[1, -1\]$",
    ),
]


@pytest.mark.parametrize(
    ("op_type", "attrs", "outputs", "message"), COMPILE_ERRORS, ids=[e[0] for e in COMPILE_ERRORS]
)
def test_bad_attributes_fail_at_compile(
    op_type: str, attrs: dict[str, Any], outputs: tuple[str, ...], message: str
) -> None:
    inputs = {"BatchNormalization": ("x", "w", "b", "mean", "var"), "Conv": ("x", "w")}.get(
        op_type, ("x",)
    )
    op = Op(op_type, "bad", inputs, outputs, attrs)
    with pytest.raises(ModelError, match=message):
        OPS[op_type].compile(op, 15)


def test_kernels_keep_float32() -> None:
    rng = np.random.default_rng(SEED)
    x = _random(rng, 1, 4, 5, 5)
    vector = np.abs(_random(rng, 4)) + 0.5
    results = [
        _run("Conv", [x, _random(rng, 2, 4, 3, 3)]),
        _run("ConvTranspose", [x, _random(rng, 4, 2, 2, 2)]),
        _run("MaxPool", [x], kernel_shape=[2, 2]),
        _run("AveragePool", [x], kernel_shape=[2, 2], pads=[1, 1, 1, 1]),
        _run("BatchNormalization", [x, vector, vector, vector, vector], opset=15),
        _run("InstanceNormalization", [x, vector, vector]),
        _run("LayerNormalization", [x, _random(rng, 5)], opset=17),
        _run("LRN", [x], size=3),
        _run("Softmax", [x]),
        _run("LogSoftmax", [x]),
        _run("MatMul", [x, _random(rng, 5, 2)]),
        _run("Gemm", [_random(rng, 2, 3), _random(rng, 3, 4), vector], alpha=0.5, beta=2.0),
    ]
    assert [r.dtype for r in results] == [np.dtype(np.float32)] * len(results)
