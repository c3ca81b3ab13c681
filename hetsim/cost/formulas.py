"""The duration formulas: one function per simulated action, each a formula of named parameters.

Every function returns float microseconds for one action on idle resources; ``docs/cost-model.md``
writes each formula out with worked examples. Unit conversion is `hetsim.units`' job, so the
arithmetic here never spells a 1e3.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hetsim.errors import Problem, TargetError
from hetsim.kernels import Cost
from hetsim.platform import Level, Link, Processor
from hetsim.units import gbps_to_bytes_per_us, gflops_to_flops_per_us
from hetsim.units import transfer_us as _link_transfer_us

__all__ = [
    "DISPATCH_PARAMETERS",
    "alloc_us",
    "dispatch_us",
    "efficiency",
    "free_us",
    "invoke_us",
    "kernel_timer",
    "kernel_us",
    "launch_us",
    "peak_gflops",
    "route_us",
    "sync_us",
    "transfer_us",
]

DISPATCH_PARAMETERS: dict[str, str] = {"vm": "dispatch_us", "graph": "node_us"}
"""Executor kind → the attribute that holds its host-side cost per instruction or node."""

FALLBACK_OP_CLASS = "other"
"""The efficiency used for an op class a processor's ``efficiency`` table does not list."""


def peak_gflops(processor: Processor) -> float:
    """Peak FP32 GFLOP/s: ``cores × freq_ghz × flops_per_cycle``.

    >>> npu = Processor("npu", "accelerator", "accel", "", {"cores": 1, "freq_ghz": 1.0,
    ...     "flops_per_cycle": 2048}, "host.mem")
    >>> peak_gflops(npu)
    2048.0
    """
    attrs = processor.attrs
    return float(attrs["cores"] * attrs["freq_ghz"] * attrs["flops_per_cycle"])


def efficiency(processor: Processor, op_class: str) -> float:
    """Fraction of peak the processor reaches on `op_class`; ``other``'s for an unlisted class.

    >>> cpu = Processor("host", "host", "arm", "", {"efficiency": {"matmul": 0.5, "other": 0.1}},
    ...     "host.mem")
    >>> efficiency(cpu, "matmul"), efficiency(cpu, "conv")
    (0.5, 0.1)
    """
    table: Mapping[str, float] = processor.attrs["efficiency"]
    found = table.get(op_class)
    return float(table[FALLBACK_OP_CLASS] if found is None else found)


def kernel_us(processor: Processor, cost: Cost) -> float:
    """Device-side time of one kernel, a roofline plus a fixed latency.

    ``kernel_latency_us + max(flops / (peak_gflops·1e3 · efficiency[op_class]),
    (bytes_read + bytes_written) / (mem_bandwidth_gbps·1e3))``; the same as
    ``kernel_timer(processor)(cost)``.

    >>> npu = Processor("npu", "accelerator", "accel", "", {"cores": 1, "freq_ghz": 1.0,
    ...     "flops_per_cycle": 2000, "efficiency": {"matmul": 0.5, "other": 0.25},
    ...     "mem_bandwidth_gbps": 16, "kernel_latency_us": 2.0}, "host.mem")
    >>> kernel_us(npu, Cost(4e6, 8000, 8000, "matmul"))  # compute bound: 4e6 / (2e6 · 0.5)
    6.0
    >>> kernel_us(npu, Cost(1e3, 64000, 16000, "matmul"))  # memory bound: 80000 / 16000
    7.0
    """
    return kernel_timer(processor)(cost)


