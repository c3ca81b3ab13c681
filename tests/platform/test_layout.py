"""`Platform.layout`: what placing and compiling read of a platform, its cost parameters left out.

`hetsim.simulate` keys its compiled plans by the layout, so the claim these tests check is the one
a wrong answer would hide behind: platforms of equal layouts get equal plans and equal programs.
Each platform is checked against a copy with every cost parameter scaled (processor, executor,
runtime and level attributes, link and memory bandwidths, link latencies): the shipped tags, the
zoo's models, and random valid trees.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetsim.api import platform_of
from hetsim.errors import HetsimError
from hetsim.ir import Graph
from hetsim.models import load_model
from hetsim.partition import partition
from hetsim.platform import Link, Platform, build_platform
from hetsim.runtime import compile_plan
from hetsim.target import Target
from tests.platform.fakes import FakeConfig, host_gpu
from tests.platform.test_tags import TARGET_TAGS
from tests.target.test_properties import TREES

MODELS: dict[str, tuple[Graph, dict[str, int]]] = {
    "mlp": (load_model("mlp"), {}),
    "cnn": (load_model("cnn"), {}),
    "transformer": (load_model("transformer"), {"seq": 16}),
}


def _scaled(value: Any, factor: int) -> Any:
    """Every number in `value` (nested mappings included) times `factor`; the rest as it is."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value * factor
    if isinstance(value, Mapping):
        return {key: _scaled(v, factor) for key, v in value.items()}
    return value


def _config(config: Any, factor: int) -> Any:
    if config is None:
        return None
    return FakeConfig(config.kind, _scaled(config.attrs, factor))


def with_costs_scaled(platform: Platform, factor: int) -> Platform:
    """`platform` with every cost parameter times `factor`: what the layout leaves out.

    Memory capacities stay (the layout holds them); the processors' ``memory_gib`` attribute is
    scaled with the rest, so nothing may read a capacity from there.
    """
    processors = {
        path: dataclasses.replace(p, attrs=_scaled(p.attrs, factor))
        for path, p in platform.processors.items()
    }
    memories = {
        name: dataclasses.replace(m, bandwidth_gbps=m.bandwidth_gbps * factor)
        for name, m in platform.memories.items()
    }
    links = {
        name: dataclasses.replace(
            k, bandwidth_gbps=k.bandwidth_gbps * factor, latency_us=k.latency_us * factor
        )
        for name, k in platform.links.items()
    }
    levels = {
        path: dataclasses.replace(
            v,
            executor=_config(v.executor, factor),
            runtime=_config(v.runtime, factor),
            attrs=_scaled(v.attrs, factor),
            control_latency_us=v.control_latency_us * factor,
        )
        for path, v in platform.levels.items()
    }
    return Platform(platform.target, platform.graph, processors, memories, links, levels)


def compiled(graph: Graph, platform: Platform, dims: Mapping[str, int]) -> tuple[Any, str]:
    """The capability plan of `graph` on `platform` and its compiled programs' listing, or the
    error placing or compiling it raises (as a string)."""
    try:
        plan = partition(graph, platform, "capability", dims=dims)
        return plan, compile_plan(graph, platform, plan).listing()
    except HetsimError as err:
        return None, f"{type(err).__name__}: {err}"


@pytest.mark.parametrize("name", TARGET_TAGS)
def test_scaled_costs_keep_the_layout_plan_and_program_of_every_tag(name: str) -> None:
    platform = build_platform(Target(name))
    for factor in (2, 3):
        scaled = with_costs_scaled(platform, factor)
        assert scaled.layout == platform.layout
        assert hash(scaled.layout) == hash(platform.layout)
        for model, (graph, dims) in MODELS.items():
            expected = compiled(graph, platform, dims)
            assert compiled(graph, scaled, dims) == expected, (name, model, factor)


def test_the_plans_compared_above_are_real_ones_the_seed_platform_offloads() -> None:
    # the check above must compare real plans: the seed platform offloads the cnn's convs
    plan, listing = compiled(MODELS["cnn"][0], build_platform(Target("arm-riscv-soc")), {})
    assert "vdevice0/npu" in set(plan.placement.values())
    assert "INVOKE" in listing


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TREES, st.sampled_from(sorted(MODELS)), st.sampled_from([2, 3]))
def test_scaled_costs_keep_the_plan_and_program_of_a_random_tree(
    spec: Any, model: str, factor: int
) -> None:
    try:
        platform = platform_of(spec)
    except HetsimError:
        return
    scaled = with_costs_scaled(platform, factor)
    graph, dims = MODELS[model]
    # scaled costs change the layout only where they choose a route (two paths join memories)
    assert scaled.layout == platform.layout or platform.layout[-1]
    if scaled.layout == platform.layout:
        assert compiled(graph, scaled, dims) == compiled(graph, platform, dims)


SOC = Target("arm-riscv-soc")


@pytest.mark.parametrize(
    "changes",
    [
        {"devices": {"vdevice0": {"devices": {"npu": {"ops": ["Conv", "Relu"]}}}}},
        {"devices": {"vdevice0": {"devices": {"npu": {"dtypes": ["int8"]}}}}},
        {"devices": {"vdevice0": {"devices": {"npu": {"memory_gib": 0.5}}}}},
        {"devices": {"vdevice0": {"executor": "vm", "runtime": "cpp"}}},
        {"name": "another-soc"},
    ],
    ids=["ops", "dtypes", "capacity", "executor", "name"],
)
def test_what_placing_or_compiling_reads_changes_the_layout(changes: dict[str, Any]) -> None:
    assert build_platform(SOC.override(changes)).layout != build_platform(SOC).layout


def test_cost_parameters_a_sweep_varies_leave_the_layout_alone() -> None:
    changes = {
        "executor": {"dispatch_us": 0.1},
        "host": {"freq_ghz": 1.0},
        "devices": {"vdevice0": {"link": {"bandwidth_gbps": 2.0, "latency_us": 9.0}}},
    }
    assert build_platform(SOC.override(changes)).layout == build_platform(SOC).layout


def _with_links(platform: Platform, *links: Link) -> Platform:
    return Platform(
        platform.target,
        platform.graph,
        platform.processors,
        platform.memories,
        {**platform.links, **{link.name: link for link in links}},
        platform.levels,
    )


def test_where_two_paths_join_two_memories_link_costs_are_in_the_layout() -> None:
    # parallel links: which one a copy crosses depends on their costs (tests/platform/test_route)
    platform = build_platform(host_gpu())
    fast = Link("host.mem==gpu0.mem", "host.mem", "gpu0.mem", 64.0, 1.0)
    slow = Link("host.mem~~gpu0.mem", "host.mem", "gpu0.mem", 64.0, 9.0)
    parallel = _with_links(platform, fast, slow)
    swapped = _with_links(
        platform,
        dataclasses.replace(fast, latency_us=9.0),
        dataclasses.replace(slow, latency_us=1.0),
    )
    assert parallel.route("host.mem", "gpu0.mem") == (fast,)
    assert [k.name for k in swapped.route("host.mem", "gpu0.mem")] == [slow.name]
    assert parallel.layout != swapped.layout
    # one path between every pair (a tree of memories): the links' costs are left out
    assert platform.layout[-1] == ()
    assert with_costs_scaled(platform, 2).layout == platform.layout


def test_the_layout_is_made_once_per_platform() -> None:
    platform = build_platform(host_gpu())
    assert platform.layout is platform.layout
