"""Tiny nested targets with round numbers, for hand-computed INVOKE timelines.

On top of `tests.sim.tiny` (root host: VM ``dispatch_us = 1``, ``alloc_us = 0.5``, ``free_us =
0.25``; devices: ``kernel_latency_us = 3``, 2000 B/µs, ``launch_us = 4``, ``sync_us = 2``, links
1000 B/µs with ``latency_us = 10``; x: float32[250] = 1000 B), a nested level (`nested`) has:

- a co-processor host running a graph executor with ``node_us = 0.5``, its own memory;
  ``launch_us = 0``, ``sync_us = 1`` as seen by its parent;
- a C runtime with ``call_us = 2``; ``control_latency_us = 3``; its link to the parent's host
  memory: 1000 B/µs, ``latency_us = 10``;
- `devices` below it (round-number devices, or more nested levels).
"""

from __future__ import annotations

from typing import Any

from tests.sim.tiny import _processor

NODE_US = 0.5
CALL_US = 2.0
CONTROL_US = 3.0


def coprocessor(**attrs: Any) -> dict[str, Any]:
    """The co-processor host of a nested level (round numbers, its own 1 GiB memory)."""
    base = {"mem_bandwidth_gbps": 1.0, "kernel_latency_us": 1.0, "sync_us": 1.0, "ops": ["*"]}
    return _processor("riscv-cpu", **{**base, **attrs})


def nested(name: str, *devices: dict[str, Any], executor: str = "graph") -> dict[str, Any]:
    """A nested ``hetero`` level `name` whose co-processor drives `devices`."""
    config = {"kind": "graph", "node_us": NODE_US} if executor == "graph" else {
        "kind": "vm", "dispatch_us": 1.0}  # fmt: skip
    return {
        "name": name,
        "kind": "hetero",
        "host": coprocessor(),
        "executor": config,
        "runtime": {"kind": "crt", "alloc_us": 0.5, "free_us": 0.25, "call_us": CALL_US},
        "link": {"bandwidth_gbps": 1.0, "latency_us": 10.0},
        "control_latency_us": CONTROL_US,
        "devices": list(devices),
    }