def kernel_timer(processor: Processor) -> Callable[[Cost], float]:
    """`kernel_us` for one processor, its parameters read once: bind it before a run.

    >>> npu = Processor("npu", "accelerator", "accel", "", {"cores": 1, "freq_ghz": 1.0,
    ...     "flops_per_cycle": 2000, "efficiency": {"matmul": 0.5, "other": 0.25},
    ...     "mem_bandwidth_gbps": 16, "kernel_latency_us": 2.0}, "host.mem")
    >>> timer = kernel_timer(npu)
    >>> timer(Cost(4e6, 8000, 8000, "matmul")), timer(Cost(4e6, 0, 0, "conv"))
    (6.0, 10.0)
    """
    latency_us = float(processor.attrs["kernel_latency_us"])
    peak_per_us = gflops_to_flops_per_us(peak_gflops(processor))
    bytes_per_us = gbps_to_bytes_per_us(processor.attrs["mem_bandwidth_gbps"])
    flops_per_us: dict[str, float] = {}  # op class → effective rate, filled on first use

    def timer(cost: Cost) -> float:
        rate = flops_per_us.get(cost.op_class)
        if rate is None:
            rate = peak_per_us * efficiency(processor, cost.op_class)
            flops_per_us[cost.op_class] = rate
        compute = cost.flops / rate if cost.flops else 0.0
        memory = (cost.bytes_read + cost.bytes_written) / bytes_per_us
        return latency_us + (compute if compute > memory else memory)  # max(), inlined for speed

    return timer


def transfer_us(link: Link, size_bytes: float) -> float:
    """Time to move `size_bytes` over one idle link: ``latency_us + size / (bandwidth_gbps·1e3)``.

    >>> transfer_us(Link("host.mem--npu.mem", "host.mem", "npu.mem", 8.0, 2.0), 8000)
    3.0
    """
    return _link_transfer_us(size_bytes, link.bandwidth_gbps, link.latency_us)


def route_us(links: Iterable[Link], size_bytes: float) -> float:
    """Time to move `size_bytes` along a route of idle links, store and forward: the hops' sum.

    >>> hops = (Link("a--b", "a", "b", 8.0, 2.0), Link("b--c", "b", "c", 4.0, 1.0))
    >>> route_us(hops, 8000), route_us((), 8000)
    (6.0, 0.0)
    """
    return float(sum(transfer_us(link, size_bytes) for link in links))


def dispatch_us(executor: Any) -> float:
    """Host-side cost of one instruction (``vm``: ``dispatch_us``) or node (``graph``: ``node_us``).

    `executor` is a level's executor config (``.kind``, ``.attrs``); `DISPATCH_PARAMETERS` says
    which attribute each kind's cost is.

    Raises
    ------
    TargetError
        For an executor kind that `DISPATCH_PARAMETERS` does not know.
    """
    parameter = DISPATCH_PARAMETERS.get(executor.kind)
    if parameter is None:
        close = difflib.get_close_matches(executor.kind, list(DISPATCH_PARAMETERS), n=1)
        raise TargetError(
            [
                Problem(
                    "executor",
                    f"expected an executor kind with a dispatch cost "
                    f"({', '.join(sorted(DISPATCH_PARAMETERS))})",
                    repr(executor.kind),
                    close[0] if close else None,
                )
            ]
        )
    return float(executor.attrs[parameter])


def launch_us(processor: Processor) -> float:
    """Host-side time to launch one kernel on `processor` (its ``launch_us``)."""
    return float(processor.attrs["launch_us"])


def sync_us(processor: Processor) -> float:
    """Host-side time to wait for and observe one completion on `processor` (its ``sync_us``)."""
    return float(processor.attrs["sync_us"])


def alloc_us(runtime: Any) -> float:
    """Host-side time of one allocation by a level's runtime (its ``alloc_us``)."""
    return float(runtime.attrs["alloc_us"])


def free_us(runtime: Any) -> float:
    """Host-side time of one free by a level's runtime (its ``free_us``)."""
    return float(runtime.attrs["free_us"])


def invoke_us(level: Level, size_bytes: float) -> float:
    """Time for a parent host to invoke nested `level` with `size_bytes` of arguments.

    ``control_latency_us + runtime.call_us + size_bytes / (link.bandwidth_gbps·1e3)``, the link
    being the ``hetero`` device's own. Tensor data crossing memories is a transfer, not part of
    this; `size_bytes` is the request itself (argument descriptors, scalars).
    """
    link = level.attrs["link"]
    assert level.runtime is not None, f"level {level.path!r} has no runtime"
    return (
        level.control_latency_us
        + float(level.runtime.attrs["call_us"])
        + size_bytes / gbps_to_bytes_per_us(link["bandwidth_gbps"])
    )
