"""Per-op costs: one cost-rule call per signature, the same values as calling the rule per op."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from hetsim.errors import PartitionError
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import lookup, propagate, propagate_costs
from hetsim.models import load_model
from hetsim.partition import LevelContext, partition
from hetsim.partition.core import ESTIMATE_DIM, fold
from hetsim.partition.costs import op_costs, op_signature
from hetsim.platform import Platform
from tests.partition.tiny import LINK, level, platform_of, proc


def _chain(n: int) -> Graph:
    ops = [Op("Relu", f"r{i}", (f"t{i}",), (f"t{i + 1}",)) for i in range(n)]
    return Graph("chain", tuple(ops), {"t0": TensorType((4, 8), "float32")}, (f"t{n}",))


def _by_rule(graph: Graph) -> dict[str, object]:
    metas = propagate(graph, dict.fromkeys(graph.symbols, ESTIMATE_DIM))
    found = {}
    for op in fold(graph)[2]:
        ins = [metas.get(name) if name else None for name in op.inputs]
        outs = [metas[name] for name in op.outputs if name]
        found[op.name] = lookup(op).cost(op, ins, outs)
    return found


def test_ops_of_one_signature_share_one_cost() -> None:
    graph = _chain(5)
    costs = op_costs(graph.ops, propagate(graph))
    assert len({id(cost) for cost in costs.values()}) == 1
    # Relu of float32[4, 8]: 32 flops, 128 B read and 128 B written
    assert (costs["r4"].flops, costs["r4"].bytes_read, costs["r4"].bytes_written) == (32, 128, 128)


@pytest.mark.parametrize("model", ["mlp", "cnn", "transformer"])
def test_memoized_costs_equal_the_cost_rules(model: str) -> None:
    graph = load_model(model)
    metas = propagate(graph, dict.fromkeys(graph.symbols, ESTIMATE_DIM))
    assert op_costs(fold(graph)[2], metas) == _by_rule(graph)


@pytest.mark.parametrize("model", ["mlp", "cnn", "transformer", "squeezenet", "inception_v1"])
def test_costs_from_the_propagation_walk_equal_the_cost_rules(model: str) -> None:
    graph = load_model(model)
    dims = dict.fromkeys(graph.symbols, ESTIMATE_DIM)
    metas, costs = propagate_costs(graph, dims)
    assert metas == propagate(graph, dims)
    expected = _by_rule(graph)
    assert {name: costs[name] for name in expected} == expected
    # ops of one signature share one Cost object, as op_costs shares them
    shared = op_costs(fold(graph)[2], metas)
    groups = {id(c) for c in shared.values()}
    assert len({id(costs[name]) for name in shared}) == len(groups)


def test_propagation_shares_the_cost_of_a_reused_shape_rule() -> None:
    graph = _chain(5)
    metas, costs = propagate_costs(graph)
    assert len({id(cost) for cost in costs.values()}) == 1
    assert costs["r0"] == op_costs(graph.ops, metas)["r0"]


def test_an_unhashable_attribute_is_not_memoized() -> None:
    op = Op("Relu", "r", ("x",), ("y",), {"table": np.zeros(2)})
    assert op_signature(op, {}) is None


def test_given_metas_give_the_plan_propagation_would(host_npu: Platform) -> None:
    graph = _chain(3)
    assert partition(graph, host_npu, metas=propagate(graph)) == partition(graph, host_npu)


def test_given_costs_are_the_plan_s_costs(host_npu: Platform) -> None:
    graph = _chain(3)
    metas = propagate(graph)
    doubled = {
        name: dataclasses.replace(cost, flops=2 * cost.flops)
        for name, cost in op_costs(graph.ops, metas).items()
    }
    plan = partition(graph, host_npu, metas=metas, costs=doubled)
    assert [s.flops for s in plan.segments] == [3 * 2 * 32.0]  # 3 Relus of float32[4, 8]
    assert partition(graph, host_npu, metas=metas, costs=op_costs(graph.ops, metas)) == (
        partition(graph, host_npu)
    )


def test_costs_without_their_metas_are_refused(host_npu: Platform) -> None:
    with pytest.raises(PartitionError, match=re.escape("expected metas= with costs=")):
        partition(_chain(1), host_npu, costs={})


def test_cached_candidates_cannot_be_changed_by_a_caller(host_npu: Platform) -> None:
    # shared by every op of a kind: a tuple, so no caller can change another op's choices
    graph = _chain(2)
    context = LevelContext(host_npu, host_npu.levels[""], graph.ops, {}, {})
    first = context.candidates(graph.ops[0])
    assert first == ("npu", "host")
    assert context.candidates(graph.ops[1]) is first


def test_cached_refusal_names_each_op() -> None:
    platform = platform_of(
        level(proc("arm-cpu", ops=["Relu"]), [proc("npu", name="npu", ops=["Add"], link=LINK)])
    )
    ops = (Op("Neg", "n1", ("x",), ("y",)), Op("Neg", "n2", ("y",), ("z",)))
    context = LevelContext(platform, platform.levels[""], ops, {}, {})
    for op in ops:
        message = (
            f"op {op.name} (Neg): no device can run it; tried npu (no Neg in its ops), "
            "host (no Neg in its ops)"
        )
        with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
            context.candidates(op)
