"""Fused values: a functional run computes with `hetsim.execute`'s fused kernels, wherever the
plan puts the ops of a group, and never changes a simulated time."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import SimulationError
from hetsim.ir import Graph, GraphBuilder
from hetsim.kernels import execute
from hetsim.kernels.fuse import fused_of
from hetsim.runtime import Call, Launch
from hetsim.sim.fusion import fused_runs, groups_of
from tests.runtime.nested_tiny import nested
from tests.sim.tiny import device, target


def conv_bn_relu(*, also_read: bool = False) -> Graph:
    """x -> Conv -> BatchNormalization -> Mul by a per-channel constant -> Relu; `also_read`:
    the BatchNormalization's output is a graph output too, so nothing after it is absorbed."""
    rng = np.random.default_rng(7)
    b = GraphBuilder("block")
    x = b.input("x", (1, 3, 6, 6))
    w = b.initializer(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    y = b.op("Conv", x, w, pads=[1, 1, 1, 1])
    params = [b.initializer(rng.standard_normal(4).astype(np.float32), n) for n in "sbm"]
    var = b.initializer(rng.uniform(0.5, 2.0, 4).astype(np.float32), "v")
    z = b.op("BatchNormalization", y, *params, var)
    scaled = b.op("Mul", z, b.initializer(rng.standard_normal((4, 1, 1)).astype(np.float32), "k"))
    out = b.op("Relu", scaled)
    return b.build(out, z) if also_read else b.build(out)


def x_of() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((1, 3, 6, 6)).astype(np.float32)


# the Conv and the Mul on the GPU, the BatchNormalization and the Relu on the host
SPLIT = target(device("gpu0", ["Conv", "Mul"]))
# the Relu on a nested level's device, the rest on the root host
NESTED = target(nested("acc", device("npu", ["Relu"])))
HOST_ONLY = target(device("gpu0", ["Neg"]))  # no op of the block: all on the host


def runs(graph: Graph, tgt: Any) -> tuple[Any, Any]:
    inputs = {"x": x_of()}
    return simulate(graph, tgt, inputs=inputs), simulate(graph, tgt, inputs=inputs, fuse=False)


@pytest.mark.parametrize("tgt", [HOST_ONLY, SPLIT, NESTED], ids=["host", "split", "nested"])
def test_fused_values_equal_execute_wherever_the_group_runs(tgt: Any) -> None:
    graph = conv_bn_relu()
    fused, plain = runs(graph, tgt)
    (out,) = graph.outputs
    np.testing.assert_array_equal(fused.outputs[out], execute(graph, {"x": x_of()})[out])
    np.testing.assert_array_equal(
        plain.outputs[out], execute(graph, {"x": x_of()}, fuse=False)[out]
    )
    # the two differ by float32 rounding: the test tells them apart
    assert not np.array_equal(fused.outputs[out], plain.outputs[out])
    np.testing.assert_allclose(fused.outputs[out], plain.outputs[out], rtol=1e-5, atol=1e-5)


def test_the_targets_split_the_group_as_the_test_says() -> None:
    graph = conv_bn_relu()
    split, _ = runs(graph, SPLIT)
    assert [split.placement[op.name] for op in graph.ops] == ["gpu0", "host", "gpu0", "host"]
    nested_run, _ = runs(graph, NESTED)
    assert [nested_run.placement[op.name] for op in graph.ops] == [
        "host",
        "host",
        "host",
        "acc/npu",
    ]


@pytest.mark.parametrize("tgt", [HOST_ONLY, SPLIT, NESTED], ids=["host", "split", "nested"])
def test_fusing_changes_no_time_span_or_byte(tgt: Any) -> None:
    fused, plain = runs(conv_bn_relu(), tgt)
    assert fused.spans == plain.spans
    assert fused.to_dict() == plain.to_dict()


def test_a_tensor_read_outside_the_group_is_computed() -> None:
    graph = conv_bn_relu(also_read=True)
    # the BatchNormalization's output is a graph output: the Conv absorbs it alone
    assert [g.absorbed for g in groups_of(graph)] == [("batchnormalization0",)]
    fused, _ = runs(graph, SPLIT)
    expected = execute(graph, {"x": x_of()})
    for name in graph.outputs:
        np.testing.assert_array_equal(fused.outputs[name], expected[name])


def test_a_group_whose_op_is_run_twice_is_computed_op_by_op() -> None:
    graph = conv_bn_relu()
    ops = graph.ops
    conv, norm, mul, relu = (Launch(n, "gpu0", (0,), (n + 1,), ()) for n in range(4))
    assert set(fused_runs(graph, ops, [[conv, norm, mul, relu]], 99)) == {0, 1, 2, 3}
    assert fused_runs(graph, ops, [[conv, norm, mul, relu, Call(3, (3,), (4,))]], 99) == {}


@pytest.mark.parametrize("option", ["fuse", "trace"])
def test_fuse_and_trace_must_be_bools(option: str) -> None:
    # trace went through bool(), so trace="no" kept every span
    with pytest.raises(SimulationError) as error:
        simulate("mlp", HOST_ONLY, **{option: "no"})
    assert str(error.value) == f"simulate: expected {option} True or False, got 'no'"


@pytest.mark.parametrize("option", ["fuse", "trace"])
def test_numpy_bools_are_taken_for_fuse_and_trace(option: str) -> None:
    # refused ("expected trace True or False, got np.False_"), where numpy integers pass
    given = simulate("mlp", HOST_ONLY, mode="timing", **{option: np.False_})
    plain = simulate("mlp", HOST_ONLY, mode="timing", **{option: False})
    assert given.to_dict() == plain.to_dict()


def test_the_folded_weights_are_those_execute_computes_with() -> None:
    graph = conv_bn_relu()
    fused = fused_of(graph)
    assert fused_of(graph) is fused  # folded once per graph, for execute and simulate alike
    (group,) = groups_of(graph)
    kept = [c for c in group.constants if c is not None]
    assert len(kept) == 2  # the Conv's new weight and bias
    assert all(any(c is v for v in fused.constants.values()) for c in kept)


def test_a_kept_binding_is_kept_per_fuse() -> None:
    graph, inputs = conv_bn_relu(), {"x": x_of()}
    (out,) = graph.outputs
    for fuse in (True, True, False, True):  # the plan is kept from the second call on
        got = simulate(graph, SPLIT, inputs=inputs, fuse=fuse).outputs[out]
        np.testing.assert_array_equal(got, execute(graph, inputs, fuse=fuse)[out])


def test_a_group_of_constants_is_folded_with_the_fused_kernel() -> None:
    # Conv and BatchNormalization read only weights: folded before the run, as execute folds
    rng = np.random.default_rng(3)
    b = GraphBuilder("folded")
    x = b.input("x", (1, 4, 6, 6))
    c = b.initializer(rng.standard_normal((1, 3, 6, 6)).astype(np.float32), "c")
    w = b.initializer(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    params = [b.initializer(rng.standard_normal(4).astype(np.float32), n) for n in "sbm"]
    var = b.initializer(rng.uniform(0.5, 2.0, 4).astype(np.float32), "v")
    z = b.op("BatchNormalization", b.op("Conv", c, w, pads=[1, 1, 1, 1]), *params, var)
    graph = b.build(b.op("Add", x, z))
    inputs = {"x": rng.standard_normal((1, 4, 6, 6)).astype(np.float32)}
    (out,) = graph.outputs
    fused = simulate(graph, HOST_ONLY, inputs=inputs).outputs[out]
    plain = simulate(graph, HOST_ONLY, inputs=inputs, fuse=False).outputs[out]
    np.testing.assert_array_equal(fused, execute(graph, inputs)[out])
    np.testing.assert_array_equal(plain, execute(graph, inputs, fuse=False)[out])
    assert not np.array_equal(fused, plain)
