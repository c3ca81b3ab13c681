"""Tiny hand-made platforms with round numbers for hand-checked partitions.

Every processor: 1 core × 1 GHz × ``flops_per_cycle`` flop (1 flop/cycle = 1e3 flop/µs), memory
bandwidth ``mem_bandwidth_gbps`` (1 GB/s = 1e3 B/µs), efficiency 1.0 for every op class, no fixed
kernel, launch or dispatch costs, and links of 1 GB/s without latency, unless a test says else.
"""

from __future__ import annotations

from typing import Any

from hetsim.platform import Platform, build_platform
from hetsim.target import Target

EFFICIENCY = dict.fromkeys(
    ("matmul", "conv", "elementwise", "reduction", "normalization", "data_movement", "other"), 1.0
)
LINK = {"bandwidth_gbps": 1.0, "latency_us": 0.0}


def proc(kind: str, **attrs: Any) -> dict[str, Any]:
    """A processor config with round numbers; `attrs` override."""
    base: dict[str, Any] = {
        "kind": kind,
        "cores": 1,
        "freq_ghz": 1.0,
        "flops_per_cycle": 1,
        "mem_bandwidth_gbps": 1.0,
        "memory_gib": 1,
        "kernel_latency_us": 0.0,
        "launch_us": 0.0,
        "sync_us": 0.0,
        "efficiency": EFFICIENCY,
    }
    base.update(attrs)
    return base


def level(host: dict[str, Any], devices: list[dict[str, Any]], **attrs: Any) -> dict[str, Any]:
    """A hetero level config: a VM host without dispatch cost, unless `attrs` say else."""
    config: dict[str, Any] = {
        "kind": "hetero",
        "host": host,
        "executor": {"kind": "vm", "dispatch_us": 0.0},
        "devices": devices,
    }
    config.update(attrs)
    return config


def nested(name: str, devices: list[dict[str, Any]], executor: str = "graph") -> dict[str, Any]:
    """A nested hetero device: a RISC-V co-processor running `executor`, free to invoke."""
    exe = (
        {"kind": "graph", "node_us": 0.0}
        if executor == "graph"
        else {"kind": "vm", "dispatch_us": 0.0}
    )
    return level(
        proc("riscv-cpu"),
        devices,
        name=name,
        executor=exe,
        runtime={"kind": "crt", "call_us": 0.0, "alloc_us": 0.0, "free_us": 0.0},
        link=LINK,
        control_latency_us=0.0,
    )


def platform_of(config: dict[str, Any]) -> Platform:
    """Build the platform of a config dict."""
    return build_platform(Target(config))


def tag_platform(tag: str) -> Platform:
    """The platform of a shipped tag."""
    return build_platform(Target(tag))
