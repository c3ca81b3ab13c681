"""Routes between memories: the hops in order, cached, and errors that name the memory."""

from __future__ import annotations

import pytest

from hetsim.errors import TargetError
from hetsim.platform import ROUTE_REFERENCE_BYTES, Link, Memory, build_platform, route_weight
from tests.platform.fakes import deep, host_gpu


def _names(links: tuple[Link, ...]) -> list[str]:
    return [link.name for link in links]


def test_route_to_itself_is_empty() -> None:
    assert build_platform(host_gpu()).route("gpu0.mem", "gpu0.mem") == ()


def test_route_over_one_link_either_way() -> None:
    platform = build_platform(host_gpu())
    assert _names(platform.route("host.mem", "gpu0.mem")) == ["host.mem--gpu0.mem"]
    assert _names(platform.route("gpu0.mem", "host.mem")) == ["host.mem--gpu0.mem"]


def test_route_climbs_to_the_common_ancestor_and_down() -> None:
    platform = build_platform(deep())
    assert _names(platform.route("vdevice0/inner/dsp.mem", "gpu0.mem")) == [
        "vdevice0/host.mem--vdevice0/inner/dsp.mem",
        "host.mem--vdevice0/host.mem",
        "host.mem--gpu0.mem",
    ]
    assert _names(platform.route("vdevice0/npu.mem", "vdevice0/inner/dsp.mem")) == [
        "vdevice0/host.mem--vdevice0/npu.mem",
        "vdevice0/host.mem--vdevice0/inner/dsp.mem",
    ]


def test_route_is_cached_per_pair() -> None:
    platform = build_platform(deep())
    first = platform.route("gpu0.mem", "vdevice0/npu.mem")
    assert platform.route("gpu0.mem", "vdevice0/npu.mem") is first


def test_route_weight_is_latency_plus_reference_size_over_bandwidth() -> None:
    # 1 MiB = 1048576 B over 8 GB/s (8000 B/us) = 131.072 us, plus 2 us latency
    link = Link("a--b", "a", "b", 8.0, 2.0)
    assert ROUTE_REFERENCE_BYTES == 1048576
    assert route_weight(link) == pytest.approx(133.072, abs=1e-12)


def test_route_picks_the_cheapest_of_parallel_links() -> None:
    platform = build_platform(host_gpu())
    fast = Link("host.mem==gpu0.mem", "host.mem", "gpu0.mem", 64.0, 1.0)
    slow = Link("host.mem~~gpu0.mem", "host.mem", "gpu0.mem", 64.0, 9.0)
    parallel = {**platform.links, fast.name: fast, slow.name: slow}
    rebuilt = type(platform)(
        platform.target,
        platform.graph,
        platform.processors,
        platform.memories,
        parallel,
        platform.levels,
    )
    assert rebuilt.route("host.mem", "gpu0.mem") == (fast,)
    assert rebuilt.route("gpu0.mem", "host.mem") == (fast,)


def test_route_from_unknown_memory_names_it_and_suggests() -> None:
    platform = build_platform(host_gpu())
    with pytest.raises(
        TargetError,
        match=r"^route: expected a memory of platform 'host-gpu', got 'gpu.mem' "
        r"\(did you mean 'gpu0\.mem'\?\)$",
    ):
        platform.route("gpu.mem", "host.mem")


def test_route_to_unknown_memory_names_it() -> None:
    platform = build_platform(host_gpu())
    with pytest.raises(
        TargetError, match=r"^route: expected a memory of platform 'host-gpu', got 'dram'$"
    ):
        platform.route("host.mem", "dram")


def test_route_between_unjoined_memories_says_so() -> None:
    platform = build_platform(host_gpu())
    island = Memory("island.mem", 1024, 1.0, "")
    rebuilt = type(platform)(
        platform.target,
        platform.graph,
        platform.processors,
        dict(platform.memories) | {island.name: island},
        platform.links,
        platform.levels,
    )
    with pytest.raises(
        TargetError, match=r"^route: expected a link path from 'host\.mem', got 'island\.mem'$"
    ):
        rebuilt.route("host.mem", "island.mem")


@pytest.mark.parametrize(
    ("bandwidth_gbps", "expected"),
    [
        # direct: 1 + 1048576 / 1000 = 1049.6 us; via host: (1 + 32.8) + (2 + 131.1) + (0.5 + 262.1)
        (
            1.0,
            [
                "host.mem--gpu0.mem",
                "host.mem--vdevice0/host.mem",
                "vdevice0/host.mem--vdevice0/npu.mem",
            ],
        ),
        (100.0, ["gpu0.mem--vdevice0/npu.mem"]),  # direct: 1 + 10.5 us
    ],
)
def test_route_takes_the_cheaper_of_a_direct_link_and_the_tree(
    bandwidth_gbps: float, expected: list[str]
) -> None:
    platform = build_platform(deep())
    direct = Link("gpu0.mem--vdevice0/npu.mem", "gpu0.mem", "vdevice0/npu.mem", bandwidth_gbps, 1.0)
    rebuilt = type(platform)(
        platform.target,
        platform.graph,
        platform.processors,
        platform.memories,
        {**platform.links, direct.name: direct},
        platform.levels,
    )
    assert _names(rebuilt.route("gpu0.mem", "vdevice0/npu.mem")) == expected


def test_route_from_a_memory_that_is_not_a_name_names_it() -> None:
    platform = build_platform(host_gpu())
    with pytest.raises(TargetError, match=r"^route: expected a memory of .*, got 3$"):
        platform.route(3, "host.mem")  # type: ignore[arg-type]


def test_memory_of_an_unknown_processor_names_it_and_suggests() -> None:
    platform = build_platform("arm-riscv-soc")
    with pytest.raises(
        TargetError,
        match=r"^memory_of: expected a processor of platform 'arm-riscv-soc', "
        r"got 'vdevice0/np' \(did you mean 'vdevice0/npu'\?\)$",
    ):
        platform.memory_of("vdevice0/np")


@pytest.mark.parametrize(("src", "dst"), [(["host.mem"], "gpu0.mem"), ("host.mem", ["gpu0.mem"])])
def test_route_between_names_that_are_not_strings_names_them(src: object, dst: object) -> None:
    # a list raised TypeError: unhashable type: 'list' from the route cache
    platform = build_platform(host_gpu())
    with pytest.raises(TargetError, match=r"^route: expected a memory of .*, got \['\w+\.mem'\]$"):
        platform.route(src, dst)  # type: ignore[arg-type]
