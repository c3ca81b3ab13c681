"""hetsim.cost: every simulated duration as a formula of named parameters.

The formulas, their parameters, units and default sources are written out in
``docs/cost-model.md``; each has exactly one function here. Contention, queueing and overlap are
the engine's business (`hetsim.sim`): these functions give the time of one action on idle
resources.
"""

from __future__ import annotations

from hetsim.cost.cuda_graph import (
    capture_us,
    graph_launch_us,
    graph_memory_bytes,
    graph_node_us,
    instantiate_us,
)
from hetsim.cost.formulas import (
    DISPATCH_PARAMETERS,
    alloc_us,
    dispatch_us,
    efficiency,
    free_us,
    gemm_half_dim,
    invoke_us,
    kernel_timer,
    kernel_us,
    launch_us,
    mem_efficiency,
    op_latency_us,
    peak_gflops,
    route_us,
    sync_us,
    transfer_us,
)

__all__ = [
    "DISPATCH_PARAMETERS",
    "alloc_us",
    "capture_us",
    "dispatch_us",
    "efficiency",
    "free_us",
    "gemm_half_dim",
    "graph_launch_us",
    "graph_memory_bytes",
    "graph_node_us",
    "instantiate_us",
    "invoke_us",
    "kernel_timer",
    "kernel_us",
    "launch_us",
    "mem_efficiency",
    "op_latency_us",
    "peak_gflops",
    "route_us",
    "sync_us",
    "transfer_us",
]
