"""The plan's text and JSON forms, and its lookups."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from hetsim.errors import PartitionError
from hetsim.ir import Graph, GraphBuilder
from hetsim.partition import format_plan, partition
from hetsim.partition.plan import MAX_LISTED
from hetsim.platform import Platform

CHAIN_TEXT = """\
plan of chain on hetero[npu] (policy capability)
level (root): host host, executor vm, 3 segments, 16000 B on links
  s0           npu: 1 op, 1.00 kFLOP  [Relu x1]
  s1           host: 1 op, 1.00 kFLOP  [Neg x1]
  s2           npu: 1 op, 1.00 kFLOP  [Add x1]
  transfers:
    x: host.mem -> npu.mem 4000 B (3.9 KiB) for s0
    relu0: npu.mem -> host.mem 4000 B (3.9 KiB) for s1
    neg0: host.mem -> npu.mem 4000 B (3.9 KiB) for s2
    add0: npu.mem -> host.mem 4000 B (3.9 KiB) for result"""


def test_format_plan_lists_segments_flops_and_transfer_bytes(
    host_npu: Platform, chain: Graph
) -> None:
    assert format_plan(partition(chain, host_npu)) == CHAIN_TEXT


def test_to_dict_is_plain_json(host_npu: Platform, chain: Graph) -> None:
    plan = partition(chain, host_npu)
    data = json.loads(json.dumps(plan.to_dict()))
    assert data["placement"] == {"relu0": "npu", "neg0": "host", "add0": "npu"}
    assert data["levels"][""]["segments"][2] == {
        "id": "s2",
        "level": "",
        "device": "npu",
        "is_nested": False,
        "parent": None,
        "ops": ["add0"],
        "op_types": {"Add": 1},
        "flops": 1000.0,
        "inputs": ["neg0", "relu0"],
        "outputs": ["add0"],
    }
    assert [t["bytes"] for t in data["levels"][""]["transfers"]] == [4000] * 4


def test_reprs_say_what_and_where(host_npu: Platform, chain: Graph) -> None:
    plan = partition(chain, host_npu)
    assert repr(plan) == "<Plan chain on hetero[npu] policy=capability levels=1 segments=3>"
    assert repr(plan.levels[""]) == (
        "<LevelPlan (root) host=host executor=vm segments=3 transfers=4>"
    )
    assert repr(plan.segment("s1")) == "<Segment s1 level=(root) device=host ops=1>"
    assert repr(plan.transfers[0]) == "<Transfer x host.mem -> npu.mem 3.9 KiB for s0>"


@pytest.mark.parametrize(
    ("segment_id", "got"),
    [("s9", "'s9'"), ("S1", "'S1' (did you mean 's1'?)"), (None, "None")],
)
def test_an_unknown_segment_id_is_named_with_the_known_ones(
    host_npu: Platform, chain: Graph, segment_id: str, got: str
) -> None:
    # a bare KeyError('s9'), which named neither the function nor the ids there are
    expected = "expected a segment id of plan chain on hetero[npu] (s0, s1, s2)"
    message = f"Plan.segment: {expected}, got {got}"
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        partition(chain, host_npu).segment(segment_id)


def test_an_unknown_segment_id_of_a_large_plan_lists_the_first_ids(host_npu: Platform) -> None:
    b = GraphBuilder("long")
    x = b.input("x", (10,))
    for _ in range(MAX_LISTED + 2):  # each op on another device: a segment each
        x = b.op("Neg", b.op("Relu", x))
    plan = partition(b.build(x), host_npu)
    count = len(plan.segments)
    assert count > MAX_LISTED
    listed = ", ".join(f"s{i}" for i in range(MAX_LISTED))
    with pytest.raises(PartitionError) as caught:
        plan.segment("nope")
    assert str(caught.value) == (
        f"Plan.segment: expected a segment id of plan long on hetero[npu] ({listed}, ... "
        f"({count} in all)), got 'nope'"
    )


@pytest.mark.parametrize("plan", [None, "plan", {}])
def test_format_plan_refuses_what_is_not_a_plan(plan: object) -> None:
    # None raised AttributeError: 'NoneType' object has no attribute 'graph'
    message = (
        "format_plan: expected plan a Plan (hetsim.partition.partition gives one), got "
        f"{type(plan).__name__}"
    )
    with pytest.raises(PartitionError, match=f"^{re.escape(message)}$"):
        format_plan(plan)  # type: ignore[arg-type]


def test_constant_ops_are_folded_and_weights_never_move(host_npu: Platform) -> None:
    b = GraphBuilder("g")
    weight = b.op("Neg", np.ones(4, np.float32))  # constants only: folded at load time
    graph = b.build(b.op("Add", b.op("Relu", b.input("x", (4,))), weight))
    plan = partition(graph, host_npu)
    assert plan.folded == ("neg0",)
    assert [s.ops for s in plan.segments] == [("relu0", "add0")]
    assert plan.segments[0].inputs == ("x",)
    assert plan.placement["neg0"] == "host"
    assert [t.tensor for t in plan.transfers] == ["x", "add0"]
    assert format_plan(plan).endswith("folded at load time: 1 op")
