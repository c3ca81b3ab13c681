"""The cost policy (HEFT-like), checked by hand on a one-op graph, and against capability."""

from __future__ import annotations

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.ir import Graph, GraphBuilder
from hetsim.kernels import propagate
from hetsim.models import LIGHT_MODELS, load_model
from hetsim.partition import LevelContext, partition
from hetsim.partition.core import fold
from hetsim.partition.costs import op_costs
from hetsim.partition.policies import estimate_us, place_by_capability, place_by_cost
from hetsim.platform import Platform, build_platform
from hetsim.target import Target
from tests.partition.tiny import LINK, level, nested, platform_of, proc, tag_platform

SHIPPED_TAGS = ("arm-riscv-soc", "two-node-h100", "x86-h100", "rk3588", "jetson-agx-orin")


def _relu() -> Graph:
    b = GraphBuilder("relu")
    return b.build(b.op("Relu", b.input("x", (1000,))))


def _fast_npu(link_gbps: float) -> Platform:
    # Relu of float32[1000]: 1000 flop and 8000 B. Host: max(1000/1e3, 8000/1e3) = 8 us.
    # NPU at 100 GB/s: max(1, 0.08) = 1 us, plus 4000 B in and out over the link.
    link = {"bandwidth_gbps": link_gbps, "latency_us": 0.0}
    npu = proc("npu", name="npu", ops=["Relu"], mem_bandwidth_gbps=100.0, link=link)
    return platform_of(level(proc("arm-cpu"), [npu]))


def _context(graph: Graph, platform: Platform) -> LevelContext:
    metas = propagate(graph, {s: 1 for s in graph.symbols})
    constants, _, ops = fold(graph)
    return LevelContext(
        platform, platform.levels[""], ops, metas, op_costs(ops, metas), constants=constants
    )


@pytest.mark.parametrize(
    ("link_gbps", "where", "npu_us"),
    [(1.0, "host", 9.0), (10.0, "npu", 1.8)],  # 4 + 1 + 4 us, then 0.4 + 1 + 0.4 us
)
def test_cost_picks_earliest_finish_including_transfers(
    link_gbps: float, where: str, npu_us: float
) -> None:
    platform = _fast_npu(link_gbps)
    context = _context(_relu(), platform)
    assert estimate_us(context, {"relu0": "host"}) == pytest.approx(8.0)
    assert estimate_us(context, {"relu0": "npu"}) == pytest.approx(npu_us)
    assert dict(partition(_relu(), platform, "cost").placement) == {"relu0": where}
    assert dict(partition(_relu(), platform, "capability").placement) == {"relu0": "npu"}


def test_nested_level_pays_invoke_once_per_run_of_ops() -> None:
    # invoke_us = control_latency 10 + call 0 + 64 B / 100 GB/s = 10.00064 us, paid by relu0 only.
    sub = nested("sub", [proc("npu", name="acc", ops=["Relu"], mem_bandwidth_gbps=100.0)])
    sub["control_latency_us"] = 10.0
    sub["link"] = {"bandwidth_gbps": 100.0, "latency_us": 0.0}
    platform = platform_of(level(proc("arm-cpu"), [sub]))
    b = GraphBuilder("g")
    graph = b.build(b.op("Relu", b.op("Relu", b.input("x", (1000,)))))
    context = _context(graph, platform)
    # 4000 B at 100 GB/s = 0.04 us in, each Relu 1 us, 0.04 us back.
    expected = 0.04 + 10.00064 + 1.0 + 1.0 + 0.04
    assert estimate_us(context, {"relu0": "sub", "relu1": "sub"}) == pytest.approx(expected)
    assert estimate_us(context, {"relu0": "host", "relu1": "host"}) == pytest.approx(16.0)
    assert place_by_cost(context) == {"relu0": "sub", "relu1": "sub"}


@pytest.mark.parametrize("tag", SHIPPED_TAGS)
@pytest.mark.parametrize("model", ["mlp", "cnn", "transformer"])
def test_cost_estimate_never_worse_than_capability(tag: str, model: str) -> None:
    graph, platform = load_model(model), tag_platform(tag)
    context = _context(graph, platform)
    cost = estimate_us(context, place_by_cost(context))
    assert cost <= estimate_us(context, place_by_capability(context))


@pytest.mark.parametrize("tag", SHIPPED_TAGS)
@pytest.mark.parametrize("model", sorted(LIGHT_MODELS))
def test_cost_estimate_never_worse_than_capability_on_light_models(tag: str, model: str) -> None:
    graph, platform = load_model(model), tag_platform(tag)
    context = _context(graph, platform)
    cost = estimate_us(context, place_by_cost(context))
    assert cost <= estimate_us(context, place_by_capability(context))


