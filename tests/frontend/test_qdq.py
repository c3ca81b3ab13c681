"""QDQ fusion: DequantizeLinear -> Conv/MatMul/Gemm -> QuantizeLinear groups become integer ops.

Values are checked against onnx's ReferenceEvaluator on the model as written (the float path):
the integer op may differ from it by one quantization step where float rounding crosses a
rounding boundary, and nowhere by more.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from hetsim import execute, simulate  # noqa: E402
from hetsim.frontend import fuse_qdq, load_onnx  # noqa: E402
from hetsim.ir import GraphBuilder  # noqa: E402

X_SCALE = 0.02
Y_SCALE = 0.05
C, M = 3, 4  # Conv channels in and out


def _init(name: str, value: Any, dtype: Any = None) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype), name)


def _model(
    nodes: list[onnx.NodeProto],
    initializers: list[onnx.TensorProto],
    shapes: dict[str, list[int]],
    outputs: tuple[str, ...] = ("y",),
    opset: int = 19,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shapes["x"])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
        initializer=initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _conv_model(
    *,
    act: str = "int8",
    per_channel: bool = False,
    w_axis: int = 0,
    bias: str = "int32",
    conv_output_read_twice: bool = False,
    torch_weights: bool = False,
    opset: int = 19,
    relu_zero: int | None = None,
) -> onnx.ModelProto:
    """x -> Q -> DQ -> Conv(DQ(w), DQ(b)) -> Q -> DQ -> y, as onnxruntime's quantizer writes it.

    `bias`: ``int32`` (quantized with scale x_scale · w_scale), ``wrong_scale`` (quantized with
    twice that), ``float`` (a float initializer), ``none``. `relu_zero`: a Relu after the Conv
    (a fused Conv-ReLU as PyTorch exports it), its Q's zero point this. `torch_weights`: the
    weight is a float initializer quantized by a Q in the graph, as PyTorch exports it.
    """
    rng = np.random.default_rng(1)
    w = rng.normal(0, 0.3, (M, C, 3, 3)).astype(np.float32)
    along = (1, 1, 1, 1)
    if per_channel:  # one scale per index of w_axis
        others = tuple(a for a in range(4) if a != w_axis)
        w_scale = (np.abs(w).max(axis=others) / 127).astype(np.float32)
        along = tuple(-1 if a == w_axis else 1 for a in range(4))
    else:
        w_scale = np.array(np.abs(w).max() / 127, np.float32)
    w_q = np.clip(np.rint(w / w_scale.reshape(along)), -127, 127).astype(np.int8)
    zero = 128 if act == "uint8" else 0
    x_zero = np.array(zero, act)
    y_zero = np.array(zero if relu_zero is None else relu_zero, act)
    b_f = rng.normal(0, 0.5, M).astype(np.float32)
    b_scale = (np.float32(X_SCALE) * (w_scale if w_axis == 0 else w_scale.max())).astype(np.float32)
    inits = [
        _init("x_scale", X_SCALE, np.float32),
        _init("x_zero", x_zero),
        _init("w_scale", w_scale),
        _init("w_zero", np.zeros(w_scale.shape, np.int8)),
        _init("y_scale", Y_SCALE, np.float32),
        _init("y_zero", y_zero),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"], name="quant_x"),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero"], ["xd"], name="dq_x"),
    ]
    if torch_weights:
        inits.append(_init("w_float", w))
        nodes.append(
            helper.make_node("QuantizeLinear", ["w_float", "w_scale", "w_zero"], ["w_q"],
                             name="quant_w", axis=w_axis)
        )  # fmt: skip
    else:
        inits.append(_init("w_q", w_q))
    nodes.append(
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zero"], ["wd"], name="dq_w",
                         axis=w_axis)
    )  # fmt: skip
    conv_inputs = ["xd", "wd"]
    if bias in ("int32", "wrong_scale"):
        scale = b_scale * (2 if bias == "wrong_scale" else 1)
        inits += [_init("b_q", np.rint(b_f / scale).astype(np.int32)), _init("b_scale", scale)]
        nodes.append(
            helper.make_node("DequantizeLinear", ["b_q", "b_scale"], ["bd"], name="dq_b", axis=0)
        )
        conv_inputs.append("bd")
    elif bias == "float":
        inits.append(_init("b_float", b_f))
        conv_inputs.append("b_float")
    conv_out = "yf" if relu_zero is None else "cf"
    nodes.append(helper.make_node("Conv", conv_inputs, [conv_out], name="conv", pads=[1, 1, 1, 1]))
    if relu_zero is not None:
        nodes.append(helper.make_node("Relu", ["cf"], ["yf"], name="relu"))
    nodes += [
        helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zero"], ["yq"], name="quant_y"),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zero"], ["y"], name="dq_y"),
    ]
    outputs = ("y", "yf") if conv_output_read_twice else ("y",)
    return _model(nodes, inits, {"x": [1, C, 8, 8]}, outputs, opset)


def _x(shape: tuple[int, ...] = (1, C, 8, 8)) -> np.ndarray:
    return np.random.default_rng(2).uniform(-2.5, 2.5, shape).astype(np.float32)


def _within_one_step(model: onnx.ModelProto, x: np.ndarray) -> None:
    """The fused model's output against onnx's reference on the model as written."""
    got = execute(load_onnx(model), {"x": x})["y"]
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    steps = np.abs(got.astype(np.float64) - want) / Y_SCALE
    assert steps.max() <= 1 + 1e-6
    assert np.mean(steps < 0.5) >= 0.95, "most outputs agree exactly"


@pytest.mark.parametrize("act", ["int8", "uint8"])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", ["int32", "none"])
def test_a_conv_group_becomes_one_qlinearconv(act: str, per_channel: bool, bias: str) -> None:
    model = _conv_model(act=act, per_channel=per_channel, bias=bias)
    graph = load_onnx(model)
    assert [op.type for op in graph.ops] == ["QuantizeLinear", "QLinearConv", "DequantizeLinear"]
    conv = graph.ops[1]
    assert conv.name == "conv"
    assert conv.outputs == ("yq",)
    assert conv.attrs == {"pads": [1, 1, 1, 1]}
    assert conv.inputs[:8] == (
        "xq", "x_scale", "x_zero", "w_q", "w_scale", "w_zero", "y_scale", "y_zero"
    )  # fmt: skip
    assert conv.inputs[8:] == (("b_q",) if bias == "int32" else ())
    assert graph.initializers["w_q"].dtype == np.int8  # the weight stays quantized
    assert "b_scale" not in graph.initializers  # read by the dropped DQ only
    _within_one_step(model, _x())


@pytest.mark.parametrize(("act", "zero"), [("int8", -128), ("uint8", 0)])
def test_a_relu_its_quantize_clips_anyway_goes_and_the_conv_fuses(act: str, zero: int) -> None:
    # the Q's zero point is its dtype's minimum: it clips what the Relu would
    model = _conv_model(act=act, relu_zero=zero)
    graph = load_onnx(model)
    assert [op.type for op in graph.ops] == ["QuantizeLinear", "QLinearConv", "DequantizeLinear"]
    _within_one_step(model, _x())


def test_a_relu_its_quantize_does_not_clip_stays_and_so_does_its_conv() -> None:
    model = _conv_model(act="int8", relu_zero=0)  # a zero point of 0 keeps negatives
    graph = load_onnx(model)
    assert [op.type for op in graph.ops] == [
        "QuantizeLinear", "DequantizeLinear", "Conv", "Relu", "QuantizeLinear", "DequantizeLinear"
    ]  # fmt: skip
    (want, *_) = ReferenceEvaluator(model).run(None, {"x": _x()})
    np.testing.assert_allclose(execute(graph, {"x": _x()})["y"], want, atol=1e-6)


def test_a_weight_quantized_in_the_graph_is_folded_first_then_fused() -> None:
    # PyTorch writes the float weight and a QuantizeLinear of it; folding makes it int8
    model = _conv_model(per_channel=True, torch_weights=True)
    graph = load_onnx(model)
    assert [op.type for op in graph.ops] == ["QuantizeLinear", "QLinearConv", "DequantizeLinear"]
    assert graph.initializers["w_q"].dtype == np.int8
    assert "w_float" not in graph.initializers
    _within_one_step(model, _x())


@pytest.mark.parametrize(
    ("why", "float_op", "options"),
    [
        ("the bias scale is not x_scale * w_scale", "Conv", {"bias": "wrong_scale"}),
        ("a float bias", "Conv", {"bias": "float"}),
        ("per-channel weight scales along the input channels", "Conv",
         {"per_channel": True, "w_axis": 1}),
        ("the float output is a graph output too", "Conv", {"conv_output_read_twice": True}),
        ("the bias scale is not alpha * x_scale * w_scale", "Gemm", {"bias": "wrong_scale"}),
        ("beta is not 1", "Gemm", {"beta": 0.5}),
        ("int8 activations with uint8 weights: no onnxruntime kernel", "Gemm",
         {"weights": "uint8"}),
        ("per-channel weight scales along K", "Gemm", {"per_column": True, "w_axis": 1}),
    ],
)  # fmt: skip
def test_a_group_the_integer_op_cannot_state_stays_as_written(
    why: str, float_op: str, options: dict[str, Any]
) -> None:
    build, fused, shape = {
        "Conv": (_conv_model, "QLinearConv", (1, C, 8, 8)),
        "Gemm": (_gemm_model, "QGemm", (3, 8)),
    }[float_op]
    model = build(**options)
    graph = load_onnx(model)
    assert float_op in [op.type for op in graph.ops], why
    assert fused not in [op.type for op in graph.ops], why
    (want, *_) = ReferenceEvaluator(model).run(None, {"x": _x(shape)})
    np.testing.assert_allclose(execute(graph, {"x": _x(shape)})["y"], want, atol=1e-6)


def test_fuse_qdq_false_keeps_the_model_as_written() -> None:
    graph = load_onnx(_conv_model(), fuse_qdq=False)
    assert [op.type for op in graph.ops] == [
        "QuantizeLinear", "DequantizeLinear", "Conv", "QuantizeLinear", "DequantizeLinear"
    ]  # fmt: skip


def _builder_dq(b: GraphBuilder, tensor: str, scale: float, **attrs: Any) -> str:
    return b.op("DequantizeLinear", tensor, np.array(scale, np.float32), **attrs)


def test_zero_points_a_group_omits_are_made_in_their_dtypes() -> None:
    # no zero points anywhere: DQ reads x's dtype, Q gives uint8
    b = GraphBuilder("no_zeros", opset=13)
    x = b.input("x", (2, 4), dtype="uint8")
    w = b.initializer(np.arange(12, dtype=np.uint8).reshape(4, 3), "w")
    matmul = b.op("MatMul", _builder_dq(b, x, 0.1), _builder_dq(b, w, 0.2))
    graph = fuse_qdq(b.build(b.op("QuantizeLinear", matmul, np.array(0.5, np.float32))))
    (op,) = graph.ops
    assert op.type == "QLinearMatMul"
    zeros = {op.inputs[i]: graph.initializers[op.inputs[i]] for i in (2, 5, 7)}
    assert [(z.dtype.name, z.shape) for z in zeros.values()] == [("uint8", ())] * 3
    x_value = np.arange(8, dtype=np.uint8).reshape(2, 4)
    want = np.clip(np.rint((x_value * 0.1) @ (graph.initializers["w"] * 0.2) / 0.5), 0, 255)
    np.testing.assert_array_equal(execute(graph, {"x": x_value})[graph.outputs[0]], want)


def test_a_contrib_op_without_its_output_zero_point_gives_its_operands_dtype() -> None:
    # QLinearAdd's output is int8 (its operands') though it omits c_zero_point: the DQ reading
    # it, which omits its zero point too, is known to be int8, and its MatMul group fuses
    b = GraphBuilder("qoperator", opset=13)
    x = b.input("x", (2, 4), dtype="int8")
    scale, zero = np.array(0.1, np.float32), np.array(0, np.int8)
    total = b.op("QLinearAdd", x, scale, zero, x, scale, zero, np.array(0.2, np.float32))
    w = b.initializer(np.arange(12, dtype=np.int8).reshape(4, 3), "w")
    product = b.op("MatMul", _builder_dq(b, total, 0.2), _builder_dq(b, w, 0.1))
    graph = fuse_qdq(b.build(b.op("QuantizeLinear", product, np.array(0.5, np.float32), zero)))
    assert [op.type for op in graph.ops] == ["QLinearAdd", "QLinearMatMul"]
    x_value = np.arange(-4, 4, dtype=np.int8).reshape(2, 4)
    doubled = np.clip(np.rint(x_value * 0.2 / 0.2), -128, 127)  # QLinearAdd: x + x, rescaled
    want = np.clip(np.rint((doubled * 0.2) @ (graph.initializers["w"] * 0.1) / 0.5), -128, 127)
    np.testing.assert_array_equal(execute(graph, {"x": x_value})[graph.outputs[0]], want)


def test_a_qlinear_concat_without_its_output_zero_point_gives_its_operands_dtype() -> None:
    # its first input is the output's scale (float32): the dtype is its first operand's
    b = GraphBuilder("qoperator_concat", opset=13)
    x = b.input("x", (2, 4), dtype="int8")
    scale, zero = np.array(0.1, np.float32), np.array(0, np.int8)
    both = b.op("QLinearConcat", scale, None, x, scale, zero, x, scale, zero, axis=1)
    w = b.initializer(np.arange(24, dtype=np.int8).reshape(8, 3), "w")
    product = b.op("MatMul", _builder_dq(b, both, 0.1), _builder_dq(b, w, 0.1))
    graph = fuse_qdq(b.build(b.op("QuantizeLinear", product, np.array(0.5, np.float32), zero)))
    assert [op.type for op in graph.ops] == ["QLinearConcat", "QLinearMatMul"]


def _matmul_model(*, per_column: bool, b_from_input: bool = False) -> onnx.ModelProto:
    rng = np.random.default_rng(3)
    w = rng.normal(0, 0.3, (8, 5)).astype(np.float32)
    w_scale = (np.abs(w).max(axis=0) if per_column else np.abs(w).max()) / 127
    w_scale = np.asarray(w_scale, np.float32)
    inits = [
        _init("x_scale", X_SCALE, np.float32), _init("x_zero", 0, np.int8),
        _init("w_q", np.rint(w / w_scale).astype(np.int8)), _init("w_scale", w_scale),
        _init("w_zero", np.zeros(w_scale.shape, np.int8)),
        _init("y_scale", Y_SCALE, np.float32), _init("y_zero", 0, np.int8),
    ]  # fmt: skip
    b_source = ["xq2", "x_scale", "x_zero"] if b_from_input else ["w_q", "w_scale", "w_zero"]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero"], ["xd"]),
        helper.make_node("DequantizeLinear", b_source, ["wd"], axis=1),
        helper.make_node("MatMul", ["xd", "wd"], ["yf"], name="matmul"),
        helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zero"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zero"], ["y"]),
    ]
    if b_from_input:  # activations times activations: x (3, 8) @ transpose(x)
        nodes.insert(1, helper.make_node("Transpose", ["xq"], ["xq2"]))
        return _model(nodes, inits, {"x": [3, 8]})
    return _model(nodes, inits, {"x": [3, 8]})


@pytest.mark.parametrize(
    "options",
    [{"per_column": False}, {"per_column": True}, {"per_column": False, "b_from_input": True}],
)
def test_a_matmul_group_becomes_one_qlinearmatmul(options: dict[str, bool]) -> None:
    model = _matmul_model(**options)
    graph = load_onnx(model)
    assert "QLinearMatMul" in [op.type for op in graph.ops]
    assert "MatMul" not in [op.type for op in graph.ops]
    _within_one_step(model, _x((3, 8)))


def _gemm_model(
    *,
    act: str = "int8",
    weights: str = "int8",
    per_column: bool = False,
    w_axis: int | None = None,
    trans_b: bool = True,
    bias: str = "int32",
    alpha: float = 1.0,
    beta: float = 1.0,
    quantized_output: bool = True,
) -> onnx.ModelProto:
    """x (3, 8) -> Q -> DQ -> Gemm(DQ(w), DQ(b)) [-> Q -> DQ] -> y: a Linear layer quantized as
    onnxruntime's quantizer writes it (w (5, 8) with transB, as PyTorch exports nn.Linear).

    `w_axis`: the weight DQ's axis (default: the output columns of B'); `bias`: ``int32``
    (scale ``alpha · x_scale · w_scale``), ``wrong_scale`` (twice that), ``none``.
    """
    rng = np.random.default_rng(4)
    w = rng.normal(0, 0.3, (5, 8) if trans_b else (8, 5)).astype(np.float32)
    columns = 0 if trans_b else 1
    axis = columns if w_axis is None else w_axis
    w_scale = np.asarray(
        (np.abs(w).max(axis=1 - axis) if per_column else np.abs(w).max()) / 127, np.float32
    )
    along = (-1, 1) if axis == 0 else (1, -1)
    w_zero = 3 if weights == "uint8" else 0
    w_q = (np.rint(w / w_scale.reshape(along if per_column else ())) + w_zero).astype(weights)
    zero = 128 if act == "uint8" else 0
    inits = [
        _init("x_scale", X_SCALE, np.float32), _init("x_zero", zero, act),
        _init("w_q", w_q), _init("w_scale", w_scale),
        _init("w_zero", np.full(w_scale.shape, w_zero, weights)),
        _init("y_scale", Y_SCALE, np.float32), _init("y_zero", zero, act),
    ]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"], name="quant_x"),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero"], ["xd"], name="dq_x"),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zero"], ["wd"], name="dq_w",
                         axis=axis),
    ]  # fmt: skip
    gemm_inputs = ["xd", "wd"]
    if bias != "none":
        per_output = w_scale if w_scale.size in (1, 5) else w_scale.max()  # not per output: one
        b_scale = (np.float32(alpha) * np.float32(X_SCALE) * per_output).astype(np.float32)
        b_scale = b_scale * (2 if bias == "wrong_scale" else 1)
        b_q = np.rint(rng.normal(0, 0.5, 5) / b_scale).astype(np.int32)
        inits += [_init("b_q", b_q), _init("b_scale", b_scale)]
        nodes.append(
            helper.make_node("DequantizeLinear", ["b_q", "b_scale"], ["bd"], name="dq_b", axis=0)
        )
        gemm_inputs.append("bd")
    gemm_output = "yf" if quantized_output else "y"
    nodes.append(
        helper.make_node("Gemm", gemm_inputs, [gemm_output], name="fc", transB=int(trans_b),
                         alpha=alpha, beta=beta)
    )  # fmt: skip
    if quantized_output:
        nodes += [
            helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zero"], ["yq"]),
            helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zero"], ["y"]),
        ]
    return _model(nodes, inits, {"x": [3, 8]})


@pytest.mark.parametrize("act", ["int8", "uint8"])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("trans_b", [True, False])
@pytest.mark.parametrize("bias", ["int32", "none"])
def test_a_gemm_group_becomes_one_qgemm(
    act: str, per_column: bool, trans_b: bool, bias: str
) -> None:
    model = _gemm_model(act=act, per_column=per_column, trans_b=trans_b, bias=bias, alpha=0.5)
    graph = load_onnx(model)
    assert [op.type for op in graph.ops] == ["QuantizeLinear", "QGemm", "DequantizeLinear"]
    (qgemm,) = (op for op in graph.ops if op.type == "QGemm")
    assert qgemm.name == "fc"
    assert qgemm.outputs == ("yq",)
    assert qgemm.attrs == {"alpha": 0.5, "transB": int(trans_b)}
    assert qgemm.inputs == (
        "xq", "x_scale", "x_zero", "w_q", "w_scale", "w_zero", "b_q" if bias == "int32" else "",
        "y_scale", "y_zero",
    )  # fmt: skip
    _within_one_step(model, _x((3, 8)))


def test_a_gemm_without_a_quantized_output_becomes_a_float_qgemm() -> None:
    # onnxruntime fuses DQ -> Gemm with no Q too: QGemm then gives float32, scaled once
    model = _gemm_model(quantized_output=False, per_column=True)
    graph = load_onnx(model)
    assert [op.type for op in graph.ops] == ["QuantizeLinear", "QGemm"]
    assert graph.ops[1].inputs[-1] == "b_q"
    (want,) = ReferenceEvaluator(model).run(None, {"x": _x((3, 8))})
    got = execute(graph, {"x": _x((3, 8))})["y"]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("act", ["int8", "uint8"])
def test_a_concat_group_becomes_one_qlinearconcat(act: str) -> None:
    # two quantizations of x, each with its own scale, concatenated and requantized
    zero = 128 if act == "uint8" else 0
    inits = [
        _init("s1", X_SCALE, np.float32), _init("s2", 3 * X_SCALE, np.float32),
        _init("z", zero, act), _init("y_scale", Y_SCALE, np.float32),
    ]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s1", "z"], ["q1"]),
        helper.make_node("QuantizeLinear", ["x", "s2", "z"], ["q2"]),
        helper.make_node("DequantizeLinear", ["q1", "s1", "z"], ["d1"]),
        helper.make_node("DequantizeLinear", ["q2", "s2", "z"], ["d2"]),
        helper.make_node("Concat", ["d1", "d2"], ["cat"], name="concat", axis=1),
        helper.make_node("QuantizeLinear", ["cat", "y_scale", "z"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "z"], ["y"]),
    ]
    model = _model(nodes, inits, {"x": [2, 3]})
    graph = load_onnx(model)
    assert [op.type for op in graph.ops] == [
        "QuantizeLinear", "QuantizeLinear", "QLinearConcat", "DequantizeLinear"
    ]  # fmt: skip
    (concat,) = (op for op in graph.ops if op.type == "QLinearConcat")
    assert concat.inputs == ("y_scale", "z", "q1", "s1", "z", "q2", "s2", "z")
    assert (concat.name, concat.attrs) == ("concat", {"axis": 1})
    _within_one_step(model, _x((2, 3)))


def test_a_dequantized_input_other_ops_read_stays_for_them() -> None:
    # DQ(x) feeds the conv and a float Add: the conv is fused, the DQ stays for the Add
    model = _conv_model()
    nodes = list(model.graph.node)
    nodes.append(helper.make_node("ReduceSum", ["xd"], ["total"], keepdims=0))
    fused = load_onnx(_model(nodes, list(model.graph.initializer), {"x": [1, C, 8, 8]},
                             ("y", "total")))  # fmt: skip
    assert [op.type for op in fused.ops] == [
        "QuantizeLinear", "DequantizeLinear", "QLinearConv", "DequantizeLinear", "ReduceSum"
    ]  # fmt: skip


def test_two_fused_convs_pass_int8_between_them() -> None:
    # conv -> Q -> DQ -> conv2: the DQ between them goes, the int8 tensor flows on
    model = _conv_model(bias="none")
    nodes = list(model.graph.node)[:-1]  # up to yq
    nodes += [
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zero"], ["yd"]),
        helper.make_node("DequantizeLinear", ["w2", "w2_scale"], ["w2d"]),
        helper.make_node("Conv", ["yd", "w2d"], ["zf"], name="conv2"),
        helper.make_node("QuantizeLinear", ["zf", "y_scale", "y_zero"], ["zq"]),
        helper.make_node("DequantizeLinear", ["zq", "y_scale", "y_zero"], ["y"]),
    ]
    w2 = np.random.default_rng(4).integers(-20, 20, (2, M, 1, 1)).astype(np.int8)
    inits = [*model.graph.initializer, _init("w2", w2), _init("w2_scale", 0.01, np.float32)]
    two = _model(nodes, inits, {"x": [1, C, 8, 8]})
    graph = load_onnx(two)
    assert [(op.type, op.name) for op in graph.ops] == [
        ("QuantizeLinear", "quant_x"), ("QLinearConv", "conv"), ("QLinearConv", "conv2"),
        ("DequantizeLinear", graph.ops[3].name),
    ]  # fmt: skip
    assert graph.ops[2].inputs[0] == "yq"
    got = execute(graph, {"x": _x()})["y"]
    (want,) = ReferenceEvaluator(two).run(None, {"x": _x()})
    # the first conv's one-step differences can move the second's output by a step or two
    assert np.abs(got - want).max() <= 2 * Y_SCALE + 1e-6


def test_fused_convs_go_to_the_int8_npu_and_simulate_as_execute_computes() -> None:
    # i.MX93: the Ethos-U65 (int8) takes the fused conv; as written, every op stays on the A55s
    model = _conv_model(per_channel=True)
    fused, written = load_onnx(model), load_onnx(model, fuse_qdq=False)
    inputs = {"x": _x()}
    result = simulate(fused, "nxp-imx93", inputs=inputs)
    assert result.to_dict()["placement"]["conv"] == "vdevice0/npu"
    np.testing.assert_array_equal(result.outputs["y"], execute(fused, inputs)["y"])
    as_written = simulate(written, "nxp-imx93", inputs=inputs).to_dict()["placement"]
    assert set(as_written.values()) == {"host"}


def test_a_float_op_with_no_quantize_after_it_stays_float() -> None:
    # weight-only quantization: DQ(w) -> MatMul -> a graph output; nothing to fuse into
    nodes = [
        helper.make_node("DequantizeLinear", ["w_q", "w_scale"], ["wd"]),
        helper.make_node("MatMul", ["x", "wd"], ["y"], name="matmul"),
    ]
    w_q = np.arange(-6, 6, dtype=np.int8).reshape(4, 3)
    inits = [_init("w_q", w_q), _init("w_scale", 0.5, np.float32)]
    graph = load_onnx(_model(nodes, inits, {"x": [2, 4]}))
    assert [op.type for op in graph.ops] == ["MatMul"]  # the DQ of a constant is folded
    np.testing.assert_array_equal(graph.initializers["wd"], w_q * np.float32(0.5))


def _mover_model(node: onnx.NodeProto, *, out_scale: float = X_SCALE, opset: int = 19) -> Any:
    """x -> Q -> DQ -> `node` (reads ``xd``, gives ``m``) -> Q(out_scale) -> DQ -> y."""
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero"], ["xd"]),
        node,
        helper.make_node("QuantizeLinear", ["m", "out_scale", "x_zero"], ["mq"]),
        helper.make_node("DequantizeLinear", ["mq", "out_scale", "x_zero"], ["y"]),
    ]
    inits = [
        _init("x_scale", X_SCALE, np.float32),
        _init("x_zero", -3, np.int8),
        _init("out_scale", out_scale, np.float32),
        _init("shape", [1, -1], np.int64),
        _init("sizes", [1, C, 16, 16], np.int64),
    ]
    return _model(nodes, inits, {"x": [1, C, 8, 8]}, opset=opset)


@pytest.mark.parametrize(
    "node",
    [
        helper.make_node("MaxPool", ["xd"], ["m"], name="pool", kernel_shape=[2, 2]),
        helper.make_node("Transpose", ["xd"], ["m"], name="pool", perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["xd", "shape"], ["m"], name="pool"),
        helper.make_node("Resize", ["xd", "", "", "sizes"], ["m"], name="pool", mode="nearest"),
    ],
    ids=lambda node: node.op_type,
)
def test_an_op_that_only_moves_values_runs_on_the_quantized_tensor(node: Any) -> None:
    model = _mover_model(node)
    graph = load_onnx(model)
    assert [op.type for op in graph.ops] == ["QuantizeLinear", node.op_type, "DequantizeLinear"]
    assert graph.ops[1].inputs[0] == "xq"
    assert graph.ops[1].outputs == ("mq",)
    (want,) = ReferenceEvaluator(model).run(None, {"x": _x()})
    np.testing.assert_array_equal(execute(graph, {"x": _x()})["y"], want)  # exactly


@pytest.mark.parametrize(
    ("why", "node", "out_scale"),
    [
        ("a Q of another scale", helper.make_node("MaxPool", ["xd"], ["m"], kernel_shape=[2, 2]),
         2 * X_SCALE),
        ("interpolation makes new values",
         helper.make_node("Resize", ["xd", "", "", "sizes"], ["m"], mode="linear"), X_SCALE),
    ],
)  # fmt: skip
def test_a_data_mover_stays_float_unless_its_values_stay_the_same(
    why: str, node: Any, out_scale: float
) -> None:
    graph = load_onnx(_mover_model(node, out_scale=out_scale))
    assert [op.type for op in graph.ops] == [
        "QuantizeLinear", "DequantizeLinear", node.op_type, "QuantizeLinear", "DequantizeLinear"
    ], why  # fmt: skip


def _add_model(b_dtype: Any) -> Any:
    """x -> Q -> DQ, plus a constant of `b_dtype` through its own DQ -> Add -> Q -> DQ -> y."""
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero"], ["xd"]),
        helper.make_node("DequantizeLinear", ["bias_q", "x_scale", "bias_zero"], ["bd"]),
        helper.make_node("Add", ["xd", "bd"], ["m"], name="add"),
        helper.make_node("QuantizeLinear", ["m", "y_scale", "x_zero"], ["mq"]),
        helper.make_node("DequantizeLinear", ["mq", "y_scale", "x_zero"], ["y"]),
    ]
    bias = np.arange(-4, 4, dtype=np.int8).reshape(1, 1, 1, 8) * 3
    inits = [
        _init("x_scale", X_SCALE, np.float32),
        _init("x_zero", -3, np.int8),
        _init("y_scale", Y_SCALE, np.float32),
        _init("bias_q", bias.astype(b_dtype) + (128 if b_dtype == np.uint8 else 0)),
        _init("bias_zero", 128 if b_dtype == np.uint8 else 0, b_dtype),
    ]
    return _model(nodes, inits, {"x": [1, C, 8, 8]})


def test_an_add_group_becomes_onnxruntime_s_qlinearadd() -> None:
    model = _add_model(np.int8)
    graph = load_onnx(model)
    assert [(op.type, op.name) for op in graph.ops] == [
        ("QuantizeLinear", graph.ops[0].name), ("QLinearAdd", "add"),
        ("DequantizeLinear", graph.ops[2].name),
    ]  # fmt: skip
    _within_one_step(model, _x())


def test_an_add_of_two_dtypes_stays_float() -> None:
    # onnxruntime's QLinearAdd takes one dtype for both operands and its output
    graph = load_onnx(_add_model(np.uint8))
    assert "Add" in [op.type for op in graph.ops]
    assert "QLinearAdd" not in [op.type for op in graph.ops]
