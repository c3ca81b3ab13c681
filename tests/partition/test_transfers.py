"""A segment boundary moves exactly the bytes of the tensors that cross it.

The reference is independent of the partitioner's shape propagation: the graph is run for real
with `hetsim.kernels.execute`, every tensor kept as an output, and each crossing tensor's bytes
are its numpy array's ``nbytes``. The crossing set is recomputed from the placement: a tensor
crosses at a level when its producer's segment computes in another memory than a reader's.
"""

from __future__ import annotations

import numpy as np
import pytest

from hetsim.ir import Graph
from hetsim.kernels import execute
from hetsim.models import load_model
from hetsim.partition import Plan, partition
from hetsim.platform import Platform
from tests.partition.tiny import tag_platform

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