def _matmul_on_gpu(memory_bytes: int) -> tuple[Graph, Platform]:
    # MatMul of float32[512, 512] by a 1 MiB weight, then Relu: both finish first on the GPU
    b = GraphBuilder("mm")
    weight = b.initializer(np.ones((512, 512), np.float32), "w")
    graph = b.build(
        b.op("Relu", b.op("MatMul", b.input("x", (512, 512)), weight, name="mm"), name="r")
    )
    gpu = {"kind": "cuda", "name": "gpu0", "memory_gib": memory_bytes / 2**30}
    return graph, build_platform(Target({"kind": "hetero", "devices": [gpu]}))


@pytest.mark.parametrize(
    ("memory_bytes", "placement"),
    [
        (2**20, {"mm": "gpu0", "r": "gpu0"}),  # the weight fills the GPU's memory exactly
        (2**20 - 1, {"mm": "host", "r": "gpu0"}),  # it does not fit: the MatMul stays home
    ],
)
def test_cost_places_no_op_whose_weights_do_not_fit(
    memory_bytes: int, placement: dict[str, str]
) -> None:
    # the schedule took the GPU for the MatMul whatever its memory, and partition then refused
    # the plan ("expected the weights of the ops placed on it to fit in 1024.0 KiB"), so
    # partition="cost" failed where the host alone runs
    graph, platform = _matmul_on_gpu(memory_bytes)
    assert partition(graph, platform, "cost", None, dims={}).placement == placement
    # the run, which had failed: its plans run, the host alone finishes first (no copies)
    result = simulate(graph, platform, mode="timing", partition="cost")
    assert result.placement == {"mm": "host", "r": "host"}


def test_cost_falls_back_to_capability_when_its_own_weights_do_not_fit() -> None:
    # HEFT put the MatMul on "fast" (each op fits where it goes, as the schedule places it),
    # filling the only memory the Gemm can use: its plan's weights did not fit, and partition
    # refused it ("expected the weights of the ops placed on it to fit in 2.9 KiB, got 4.7
    # KiB"), where capability's plan (MatMul on "slow", Gemm on "fast") fits
    slow = proc("npu", name="slow", ops=["MatMul"], link=LINK, mem_bandwidth_gbps=0.01,
                launch_us=50.0)  # fmt: skip
    fast = proc("npu", name="fast", ops=["MatMul", "Gemm"], link=LINK,
                memory_gib=3000 / 2**30, mem_bandwidth_gbps=100.0)  # fmt: skip
    platform = platform_of(level(proc("arm-cpu", ops=["Neg"]), [slow, fast]))
    b = GraphBuilder("mm_gemm")
    x = b.input("x", (1, 10))
    weights = [b.initializer(np.ones((10, 60), np.float32), f"w{i}") for i in (1, 2)]  # 2400 B
    graph = b.build(b.op("MatMul", x, weights[0], name="m"), b.op("Gemm", x, weights[1], name="a"))
    expected = {"m": "slow", "a": "fast"}
    assert dict(partition(graph, platform, "capability").placement) == expected
    assert dict(partition(graph, platform, "cost").placement) == expected


def _invoked_twice() -> tuple[Graph, Platform]:
    """mm1 -> sm -> mm2: two MatMuls of 576 B of weights each, for a nested level's 1 KiB NPU
    that costs nothing, split by a Softmax only the root host runs, so the nested level is
    invoked twice."""
    free = {"launch_us": 0.0, "sync_us": 0.0, "kernel_latency_us": 0.0}
    link = {"bandwidth_gbps": 1000.0, "latency_us": 0.0}
    npu = {"kind": "npu", "name": "npu", "ops": ["MatMul"], "memory_gib": 1 / 2**20, **free,
           "link": link}  # fmt: skip
    sub = {
        "kind": "hetero", "name": "sub", "control_latency_us": 0.0, "link": link,
        "host": {"kind": "riscv-cpu", "cores": 1, "freq_ghz": 0.1, "flops_per_cycle": 1},
        "executor": {"kind": "graph", "node_us": 0.0},
        "runtime": {"kind": "crt", "call_us": 0.0, "alloc_us": 0.0, "free_us": 0.0},
        "devices": [npu],
    }  # fmt: skip
    target = {
        "kind": "hetero",
        "host": {"kind": "arm-cpu", "cores": 1, "freq_ghz": 0.1, "flops_per_cycle": 1},
        "executor": {"kind": "vm", "dispatch_us": 0.0},
        "devices": [sub],
    }
    b = GraphBuilder("twice")
    h = b.op("MatMul", b.input("x", (1, 12)), np.ones((12, 12), np.float32), name="mm1")
    h = b.op("MatMul", b.op("Softmax", h, name="sm"), np.ones((12, 12), np.float32), name="mm2")
    return b.build(h), build_platform(Target(target))


