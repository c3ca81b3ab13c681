"""build_platform on hand-made trees: processors, memories, links, levels and the graph."""

from __future__ import annotations

import dataclasses

import networkx as nx
import pytest

from hetsim.errors import TargetError
from hetsim.platform import Link, Memory, build_platform
from hetsim.target import Target
from tests.platform.fakes import CRT, GRAPH, deep, host_gpu, seed_soc

GIB = 1024**3


def test_seed_processors_are_named_by_path_with_roles_and_levels() -> None:
    platform = build_platform(seed_soc())
    assert [(p.path, p.role, p.kind, p.level, p.memory) for p in platform.processors.values()] == [
        ("host", "host", "arm", "", "host.mem"),
        ("vdevice0/host", "coprocessor", "riscv", "vdevice0", "vdevice0/host.mem"),
        ("vdevice0/npu", "accelerator", "accel", "vdevice0", "vdevice0/host.mem"),
    ]


def test_processor_attrs_are_the_target_attrs() -> None:
    target = host_gpu()
    platform = build_platform(target)
    assert platform.processors["gpu0"].attrs is target.devices[0].attrs
    assert platform.processors["host"].attrs is target.host.attrs


def test_memories_hold_capacity_bandwidth_and_level() -> None:
    platform = build_platform(seed_soc())
    assert list(platform.memories.values()) == [
        Memory("host.mem", 4 * GIB, 10.0, ""),
        Memory("vdevice0/host.mem", 1 * GIB, 8.0, "vdevice0"),
    ]


def test_device_without_memory_computes_from_its_level_host_memory() -> None:
    platform = build_platform(seed_soc())
    assert platform.memory_of("vdevice0/npu") is platform.memories["vdevice0/host.mem"]
    assert not platform.processors["vdevice0/npu"].owns_memory
    assert platform.processors["vdevice0/host"].owns_memory


def test_coprocessor_without_memory_computes_from_parent_host_memory() -> None:
    platform = build_platform(deep())
    assert platform.processors["vdevice0/inner/host"].memory == "vdevice0/host.mem"


def test_device_link_joins_its_memory_to_level_host_memory() -> None:
    platform = build_platform(host_gpu())
    assert list(platform.links.values()) == [
        Link("host.mem--gpu0.mem", "host.mem", "gpu0.mem", 32.0, 1.0)
    ]


def test_nested_level_link_comes_from_the_hetero_device() -> None:
    platform = build_platform(seed_soc())
    assert list(platform.links.values()) == [
        Link("host.mem--vdevice0/host.mem", "host.mem", "vdevice0/host.mem", 8.0, 2.0)
    ]


def test_deep_tree_links_attach_to_the_memory_each_level_host_uses() -> None:
    platform = build_platform(deep())
    assert [(k.a, k.b, k.bandwidth_gbps, k.latency_us) for k in platform.links.values()] == [
        ("host.mem", "gpu0.mem", 32.0, 1.0),
        ("host.mem", "vdevice0/host.mem", 8.0, 2.0),
        ("vdevice0/host.mem", "vdevice0/npu.mem", 4.0, 0.5),
        ("vdevice0/host.mem", "vdevice0/inner/dsp.mem", 2.0, 3.0),
    ]


def test_levels_in_tree_order_with_devices_and_parents() -> None:
    platform = build_platform(deep())
    assert [
        (v.path, v.host, v.devices, v.parent, v.control_latency_us)
        for v in platform.levels.values()
    ] == [
        ("", "host", ("gpu0", "vdevice0"), None, 0.0),
        ("vdevice0", "vdevice0/host", ("vdevice0/npu", "vdevice0/inner"), "", 7.0),
        ("vdevice0/inner", "vdevice0/inner/host", ("vdevice0/inner/dsp",), "vdevice0", 5.0),
    ]


def test_level_keeps_executor_runtime_and_hetero_attrs() -> None:
    level = build_platform(seed_soc()).levels["vdevice0"]
    assert (level.executor, level.runtime) == (GRAPH, CRT)
    assert level.attrs["link"] == {"bandwidth_gbps": 8.0, "latency_us": 2.0}
    assert not level.is_root


def test_graph_nodes_are_processors_and_memories() -> None:
    graph = build_platform(seed_soc()).graph
    assert isinstance(graph, nx.MultiDiGraph)
    assert sorted((n, d["type"]) for n, d in graph.nodes(data=True)) == [
        ("host", "processor"),
        ("host.mem", "memory"),
        ("vdevice0/host", "processor"),
        ("vdevice0/host.mem", "memory"),
        ("vdevice0/npu", "processor"),
    ]
    assert graph.nodes["vdevice0/npu"]["role"] == "accelerator"
    assert graph.nodes["vdevice0/host.mem"]["capacity_bytes"] == GIB


