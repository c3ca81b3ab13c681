"""The built-in zoo models, checked against numpy written out by hand, and `load_model`."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from hetsim.errors import ModelError
from hetsim.ir import Graph, TensorType
from hetsim.kernels import OPS, execute
from hetsim.models import LIGHT_MODELS, ZOO, light_model_path, load_model


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _layer_norm(x: np.ndarray, scale: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * scale + bias


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _op_inputs(graph: Graph, name: str) -> list[np.ndarray]:
    op = next(op for op in graph.ops if op.name == name)
    return [graph.initializers[n] for n in op.inputs if n in graph.initializers]


def test_zoo_has_the_built_in_and_light_models() -> None:
    assert list(ZOO) == ["mlp", "cnn", "cnn_int8", "transformer", *LIGHT_MODELS]
    assert sorted(LIGHT_MODELS) == sorted(
        [
            "resnet50",
            "squeezenet",
            "vgg19",
            "alexnet",
            "densenet121",
            "inception_v1",
            "inception_v2",
            "shufflenet",
            "zfnet512",
        ]
    )


@pytest.mark.parametrize("name", ["mlp", "cnn", "cnn_int8", "transformer"])
def test_built_in_models_use_only_registered_ops_and_are_reproducible(name: str) -> None:
    first, second = ZOO[name](), ZOO[name]()
    assert {op.type for op in first.ops} <= set(OPS)
    assert first.ops == second.ops
    for key, array in first.initializers.items():
        np.testing.assert_array_equal(array, second.initializers[key])


def test_mlp_matches_numpy(rng: np.random.Generator) -> None:
    graph = load_model("mlp")
    x = rng.standard_normal((1, 64)).astype(np.float32)
    h = x.astype(np.float64)
    for layer in (1, 2, 3):
        w, b = (graph.initializers[f"fc{layer}.{k}"] for k in ("weight", "bias"))
        h = h @ w.T + b
        h = np.maximum(h, 0) if layer < 3 else h
    (out,) = execute(graph, {"x": x}).values()
    assert graph.inputs == {"x": TensorType((1, 64), "float32")}
    np.testing.assert_allclose(out, h, rtol=1e-4, atol=1e-5)


def _conv3x3(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Direct 3x3 convolution with padding 1, one output pixel offset at a time."""
    n, _, height, width = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], height, width))
    for i in range(3):
        for j in range(3):
            patch = padded[:, :, i : i + height, j : j + width]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


def test_cnn_matches_numpy(rng: np.random.Generator) -> None:
    graph = load_model("cnn")
    x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
    h = x.astype(np.float64)
    for block in (1, 2):
        h = _conv3x3(h, graph.initializers[f"conv{block}.weight"])
        scale, bias, mean, var = (
            graph.initializers[f"bn{block}.{k}"][None, :, None, None]
            for k in ("scale", "bias", "mean", "var")
        )
        h = np.maximum((h - mean) / np.sqrt(var + 1e-5) * scale + bias, 0)
        n, c, height, width = h.shape
        h = h.reshape(n, c, height // 2, 2, width // 2, 2).max(axis=(3, 5))
    logits = h.mean(axis=(2, 3)) @ graph.initializers["fc.weight"].T + graph.initializers["fc.bias"]
    (out,) = execute(graph, {"x": x}).values()
    assert graph.is_static
    np.testing.assert_allclose(out, _softmax(logits), rtol=1e-4, atol=1e-6)


def _transformer_reference(graph: Graph, x: np.ndarray, heads: int = 4) -> np.ndarray:
    init = graph.initializers

    def linear(h: np.ndarray, name: str) -> np.ndarray:
        return h @ init[f"{name}.weight"] + init[f"{name}.bias"]

    def split(h: np.ndarray) -> np.ndarray:
        batch, seq, width = h.shape
        return h.reshape(batch, seq, heads, width // heads).transpose(0, 2, 1, 3)

    n = _layer_norm(x, *_op_inputs(graph, "ln1"))
    q, k, v = (split(linear(n, name)) for name in "qkv")
    probs = _softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1]))
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(x.shape)
    h = x + linear(context, "out")
    f = linear(_layer_norm(h, *_op_inputs(graph, "ln2")), "ff1")
    f = 0.5 * f * (1 + _erf(f / math.sqrt(2)))
    return h + linear(f, "ff2")


@pytest.mark.parametrize("seq", [1, 7, 16])
def test_transformer_matches_numpy_for_each_sequence_length(
    rng: np.random.Generator, seq: int
) -> None:
    graph = load_model("transformer")
    x = rng.standard_normal((1, seq, 64)).astype(np.float32)
    (out,) = execute(graph, {"x": x}).values()
    assert out.shape == (1, seq, 64)
    np.testing.assert_allclose(
        out, _transformer_reference(graph, x.astype(np.float64)), rtol=1e-4, atol=1e-5
    )


