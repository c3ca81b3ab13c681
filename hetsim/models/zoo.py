"""The model zoo: small models written with the builder, and the ONNX "light" models by name.

Owns the `ZOO` registry (name -> function that builds the `Graph`) and where the light models
live (the ``onnx`` package ships them under ``onnx/backend/test/data/light``). Built-in models
take their weights from a seeded generator, so every build of a model is the same graph.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np

from hetsim.errors import ModelError, Problem, is_count
from hetsim.frontend import fuse_qdq, load_onnx
from hetsim.frontend.proto import onnx_dir
from hetsim.ir import Graph, GraphBuilder
from hetsim.kernels import execute
from hetsim.units import format_bytes

__all__ = [
    "LIGHT_MODELS",
    "ZOO",
    "cnn",
    "cnn_int8",
    "light_model",
    "light_model_path",
    "mlp",
    "transformer",
]

SEED = 0
"""Seed of the weights of the built-in models."""

LIGHT_MODELS = {
    "resnet50": "light_resnet50",
    "squeezenet": "light_squeezenet",
    "vgg19": "light_vgg19",
    "alexnet": "light_bvlc_alexnet",
    "densenet121": "light_densenet121",
    "inception_v1": "light_inception_v1",
    "inception_v2": "light_inception_v2",
    "shufflenet": "light_shufflenet",
    "zfnet512": "light_zfnet512",
}
"""Zoo name -> file stem of the ONNX light model in the installed onnx package."""


def _weight(rng: np.random.Generator, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
    """He-scaled normal weights, float32."""
    return (rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)).astype(np.float32)


def _bias(rng: np.random.Generator, size: int) -> np.ndarray:
    return (0.1 * rng.standard_normal(size)).astype(np.float32)


def mlp() -> Graph:
    """A static three-layer perceptron: x[1, 64] -> 128 -> 64 -> 10 (Gemm, Relu).

    Examples
    --------
    >>> g = mlp()
    >>> [op.type for op in g.ops], g.inputs["x"].shape, g.parameter_count
    (['Gemm', 'Relu', 'Gemm', 'Relu', 'Gemm'], (1, 64), 17226)
    """
    rng = np.random.default_rng(SEED)
    b = GraphBuilder("mlp")
    h = b.input("x", (1, 64))
    widths = (64, 128, 64, 10)
    for layer, (n_in, n_out) in enumerate(itertools.pairwise(widths), start=1):
        w = b.initializer(_weight(rng, (n_out, n_in), n_in), f"fc{layer}.weight")
        bias = b.initializer(_bias(rng, n_out), f"fc{layer}.bias")
        h = b.op("Gemm", h, w, bias, name=f"fc{layer}", transB=1)
        if layer < len(widths) - 1:
            h = b.op("Relu", h, name=f"relu{layer}")
    return b.build(h)


def cnn() -> Graph:
    """A small static CNN: x[1, 3, 32, 32] -> two conv blocks -> global pool -> 10 classes.

    Examples
    --------
    >>> g = cnn()
    >>> [op.type for op in g.ops][:5], g.is_static
    (['Conv', 'BatchNormalization', 'Relu', 'MaxPool', 'Conv'], True)
    """
    rng = np.random.default_rng(SEED)
    b = GraphBuilder("cnn")
    h = b.input("x", (1, 3, 32, 32))
    for block, (c_in, c_out) in enumerate(((3, 16), (16, 32)), start=1):
        w = b.initializer(_weight(rng, (c_out, c_in, 3, 3), c_in * 9), f"conv{block}.weight")
        h = b.op("Conv", h, w, name=f"conv{block}", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        stats = [
            1.0 + 0.1 * rng.standard_normal(c_out),
            0.1 * rng.standard_normal(c_out),
            0.1 * rng.standard_normal(c_out),
            1.0 + 0.1 * rng.random(c_out),
        ]
        params = [
            b.initializer(s.astype(np.float32), f"bn{block}.{k}")
            for s, k in zip(stats, ("scale", "bias", "mean", "var"), strict=True)
        ]
        h = b.op("BatchNormalization", h, *params, name=f"bn{block}", epsilon=1e-5)
        h = b.op("Relu", h, name=f"relu{block}")
        h = b.op("MaxPool", h, name=f"pool{block}", kernel_shape=[2, 2], strides=[2, 2])
    h = b.op("GlobalAveragePool", h, name="gap")
    h = b.op("Flatten", h, name="flatten", axis=1)
    w = b.initializer(_weight(rng, (10, 32), 32), "fc.weight")
    h = b.op("Gemm", h, w, b.initializer(_bias(rng, 10), "fc.bias"), name="fc", transB=1)
    return b.build(b.op("Softmax", h, name="softmax", axis=-1))


def _quantized(array: np.ndarray, scale: np.ndarray, axis: int, dtype: type) -> np.ndarray:
    """`array` divided by `scale` (one per index of `axis`), rounded, clipped to `dtype`."""
    shape = [1] * array.ndim
    shape[axis] = -1
    info = np.iinfo(dtype)
    quantized: np.ndarray = np.clip(np.rint(array / scale.reshape(shape)), info.min, info.max)
    return quantized.astype(dtype)


def cnn_int8(*, fuse: bool = True) -> Graph:
    """`cnn` quantized to int8 after training, in QDQ form, with its QDQ groups fused
    (`hetsim.frontend.fuse_qdq`) as `load_onnx` fuses a QDQ file.

    What onnxruntime's static quantizer writes for `cnn`: each BatchNormalization folded into
    its Conv; weights int8, symmetric, one scale per output channel; biases int32 with scale
    ``x_scale · w_scale``; activations int8 per tensor, from their range on the input
    `hetsim.api.make_inputs` gives for seed 0 (``min..max``; a ReLU's output ``0..max`` with zero
    point -128, so the quantization's saturation is the ReLU and the op goes); each MaxPool
    between a DQ and a Q of its input's scale and zero point; the classifier head
    (GlobalAveragePool, Gemm, Softmax) in float. Fused, it runs QuantizeLinear, QLinearConv,
    MaxPool (on int8), QLinearConv, MaxPool, DequantizeLinear, then the float head.
    ``fuse=False``: the QDQ form as written.

    Examples
    --------
    >>> [op.type for op in cnn_int8().ops][:6]
    ['QuantizeLinear', 'QLinearConv', 'MaxPool', 'QLinearConv', 'MaxPool', 'DequantizeLinear']
    """
    float_model = cnn()
    weights = float_model.initializers
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    seen = execute(replace(float_model, outputs=("relu1", "relu2")), {"x": x}, fuse=False)
    b = GraphBuilder("cnn_int8", opset=19)
    h = b.input("x", (1, 3, 32, 32))
    low, high = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = np.array((high - low) / 255, np.float32)
    zero = np.array(np.rint(-128 - low / scale), np.int8)
    h = b.op("QuantizeLinear", h, scale, zero, name="quant_x")
    dq = partial(b.op, "DequantizeLinear")
    for block in (1, 2):
        bn = [weights[f"bn{block}.{k}"] for k in ("scale", "bias", "mean", "var")]
        gain = bn[0] / np.sqrt(bn[3] + np.float32(1e-5))
        w = weights[f"conv{block}.weight"] * gain.reshape(-1, 1, 1, 1)
        w_scale = (np.abs(w).max(axis=(1, 2, 3)) / 127).astype(np.float32)
        b_scale = (scale * w_scale).astype(np.float32)
        bias = _quantized(bn[1] - bn[2] * gain, b_scale, 0, np.int32)
        conv = b.op(
            "Conv", dq(h, scale, zero), dq(_quantized(w, w_scale, 0, np.int8), w_scale, axis=0),
            dq(bias, b_scale, axis=0), name=f"conv{block}", kernel_shape=[3, 3],
            pads=[1, 1, 1, 1],
        )  # fmt: skip
        scale = np.array(seen[f"relu{block}"].max() / 255, np.float32)
        zero = np.array(-128, np.int8)
        h = b.op("QuantizeLinear", conv, scale, zero, name=f"quant{block}")
        pool = b.op("MaxPool", dq(h, scale, zero), name=f"pool{block}", kernel_shape=[2, 2],
                    strides=[2, 2])  # fmt: skip
        h = b.op("QuantizeLinear", pool, scale, zero, name=f"quant_pool{block}")
    h = dq(h, scale, zero, name="dequant")
    h = b.op("GlobalAveragePool", h, name="gap")
    h = b.op("Flatten", h, name="flatten", axis=1)
    h = b.op("Gemm", h, weights["fc.weight"], weights["fc.bias"], name="fc", transB=1)
    graph = b.build(b.op("Softmax", h, name="softmax", axis=-1))
    return fuse_qdq(graph) if fuse else graph


def _check_sizes(d_model: int, heads: int, d_ff: int) -> None:
    """Refuse `transformer` sizes that built a broken graph (a Reshape into heads of d_model //
    heads that do not add up to d_model) or failed in numpy (a division by zero)."""
    for name, size in (("d_model", d_model), ("heads", heads), ("d_ff", d_ff)):
        if not is_count(size, 1):
            problem = Problem(f"transformer: {name}", "expected a positive integer", repr(size))
            raise ModelError(problem.message)
    if d_model % heads:
        expected = f"expected a divisor of d_model ({d_model})"
        raise ModelError(Problem("transformer: heads", expected, repr(heads)).message)


def transformer(d_model: int = 64, heads: int = 4, d_ff: int = 256) -> Graph:
    """One pre-norm transformer encoder block on x[1, seq, d_model]; ``seq`` is symbolic.

    ``h = x + Attention(LayerNorm(x))``, ``y = h + FFN(LayerNorm(h))``, with multi-head
    self-attention (softmax(q kᵀ / √d_head) v) and an FFN whose GELU is written with Erf.

    Raises
    ------
    ModelError
        A size that is not a positive integer, `heads` that does not divide `d_model`, or
        sizes whose weights this machine has no room for.

    Examples
    --------
    >>> g = transformer()
    >>> g.inputs["x"].shape, g.symbols, len(g.ops)
    ((1, 'seq', 64), ('seq',), 33)
    >>> transformer(d_model=64, heads=5)
    Traceback (most recent call last):
    ...
    hetsim.errors.ModelError: transformer: heads: expected a divisor of d_model (64), got 5
    """
    _check_sizes(d_model=d_model, heads=heads, d_ff=d_ff)
    try:
        return _transformer(d_model, heads, d_ff)
    except MemoryError:  # numpy's error names an array of the weights' making, not the sizes
        weights = 4 * (4 * d_model * d_model + 2 * d_model * d_ff)  # float32 matrices
        raise ModelError(
            f"transformer: expected sizes whose weights this machine can allocate, got "
            f"d_model={d_model}, d_ff={d_ff} ({format_bytes(weights)} of weights: no room)"
        ) from None


def _transformer(d_model: int, heads: int, d_ff: int) -> Graph:
    rng = np.random.default_rng(SEED)
    b = GraphBuilder("transformer")
    x = b.input("x", (1, "seq", d_model))
    d_head = d_model // heads
    split = b.initializer(np.array([0, -1, heads, d_head], np.int64), "heads.shape")

    def linear(h: str, n_in: int, n_out: int, name: str) -> str:
        w = b.initializer(_weight(rng, (n_in, n_out), n_in), f"{name}.weight")
        h = b.op("MatMul", h, w, name=f"{name}.matmul")
        return b.op("Add", h, b.initializer(_bias(rng, n_out), f"{name}.bias"), name=name)

    def layer_norm(h: str, name: str) -> str:
        gain = (1.0 + 0.1 * rng.standard_normal(d_model)).astype(np.float32)
        scale = b.initializer(gain, f"{name}.scale")
        shift = b.initializer(_bias(rng, d_model), f"{name}.bias")
        return b.op("LayerNormalization", h, scale, shift, name=name, axis=-1, epsilon=1e-5)

    def heads_of(h: str, name: str, perm: list[int]) -> str:
        h = b.op("Reshape", h, split, name=f"{name}.split")
        return b.op("Transpose", h, name=f"{name}.heads", perm=perm)

    n = layer_norm(x, "ln1")
    q = heads_of(linear(n, d_model, d_model, "q"), "q", [0, 2, 1, 3])
    k = heads_of(linear(n, d_model, d_model, "k"), "k", [0, 2, 3, 1])
    v = heads_of(linear(n, d_model, d_model, "v"), "v", [0, 2, 1, 3])
    scores = b.op("MatMul", q, k, name="scores")
    scores = b.op("Div", scores, np.array(math.sqrt(d_head), np.float32), name="scale")
    probs = b.op("Softmax", scores, name="softmax", axis=-1)
    context = b.op("Transpose", b.op("MatMul", probs, v, name="context"), perm=[0, 2, 1, 3])
    context = b.op("Reshape", context, np.array([0, -1, d_model], np.int64), name="merge")
    h = b.op("Add", x, linear(context, d_model, d_model, "out"), name="residual1")
    f = linear(layer_norm(h, "ln2"), d_model, d_ff, "ff1")
    erf = b.op("Erf", b.op("Div", f, np.array(math.sqrt(2.0), np.float32)), name="gelu.erf")
    gate = b.op("Mul", np.array(0.5, np.float32), b.op("Add", erf, np.array(1.0, np.float32)))
    f = b.op("Mul", f, gate, name="gelu")
    y = b.op("Add", h, linear(f, d_ff, d_model, "ff2"), name="residual2")
    return b.build(y)


def light_model_path(name: str) -> Path:
    """Path of the ONNX light model `name` (a key of `LIGHT_MODELS`) in the onnx package.

    The expected output of the backend test sits beside it, as ``<stem>_output_0.pb``.
    """
    package = onnx_dir(f"model {name}")  # found, not imported: importing onnx takes ~1 s
    return package / "backend/test/data/light" / f"{LIGHT_MODELS[name]}.onnx"


def light_model(name: str) -> Graph:
    """The ONNX light model `name`, read with the ONNX frontend and given the zoo name."""
    path = light_model_path(name)
    if not path.is_file():
        raise ModelError(f"model {name}: expected the onnx package to ship {path}, got no file")
    return replace(load_onnx(path), name=name)


ZOO: dict[str, Callable[[], Graph]] = {
    "mlp": mlp,
    "cnn": cnn,
    "cnn_int8": cnn_int8,
    "transformer": transformer,
    **{name: partial(light_model, name) for name in LIGHT_MODELS},
}
"""Zoo name -> function that builds the model."""
