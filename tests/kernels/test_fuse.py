"""Eager fusion: BatchNormalization folded into Conv, Relu in place, only where it is exact."""

from __future__ import annotations

import numpy as np

from hetsim.ir import Graph, GraphBuilder, Op, TensorType
from hetsim.kernels import compile_program, execute
from hetsim.kernels.fuse import fuse
from hetsim.models import load_model


def _conv_bn_relu(rng: np.random.Generator, *, also_read: bool = False, **bn: object) -> Graph:
    """x -> Conv(3x3, bias) -> BatchNormalization -> Relu; `also_read`: the Conv's output is
    a graph output too, so the BatchNormalization is not its only reader."""
    b = GraphBuilder("block")
    x = b.input("x", (1, 3, 6, 6))
    w = b.initializer(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    bias = b.initializer(rng.standard_normal(4).astype(np.float32))
    y = b.op("Conv", x, w, bias, pads=[1, 1, 1, 1])
    scale, shift, mean = (b.initializer(rng.standard_normal(4).astype(np.float32)) for _ in "ssm")
    var = b.initializer(rng.uniform(0.5, 2.0, 4).astype(np.float32))
    z = b.op("BatchNormalization", y, scale, shift, mean, var, **bn)
    r = b.op("Relu", z)
    return b.build(r, y) if also_read else b.build(r)


def _by_hand(graph: Graph, x: np.ndarray) -> np.ndarray:
    """The block's value in float64, from the definitions (the Conv from `execute` unfused)."""
    conv = next(op for op in graph.ops if op.type == "Conv")
    norm = next(op for op in graph.ops if op.type == "BatchNormalization")
    only_conv = Graph("conv", (conv,), dict(graph.inputs), conv.outputs, graph.initializers)
    y = execute(only_conv, {"x": x}, fuse=False)[conv.outputs[0]].astype(np.float64)
    scale, shift, mean, var = (graph.initializers[n].reshape(-1, 1, 1) for n in norm.inputs[1:])
    eps = norm.attrs.get("epsilon", 1e-5)
    return np.maximum((y - mean) / np.sqrt(var + eps) * scale + shift, 0)


def test_batch_norm_is_folded_into_the_conv_and_relu_runs_in_place(
    rng: np.random.Generator,
) -> None:
    graph = _conv_bn_relu(rng, epsilon=1e-3)
    fused = fuse(graph)
    assert [op.type for op in fused.ops] == ["Conv"]
    assert fused.ops[0].outputs == graph.outputs  # the Relu's output, written by the Conv
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    got = execute(graph, {"x": x})[graph.outputs[0]]
    np.testing.assert_allclose(got, _by_hand(graph, x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        got, execute(graph, {"x": x}, fuse=False)[graph.outputs[0]], rtol=1e-5, atol=1e-5
    )


def test_a_conv_output_read_elsewhere_keeps_its_batch_norm(rng: np.random.Generator) -> None:
    graph = _conv_bn_relu(rng, also_read=True)
    # and the Relu stays too: only a Conv, Add, Sum or Concat output is fresh enough to overwrite
    assert [op.type for op in fuse(graph).ops] == ["Conv", "BatchNormalization", "Relu"]
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    fused, plain = execute(graph, {"x": x}), execute(graph, {"x": x}, fuse=False)
    for name in graph.outputs:  # the unfolded ops compute bit for bit the same values
        np.testing.assert_array_equal(fused[name], plain[name])


def test_a_fold_past_the_weights_dtype_is_not_made() -> None:
    # float16 W = 1000 times the BatchNormalization's 1 / sqrt(1e-4 + 1e-5) = 95.3: 95 346,
    # past float16's 65 504; folded, the outputs were inf where the two ops give 953 and -1906
    b = GraphBuilder("half")
    x = b.input("x", (1, 1, 1, 2), "float16")
    w = b.initializer(np.full((1, 1, 1, 1), 1000, np.float16))
    one, zero = np.ones(1, np.float16), np.zeros(1, np.float16)
    params = [b.initializer(v) for v in (one, zero, zero, np.full(1, 1e-4, np.float16))]
    graph = b.build(b.op("BatchNormalization", b.op("Conv", x, w), *params, epsilon=1e-5))
    assert [op.type for op in fuse(graph).ops] == ["Conv", "BatchNormalization"]
    inputs = {"x": np.array([[[[0.01, -0.02]]]], np.float16)}
    fused = execute(graph, inputs)[graph.outputs[0]]
    np.testing.assert_array_equal(fused, execute(graph, inputs, fuse=False)[graph.outputs[0]])
    expected = 1000 * np.array([0.01, -0.02]) / np.sqrt(1e-4 + 1e-5)  # the schema's formula
    np.testing.assert_allclose(fused.ravel(), expected, rtol=2e-3)


def test_training_mode_batch_norm_is_not_folded(rng: np.random.Generator) -> None:
    graph = _conv_bn_relu(rng, training_mode=1)
    assert "BatchNormalization" in [op.type for op in fuse(graph).ops]


def test_compiling_fused_leaves_the_graph_as_it_was() -> None:
    graph = load_model("cnn")
    before = graph.ops
    steps = compile_program(graph).steps
    assert graph.ops is before
    assert len(steps) < len(compile_program(graph, fuse_ops=False).steps)


def _conv_bn_mul_add(rng: np.random.Generator, mul: np.ndarray, add: np.ndarray) -> Graph:
    """x -> Conv -> BatchNormalization -> Mul(mul) -> Add(add) -> Relu, as inception_v2 is."""
    b = GraphBuilder("affine")
    x = b.input("x", (2, 3, 5, 5))
    y = b.op("Conv", x, b.initializer(rng.standard_normal((4, 3, 3, 3)).astype(np.float32)))
    params = [rng.standard_normal(4).astype(np.float32) for _ in range(3)]
    var = rng.uniform(0.5, 2.0, 4).astype(np.float32)
    z = b.op("BatchNormalization", y, *(b.initializer(p) for p in (*params, var)))
    scaled = b.op("Mul", b.initializer(mul), z)  # the constant first: Mul commutes
    return b.build(b.op("Relu", b.op("Add", scaled, b.initializer(add))))


def test_per_channel_mul_and_add_fold_into_the_conv_too(rng: np.random.Generator) -> None:
    mul = rng.standard_normal((4, 1, 1)).astype(np.float32)
    graph = _conv_bn_mul_add(rng, mul, np.float32(0.25) * np.ones((1, 4, 1, 1), np.float32))
    assert [op.type for op in fuse(graph).ops] == ["Conv"]
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    fused, plain = execute(graph, {"x": x}), execute(graph, {"x": x}, fuse=False)
    name = graph.outputs[0]
    np.testing.assert_allclose(fused[name], plain[name], rtol=1e-5, atol=1e-5)


def test_a_mul_that_varies_along_space_or_changes_dtype_is_not_folded(
    rng: np.random.Generator,
) -> None:
    spatial = rng.standard_normal((4, 5, 5)).astype(np.float32)  # varies along H and W
    graph = _conv_bn_mul_add(rng, spatial, np.zeros((4, 1, 1), np.float32))
    # the BatchNormalization folds, the Mul stops the chain; the Relu runs in place on the Add
    assert [op.type for op in fuse(graph).ops] == ["Conv", "Mul", "Add"]
    wide = _conv_bn_mul_add(rng, np.ones((4, 1, 1)), np.zeros((4, 1, 1)))  # float64 constants
    assert [op.type for op in fuse(wide).ops] == ["Conv", "Mul", "Add"]


def test_a_graph_name_like_a_folded_weight_is_not_taken_for_it(rng: np.random.Generator) -> None:
    # the folded weight of conv output 'c' was named 'c\0foldedw' whatever the graph held: a
    # graph input of that name was read in its place, and y came out wrong, silently
    taken = "c\0foldedw"
    graph = Graph(
        "g",
        (
            Op("Conv", "conv", ("x", "w"), ("c",)),
            Op("Mul", "mul", ("c", "k"), ("y",)),
            Op("Identity", "id", (taken,), ("z",)),
        ),
        {"x": TensorType((1, 3, 4, 4), "float32"), taken: TensorType((4, 3, 1, 1), "float32")},
        ("y", "z"),
        {
            "w": rng.standard_normal((4, 3, 1, 1)).astype(np.float32),
            "k": (rng.standard_normal((1, 4, 1, 1)) + 2).astype(np.float32),
        },
    )
    feeds = {
        "x": rng.standard_normal((1, 3, 4, 4)).astype(np.float32),
        taken: np.zeros((4, 3, 1, 1), np.float32),
    }
    assert [op.type for op in fuse(graph).ops] == ["Conv", "Identity"]  # the Mul is folded
    fused, plain = execute(graph, feeds), execute(graph, feeds, fuse=False)
    np.testing.assert_allclose(fused["y"], plain["y"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(fused["z"], feeds[taken])
