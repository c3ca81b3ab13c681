"""The nine ONNX light models: shipped outputs, and random weights against onnxruntime.

The shipped outputs come from inputs made as onnx's backend test runner makes them
(``generate_dummy_data(..., random=False)`` in onnx/backend/test/runner/__init__.py), compared
with the loader's tolerances (rtol 1e-3, atol 1e-7). Those models hold constant weights, so
their outputs are nearly constant vectors; the second test replaces every weight with seeded
random values and also compares the logits (the Softmax input), which the Softmax would
otherwise flatten.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from hetsim.frontend import load_onnx  # noqa: E402
from hetsim.ir import Graph  # noqa: E402
from hetsim.kernels import execute  # noqa: E402
from hetsim.models import LIGHT_MODELS, light_model_path, load_model  # noqa: E402

NAMES = sorted(LIGHT_MODELS)
RTOL, ATOL = 1e-3, 1e-7  # onnx/backend/test/loader: the light models' tolerances
# A softmax whose logits are this many units apart from one float32 to the next is ill-conditioned.
SOFTMAX_ILL_CONDITIONED = 1.0
LOGITS_RTOL = 1e-6  # a few float32 ulps of the largest logit


def _dummy_input(info: onnx.ValueInfoProto) -> np.ndarray:
    """What ``generate_dummy_data(info, random=False)`` returns: arange / n, float32."""
    assert info.type.tensor_type.elem_type == TensorProto.FLOAT, "the runner makes float only"
    shape = tuple(
        d.dim_value if d.HasField("dim_value") else 1 for d in info.type.tensor_type.shape.dim
    )
    n = np.prod(shape)
    return (np.arange(n).reshape(shape) / n).astype(np.float32)


def _feeds(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    weights = {t.name for t in model.graph.initializer}
    return {i.name: _dummy_input(i) for i in model.graph.input if i.name not in weights}


def _softmax_logits(graph: Graph, output: str) -> str | None:
    """The input of the Softmax that makes `output`, if a Softmax does."""
    producer = next(op for op in graph.ops if output in op.outputs)
    return producer.inputs[0] if producer.type == "Softmax" else None


@pytest.mark.parametrize("name", NAMES)
def test_light_model_matches_the_shipped_output(name: str) -> None:
    path = light_model_path(name)
    model = onnx.load(str(path))
    graph = load_model(name)
    logits = {o: _softmax_logits(graph, o) for o in graph.outputs}
    program = dataclasses.replace(graph, outputs=(*graph.outputs, *filter(None, logits.values())))
    outputs = execute(program, _feeds(model))
    assert graph.outputs == tuple(o.name for o in model.graph.output)
    for index, output in enumerate(graph.outputs):
        expected_path = path.with_name(f"{path.stem}_output_{index}.pb")
        expected = numpy_helper.to_array(onnx.load_tensor(str(expected_path)))
        assert outputs[output].shape == expected.shape
        logit = outputs[logits[output]] if logits[output] else None
        if logit is not None and np.spacing(np.abs(logit).max()) >= SOFTMAX_ILL_CONDITIONED:
            # squeezenet's constant weights make logits of ~9.5e9, where float32 values are
            # 1024 apart: one rounding in a BLAS reduction (its order changes with the thread
            # count) turns 0.001 into 0 or 0.002. Softmax values are then meaningless; compare
            # the logits' differences, which the expected softmax gives as log-ratios.
            shift = np.log(expected) - np.log(expected).max()
            got = logit - logit.max()
            np.testing.assert_allclose(got, shift, atol=LOGITS_RTOL * np.abs(logit).max())
            np.testing.assert_allclose(outputs[output].sum(), expected.sum(), rtol=RTOL)
        else:
            np.testing.assert_allclose(outputs[output], expected, rtol=RTOL, atol=ATOL)


def _random_weight(
    rng: np.random.Generator, shape: tuple[int, ...], uses: list[tuple[onnx.NodeProto, int]]
) -> np.ndarray:
    """Seeded float32 values that keep activations of order one through a deep net.

    Conv and Gemm weights are He-scaled; BatchNormalization variances are positive; its
    scales are below one so that residual sums do not grow block after block.
    """
    roles = {(node.op_type, index) for node, index in uses}
    if ("Conv", 1) in roles:
        return rng.standard_normal(shape, np.float32) * np.float32(np.sqrt(2 / np.prod(shape[1:])))
    if ("Gemm", 1) in roles:
        gemm = next(node for node, _ in uses if node.op_type == "Gemm")
        attrs = {a.name: helper.get_attribute_value(a) for a in gemm.attribute}
        fan_in = shape[1] if attrs.get("transB", 0) else shape[0]
        return rng.standard_normal(shape, np.float32) * np.float32(1 / np.sqrt(fan_in))
    low, high = {
        ("BatchNormalization", 4): (0.5, 1.5),
        ("BatchNormalization", 1): (0.3, 0.8),
    }.get(
        min(roles & {("BatchNormalization", 1), ("BatchNormalization", 4)}, default=None),
        (-0.1, 0.1),
    )
    return rng.uniform(low, high, shape).astype(np.float32)


def _with_random_weights(
    model: onnx.ModelProto, seed: int
) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The model with every float weight (initializer or ConstantOfShape) a seeded random input.

    Weights become graph inputs fed with the returned arrays, so that no proto carries
    hundreds of MiB; each Softmax input becomes an extra graph output, so that the logits are
    compared too.
    """
    rng = np.random.default_rng(seed)
    graph = model.graph
    constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    uses: dict[str, list[tuple[onnx.NodeProto, int]]] = {}
    for node in graph.node:
        for index, name in enumerate(node.input):
            uses.setdefault(name, []).append((node, index))
    shapes = {n: a.shape for n, a in constants.items() if a.dtype == np.float32}
    nodes = []
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in constants:
            shapes[node.output[0]] = tuple(int(d) for d in constants[node.input[0]])
        else:
            nodes.append(node)
    weights = {
        name: _random_weight(rng, shape, uses.get(name, [])) for name, shape in shapes.items()
    }
    used = {name for node in nodes for name in node.input}
    kept = [t for t in graph.initializer if t.name not in shapes and t.name in used]
    inputs = [i for i in graph.input if i.name not in constants and i.name not in shapes]
    inputs += [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))
        for name, shape in shapes.items()
        if name in used
    ]
    logits = [
        helper.make_empty_tensor_value_info(n.input[0]) for n in nodes if n.op_type == "Softmax"
    ]
    new = helper.make_graph(nodes, graph.name, inputs, [*graph.output, *logits], kept)
    model = helper.make_model(new, opset_imports=list(model.opset_import), ir_version=7)
    return model, {name: weights[name] for name in shapes if name in used}


@pytest.mark.parametrize("name", NAMES)
def test_light_model_with_random_weights_matches_onnxruntime(name: str) -> None:
    ort = pytest.importorskip("onnxruntime")
    model, feeds = _with_random_weights(onnx.load(str(light_model_path(name))), seed=0)
    rng = np.random.default_rng(1)
    for info in model.graph.input[: len(model.graph.input) - len(feeds)]:
        shape = tuple(d.dim_value for d in info.type.tensor_type.shape.dim)
        feeds[info.name] = rng.random(shape, np.float32)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    expected = session.run(None, feeds)
    graph = load_onnx(model)
    outputs = execute(graph, feeds)
    final, *logits = graph.outputs
    np.testing.assert_allclose(outputs[final], expected[0], rtol=RTOL, atol=ATOL)
    for output, reference in zip(logits, expected[1:], strict=True):
        assert float(np.std(reference)) > 0.05, "weights too small: logits nearly constant"
        # logits straddle zero: a logit near it is off by the summation order's rounding of the
        # large terms it sums (inception_v1: -0.000898 against -0.000900 on one machine's BLAS)
        atol = LOGITS_RTOL * np.abs(reference).max()
        np.testing.assert_allclose(outputs[output], reference, rtol=RTOL, atol=atol)
