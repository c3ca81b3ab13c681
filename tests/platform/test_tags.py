"""build_platform on the shipped tags: the structure each platform must have, and invariants that
hold for every tag."""

from __future__ import annotations

import itertools

import pytest

from hetsim.cost import kernel_us, route_us
from hetsim.kernels import Cost
from hetsim.platform import Platform, build_platform, render_tree
from hetsim.target import KINDS, TAGS, Target, list_tags


def _kind(name: str) -> str:
    """The kind a tag names, following references to other tags."""
    data = TAGS.get(name).data
    while isinstance(data, str) or "kind" not in data:
        data = TAGS.get(data if isinstance(data, str) else data["tag"]).data
    return str(data["kind"])


TARGET_TAGS = [name for name, _ in list_tags() if _kind(name) in KINDS]


@pytest.fixture(scope="module")
def platforms() -> dict[str, Platform]:
    return {name: build_platform(Target(name)) for name in TARGET_TAGS}


def test_target_tags_include_the_platform_tags() -> None:
    assert {"arm-riscv-soc", "x86-h100", "two-node-h100", "nvidia/h200"} <= set(TARGET_TAGS)


def test_seed_soc_has_a_coprocessor_level_driving_an_npu() -> None:
    target = Target("arm-riscv-soc")
    platform = build_platform(target)
    assert [(p.path, p.role, p.kind) for p in platform.processors.values()] == [
        ("host", "host", "arm-cpu"),
        ("vdevice0/host", "coprocessor", "riscv-cpu"),
        ("vdevice0/npu", "accelerator", "npu"),
    ]
    vdevice = target.devices[0]
    coprocessor_link, npu_link = platform.links.values()
    assert (coprocessor_link.a, coprocessor_link.b) == ("host.mem", "vdevice0/host.mem")
    assert coprocessor_link.bandwidth_gbps == vdevice.attrs["link"]["bandwidth_gbps"]
    assert coprocessor_link.latency_us == vdevice.attrs["link"]["latency_us"]
    assert (npu_link.a, npu_link.b) == ("vdevice0/host.mem", "vdevice0/npu.mem")
    assert npu_link.bandwidth_gbps == vdevice.devices[0].attrs["link"]["bandwidth_gbps"]
    level = platform.levels["vdevice0"]
    assert (level.executor.kind, level.runtime.kind, level.parent) == ("graph", "crt", "")
    assert level.control_latency_us == vdevice.attrs["control_latency_us"]


def test_x86_h100_links_the_gpu_memory_to_the_host_memory() -> None:
    target = Target("x86-h100")
    platform = build_platform(target)
    gpu = target.devices[0]
    assert list(platform.processors) == ["host", "gpu0"]
    assert platform.memories["gpu0.mem"].capacity_bytes == int(gpu.attrs["memory_gib"] * 1024**3)
    assert platform.memories["gpu0.mem"].bandwidth_gbps == gpu.attrs["mem_bandwidth_gbps"]
    assert [link.name for link in platform.route("host.mem", "gpu0.mem")] == ["host.mem--gpu0.mem"]


def test_two_node_route_between_gpus_crosses_both_nodes() -> None:
    platform = build_platform(Target("two-node-h100"))
    route = platform.route("node0/gpu0.mem", "node1/gpu0.mem")
    assert [link.name for link in route] == [
        "node0/host.mem--node0/gpu0.mem",
        "host.mem--node0/host.mem",
        "host.mem--node1/host.mem",
        "node1/host.mem--node1/gpu0.mem",
    ]


def test_shared_memory_devices_need_no_link() -> None:
    for name in ("jetson-agx-orin", "nxp-imx93", "rk3588"):
        platform = build_platform(Target(name))
        assert list(platform.memories) == ["host.mem"], name
        assert dict(platform.links) == {}, name


def test_single_device_tag_is_named_by_its_device() -> None:
    platform = build_platform(Target("nvidia/h100"))
    assert repr(platform) == (
        "<Platform hetero[nvidia/h100]: 2 processors, 2 memories, 1 links, 1 levels>"
    )


@pytest.mark.parametrize("name", TARGET_TAGS)
def test_every_tag_builds_a_consistent_platform(name: str, platforms: dict[str, Platform]) -> None:
    platform = platforms[name]
    assert all(p.memory in platform.memories for p in platform.processors.values())
    assert all({k.a, k.b} <= set(platform.memories) for k in platform.links.values())
    hosts = [p.path for p in platform.processors.values() if p.role != "accelerator"]
    assert hosts == [level.host for level in platform.levels.values()]
    for level in platform.levels.values():
        for device in level.devices:
            assert device in platform.processors or device in platform.levels
    assert render_tree(platform).count("\n") + 1 == len(platform.processors) + len(
        platform.levels
    ) + len(platform.links)


@pytest.mark.parametrize("name", TARGET_TAGS)
def test_every_memory_pair_has_a_route_the_same_both_ways(
    name: str, platforms: dict[str, Platform]
) -> None:
    platform = platforms[name]
    for src, dst in itertools.permutations(platform.memories, 2):
        there, back = platform.route(src, dst), platform.route(dst, src)
        assert there == tuple(reversed(back))
        ends = [src]
        for link in there:
            assert ends[-1] in (link.a, link.b)
            ends.append(link.other_end(ends[-1]))
        assert ends[-1] == dst
        assert route_us(there, 1000) == sum(
            k.latency_us + 1000 / (k.bandwidth_gbps * 1e3) for k in there
        )


@pytest.mark.parametrize("name", TARGET_TAGS)
def test_every_processor_has_the_cost_parameters(name: str, platforms: dict[str, Platform]) -> None:
    work = Cost(flops=1e6, bytes_read=4000, bytes_written=4000, op_class="matmul")
    for processor in platforms[name].processors.values():
        attrs = processor.attrs
        peak = attrs["cores"] * attrs["freq_ghz"] * attrs["flops_per_cycle"]
        expected = attrs["kernel_latency_us"] + max(
            1e6 / (peak * 1e3 * attrs["efficiency"]["matmul"]),
            8000 / (attrs["mem_bandwidth_gbps"] * 1e3),
        )
        assert kernel_us(processor, work) == pytest.approx(expected, rel=1e-12)
