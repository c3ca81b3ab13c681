"""The duration formulas: one function per simulated action, each a formula of named parameters.

Every function returns float microseconds for one action on idle resources; ``docs/cost-model.md``
writes each formula out with worked examples. Unit conversion is `hetsim.units`' job, so the
arithmetic here never spells a 1e3.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hetsim.errors import Problem, SimulationError, TargetError
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
    "gemm_half_dim",
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

DISPATCH_PARAMETERS: dict[str, str] = {"vm": "dispatch_us", "graph": "node_us"}
"""Executor kind → the attribute that holds its host-side cost per instruction or node."""

FALLBACK_OP_CLASS = "other"
"""The efficiency used for an op class a processor's ``efficiency`` table does not list."""


def peak_gflops(processor: Processor) -> float:
    """Peak GFLOP/s: ``cores × freq_ghz × flops_per_cycle``, at the processor's rated dtype
    (FP32 for a CPU or GPU; an NPU's tag cites its INT8 or FP16 MACs), for every dtype alike.

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


def mem_efficiency(processor: Processor, op_class: str) -> float:
    """Fraction of ``mem_bandwidth_gbps`` that `op_class` streams at (``mem_efficiency`` table).

    A class the table lacks uses ``other``'s; a processor without the table streams at its
    full bandwidth (every shipped kind's default is 1 for every class).

    >>> cpu = Processor("host", "host", "x86", "", {"mem_efficiency": {"matmul": 0.5,
    ...     "other": 1.0}}, "host.mem")
    >>> mem_efficiency(cpu, "matmul"), mem_efficiency(cpu, "conv")
    (0.5, 1.0)
    >>> mem_efficiency(Processor("npu", "accelerator", "accel", "", {}, "host.mem"), "conv")
    1.0
    """
    return _per_class(processor, "mem_efficiency", op_class, 1.0)


def gemm_half_dim(processor: Processor, op_class: str) -> float:
    """Hockney's n½ of `op_class`'s GEMMs here (``gemm_half_dim`` table): the smallest GEMM
    dimension at which they reach half their rate. A class the table lacks uses ``other``'s; a
    processor without the table has 0 (no such loss: every shipped kind's default).

    >>> cpu = Processor("host", "host", "x86", "", {"gemm_half_dim": {"conv": 25.0}}, "h.mem")
    >>> gemm_half_dim(cpu, "conv"), gemm_half_dim(cpu, "matmul")
    (25.0, 0.0)
    """
    return _per_class(processor, "gemm_half_dim", op_class, 0.0)


def op_latency_us(processor: Processor, op_class: str) -> float:
    """Fixed time a kernel of `op_class` adds to ``kernel_latency_us`` (``op_latency_us`` table).

    A class the table lacks uses ``other``'s; a processor without the table adds 0 (every
    shipped kind's default is 0 for every class).

    >>> cpu = Processor("host", "host", "x86", "", {"op_latency_us": {"conv": 30.0, "other": 1.0}},
    ...     "host.mem")
    >>> op_latency_us(cpu, "conv"), op_latency_us(cpu, "matmul")
    (30.0, 1.0)
    >>> op_latency_us(Processor("npu", "accelerator", "accel", "", {}, "host.mem"), "conv")
    0.0
    """
    return _per_class(processor, "op_latency_us", op_class, 0.0)


def _per_class(processor: Processor, name: str, op_class: str, default: float) -> float:
    """`op_class`'s entry of the processor's `name` table; a class the table lacks uses
    ``other``'s, and a processor without the table (or an ``other``) gets `default`."""
    table: Mapping[str, float] = processor.attrs.get(name) or {}
    found = table.get(op_class)
    return float(table.get(FALLBACK_OP_CLASS, default) if found is None else found)


def kernel_us(processor: Processor, cost: Cost) -> float:
    """Device-side time of one kernel, a roofline plus fixed latencies.

    ``kernel_latency_us + op_latency_us[op_class] + max(flops / (peak_gflops·1e3 ·
    efficiency[op_class]) · (1 + gemm_half_dim[op_class] / gemm_dim), (bytes_read +
    bytes_written [+ scratch_bytes]) /
    (mem_bandwidth_gbps·1e3 · mem_efficiency[op_class]))``; on a processor with ``lowering:
    numpy`` the scratch bytes count, and so do the lowering's further passes: ``+ numpy_calls ·
    kernel_latency_us + numpy_bytes / (mem_bandwidth_gbps·1e3 · mem_efficiency[elementwise])``.
    The same as ``kernel_timer(processor)(cost)``.

    >>> npu = Processor("npu", "accelerator", "accel", "", {"cores": 1, "freq_ghz": 1.0,
    ...     "flops_per_cycle": 2000, "efficiency": {"matmul": 0.5, "other": 0.25},
    ...     "mem_bandwidth_gbps": 16, "kernel_latency_us": 2.0}, "host.mem")
    >>> kernel_us(npu, Cost(4e6, 8000, 8000, "matmul"))  # compute bound: 4e6 / (2e6 · 0.5)
    6.0
    >>> kernel_us(npu, Cost(1e3, 64000, 16000, "matmul"))  # memory bound: 80000 / 16000
    7.0
    >>> slow = Processor("npu", "accelerator", "accel", "", {**npu.attrs,
    ...     "op_latency_us": {"matmul": 0.5, "other": 0.0}}, "host.mem")
    >>> kernel_us(slow, Cost(4e6, 8000, 8000, "matmul"))  # 2 + 0.5 + 4
    6.5
    >>> gemv = Processor("npu", "accelerator", "accel", "", {**npu.attrs,
    ...     "mem_efficiency": {"matmul": 0.5, "other": 1.0}}, "host.mem")
    >>> kernel_us(gemv, Cost(1e3, 64000, 16000, "matmul"))  # 2 + 80000 / (16000 · 0.5)
    12.0
    >>> im2col = Cost(1e3, 64000, 16000, "conv", scratch_bytes=48000)
    >>> kernel_us(npu, im2col)  # a native kernel moves no scratch: 2 + 80000 / 16000
    7.0
    >>> numpy = Processor("host", "host", "x86", "", {**npu.attrs, "lowering": "numpy"}, "h.mem")
    >>> kernel_us(numpy, im2col)  # hetsim's numpy Conv writes and reads its columns too
    10.0
    >>> passes = Cost(4e6, 8000, 8000, "matmul", numpy_calls=3, numpy_bytes=16000)
    >>> kernel_us(npu, passes)  # fused in a vendor kernel: 2 + 4e6 / (2e6 · 0.5)
    6.0
    >>> kernel_us(numpy, passes)  # 6 + 3 calls · 2 + 16000 / 16000, the elementwise stream
    13.0
    >>> kernel_us(numpy, Cost(4e6, 8000, 8000, "matmul", numpy_bytes=16000))  # 6 + 0 + 1
    7.0
    >>> thin = Processor("npu", "accelerator", "accel", "", {**npu.attrs,
    ...     "gemm_half_dim": {"matmul": 16.0}}, "host.mem")
    >>> kernel_us(thin, Cost(4e6, 8000, 8000, "matmul", gemm_dim=16))  # 2 + 4 · (1 + 16/16)
    10.0
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
    is_numpy = processor.attrs.get("lowering", "native") == "numpy"
    peak_per_us = gflops_to_flops_per_us(peak_gflops(processor))
    bytes_per_us = gbps_to_bytes_per_us(processor.attrs["mem_bandwidth_gbps"])
    # op class → (flops per µs, bytes per µs, kernel_latency_us + op_latency_us, n½), on first use
    per_class: dict[str, tuple[float, float, float, float]] = {}

    def rates(op_class: str) -> tuple[float, float, float, float]:
        found = (
            peak_per_us * efficiency(processor, op_class),
            bytes_per_us * mem_efficiency(processor, op_class),
            latency_us + op_latency_us(processor, op_class),
            gemm_half_dim(processor, op_class),
        )
        _check_rates(processor, op_class, found[0], found[1])
        per_class[op_class] = found
        return found

    passes_rate = rates("elementwise")[1] if is_numpy else 0.0  # the numpy passes stream so

    def timer(cost: Cost) -> float:
        found = per_class.get(cost.op_class)
        if found is None:
            found = rates(cost.op_class)
        rate, stream, fixed_us, half = found
        compute = cost.flops / rate if cost.flops else 0.0
        if half and cost.gemm_dim:
            compute *= 1.0 + half / cost.gemm_dim  # Hockney: rate · d / (d + n½)
        moved = cost.bytes_with_scratch if is_numpy else cost.bytes_total
        memory = moved / stream
        total = fixed_us + (compute if compute > memory else memory)  # max(), inlined for speed
        if is_numpy and (cost.numpy_calls or cost.numpy_bytes):  # two terms, each on its own
            total += cost.numpy_calls * latency_us + cost.numpy_bytes / passes_rate
        if total < math.inf:
            return total
        raise SimulationError(  # a rate of 1e-320 is positive, and a time over 1e308 µs
            f"processor {processor.path}: expected a finite kernel time for op class "
            f"{cost.op_class!r} ({cost.flops:g} flops, {moved:g} bytes), got {total} (compute "
            f"rate {rate!r} flops per µs, memory rate {stream!r} bytes per µs)"
        )

    return timer


def _check_rates(processor: Processor, op_class: str, flops: float, stream: float) -> None:
    """Each attribute is a valid positive number, but their product can underflow to 0 (a
    ``flops_per_cycle`` of 1e-301 times an efficiency of 1e-105): say so, not divide by it."""
    for what, rate in (
        ("compute rate (flops per µs)", flops),
        ("memory rate (bytes per µs)", stream),
    ):
        if not 0.0 < rate < math.inf:
            raise SimulationError(
                f"processor {processor.path}: expected a positive, finite {what} for op class "
                f"{op_class!r} from its attributes, got {rate!r}"
            )


def transfer_us(link: Link, size_bytes: float) -> float:
    """Time to move `size_bytes` over one idle link: ``latency_us + size / (bandwidth_gbps·1e3)``.

    >>> transfer_us(Link("host.mem--npu.mem", "host.mem", "npu.mem", 8.0, 2.0), 8000)
    3.0
    """
    found = _link_transfer_us(size_bytes, link.bandwidth_gbps, link.latency_us)
    if found < math.inf:
        return found
    raise SimulationError(  # a bandwidth of 5e-324 GB/s is positive
        f"link {link.name}: expected a finite transfer time for {size_bytes:g} bytes, got "
        f"{found} (bandwidth_gbps {link.bandwidth_gbps!r}, latency_us {link.latency_us!r})"
    )


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
