"""A calibration run: which probes are timed, at which thread counts, and what is fitted.

Owns `calibrate()` → `Calibration` (the machine, every raw sample, and each fitted parameter
with the sentence saying how it was fitted). Probes and timing are `hetsim.calibrate.probe`,
the arithmetic is `hetsim.calibrate.fit`, and writing the tag file is `hetsim.calibrate.tagfile`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from hetsim.calibrate.fit import flops_per_cycle, median_rate, rate_efficiency, theil_sen
from hetsim.calibrate.machine import FALLBACK_FREQ_GHZ, describe_machine
from hetsim.calibrate.probe import (
    Probe,
    chain_graph,
    eager_runner,
    flush_buffer,
    matmul_probe,
    median,
    op_probe,
    time_cold,
    time_interleaved,
)
from hetsim.errors import HetsimError
from hetsim.kernels import OP_CLASSES
from hetsim.units import gflops_to_flops_per_us

__all__ = [
    "PLANS",
    "RATE_OP_TYPES",
    "Calibration",
    "Fitted",
    "Sample",
    "calibrate",
    "fit_fixed_costs",
    "fit_parameters",
    "steps",
]

CHAIN_LENGTH = 200
"""Ops in the chain whose eager run gives the cost of one step of the dispatch loop."""
CHAIN_SIZE = 4
"""Elements of the chain's tensors: the chain's Relu, timed alone, is subtracted from a step."""
CHAIN_ROUNDS = 5
"""Rounds per sample of the chain and its Relu, timed in turn so that both meet the same load."""
VM_INSTRUCTIONS_PER_CHAIN_OP = 3
"""The VM runs a single-output host op as ALLOC, CALL, FREE (docs/runtime.md)."""
TINY_PROBES: tuple[ProbeFactory, ...] = ()  # filled below, once the probe helpers exist
BLAS_CLASSES = ("matmul", "conv")
"""Op classes also measured at one thread when more are modelled, for the record."""
STREAM_PREFIX = "stream."
"""Sample group of a class's stream probes (`STREAM_PROBES`): ``stream.matmul``."""


ProbeFactory = Callable[[], Probe]