def test_cost_counts_the_weights_an_earlier_invocation_left_in_a_memory() -> None:
    # each invocation was scheduled as if the NPU were empty: both MatMuls went there, and the
    # plan was refused ("expected the weights ... to fit in 1.0 KiB, got 1.1 KiB"), as was
    # simulate(partition="cost"), though its baselines run
    graph, platform = _invoked_twice()
    plan = partition(graph, platform, "cost", None, dims={})
    assert plan.placement == {"mm1": "sub/npu", "sm": "host", "mm2": "sub/host"}
    host_only = [{"op": "*", "device": "host"}]
    cost = simulate(graph, platform, mode="timing", partition="cost")
    assert cost.placement == plan.placement
    alone = simulate(graph, platform, mode="timing", partition="rules", rules=host_only)
    assert cost.makespan_us < alone.makespan_us


@pytest.mark.parametrize("model", ["cnn", "cnn_int8"])
@pytest.mark.parametrize("strategy", ["whole", "regions"])
def test_cost_with_cuda_graphs_is_never_slower_than_its_baselines(
    model: str, strategy: str
) -> None:
    # its candidates were timed without CUDA graphs and the winner run with them: on
    # jetson-agx-orin, cnn with regions took 67.4 us under cost, 50.1 on the host alone
    runs = {
        policy: simulate(
            model, "jetson-agx-orin", mode="timing", cuda_graph=strategy, partition=policy,
            rules=[{"op": "*", "device": "host"}] if policy == "rules" else None,
        ).makespan_us
        for policy in ("cost", "capability", "rules")
    }  # fmt: skip
    assert runs["cost"] == min(runs.values())


@pytest.mark.parametrize("freq_ghz", [5e-324, 1e308])
def test_cost_keeps_off_a_host_whose_rates_give_no_time(freq_ghz: float) -> None:
    # the host's kernel time is no finite number (a compute rate of 9e-320 flops per µs, or
    # inf): capability runs mlp on the NPU, where cost failed on the host's own estimate and
    # then on the host-alone baseline run
    target = {"tag": "arm-riscv-soc", "host": {"freq_ghz": freq_ghz}}
    capability = simulate("mlp", target, mode="timing", partition="capability")
    cost = simulate("mlp", target, mode="timing", partition="cost")
    assert set(cost.placement.values()) == set(capability.placement.values()) == {"vdevice0/npu"}
    assert cost.makespan_us == capability.makespan_us


def test_cost_keeps_off_a_device_reached_over_a_link_that_gives_no_time() -> None:
    # a link of 5e-324 GB/s gives no finite transfer time: cost failed on its own estimate
    # (route_us raised) where the root host alone runs mlp, as the rules baseline shows
    target = {
        "kind": "hetero",
        "host": "x86-cpu",
        "devices": [{"kind": "cuda", "name": "gpu0", "link": {"bandwidth_gbps": 5e-324}}],
    }
    host_alone = simulate(
        "mlp", target, mode="timing", partition="rules", rules=[{"op": "*", "device": "host"}]
    )
    cost = simulate("mlp", target, mode="timing", partition="cost")
    assert set(cost.placement.values()) == {"host"}
    assert cost.makespan_us == host_alone.makespan_us == 11.2615625
    plan = partition(load_model("mlp"), build_platform(Target(target)), "cost")
    assert set(plan.placement.values()) == {"host"}  # the policy's own plan, as `hetsim plan`
    # squeezenet goes to the GPU over a usable link; over this one its schedule keeps off it
    usable = {**target, "devices": [{"kind": "cuda", "name": "gpu0"}]}
    squeezenet = load_model("squeezenet")
    assert set(
        partition(squeezenet, build_platform(Target(usable)), "cost").placement.values()
    ) == {"gpu0"}
    plan = partition(squeezenet, build_platform(Target(target)), "cost")
    assert set(plan.placement.values()) == {"host"}


def test_a_cost_run_says_which_of_its_plans_it_kept_and_what_each_took() -> None:
    # it kept the fastest of three plans and said nothing of which: on arm-riscv-soc the cost
    # policy's ResNet-50 equals the capability run, which read as the policy finding nothing
    graph = load_model("cnn")
    found = simulate(graph, "arm-riscv-soc", mode="timing", partition="cost")
    times = found.record.extra["cost_candidates_us"]
    assert list(times) == ["cost", "capability", "root host"]
    assert times["capability"] == simulate(graph, "arm-riscv-soc", mode="timing").makespan_us
    everything_on_host = [{"op": "*", "device": "host"}]
    assert (
        times["root host"]
        == simulate(
            graph, "arm-riscv-soc", mode="timing", partition="rules", rules=everything_on_host
        ).makespan_us
    )
    kept = found.record.extra["cost_kept"]
    assert times[kept] == min(times.values()) == found.makespan_us
    shown = ", ".join(f"{name} {us:,.3f}" for name, us in times.items())
    note = f"partition cost: kept the {kept} plan; simulated us: {shown}"
    assert found.record.extra["placement_notes"][-1] == note
    assert "cost_kept" not in simulate(graph, "arm-riscv-soc", mode="timing").record.extra
