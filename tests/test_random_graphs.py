"""`simulate` on random graphs and shipped platforms, against `execute` and against itself.

Each example is a random DAG of elementwise ops, MatMuls with a weight and Softmaxes (each op
reads any earlier tensor), a few of its tensors as outputs, on one of six shipped tags (one CPU
host with a GPU, nested co-processor levels, two machines), under the ``capability`` or ``cost``
policy, with or without a CUDA graph where the tag has a GPU. The properties:

- the functional outputs equal `hetsim.execute` on the same inputs, bit for bit;
- timing mode gives the makespan of functional mode;
- the same call twice gives the same spans and the same ``to_dict()``;
- an untraced run gives the traced run's figures (up to rounding) and no utilization above 1;
- the traced run passes `assert_invariants`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.api import platform_of, simulate
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import execute
from hetsim.report import assert_invariants

TAGS = ("x86-h100", "arm-riscv-soc", "rk3588", "nxp-imx93", "jetson-agx-orin", "two-node-h100")
GPU_TAGS = ("x86-h100", "jetson-agx-orin")
UNARY = ("Relu", "Sigmoid", "Tanh", "Neg")
BINARY = ("Add", "Mul", "Sub")
PLATFORMS = {tag: platform_of(tag) for tag in TAGS}


@st.composite
def graphs(draw: st.DrawFn, batch: int | str = 2) -> Graph:
    """A random graph of input ``x`` of shape ``(batch, width)``: `batch` a size or a dim's name."""
    width = draw(st.sampled_from((4, 8, 16)))
    has_weight = draw(st.booleans())
    live, ops = ["x"], []
    for i in range(draw(st.integers(1, 20))):
        kinds = ["unary", "binary", "softmax", *(["matmul"] if has_weight else [])]
        kind = draw(st.sampled_from(kinds))
        pick = st.sampled_from(live)
        if kind == "unary":
            op = Op(draw(st.sampled_from(UNARY)), f"op{i}", (draw(pick),), (f"t{i}",))
        elif kind == "binary":
            op = Op(draw(st.sampled_from(BINARY)), f"op{i}", (draw(pick), draw(pick)), (f"t{i}",))
        elif kind == "matmul":
            op = Op("MatMul", f"op{i}", (draw(pick), "w"), (f"t{i}",))
        else:
            op = Op("Softmax", f"op{i}", (draw(pick),), (f"t{i}",), {"axis": -1})
        ops.append(op)
        live.append(f"t{i}")
    outputs = draw(st.lists(st.sampled_from(live[1:]), min_size=1, max_size=3, unique=True))
    weights = (
        {"w": np.random.default_rng(1).standard_normal((width, width)).astype("float32")}
        if has_weight
        else {}
    )
    return Graph(
        "random", tuple(ops), {"x": TensorType((batch, width), "float32")}, tuple(outputs), weights
    )


def _close(traced: Any, untraced: Any, where: str) -> None:
    if isinstance(traced, dict):
        assert traced.keys() == untraced.keys(), where
        for key in traced:
            _close(traced[key], untraced[key], f"{where}.{key}")
    elif isinstance(traced, float):
        assert abs(traced - untraced) <= 1e-9 * max(1.0, abs(traced)), (where, traced, untraced)
    else:
        assert traced == untraced, where


@settings(max_examples=100, deadline=None)
@given(
    graphs(),
    st.sampled_from(TAGS),
    st.sampled_from(("capability", "cost")),
    st.sampled_from((None, "whole")),
    st.integers(0, 2**16),
)
def test_random_graphs_simulate_like_execute_and_like_themselves(
    graph: Graph, tag: str, policy: str, cuda_graph: str | None, seed: int
) -> None:
    platform = PLATFORMS[tag]
    inputs = {"x": np.random.default_rng(seed).standard_normal((2, graph.inputs["x"].shape[1]))}
    inputs["x"] = inputs["x"].astype("float32")
    options: dict[str, Any] = {"partition": policy}
    if cuda_graph is not None and tag in GPU_TAGS:
        options["cuda_graph"] = cuda_graph
    first = simulate(graph, platform, inputs=inputs, **options)
    again = simulate(graph, platform, inputs=inputs, **options)
    timing = simulate(graph, platform, inputs=inputs, mode="timing", **options)
    untraced = simulate(graph, platform, inputs=inputs, trace=False, **options)

    expected = execute(graph, inputs)
    for name in graph.outputs:
        np.testing.assert_array_equal(first.outputs[name], expected[name], err_msg=name)
    assert timing.makespan_us == first.makespan_us
    assert again.spans == first.spans
    assert again.to_dict() == first.to_dict()
    volatile = ("extra", "inputs", "outputs")
    traced_dict = {k: v for k, v in first.to_dict().items() if k not in volatile}
    untraced_dict = {k: v for k, v in untraced.to_dict().items() if k not in volatile}
    _close(traced_dict, untraced_dict, "to_dict")
    for stats in (*first.processors.values(), *untraced.processors.values()):
        assert stats.utilization <= 1.0
    assert_invariants(first)