def _conv(channels: int, size: int, kernel: int, group: int = 1, out: int = 0) -> ProbeFactory:
    pad = kernel // 2
    return lambda: op_probe(
        "Conv",
        ((1, channels, size, size),),
        weights=((out or channels, channels // group, kernel, kernel),),
        kernel_shape=[kernel, kernel],
        pads=[pad] * 4,
        group=group,
    )


def _unary(op_type: str, shape: tuple[int, ...], **attrs: Any) -> ProbeFactory:
    return lambda: op_probe(op_type, (shape,), **attrs)


def _batchnorm(channels: int, size: int) -> ProbeFactory:
    shape = (1, channels, size, size)
    return lambda: op_probe("BatchNormalization", (shape,), weights=((channels,),) * 4)


def _add(size: int) -> ProbeFactory:
    return lambda: op_probe("Add", ((size,), (size,)))


# Op class -> the probes that fit its efficiency: the op types and the sizes models are made of
# (dense 3x3 and 1x1 convolutions on ImageNet-sized activations, Relu and Add up to tens of MB,
# pooling, batch norm and softmax). Sizes matter: activations of MBs stream from DRAM, not cache.
FULL_PROBES: dict[str, tuple[ProbeFactory, ...]] = {
    "matmul": tuple(partial(matmul_probe, n) for n in (64, 128, 256, 384, 512)),
    "conv": (
        _conv(64, 56, 3),
        _conv(128, 28, 3),
        _conv(256, 14, 3),
        _conv(64, 56, 1, out=256),
        _conv(256, 14, 1, out=1024),
        _conv(16, 32, 3),
        _conv(128, 28, 3, out=32),
    ),
    "elementwise": tuple(_unary("Relu", (1 << k,)) for k in (16, 18, 20, 22))
    + tuple(_add(1 << k) for k in (16, 18, 20, 22)),
    "reduction": (
        _unary("MaxPool", (1, 64, 112, 112), kernel_shape=[3, 3], strides=[2, 2]),
        _unary("MaxPool", (1, 32, 28, 28), kernel_shape=[2, 2], strides=[2, 2]),
        _unary("GlobalAveragePool", (1, 2048, 7, 7)),
        _unary("GlobalAveragePool", (1, 256, 14, 14)),
    ),
    "normalization": (
        _batchnorm(64, 112),
        _batchnorm(256, 56),
        _batchnorm(32, 14),
        _unary("Softmax", (64, 1000), axis=-1),
        _unary("Softmax", (1, 1000), axis=-1),
    ),
}


def _gemv(rows: int, columns: int) -> ProbeFactory:
    return lambda: op_probe("Gemm", ((1, columns),), weights=((rows, columns),), transB=1)


# Op class -> probes that stream more bytes than they compute: their rate over the Add-fitted
# bandwidth is the class's mem_efficiency. A matrix-vector product (a fully connected layer at
# batch 1) reads its weights once, through one BLAS stream.
STREAM_PROBES: dict[str, tuple[ProbeFactory, ...]] = {
    "matmul": (_gemv(4096, 4096), _gemv(2048, 8192), _gemv(1024, 4096)),
}
RATE_OP_TYPES: dict[str, tuple[str, ...]] = {"elementwise": ("Relu",)}
"""Classes whose efficiency is fitted on some of their probes' op types only. An elementwise flop
is one streaming pass of the kind a Relu makes (`hetsim.kernels.unary` counts the passes of
Erf and the transcendental ops in it); Add streams 2-4x faster per element in cache, so a median
over both lands between two clusters and flips between them from one calibration to the next.
Add's probes give the bandwidth instead."""
BANDWIDTH_MIN_ELEMENTS = 1 << 20
"""Add probes this large (12 MiB moved and up) stream from DRAM: they give the bandwidth."""
TINY_PROBES = (
    _unary("Relu", (4,)),
    _add(4),
    _unary("Sigmoid", (4,)),
    lambda: op_probe("Gemm", ((1, 4),), weights=((4, 4),), transB=1),
    lambda: op_probe("Concat", ((1, 2, 2, 2), (1, 2, 2, 2)), axis=1),
    _conv(2, 4, 3),
    _batchnorm(2, 4),
    _unary("MaxPool", (1, 2, 4, 4), kernel_shape=[2, 2], strides=[2, 2]),
    _unary("GlobalAveragePool", (1, 2, 4, 4)),
    _unary("Softmax", (1, 4), axis=-1),
)
"""The op types models are made of, each on a few elements: the per-call cost of a kernel whose
arithmetic is negligible (attribute handling, index set-up, allocation) varies by type."""
QUICK_PROBES: dict[str, tuple[ProbeFactory, ...]] = {
    group: probes[:: 2 if len(probes) > 4 else 1] for group, probes in FULL_PROBES.items()
}
QUICK_STREAMS = {group: probes[:1] for group, probes in STREAM_PROBES.items()}


@dataclass(frozen=True, slots=True)
class Plan:
    """Probes and cold samples per probe of one calibration (`PLANS`: ``full``, ``quick``)."""

    probes: Mapping[str, tuple[ProbeFactory, ...]]
    repeats: int
    streams: Mapping[str, tuple[ProbeFactory, ...]] = field(default_factory=dict)


PLANS: dict[str, Plan] = {
    "full": Plan(FULL_PROBES, 15, STREAM_PROBES),
    "quick": Plan(QUICK_PROBES, 5, QUICK_STREAMS),
}
FITTED_CLASSES = tuple(FULL_PROBES)
"""The op classes whose efficiency is fitted; the others take elementwise's."""


@dataclass(frozen=True, slots=True)
class Sample:
    """The timed samples (µs per call) of one probe at one thread count."""

    probe: str
    op_class: str
    threads: int
    flops: float
    bytes: float
    us: tuple[float, ...]
    kernel_class: str = ""
    """The op class of the probe's `Cost` (a ``tiny`` probe's class gives its fixed cost)."""
    gemm_dim: int = 0
    """The probe's `Cost.gemm_dim`: the smallest dimension of its GEMM (0: not a GEMM)."""

    @property
    def median_us(self) -> float:
        """The median of the samples."""
        return median(list(self.us))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {
            "probe": self.probe,
            "op_class": self.op_class,
            "threads": self.threads,
            "flops": self.flops,
            "bytes": self.bytes,
            "us": list(self.us),
            "median_us": self.median_us,
            "kernel_class": self.kernel_class,
            "gemm_dim": self.gemm_dim,
        }


@dataclass(frozen=True, slots=True)
class Fitted:
    """One parameter's value and how it was found (written as a comment in the tag file)."""

    value: Any
    how: str


@dataclass(frozen=True, slots=True)
class Calibration:
    """A machine, its raw samples, and the fitted parameters by name (``efficiency.conv``)."""

    machine: Mapping[str, Any]
    plan: str
    samples: tuple[Sample, ...]
    fitted: Mapping[str, Fitted] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<Calibration {self.machine.get('cpu')!r} plan={self.plan} n={len(self.samples)}>"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values: machine, plan, fitted parameters and every raw sample."""
        return {
            "machine": dict(self.machine),
            "plan": self.plan,
            "fitted": {k: {"value": f.value, "how": f.how} for k, f in self.fitted.items()},
            "samples": [s.to_dict() for s in self.samples],
        }


def _jobs(plan: Plan, threads: int) -> list[tuple[str, int, ProbeFactory]]:
    """(op class, threads, probe factory) for every probe of `plan`.

    Every probe runs at `threads`; the BLAS-backed classes (matmul, conv) also at 1 thread
    when `threads` is more, for the record. The tiny kernels are timed apart: one interleaved
    round of them after every probe (`calibrate`).
    """
    jobs: list[tuple[str, int, ProbeFactory]] = []
    for group, probes in plan.probes.items():
        jobs += [(group, threads, make) for make in probes]
        if group in BLAS_CLASSES and threads > 1:
            jobs += [(group, 1, make) for make in probes]
    for group, probes in plan.streams.items():
        jobs += [(f"{STREAM_PREFIX}{group}", threads, make) for make in probes]
    return jobs


def calibrate(
    plan: str = "full",
    *,
    threads: int | None = None,
    advance: Callable[[str], None] | None = None,
) -> Calibration:
    """Measure this machine with hetsim's own kernels and fit a CPU target's parameters.

    Parameters
    ----------
    plan
        A key of `PLANS`: ``"full"`` (under a minute) or ``"quick"`` (seconds).
    threads
        BLAS threads the target models (default: all, as numpy uses); matmul and conv are also
        measured at 1 thread for the record.
    advance
        Called with a label after each probe (a progress bar's step); `steps` counts them.
    """
    from threadpoolctl import threadpool_limits

    chosen = PLANS[plan]
    machine = dict(describe_machine())
    used = threads or int(machine["threads"])
    machine["blas_threads_modelled"] = used
    tick = advance or (lambda _label: None)
    samples: list[Sample] = []
    flush = flush_buffer(machine.get("l2_bytes"))
    tiny = [make() for make in TINY_PROBES]
    tiny_us: list[list[float]] = [[] for _ in tiny]
    for group, count, make in _jobs(chosen, used):
        probe = make()
        with threadpool_limits(limits=count, user_api="blas"):
            us = time_cold(probe.call, repeats=chosen.repeats, flush=flush)
            # the tiny kernels, a round after every probe: their samples span the whole run
            for index, one in enumerate(time_interleaved([p.call for p in tiny], repeats=1)):
                tiny_us[index] += one
        cost = probe.cost
        work = float(cost.bytes_with_scratch)  # the local target's lowering is numpy
        samples.append(
            Sample(
                probe.name, group, count, float(cost.flops), work, tuple(us), cost.op_class,
                cost.gemm_dim,
            )
        )  # fmt: skip
        tick(f"{probe.name} ({count} thread{'s' if count > 1 else ''})")
    for probe, us in zip(tiny, tiny_us, strict=True):
        cost = probe.cost
        work = float(cost.bytes_with_scratch)  # the local target's lowering is numpy
        samples.append(
            Sample(probe.name, "tiny", used, float(cost.flops), work, tuple(us), cost.op_class)
        )
        tick(f"{probe.name} (interleaved)")
    graph, inputs = chain_graph(CHAIN_LENGTH, CHAIN_SIZE)
    relu = op_probe("Relu", ((CHAIN_SIZE,),))  # the chain's kernel, repeated as the chain does
    with threadpool_limits(limits=used, user_api="blas"):
        loop, alone = time_interleaved(
            [eager_runner(graph, inputs), relu.call], repeats=chosen.repeats, rounds=CHAIN_ROUNDS
        )
    samples.append(Sample(f"eager chain {CHAIN_LENGTH}", "loop", used, 0.0, 0.0, tuple(loop)))
    samples.append(Sample(relu.name, "loop-kernel", used, relu.cost.flops, 0.0, tuple(alone)))
    tick("eager dispatch loop")
    return Calibration(machine, plan, tuple(samples), fit_parameters(machine, samples))


def steps(plan: str, threads: int) -> int:
    """How many times `calibrate` calls `advance` for `plan` at `threads` BLAS threads."""
    return len(_jobs(PLANS[plan], threads)) + len(TINY_PROBES) + 1


def _group(samples: list[Sample], group: str, threads: int) -> list[Sample]:
    return [s for s in samples if s.op_class == group and s.threads == threads]


def fit_parameters(machine: Mapping[str, Any], samples: list[Sample]) -> dict[str, Fitted]:
    """The CPU and VM parameters that `samples` (from `calibrate`) imply, each with its method.

    Parameters
    ----------
    machine
        `describe_machine()`'s ``freq_ghz`` and ``flags``, and ``blas_threads_modelled``.
    samples
        Probes of the `FITTED_CLASSES` (over sizes), ``tiny`` kernels (interleaved), the ``loop``
        and its Relu timed alone (``loop-kernel``).
    """
    threads = int(machine["blas_threads_modelled"])
    freq = machine.get("freq_ghz")
    freq_ghz = float(freq) if freq else FALLBACK_FREQ_GHZ
    fpc = flops_per_cycle(machine.get("flags", ()))
    peak_per_us = gflops_to_flops_per_us(threads * freq_ghz * fpc)
    fitted = {
        "cores": Fitted(threads, "the BLAS threads modelled (threadpoolctl limit while measured)"),
        "freq_ghz": Fitted(
            round(freq_ghz, 3),
            "highest 'cpu MHz' in /proc/cpuinfo" if freq else "not in /proc/cpuinfo: assumed",
        ),
        "flops_per_cycle": Fitted(fpc, "from the widest FMA the CPU flags announce"),
    }
    tiny = _group(samples, "tiny", threads)
    fixed = fit_fixed_costs(tiny)
    fitted.update(fixed)
    latency = fixed["kernel_latency_us"].value
    class_latency = {c: latency + fixed[f"op_latency_us.{c}"].value for c in OP_CLASSES}
    stream = [
        s
        for s in _group(samples, "elementwise", threads)
        if s.probe.startswith("Add") and s.flops >= BANDWIDTH_MIN_ELEMENTS
    ]
    bytes_per_us = median_rate(
        [s.bytes for s in stream], [s.median_us for s in stream], class_latency["elementwise"]
    )
    fitted["mem_bandwidth_gbps"] = Fitted(
        round(bytes_per_us / 1e3, 3),
        f"median over {len(stream)} sizes of Add ({stream[0].bytes:.3g}..{stream[-1].bytes:.3g} B)"
        " of bytes / (time - kernel_latency_us - op_latency_us.elementwise)",
    )
    for group in FITTED_CLASSES:
        fit = _fit_gemm_class if group in GEMM_CLASSES else _fit_class
        fitted.update(fit(samples, group, threads, peak_per_us, class_latency[group]))
    for group in OP_CLASSES:
        streams = _group(samples, f"{STREAM_PREFIX}{group}", threads)
        if streams:
            fitted[f"mem_efficiency.{group}"] = _fit_stream(
                streams, bytes_per_us, class_latency[group]
            )
    loop = next(s for s in samples if s.op_class == "loop")
    relu = next(s for s in samples if s.op_class == "loop-kernel")
    step_us = loop.median_us / CHAIN_LENGTH - relu.median_us
    fitted["dispatch_us"] = Fitted(
        round(max(step_us, 0.0) / VM_INSTRUCTIONS_PER_CHAIN_OP, 4),
        f"one step of the eager loop ({loop.median_us / CHAIN_LENGTH:.3g} us per op of a "
        f"{CHAIN_LENGTH}-Relu chain, less the Relu kernel's {relu.median_us:.3g} us) spread over "
        f"the {VM_INSTRUCTIONS_PER_CHAIN_OP} VM instructions of a host op (ALLOC, CALL, FREE)",
    )
    return fitted


def fit_fixed_costs(tiny: list[Sample]) -> dict[str, Fitted]:
    """``kernel_latency_us`` and ``op_latency_us.<class>`` from kernels timed on a few elements.

    Per op class, the median per-call time of its tiny probes; ``kernel_latency_us`` is the
    cheapest class's, and each class's ``op_latency_us`` what it costs beyond that. A class
    without a probe gets 0.

    Raises
    ------
    HetsimError
        No sample of `tiny` has an op class (`Sample.kernel_class`).

    Examples
    --------
    >>> tiny = [Sample(n, "tiny", 1, 4.0, 32.0, (us,), c) for n, us, c in [
    ...     ("Relu 4", 1.5, "elementwise"), ("Add 4", 1.0, "elementwise"),
    ...     ("Conv 1x2x4x4", 20.0, "conv"), ("Gemm 1x4", 3.0, "matmul")]]
    >>> fitted = fit_fixed_costs(tiny)
    >>> fitted["kernel_latency_us"].value, fitted["op_latency_us.conv"].value
    (1.25, 18.75)
    >>> fitted["op_latency_us.matmul"].value, fitted["op_latency_us.other"].value
    (1.75, 0.0)
    >>> fit_fixed_costs([Sample("Relu 4", "tiny", 1, 4.0, 32.0, (1.0,))])
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: fit_fixed_costs: expected tiny samples of an op class ('matmul', \
'conv', 'elementwise', 'reduction', 'normalization', 'data_movement', 'other'), got classes ['']
    """
    by_class = {
        c: median([s.median_us for s in tiny if s.kernel_class == c])
        for c in OP_CLASSES
        if any(s.kernel_class == c for s in tiny)
    }
    if not by_class:
        found = sorted({s.kernel_class for s in tiny})
        raise HetsimError(
            f"fit_fixed_costs: expected tiny samples of an op class {OP_CLASSES}, "
            f"got classes {found}"
        )
    latency = min(by_class.values())
    cheapest = min(by_class, key=by_class.__getitem__)
    listing = ", ".join(f"{s.probe.split()[0]} {s.median_us:.3g}" for s in tiny)
    fitted = {
        "kernel_latency_us": Fitted(
            round(latency, 4),
            f"median per-call time of the cheapest op class ({cheapest}) on a few elements; "
            f"tiny kernels: {listing} us",
        )
    }
    for c in OP_CLASSES:
        class_us = by_class.get(c)
        fitted[f"op_latency_us.{c}"] = (
            Fitted(0.0, "not probed: 0")
            if class_us is None
            else Fitted(
                round(class_us - latency, 4),
                f"median per-call time of its tiny kernels ({class_us:.3g} us) - kernel_latency_us",
            )
        )
    return fitted


def _fit_stream(streams: list[Sample], bytes_per_us: float, latency_us: float) -> Fitted:
    """``mem_efficiency.<class>``: the median byte rate of its stream probes over the bandwidth."""
    rate = median_rate([s.bytes for s in streams], [s.median_us for s in streams], latency_us)
    return Fitted(
        round(max(rate_efficiency(rate, bytes_per_us), 1e-4), 4),
        f"median over {len(streams)} probes ({', '.join(s.probe for s in streams)}) of bytes / "
        f"(time - {latency_us:.3g} us fixed): {rate / 1e3:.4g} GB/s over mem_bandwidth_gbps",
    )


GEMM_CLASSES = ("conv",)
"""Classes whose rate is fitted as Hockney's r∞ and n½ over their probes' GEMM dimensions.

A conv lowers to one GEMM per group whose smallest dimension (output channels per group, output
pixels, or input channels per group × taps) decides how much of peak BLAS reaches: on the
development machine ResNet-50's, DenseNet-121's and ShuffleNet's convs ran at 70 GFLOP/s with a
smallest dimension of 16-63, 93 at 64-127, 104 at 128-255 and 113 at 256 and up. Matmul is not
fitted so: a model's matmuls at batch 1 are matrix-vector products, bound by memory
(``mem_efficiency.matmul``), not by a thin GEMM's compute rate."""


def _fit_gemm_class(
    samples: list[Sample], group: str, threads: int, peak_per_us: float, latency_us: float
) -> dict[str, Fitted]:
    """``efficiency.<group>`` = r∞ / peak and ``gemm_half_dim.<group>`` = n½, Hockney's model.

    Time per flop is a straight line in 1 / d (d the probe's `Sample.gemm_dim`):
    ``(time - fixed) / flops = 1/r∞ + (n½ / r∞) · 1/d``, fitted with `theil_sen`. Where the
    line does not make sense (fewer than two distinct d, a non-positive intercept or a negative
    slope) it falls back to `_fit_class` and n½ = 0.
    """
    fitted = _fit_class(samples, group, threads, peak_per_us, latency_us)  # the fallback
    chosen = [s for s in _group(samples, group, threads) if s.gemm_dim > 0]
    xs = [1.0 / s.gemm_dim for s in chosen]
    ys = [max(s.median_us - latency_us, 1e-9) / s.flops for s in chosen]
    line = theil_sen(xs, ys) if len(set(xs)) >= 2 else None
    if line is None or line.intercept <= 0 or line.slope < 0:
        fitted[f"gemm_half_dim.{group}"] = Fitted(0.0, "no Hockney fit: a flat rate")
        return fitted
    rate = 1.0 / line.intercept  # flops per µs on a wide GEMM
    dims = sorted({s.gemm_dim for s in chosen})
    fitted[f"efficiency.{group}"] = Fitted(
        round(min(max(rate_efficiency(rate, peak_per_us), 1e-4), 1.0), 4),
        f"Hockney's r∞ over {len(chosen)} probes (smallest GEMM dimension {dims[0]}..{dims[-1]})"
        f" at {threads} thread(s), (time - {latency_us:.3g} us fixed) / flops against 1 / d: "
        f"{rate / 1e3:.4g} GFLOP/s over the peak {peak_per_us / 1e3:.4g} GFLOP/s",
    )
    fitted[f"gemm_half_dim.{group}"] = Fitted(
        round(line.slope / line.intercept, 2),
        "Hockney's n½ of the same fit: the dimension at half of r∞",
    )
    return fitted


def _fit_class(
    samples: list[Sample], group: str, threads: int, peak_per_us: float, latency_us: float
) -> dict[str, Fitted]:
    """``efficiency.<group>`` (and the 1-thread rate, recorded): the median rate of its probes.

    `latency_us` is the class's fixed cost per kernel (``kernel_latency_us + op_latency_us``).
    """
    types = RATE_OP_TYPES.get(group)
    chosen = [
        s for s in _group(samples, group, threads) if not types or s.probe.split()[0] in types
    ]
    rate = median_rate([s.flops for s in chosen], [s.median_us for s in chosen], latency_us)
    fitted = {
        f"efficiency.{group}": Fitted(
            round(max(rate_efficiency(rate, peak_per_us), 1e-4), 4),
            f"median over {len(chosen)} probes "
            f"({', '.join(sorted({s.probe.split()[0] for s in chosen}))}) at {threads} thread(s) "
            f"of flops / (time - {latency_us:.3g} us fixed): {rate / 1e3:.4g} GFLOP/s over the "
            f"peak {peak_per_us / 1e3:.4g} GFLOP/s",
        )
    }
    single = _group(samples, group, 1)
    if threads > 1 and single:
        one = median_rate([s.flops for s in single], [s.median_us for s in single], latency_us)
        fitted[f"single_thread.{group}_gflops"] = Fitted(
            round(one / 1e3, 3), "the same at 1 thread (recorded, not a parameter)"
        )
    return fitted
