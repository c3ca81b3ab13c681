"""Tiny targets with round numbers, and tiny graphs, for hand-computed timelines.

Parameters (see docs/cost-model.md and docs/runtime.md for the formulas):

- host: VM ``dispatch_us = 1``; runtime ``alloc_us = 0.5``, ``free_us = 0.25``; host kernels:
  ``kernel_latency_us = 1`` and 1 GB/s (1000 B/µs); compute negligible (1e6 GFLOP/s).
- devices (`device`): ``kernel_latency_us = 3``, 2 GB/s (2000 B/µs), ``launch_us = 4``,
  ``sync_us = 2``; link 1 GB/s with ``latency_us = 10``; compute negligible.
- graphs (`graph`) take x: float32[N] = 1000 bytes.
"""

from __future__ import annotations

from typing import Any

from hetsim.api import platform_of
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import propagate
from hetsim.report import check_invariants

N = 250
EFFICIENCY = dict.fromkeys(
    ("matmul", "conv", "elementwise", "reduction", "normalization", "data_movement", "other"), 1.0
)


def _processor(kind: str, **attrs: Any) -> dict[str, Any]:
    """A processor config: the round defaults, `attrs` on top (later keys win)."""
    base = {
        "kind": kind,
        "cores": 1,
        "freq_ghz": 1.0,
        "flops_per_cycle": 1e6,
        "memory_gib": 1,
        "launch_us": 0.0,
        "sync_us": 0.0,
        "efficiency": EFFICIENCY,
    }
    return {**base, **attrs}


def device(name: str, ops: list[str], **attrs: Any) -> dict[str, Any]:
    """A GPU-like device that runs `ops`; `attrs` override the round defaults."""
    base = {
        "name": name,
        "ops": ops,
        "mem_bandwidth_gbps": 2.0,
        "kernel_latency_us": 3.0,
        "launch_us": 4.0,
        "sync_us": 2.0,
        "link": {"bandwidth_gbps": 1.0, "latency_us": 10.0},
    }
    return _processor("cuda", **{**base, **attrs})


def target(*devices: dict[str, Any]) -> dict[str, Any]:
    """A root level: the round-number host with a VM and a C++ runtime, driving `devices`."""
    host = _processor("x86-cpu", mem_bandwidth_gbps=1.0, kernel_latency_us=1.0, memory_gib=4)
    return {
        "kind": "hetero",
        "host": host,
        "executor": {"kind": "vm", "dispatch_us": 1.0},
        "runtime": {"kind": "cpp", "alloc_us": 0.5, "free_us": 0.25, "call_us": 0.0},
        "devices": list(devices),
    }


def graph(*ops: Op, outputs: tuple[str, ...]) -> Graph:
    """A graph of `ops` on input x: float32[N]."""
    return Graph("tiny", ops, {"x": TensorType((N,), "float32")}, outputs)


def assert_run_invariants(result: Any, model: Graph, tgt: Any, dims: Any = None) -> None:
    """Check a run beyond `check_invariants`: inputs ready before each kernel, bytes per copy.

    - every span keeps the report layer's invariants (no overlap on a stream or a link, each
      kernel after its launch was dispatched, link bytes equal to the bytes on link spans);
    - each kernel starts at or after every input it reads is ready in its memory (the end of the
      copy that brought it there, else the end of the op that made it);
    - each transfer over a link carries exactly the bytes of the tensor copied.
    """
    assert check_invariants(result, exclusive_links=True) == []
    platform = platform_of(tgt)
    metas = propagate(model, dims or {}, result.inputs or None)
    ends = {s.name: s.end_us for s in result.spans if s.stream in ("stream0", "exec")}
    for op in model.ops:
        kernel = next((s for s in result.spans if s.name == op.name), None)
        if kernel is None:  # folded at load time
            continue
        memory = platform.processors[result.placement[op.name]].memory
        for name in filter(None, op.inputs):
            ready = ends.get(f"copy {name}@{memory}", ends.get(name_of_producer(model, name), 0.0))
            assert kernel.start_us >= ready, f"{op.name} starts before {name} is ready"
    for span in result.spans:
        if span.stream == "link":
            tensor = span.name.removeprefix("copy ").rsplit("@", 1)[0]
            assert span.args["bytes"] == metas[tensor].nbytes, span


def name_of_producer(model: Graph, tensor: str) -> str:
    """The name of the op that makes `tensor` ("" for inputs and initializers)."""
    return next((op.name for op in model.ops if tensor in op.outputs), "")