def test_graph_control_edges_go_from_each_host_to_what_it_drives() -> None:
    graph = build_platform(deep()).graph
    control = [
        (u, v, d["latency_us"]) for u, v, d in graph.edges(data=True) if d["type"] == "control"
    ]
    assert control == [
        ("host", "gpu0", 0.0),
        ("host", "vdevice0/host", 7.0),
        ("vdevice0/host", "vdevice0/npu", 0.0),
        ("vdevice0/host", "vdevice0/inner/host", 5.0),
        ("vdevice0/inner/host", "vdevice0/inner/dsp", 0.0),
    ]


def test_graph_link_edges_go_both_ways_keyed_by_link_name() -> None:
    graph = build_platform(host_gpu()).graph
    links = sorted(
        (u, v, k) for u, v, k, d in graph.edges(keys=True, data=True) if d["type"] == "link"
    )
    assert links == [
        ("gpu0.mem", "host.mem", "host.mem--gpu0.mem"),
        ("host.mem", "gpu0.mem", "host.mem--gpu0.mem"),
    ]
    edge = graph.edges["host.mem", "gpu0.mem", "host.mem--gpu0.mem"]
    assert (edge["bandwidth_gbps"], edge["latency_us"]) == (32.0, 1.0)
    assert edge["link"] == Link("host.mem--gpu0.mem", "host.mem", "gpu0.mem", 32.0, 1.0)


def test_platform_parts_are_frozen() -> None:
    platform = build_platform(host_gpu())
    with pytest.raises(dataclasses.FrozenInstanceError):
        platform.target = None  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        platform.processors["gpu0"].path = "x"  # type: ignore[misc]


def test_reprs_say_what_and_where() -> None:
    platform = build_platform(seed_soc())
    assert repr(platform) == "<Platform seed-soc: 3 processors, 2 memories, 1 links, 2 levels>"
    assert repr(platform.processors["vdevice0/npu"]) == (
        "<Processor vdevice0/npu kind=accel role=accelerator memory=vdevice0/host.mem>"
    )
    assert repr(platform.levels[""]) == "<Level (root) host=host devices=['vdevice0'] parent=None>"
    assert repr(platform.memories["host.mem"]) == "<Memory host.mem 4.0 GiB 10.0 GB/s level=''>"


def test_to_dict_describes_every_part() -> None:
    described = build_platform(seed_soc()).to_dict()
    assert described == {
        "name": "seed-soc",
        "processors": {
            # the compute `platform show` prints (it was missing from --json): seed_soc's own
            "host": {
                "role": "host",
                "kind": "arm",
                "level": "",
                "memory": "host.mem",
                "cores": 4,
                "freq_ghz": 1.5,
                "flops_per_cycle": 8,
            },
            "vdevice0/host": {
                "role": "coprocessor",
                "kind": "riscv",
                "level": "vdevice0",
                "memory": "vdevice0/host.mem",
                "cores": 4,
                "freq_ghz": 1.0,
                "flops_per_cycle": 2,
            },
            "vdevice0/npu": {
                "role": "accelerator",
                "kind": "accel",
                "level": "vdevice0",
                "memory": "vdevice0/host.mem",
                "cores": 1,
                "freq_ghz": 1.0,
                "flops_per_cycle": 2000,
            },
        },
        "memories": {
            "host.mem": {"capacity_bytes": 4 * GIB, "bandwidth_gbps": 10.0, "level": ""},
            "vdevice0/host.mem": {
                "capacity_bytes": GIB,
                "bandwidth_gbps": 8.0,
                "level": "vdevice0",
            },
        },
        "links": {
            "host.mem--vdevice0/host.mem": {
                "a": "host.mem",
                "b": "vdevice0/host.mem",
                "bandwidth_gbps": 8.0,
                "latency_us": 2.0,
            },
        },
        "levels": {
            "": {
                "host": "host",
                "executor": "vm",
                "runtime": "cpp",
                "devices": ["vdevice0"],
                "parent": None,
                "control_latency_us": 0.0,
            },
            "vdevice0": {
                "host": "vdevice0/host",
                "executor": "graph",
                "runtime": "crt",
                "devices": ["vdevice0/npu"],
                "parent": "",
                "control_latency_us": 5.0,
            },
        },
        "control": [["host", "vdevice0/host", 5.0], ["vdevice0/host", "vdevice0/npu", 0.0]],
    }


def test_build_platform_takes_what_target_takes() -> None:
    assert build_platform("arm-riscv-soc").layout == build_platform(Target("arm-riscv-soc")).layout
    with pytest.raises(TargetError, match=r"^devices: expected a list of targets, got 3$"):
        build_platform({"kind": "hetero", "devices": 3})


def test_build_platform_of_a_device_node_builds_its_level() -> None:
    # a device below a root was read as a level: AttributeError: 'NoneType' object has no
    # attribute 'attrs'
    device = Target("cuda").devices[0]
    platform = build_platform(device)
    assert [(p.path, p.role, p.kind) for p in platform.processors.values()] == [
        ("host", "host", "x86-cpu"),
        ("dev0", "accelerator", "cuda"),
    ]
    assert platform.processors["dev0"].attrs == device.attrs
