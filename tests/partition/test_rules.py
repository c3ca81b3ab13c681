"""The rules policy: first match wins, by op type or op-name glob, lists or YAML files."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hetsim.api import simulate
from hetsim.ir import Graph, GraphBuilder
from hetsim.models import load_model
from hetsim.partition import Rule, load_rules, partition
from hetsim.platform import Platform
from tests.partition.tiny import tag_platform


def _three() -> Graph:
    b = GraphBuilder("g")
    x = b.input("x", (4,))
    return b.build(b.op("Relu", b.op("Add", b.op("Relu", x), x)))


def test_first_matching_rule_wins_name_glob_before_type(host_npu: Platform) -> None:
    rules = [{"op": "relu1", "device": "host"}, {"op": "Relu", "device": "npu"}]
    plan = partition(_three(), host_npu, "rules", rules)
    assert dict(plan.placement) == {"relu0": "npu", "add0": "npu", "relu1": "host"}


def test_unmatched_ops_fall_back_to_capability(host_npu: Platform) -> None:
    plan = partition(_three(), host_npu, "rules", [{"op": "relu*", "device": "host"}])
    assert dict(plan.placement) == {"relu0": "host", "add0": "npu", "relu1": "host"}


def test_rules_read_from_a_yaml_file(tmp_path: Path, host_npu: Platform) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("rules:\n  - {op: Add, device: host}\n  - {op: '*', device: npu}\n")
    assert load_rules(path, host_npu) == (Rule("Add", "host", 0), Rule("*", "npu", 1))
    plan = partition(_three(), host_npu, "rules", str(path))
    assert dict(plan.placement) == {"relu0": "npu", "add0": "host", "relu1": "npu"}


def test_yaml_file_may_hold_a_bare_list(tmp_path: Path, host_npu: Platform) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("- op: Relu\n  device: host\n")
    assert load_rules(path, host_npu) == (Rule("Relu", "host", 0),)


def test_rule_naming_a_nested_processor_reaches_it_through_each_level() -> None:
    soc = tag_platform("arm-riscv-soc")
    b = GraphBuilder("g")
    graph = b.build(b.op("Relu", b.op("Relu", b.input("x", (4,)))))
    rules = [{"op": "relu0", "device": "vdevice0/host"}, {"op": "Relu", "device": "vdevice0/npu"}]
    plan = partition(graph, soc, "rules", rules)
    assert [(s.id, s.device) for s in plan.segments] == [
        ("s0", "vdevice0"),
        ("vdevice0:s0", "vdevice0/host"),
        ("vdevice0:s1", "vdevice0/npu"),
    ]
    assert dict(plan.placement) == {"relu0": "vdevice0/host", "relu1": "vdevice0/npu"}


def test_rule_may_name_a_nested_level(host_npu: Platform) -> None:
    soc = tag_platform("arm-riscv-soc")
    b = GraphBuilder("g")
    graph = b.build(b.op("Relu", b.input("x", (4,))))
    plan = partition(graph, soc, "rules", [{"op": "Relu", "device": "vdevice0"}])
    assert dict(plan.placement) == {"relu0": "vdevice0/npu"}


def test_rule_may_name_a_coprocessor_for_an_op_its_accelerator_lacks() -> None:
    soc = tag_platform("arm-riscv-soc")
    b = GraphBuilder("g")
    graph = b.build(b.op("Softmax", b.op("Relu", b.input("x", (1, 4)))))
    plan = partition(graph, soc, "rules", [{"op": "Softmax", "device": "vdevice0/host"}])
    assert dict(plan.placement) == {"relu0": "vdevice0/npu", "softmax0": "vdevice0/host"}
    assert [(s.id, s.device) for s in plan.segments] == [
        ("s0", "vdevice0"),
        ("vdevice0:s0", "vdevice0/npu"),
        ("vdevice0:s1", "vdevice0/host"),
    ]


def test_a_nested_level_named_by_a_rule_gives_its_host_what_its_devices_lack() -> None:
    soc = tag_platform("arm-riscv-soc")
    b = GraphBuilder("g")
    graph = b.build(b.op("Softmax", b.op("Relu", b.input("x", (1, 4)))))
    plan = partition(graph, soc, "rules", [{"op": "*", "device": "vdevice0"}])
    assert dict(plan.placement) == {"relu0": "vdevice0/npu", "softmax0": "vdevice0/host"}
    x = np.array([[1.0, -2.0, 3.0, 0.5]], np.float32)
    got = simulate(
        graph, soc, inputs={"x": x}, partition="rules", rules=[{"op": "*", "device": "vdevice0"}]
    )
    assert got.placement == dict(plan.placement)
    e = np.exp(np.maximum(x, 0) - np.maximum(x, 0).max())
    np.testing.assert_allclose(got.outputs["softmax0"], e / e.sum(), rtol=1e-6)


PIPELINE = [
    {"op": "ln2", "device": "node1"},
    {"op": "ff*", "device": "node1"},
    {"op": "gelu*", "device": "node1"},
    {"op": "div0", "device": "node1"},
    {"op": "add0", "device": "node1"},
    {"op": "mul0", "device": "node1"},
    {"op": "residual2", "device": "node1"},
    {"op": "*", "device": "node0"},
]


def test_pipeline_split_across_two_machines_moves_only_the_split_activation() -> None:
    plan = partition(
        load_model("transformer"), tag_platform("two-node-h100"), "rules", PIPELINE, {"seq": 16}
    )
    assert [(s.id, s.device) for s in plan.levels[""].segments] == [
        ("s0", "node0"),
        ("s1", "node1"),
    ]
    between = [t for t in plan.levels[""].transfers if t.src_memory.startswith("node0/")]
    # residual1 is float32[1, 16, 64]: 4096 B, the only activation crossing the split.
    assert [(t.tensor, t.dst_memory, t.bytes) for t in between] == [
        ("residual1", "node1/host.mem", 4096)
    ]
    assert {p.split("/")[0] for p in plan.placement.values()} == {"node0", "node1"}