def test_transformer_sequence_length_is_symbolic() -> None:
    graph = load_model("transformer")
    assert graph.inputs == {"x": TensorType((1, "seq", 64), "float32")}
    assert graph.symbols == ("seq",)
    assert not graph.is_static


def test_light_model_is_named_by_its_zoo_name() -> None:
    graph = load_model("alexnet")
    assert graph.name == "alexnet"
    assert light_model_path("alexnet").name == "light_bvlc_alexnet.onnx"
    assert graph.opset == 9


def test_light_model_weights_are_folded_from_constant_of_shape() -> None:
    graph = load_model("squeezenet")
    assert "ConstantOfShape" not in {op.type for op in graph.ops}
    assert not any(name.endswith("__SHAPE") for name in graph.initializers)
    assert graph.initializers["conv1_w_0"].shape == (64, 3, 3, 3)


def test_load_model_reads_a_path_and_a_proto() -> None:
    onnx = pytest.importorskip("onnx")
    path = light_model_path("squeezenet")
    from_path, from_str = load_model(path), load_model(str(path))
    from_proto = load_model(onnx.load(str(path)))
    assert from_path.ops == from_str.ops == from_proto.ops
    assert from_path.name == "squeezenet_old"


def test_load_model_passes_a_graph_through() -> None:
    graph = load_model("mlp")
    assert load_model(graph) is graph


def test_unknown_name_suggests_the_closest_zoo_name() -> None:
    with pytest.raises(
        ModelError,
        match=r"^load_model: expected a zoo name or a path to an \.onnx file, got 'resnt50' "
        r"\(did you mean 'resnet50'\?\)$",
    ):
        load_model("resnt50")


def test_unknown_name_without_a_close_match_lists_the_zoo() -> None:
    names = ", ".join(ZOO)
    with pytest.raises(
        ModelError,
        match="^"
        + re.escape(
            "load_model: expected a zoo name or a path to an .onnx file, got 'zzz'; "
            f"zoo names: {names}"
        )
        + "$",
    ):
        load_model("zzz")


def test_missing_onnx_file_is_a_model_error(tmp_path: Path) -> None:
    path = tmp_path / "missing.onnx"
    with pytest.raises(ModelError, match=f"^{re.escape(str(path))}: expected an ONNX model file"):
        load_model(str(path))


def test_other_source_types_are_an_error() -> None:
    with pytest.raises(
        ModelError,
        match=r"^load_model: expected a zoo name, a path to an \.onnx file or an "
        r"onnx\.ModelProto, got int$",
    ):
        load_model(3)


def test_light_model_without_onnx_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(
        ModelError,
        match=r"^model resnet50: expected the onnx package \(pip install 'hetsim\[onnx\]'\), got ",
    ):
        load_model("resnet50")


def test_built_in_models_need_no_onnx(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)
    assert load_model("transformer").name == "transformer"


def test_cnn_int8_weights_are_the_folded_float_weights_to_half_a_step() -> None:
    float_model, quantized = ZOO["cnn"](), ZOO["cnn_int8"]()
    for block in (1, 2):
        weights = float_model.initializers
        scale, bias, mean, var = (
            weights[f"bn{block}.{k}"] for k in ("scale", "bias", "mean", "var")
        )
        gain = scale / np.sqrt(var + 1e-5)
        folded = weights[f"conv{block}.weight"] * gain.reshape(-1, 1, 1, 1)
        conv = next(op for op in quantized.ops if op.name == f"conv{block}")
        assert conv.type == "QLinearConv"
        x_scale, w, w_scale, b = (quantized.initializers[conv.inputs[i]] for i in (1, 3, 4, 8))
        assert w.dtype == np.int8
        assert b.dtype == np.int32
        step = w_scale.reshape(-1, 1, 1, 1)
        assert np.all(np.abs(w * step - folded) <= step / 2 + 1e-7)
        assert np.abs(w).max(axis=(1, 2, 3)).tolist() == [127] * len(w)  # symmetric, full range
        b_step = x_scale * w_scale
        assert np.all(np.abs(b * b_step - (bias - mean * gain)) <= b_step / 2 + 1e-7)


def test_cnn_int8_computes_what_the_float_cnn_does_to_quantization_error() -> None:
    x = np.random.default_rng(7).standard_normal((1, 3, 32, 32)).astype(np.float32)
    want = execute(ZOO["cnn"](), {"x": x})["softmax"]
    fused = execute(ZOO["cnn_int8"](), {"x": x})["softmax"]
    as_written = execute(ZOO["cnn_int8"](fuse=False), {"x": x})["softmax"]
    assert fused.argmax() == want.argmax()
    assert np.abs(fused - want).max() < 0.01
    # the QDQ form as written (float convs between DQ and Q) gives the same probabilities
    np.testing.assert_allclose(fused, as_written, atol=1e-3)
    assert [op.type for op in ZOO["cnn_int8"](fuse=False).ops].count("Conv") == 2
