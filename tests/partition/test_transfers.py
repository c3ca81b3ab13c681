"""A segment boundary moves exactly the bytes of the tensors that cross it.

The reference is independent of the partitioner's shape propagation: the graph is run for real
with `hetsim.kernels.execute`, every tensor kept as an output, and each crossing tensor's bytes
are its numpy array's ``nbytes``. The crossing set is recomputed from the placement: a tensor
crosses at a level when its producer's segment computes in another memory than a reader's.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hetsim import simulate
from hetsim.ir import Graph
from hetsim.kernels import execute
from hetsim.models import load_model
from hetsim.partition import Plan, format_plan, partition
from hetsim.platform import Platform
from tests.partition.tiny import platform_of, tag_platform

CASES = [
    ("cnn", "arm-riscv-soc", {}),
    ("cnn", "rk3588", {}),
    ("mlp", "two-node-h100", {}),
    ("transformer", "arm-riscv-soc", {"seq": 8}),
    ("transformer", "rk3588", {"seq": 8}),
]


def _arrays(graph: Graph, dims: dict[str, int]) -> dict[str, np.ndarray]:
    every = tuple(t for op in graph.ops for t in op.outputs if t)
    whole = Graph(graph.name, graph.ops, graph.inputs, every, graph.initializers, graph.opset)
    rng = np.random.default_rng(0)
    inputs = {
        name: rng.standard_normal([dims.get(d, d) for d in t.shape]).astype(t.dtype)  # type: ignore[misc]
        for name, t in graph.inputs.items()
    }
    return {**inputs, **execute(whole, inputs)}


def _memory(platform: Platform, device: str) -> str:
    level = platform.levels.get(device)
    return platform.processors[level.host if level else device].memory


def _crossings(plan: Plan, platform: Platform, graph: Graph) -> dict[str, set[tuple[str, str]]]:
    """Per level, the (tensor, destination memory) pairs that cross a segment boundary.

    Each parent segment handed to a nested level is one invocation: its tensors start and end
    in the nested level host's memory.
    """
    producer = {t: op.name for op in graph.ops for t in op.outputs if t}
    found: dict[str, set[tuple[str, str]]] = {}
    for path, level in plan.levels.items():
        host = platform.processors[level.host].memory
        pairs = found.setdefault(path, set())
        for parent in dict.fromkeys(s.parent for s in level.segments):
            cut = [s for s in level.segments if s.parent == parent]
            where = {op: _memory(platform, s.device) for s in cut for op in s.ops}
            for segment in cut:
                dst = _memory(platform, segment.device)
                for tensor in segment.inputs:
                    if where.get(producer.get(tensor, ""), host) != dst:
                        pairs.add((tensor, dst))
                for tensor in segment.outputs:
                    readers = {op.name for op in graph.ops if tensor in op.inputs}
                    leaves = tensor in graph.outputs or bool(readers - set(where))
                    if leaves and where[producer[tensor]] != host:
                        pairs.add((tensor, host))
    return found


@pytest.mark.parametrize(("model", "tag", "dims"), CASES)
def test_transfers_move_exactly_the_crossing_tensors(
    model: str, tag: str, dims: dict[str, int]
) -> None:
    graph, platform = load_model(model), tag_platform(tag)
    plan = partition(graph, platform, dims=dims)
    arrays = _arrays(graph, dims)
    crossings = _crossings(plan, platform, graph)
    for path, level in plan.levels.items():
        moved = {(t.tensor, t.dst_memory, t.segment) for t in level.transfers}
        assert len(moved) == len(level.transfers)
        assert {(t.tensor, t.dst_memory) for t in level.transfers} == crossings[path]
        for transfer in level.transfers:
            assert transfer.bytes == arrays[transfer.tensor].nbytes, transfer


def test_nested_level_moves_what_its_parent_segment_reads_and_returns() -> None:
    graph, platform = load_model("cnn"), tag_platform("arm-riscv-soc")
    plan = partition(graph, platform)
    (offload,) = (s for s in plan.levels[""].segments if s.is_nested)
    into = [t for t in plan.levels[""].transfers if t.segment == offload.id]
    nested = plan.levels["vdevice0"].transfers
    assert [t.tensor for t in into] == list(offload.inputs)
    assert [t.tensor for t in nested if t.segment is None] == list(offload.outputs)
    assert sum(t.bytes for t in into) == sum(t.bytes for t in nested if t.segment is not None)


PIPELINE = Path(__file__).parents[2] / "examples" / "two-node-pipeline.yaml"
TWO_GPUS = {
    "kind": "hetero",
    "host": "x86/xeon-8480c",
    "devices": [{"tag": "nvidia/h100", "name": "gpu0"}, {"tag": "nvidia/h100", "name": "gpu1"}],
}
ROUTED = [
    # the shipped pipeline split: residual1 goes node0/host.mem -> host.mem -> node1/host.mem
    ("transformer", tag_platform("two-node-h100"), {"seq": 16}, str(PIPELINE)),
    # two devices of one level: what gpu0 makes for gpu1 goes through the host's memory
    (
        "mlp",
        platform_of(TWO_GPUS),
        {},
        [{"op": "fc3", "device": "gpu1"}, {"op": "*", "device": "gpu0"}],
    ),
    ("cnn", tag_platform("arm-riscv-soc"), {}, None),
]


def _link_bytes(plan: Plan, platform: Platform) -> dict[str, int]:
    """Per link, the bytes the plan's transfers put on it: each hop of each route, the link
    found by the two memories it joins."""
    by_ends = {frozenset((link.a, link.b)): name for name, link in platform.links.items()}
    found = dict.fromkeys(platform.links, 0)
    for transfer in plan.transfers:
        for hop in itertools.pairwise(transfer.route):
            found[by_ends[frozenset(hop)]] += transfer.bytes
    return found


@pytest.mark.parametrize(
    ("model", "platform", "dims", "rules"), ROUTED, ids=["two-node-pipeline", "two-gpus", "soc"]
)
def test_plan_puts_on_each_link_the_bytes_a_run_carries_over_it(
    model: str, platform: Platform, dims: dict[str, int], rules: Any
) -> None:
    policy = "capability" if rules is None else "rules"
    plan = partition(load_model(model), platform, policy, rules, dims)
    run = simulate(model, platform, mode="timing", partition=policy, rules=rules, dims=dims)
    carried = {name: stats.bytes for name, stats in run.links.items()}
    assert _link_bytes(plan, platform) == carried
    assert sum(level.transfer_bytes for level in plan.levels.values()) == sum(carried.values())


def test_a_transfer_between_two_device_memories_is_routed_through_the_host() -> None:
    rules = [{"op": "fc3", "device": "gpu1"}, {"op": "*", "device": "gpu0"}]
    plan = partition(load_model("mlp"), platform_of(TWO_GPUS), "rules", rules)
    (between,) = (
        t for t in plan.transfers if t.src_memory == "gpu0.mem" and t.dst_memory == "gpu1.mem"
    )
    assert (between.route, between.link_bytes) == (
        ("gpu0.mem", "host.mem", "gpu1.mem"),
        2 * between.bytes,
    )
    text = format_plan(plan)
    assert "    relu2: gpu0.mem -> host.mem -> gpu1.mem 256 B (256 B) x 2 links for s1\n" in text
    # x (256 B) and fc3 (40 B) cross one link each, relu2 two
    assert "level (root): host host, executor vm, 2 segments, 808 B on links\n" in text
