"""The duration formulas against hand-computed values on hand-made platforms."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from hetsim.cost import (
    alloc_us,
    dispatch_us,
    efficiency,
    free_us,
    invoke_us,
    kernel_timer,
    kernel_us,
    launch_us,
    peak_gflops,
    route_us,
    sync_us,
    transfer_us,
)
from hetsim.errors import SimulationError, TargetError
from hetsim.kernels import Cost
from hetsim.platform import Platform, build_platform
from hetsim.target import Target
from tests.platform.fakes import EFFICIENCY, deep, host_gpu, seed_soc


@pytest.fixture
def seed() -> Platform:
    return build_platform(seed_soc())


@pytest.fixture
def gpu_platform() -> Platform:
    return build_platform(host_gpu())


def test_peak_is_cores_times_clock_times_flops_per_cycle(
    seed: Platform, gpu_platform: Platform
) -> None:
    assert peak_gflops(seed.processors["host"]) == 48.0  # 4 × 1.5 × 8
    assert peak_gflops(seed.processors["vdevice0/npu"]) == 2000.0  # 1 × 1.0 × 2000
    assert peak_gflops(gpu_platform.processors["gpu0"]) == 12800.0  # 100 × 1.0 × 128


def test_efficiency_by_op_class_and_fallback_to_other(seed: Platform) -> None:
    npu = seed.processors["vdevice0/npu"]
    assert efficiency(npu, "matmul") == 0.5
    assert efficiency(npu, "elementwise") == 0.25
    assert efficiency(npu, "no-such-class") == 0.125


def test_kernel_compute_bound_on_npu(seed: Platform) -> None:
    # 2e6 flops / (2000 GFLOP/s · 1e3 · 0.5) = 2 µs; 16000 B / 16000 B/µs = 1 µs; + 2 µs latency
    cost = Cost(flops=2e6, bytes_read=12000, bytes_written=4000, op_class="matmul")
    assert kernel_us(seed.processors["vdevice0/npu"], cost) == 4.0


def test_kernel_memory_bound_on_npu(seed: Platform) -> None:
    # 1e5 flops / (2e6 · 0.25) = 0.2 µs; 160000 B / 16000 B/µs = 10 µs; + 2 µs latency
    cost = Cost(flops=1e5, bytes_read=120000, bytes_written=40000, op_class="elementwise")
    assert kernel_us(seed.processors["vdevice0/npu"], cost) == 12.0


def test_kernel_unlisted_class_uses_other_efficiency(seed: Platform) -> None:
    # 4.8e4 flops / (48 GFLOP/s · 1e3 · 0.125) = 8 µs; 0 bytes; + 1 µs latency
    cost = Cost(flops=4.8e4, bytes_read=0, bytes_written=0, op_class="mystery")
    assert kernel_us(seed.processors["host"], cost) == 9.0


def test_kernel_without_work_is_its_latency(gpu_platform: Platform) -> None:
    assert kernel_us(gpu_platform.processors["gpu0"], Cost(0, 0, 0, "data_movement")) == 3.0


def test_kernel_matches_numpy_roofline_over_random_costs(
    gpu_platform: Platform, rng: np.random.Generator
) -> None:
    gpu = gpu_platform.processors["gpu0"]
    flops = rng.uniform(0, 1e9, 50)
    sizes = rng.integers(0, 1 << 30, (50, 2))
    for f, (r, w) in zip(flops, sizes, strict=True):
        expected = 3.0 + max(f / (12800e3 * 0.5), (r + w) / 2000e3)
        assert kernel_us(gpu, Cost(float(f), int(r), int(w), "matmul")) == pytest.approx(
            expected, rel=1e-12
        )


def test_kernel_timer_gives_the_roofline_for_every_class(
    gpu_platform: Platform, rng: np.random.Generator
) -> None:
    timer = kernel_timer(gpu_platform.processors["gpu0"])
    for op_class, share in [*EFFICIENCY.items(), ("mystery", EFFICIENCY["other"])]:
        flops = rng.uniform(0, 1e9, 10)
        sizes = rng.integers(0, 1 << 30, (10, 2))
        for f, (r, w) in zip(flops, sizes, strict=True):
            expected = 3.0 + max(f / (12800e3 * share), (r + w) / 2000e3)
            cost = Cost(float(f), int(r), int(w), op_class)
            assert timer(cost) == pytest.approx(expected, rel=1e-12)


def test_transfer_is_latency_plus_size_over_bandwidth(gpu_platform: Platform) -> None:
    link = gpu_platform.links["host.mem--gpu0.mem"]
    assert transfer_us(link, 64000) == 3.0  # 1 + 64000 / 32000
    assert transfer_us(link, 0) == 1.0


def test_route_time_sums_the_hops_store_and_forward() -> None:
    platform = build_platform(deep())
    route = platform.route("vdevice0/inner/dsp.mem", "gpu0.mem")
    # dsp link (2 GB/s, 3 µs): 3 + 4; vdevice0 link (8 GB/s, 2 µs): 2 + 1;
    # gpu0 link (32 GB/s, 1 µs): 1 + 0.25
    assert route_us(route, 8000) == 11.25
    assert route_us(platform.route("gpu0.mem", "gpu0.mem"), 8000) == 0.0


def test_dispatch_reads_the_executor_parameter(seed: Platform) -> None:
    assert dispatch_us(seed.levels[""].executor) == 0.5  # vm dispatch_us
    assert dispatch_us(seed.levels["vdevice0"].executor) == 0.25  # graph node_us


def test_dispatch_of_unknown_executor_names_it_and_suggests() -> None:
    with pytest.raises(
        TargetError,
        match=r"^executor: expected an executor kind with a dispatch cost \(graph, vm\), "
        r"got 'vms' \(did you mean 'vm'\?\)$",
    ):
        dispatch_us(SimpleNamespace(kind="vms", attrs={}))


def test_launch_and_sync_read_the_processor(gpu_platform: Platform, seed: Platform) -> None:
    assert (
        launch_us(gpu_platform.processors["gpu0"]),
        sync_us(gpu_platform.processors["gpu0"]),
    ) == (
        5.0,
        2.0,
    )
    npu = seed.processors["vdevice0/npu"]
    assert (launch_us(npu), sync_us(npu)) == (1.5, 4.0)
    assert (launch_us(seed.processors["host"]), sync_us(seed.processors["host"])) == (0.0, 0.0)


def test_alloc_and_free_read_the_runtime(seed: Platform) -> None:
    runtime = seed.levels["vdevice0"].runtime
    assert (alloc_us(runtime), free_us(runtime)) == (1.0, 0.5)


def test_invoke_is_control_latency_plus_call_plus_arguments_over_link(seed: Platform) -> None:
    # 5 µs control latency + 3 µs crt call + 4000 B / 8000 B/µs
    assert invoke_us(seed.levels["vdevice0"], 4000) == 8.5
    assert invoke_us(seed.levels["vdevice0"], 0) == 8.0


def test_invoke_uses_the_nested_levels_own_latency() -> None:
    level = build_platform(deep()).levels["vdevice0"]
    # 7 µs control latency + 2 µs cpp call + 800 B / 8000 B/µs
    assert invoke_us(level, 800) == 9.1


def test_seed_tag_costs_follow_its_parameters() -> None:
    target = Target("arm-riscv-soc")
    platform = build_platform(target)
    vdevice = target.devices[0]
    link = vdevice.attrs["link"]
    expected = (
        vdevice.attrs["control_latency_us"]
        + vdevice.runtime.attrs["call_us"]
        + 800 / (link["bandwidth_gbps"] * 1e3)
    )
    assert invoke_us(platform.levels["vdevice0"], 800) == pytest.approx(expected, rel=1e-12)
    assert dispatch_us(platform.levels[""].executor) == target.executor.attrs["dispatch_us"]
    assert dispatch_us(platform.levels["vdevice0"].executor) == vdevice.executor.attrs["node_us"]
    npu = vdevice.devices[0].attrs
    assert launch_us(platform.processors["vdevice0/npu"]) == npu["launch_us"]
    assert sync_us(platform.processors["vdevice0/npu"]) == npu["sync_us"]


def _npu(flops_per_cycle: float, matmul_efficiency: float) -> Platform:
    spec = {"kind": "npu", "flops_per_cycle": flops_per_cycle}
    return build_platform(Target(spec | {"efficiency": {"matmul": matmul_efficiency}}))


def test_a_rate_that_underflows_to_zero_is_an_error_not_a_division() -> None:
    # each attribute is a valid positive number; their product is not a usable rate
    npu = _npu(1e-300, 1e-300).processors["dev0"]
    with pytest.raises(SimulationError) as error:
        kernel_us(npu, Cost(2.0, 8, 8, "matmul"))
    assert str(error.value) == (
        "processor dev0: expected a positive, finite compute rate (flops per µs) for op class "
        "'matmul' from its attributes, got 0.0"
    )


def test_a_kernel_time_that_overflows_is_an_error_not_inf() -> None:
    npu = _npu(1e-300, 1e-20).processors["dev0"]  # a subnormal rate: 1e-317 flops per µs
    with pytest.raises(SimulationError) as error:
        kernel_us(npu, Cost(16512.0, 34048, 0, "matmul"))
    assert str(error.value).startswith(
        "processor dev0: expected a finite kernel time for op class 'matmul' (16512 flops, "
        "34048 bytes), got inf (compute rate "
    )
