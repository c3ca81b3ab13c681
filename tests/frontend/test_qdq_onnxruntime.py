"""QDQ models as onnxruntime's static quantizer writes them: fused on load, they compute what
onnxruntime computes and their integer ops reach the int8 NPU."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
quantization = pytest.importorskip("onnxruntime.quantization")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from hetsim import execute, simulate  # noqa: E402
from hetsim.frontend import load_onnx  # noqa: E402

SHAPE = (1, 3, 16, 16)


def _weights(seed: int) -> Callable[[str, tuple[int, ...], float], onnx.TensorProto]:
    """A maker of random float32 initializers, ``weight(name, shape, std)``, drawn from `seed`."""
    rng = np.random.default_rng(seed)

    def weight(name: str, shape: tuple[int, ...], std: float) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.normal(0, std, shape).astype(np.float32), name)

    return weight


def _model_of(
    name: str, nodes: list[onnx.NodeProto], weights: list[onnx.TensorProto], y: list[int]
) -> onnx.ModelProto:
    """A float model of input x (`SHAPE`) and output y (shape `y`), opset 17."""
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y)],
        initializer=weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _float_model(head: str = "MatMul") -> onnx.ModelProto:
    """Conv-Relu-MaxPool, a residual block (Conv-Relu, Add), global pool, Flatten, and a `head`:
    a MatMul, or a Gemm with a bias as PyTorch exports nn.Linear (transB): a small float CNN."""
    weight = _weights(0)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Add", ["r2", "p1"], ["s"], name="residual"),
        helper.make_node("GlobalAveragePool", ["s"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
    ]  # fmt: skip
    if head == "Gemm":
        nodes.append(helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1))
    else:
        nodes.append(helper.make_node("MatMul", ["f", "wf"], ["y"], name="fc"))
    weights = [
        weight("w1", (8, 3, 3, 3), 0.3), weight("b1", (8,), 0.1),
        weight("w2", (8, 8, 3, 3), 0.2), weight("b2", (8,), 0.1),
        weight("wf", (10, 8) if head == "Gemm" else (8, 10), 0.3),
    ]  # fmt: skip
    if head == "Gemm":
        weights.append(weight("bf", (10,), 0.1))
    return _model_of("small_cnn", nodes, weights, [1, 10])


class _Calibration(quantization.CalibrationDataReader):  # type: ignore[misc]
    def __init__(self) -> None:
        rng = np.random.default_rng(1)
        self._batches = iter([{"x": rng.standard_normal(SHAPE).astype(np.float32)}] * 8)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._batches, None)


def _quantize(
    model: onnx.ModelProto,
    tmp_path: Path,
    form: str = "QDQ",
    activations: str = "int8",
    per_channel: bool = False,
) -> Path:
    """`model` quantized by onnxruntime's `quantize_static` in `form` (QDQ or QOperator), int8
    weights, activations of `activations`; the file it wrote."""
    source, target = tmp_path / "float.onnx", tmp_path / f"{form}.onnx"
    onnx.save(model, source)
    types = {"int8": quantization.QuantType.QInt8, "uint8": quantization.QuantType.QUInt8}
    quantization.quantize_static(
        str(source), str(target), _Calibration(), quant_format=quantization.QuantFormat[form],
        per_channel=per_channel, activation_type=types[activations],
        weight_type=quantization.QuantType.QInt8,
    )  # fmt: skip
    return target


def _quantized(
    tmp_path: Path, activations: str, per_channel: bool, form: str = "QDQ", head: str = "MatMul"
) -> Path:
    """`_float_model` quantized by onnxruntime in `form` (QDQ or QOperator)."""
    return _quantize(_float_model(head), tmp_path, form, activations, per_channel)


def _onnxruntime_y(path: Path, x: np.ndarray) -> np.ndarray:
    """What onnxruntime's CPU provider gives for y, running the model at `path` on `x`."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": x})
    return np.asarray(y)


def _int8_ops(head: str) -> list[str]:
    """The ops the quantized `_float_model` loads as: int8 from the first QuantizeLinear to the
    last DequantizeLinear (the quantizer folded each Relu into its conv's output zero point)."""
    return [
        "QuantizeLinear", "QLinearConv", "MaxPool", "QLinearConv", "QLinearAdd",
        "QLinearGlobalAveragePool", "Flatten", "QGemm" if head == "Gemm" else "QLinearMatMul",
        "DequantizeLinear",
    ]  # fmt: skip


@pytest.mark.parametrize("activations", ["int8", "uint8"])
@pytest.mark.parametrize("per_channel", [True, False])
@pytest.mark.parametrize("head", ["MatMul", "Gemm"])
def test_onnxruntime_qdq_model_fuses_and_computes_what_onnxruntime_does(
    tmp_path: Path, activations: str, per_channel: bool, head: str
) -> None:
    path = _quantized(tmp_path, activations, per_channel, head=head)
    graph = load_onnx(path)
    assert [op.type for op in graph.ops] == _int8_ops(head)
    x = np.random.default_rng(2).standard_normal(SHAPE).astype(np.float32)
    want = _onnxruntime_y(path, x)
    y_scale = graph.initializers[graph.ops[-1].inputs[1]]
    got = execute(graph, {"x": x})["y"]
    assert np.abs(got - want).max() <= y_scale + 1e-6  # at most one step of the output
    assert np.mean(np.abs(got - want) < y_scale / 2) >= 0.9


