"""Hand-made target trees with round numbers, duck-typed to `hetsim.target.Target`'s read API.

Tests that assert exact hand-computed numbers build their trees here, so the numbers do not move
when a shipped tag's defaults do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

EFFICIENCY = {
    "matmul": 0.5,
    "conv": 0.5,
    "elementwise": 0.25,
    "reduction": 0.25,
    "normalization": 0.25,
    "data_movement": 0.25,
    "other": 0.125,
}


@dataclass(frozen=True)
class FakeConfig:
    """An executor or runtime: kind and attrs."""

    kind: str
    attrs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FakeTarget:
    """A node of a canonical target tree."""

    kind: str
    name: str
    attrs: Mapping[str, Any]
    host: FakeTarget | None = None
    executor: FakeConfig | None = None
    runtime: FakeConfig | None = None
    devices: tuple[FakeTarget, ...] = ()
    tag: str | None = None

    @property
    def is_composite(self) -> bool:
        return self.kind == "hetero"


def processor(kind: str, name: str, **attrs: Any) -> FakeTarget:
    """A processor node; every attribute the cost model reads, overridable."""
    base = {
        "cores": 1,
        "freq_ghz": 1.0,
        "flops_per_cycle": 1000,
        "mem_bandwidth_gbps": 10.0,
        "memory_gib": 1,
        "kernel_latency_us": 1.0,
        "launch_us": 0.0,
        "sync_us": 0.0,
        "efficiency": EFFICIENCY,
        "ops": ["*"],
        "link": {"bandwidth_gbps": 10.0, "latency_us": 1.0},
    }
    return FakeTarget(kind, name, {**base, **attrs})


VM = FakeConfig("vm", {"dispatch_us": 0.5})
GRAPH = FakeConfig("graph", {"node_us": 0.25, "is_static": True})
CPP = FakeConfig("cpp", {"alloc_us": 0.5, "free_us": 0.25, "call_us": 2.0})
CRT = FakeConfig("crt", {"alloc_us": 1.0, "free_us": 0.5, "call_us": 3.0})


def hetero(
    name: str,
    host: FakeTarget,
    devices: tuple[FakeTarget, ...],
    *,
    executor: FakeConfig = VM,
    runtime: FakeConfig = CPP,
    **attrs: Any,
) -> FakeTarget:
    """A composite level."""
    base = {"link": {"bandwidth_gbps": 8.0, "latency_us": 2.0}, "control_latency_us": 5.0}
    return FakeTarget("hetero", name, {**base, **attrs}, host, executor, runtime, devices)


def seed_soc() -> FakeTarget:
    """The founding scenario: an ARM host with a VM, a RISC-V co-processor with a graph executor
    driving an NPU that shares the co-processor's memory."""
    npu = processor(
        "accel",
        "npu",
        flops_per_cycle=2000,
        mem_bandwidth_gbps=16.0,
        memory_gib=0,
        kernel_latency_us=2.0,
        launch_us=1.5,
        sync_us=4.0,
    )
    coprocessor = processor("riscv", "host", cores=4, flops_per_cycle=2, mem_bandwidth_gbps=8.0)
    vdevice = hetero("vdevice0", coprocessor, (npu,), executor=GRAPH, runtime=CRT)
    arm = processor("arm", "host", cores=4, freq_ghz=1.5, flops_per_cycle=8, memory_gib=4)
    return hetero("seed-soc", arm, (vdevice,))


def host_gpu() -> FakeTarget:
    """An x86 host with one GPU of its own memory over a 32 GB/s, 1 µs link."""
    gpu = processor(
        "gpu",
        "gpu0",
        cores=100,
        flops_per_cycle=128,
        mem_bandwidth_gbps=2000.0,
        memory_gib=80,
        kernel_latency_us=3.0,
        launch_us=5.0,
        sync_us=2.0,
        link={"bandwidth_gbps": 32.0, "latency_us": 1.0},
    )
    x86 = processor("x86", "host", cores=8, freq_ghz=2.0, flops_per_cycle=32, memory_gib=64)
    return hetero("host-gpu", x86, (gpu,))


def deep() -> FakeTarget:
    """Three levels: host → gpu0 and vdevice0 (own memory) → npu (own memory) and vdevice0/inner
    (shares vdevice0's memory) → dsp (own memory)."""
    dsp = processor("accel", "dsp", link={"bandwidth_gbps": 2.0, "latency_us": 3.0})
    inner = hetero("inner", processor("riscv", "host", memory_gib=0), (dsp,), executor=GRAPH)
    npu = processor("accel", "npu", link={"bandwidth_gbps": 4.0, "latency_us": 0.5})
    vdevice = hetero("vdevice0", processor("riscv", "host"), (npu, inner), control_latency_us=7.0)
    gpu = processor("gpu", "gpu0", link={"bandwidth_gbps": 32.0, "latency_us": 1.0})
    return hetero("deep", processor("x86", "host", memory_gib=16), (gpu, vdevice))