@pytest.mark.parametrize("head", ["MatMul", "Gemm"])
def test_onnxruntime_int8_model_runs_its_integer_ops_on_the_ethos_u65(
    tmp_path: Path, head: str
) -> None:
    graph = load_onnx(_quantized(tmp_path, "int8", per_channel=True, head=head))
    result = simulate(graph, "nxp-imx93")
    on_npu = {name for name, path in result.to_dict()["placement"].items() if path != "host"}
    # the int8 Flatten too: a RESHAPE in the TFLite graph Vela compiles, as the tag says; only
    # the first QuantizeLinear and the last DequantizeLinear, float, stay on the Cortex-A55s
    assert [op.type for op in graph.ops if op.name not in on_npu] == [
        "QuantizeLinear", "DequantizeLinear"
    ]  # fmt: skip
    np.testing.assert_array_equal(result.outputs["y"], execute(graph, result.inputs)["y"])


@pytest.mark.parametrize("head", ["MatMul", "Gemm"])
def test_onnxruntime_qoperator_model_loads_and_computes_what_onnxruntime_does(
    tmp_path: Path, head: str
) -> None:
    # the QOperator format writes the integer ops itself, onnxruntime's in domain com.microsoft
    target = _quantized(tmp_path, "int8", per_channel=True, form="QOperator", head=head)
    written = {(n.domain, n.op_type) for n in onnx.load(target).graph.node}
    assert ("com.microsoft", "QLinearAdd") in written
    assert (("com.microsoft", "QGemm") in written) == (head == "Gemm")
    graph = load_onnx(target)
    assert [op.type for op in graph.ops] == _int8_ops(head)
    x = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    want = _onnxruntime_y(target, x)
    y_scale = graph.initializers[graph.ops[-1].inputs[1]]
    assert np.abs(execute(graph, {"x": x})["y"] - want).max() <= y_scale + 1e-6


def _branches_model() -> onnx.ModelProto:
    """Two conv branches of x (3x3 and 1x1), concatenated, then a 1x1 conv: an inception block."""
    weight = _weights(4)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["x", "w2", "b2"], ["c2"], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Concat", ["r1", "r2"], ["cat"], name="concat", axis=1),
        helper.make_node("Conv", ["cat", "w3", "b3"], ["y"], name="conv3"),
    ]
    weights = [
        weight("w1", (4, 3, 3, 3), 0.3), weight("b1", (4,), 0.1),
        weight("w2", (4, 3, 1, 1), 0.3), weight("b2", (4,), 0.1),
        weight("w3", (4, 8, 1, 1), 0.3), weight("b3", (4,), 0.1),
    ]  # fmt: skip
    return _model_of("branches", nodes, weights, [1, 4, *SHAPE[2:]])


@pytest.mark.parametrize("form", ["QDQ", "QOperator"])
def test_onnxruntime_concat_of_branches_stays_int8_on_the_npu(tmp_path: Path, form: str) -> None:
    target = _quantize(_branches_model(), tmp_path, form)
    graph = load_onnx(target)
    assert [op.type for op in graph.ops] == [
        "QuantizeLinear", "QLinearConv", "QLinearConv", "QLinearConcat", "QLinearConv",
        "DequantizeLinear",
    ]  # fmt: skip
    x = np.random.default_rng(5).standard_normal(SHAPE).astype(np.float32)
    want = _onnxruntime_y(target, x)
    y_scale = graph.initializers[graph.ops[-1].inputs[1]]
    assert np.abs(execute(graph, {"x": x})["y"] - want).max() <= y_scale + 1e-6
    placement = simulate(graph, "rk3588", mode="timing").to_dict()["placement"]
    on_npu = [op.type for op in graph.ops if placement[op.name] == "npu"]
    assert on_npu == ["QLinearConv", "QLinearConv", "QLinearConcat", "QLinearConv"]


@pytest.mark.parametrize("form", ["QDQ", "QOperator"])
def test_onnxruntime_softmax_after_a_matmul_stays_int8(tmp_path: Path, form: str) -> None:
    # QOperator writes QLinearSoftmax (with its opset attribute); a QDQ Softmax group fuses to it
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"], name="scores"),
        helper.make_node("Softmax", ["m"], ["y"], name="softmax", axis=-1),
    ]
    float_model = _model_of("attention_head", nodes, [_weights(6)("w", (16, 6), 0.5)],
                            [*SHAPE[:3], 6])  # fmt: skip
    target = _quantize(float_model, tmp_path, form)
    graph = load_onnx(target)
    assert [op.type for op in graph.ops] == [
        "QuantizeLinear", "QLinearMatMul", "QLinearSoftmax", "DequantizeLinear"
    ]  # fmt: skip
    x = np.random.default_rng(7).standard_normal(SHAPE).astype(np.float32)
    want = _onnxruntime_y(target, x)
    y_scale = graph.initializers[graph.ops[-1].inputs[1]]
    assert np.abs(execute(graph, {"x": x})["y"] - want).max() <= y_scale + 1e-6
