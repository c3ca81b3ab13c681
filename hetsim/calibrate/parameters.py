"""Parameters: which samples of a calibration give which parameter of a CPU target, and how.

Owns `fit_parameters()`: from a calibration's samples to each named parameter (``cores``,
``kernel_latency_us``, ``efficiency.conv``, ``dispatch_us``, ...) as a `Fitted` value with the
sentence saying how it was fitted. The arithmetic (straight lines, rates, the peak) is
`hetsim.calibrate.fit`; which probes are timed is `hetsim.calibrate.plan`, and timing them
`hetsim.calibrate.run`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hetsim.calibrate.fit import flops_per_cycle, median_rate, rate_efficiency, theil_sen
from hetsim.calibrate.machine import FALLBACK_FREQ_GHZ
from hetsim.calibrate.plan import CHAIN_LENGTH, FULL_PROBES, STREAM_PREFIX
from hetsim.calibrate.probe import Sample, median
from hetsim.errors import HetsimError
from hetsim.kernels import OP_CLASSES
from hetsim.units import gflops_to_flops_per_us

__all__ = [
    "FITTED_CLASSES",
    "GEMM_CLASSES",
    "RATE_OP_TYPES",
    "Fitted",
    "fit_fixed_costs",
    "fit_parameters",
]

VM_INSTRUCTIONS_PER_CHAIN_OP = 3
"""The VM runs a single-output host op as ALLOC, CALL, FREE (docs/runtime.md)."""
RATE_OP_TYPES: dict[str, tuple[str, ...]] = {"elementwise": ("Relu",)}
"""Classes whose efficiency is fitted on some of their probes' op types only. An elementwise flop
is one streaming pass of the kind a Relu makes (`hetsim.kernels.unary` counts the passes of
Erf and the transcendental ops in it); Add streams 2-4x faster per element in cache, so a median
over both lands between two clusters and flips between them from one calibration to the next.
Add's probes give the bandwidth instead."""
BANDWIDTH_MIN_ELEMENTS = 1 << 20
"""Add probes this large (12 MiB moved and up) stream from DRAM: they give the bandwidth."""
FITTED_CLASSES = tuple(FULL_PROBES)
"""The op classes whose efficiency is fitted; the others take elementwise's."""


@dataclass(frozen=True, slots=True)
class Fitted:
    """One parameter's value and how it was found (written as a comment in the tag file)."""

    value: Any
    how: str


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
    fitted["dispatch_us"] = _fit_dispatch(loop.median_us / CHAIN_LENGTH, relu.median_us)
    return fitted


def _fit_dispatch(per_op_us: float, relu_us: float) -> Fitted:
    """``dispatch_us``: one step of the eager loop, less its Relu timed alone, over the VM
    instructions of a host op; 0, saying so, where the Relu alone took longer than a step (the
    two are timed apart, and a busy machine can slow either).

    >>> _fit_dispatch(1.3, 1.46).how.endswith("-0.16 us, below 0: floored at 0")
    True
    """
    step_us = per_op_us - relu_us
    how = (
        f"one step of the eager loop ({per_op_us:.3g} us per op of a {CHAIN_LENGTH}-Relu chain, "
        f"less the Relu kernel's {relu_us:.3g} us) spread over the "
        f"{VM_INSTRUCTIONS_PER_CHAIN_OP} VM instructions of a host op (ALLOC, CALL, FREE)"
    )
    if step_us < 0:
        return Fitted(0.0, f"{how}; the difference is {step_us:.3g} us, below 0: floored at 0")
    return Fitted(round(step_us / VM_INSTRUCTIONS_PER_CHAIN_OP, 4), how)


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


SMALLEST_FRACTION = 1e-9
"""The least efficiency a fit writes: a target's efficiencies are fractions in (0, 1]."""


def fraction(value: float) -> float:
    """A fitted fraction of a peak, kept to 4 significant figures within (0, 1].

    Not to 4 decimals: numpy's one-thread elementwise kernels on a 64-thread host run at
    1.4e-4 of its peak, which 4 decimals (and a 1e-4 floor) wrote as 0.0001, 28% off the rate
    the tag's own comment gave.

    >>> fraction(1.38e-4), fraction(0.123456), fraction(2.0), fraction(0.0)
    (0.000138, 0.1235, 1.0, 1e-09)
    """
    return float(f"{min(max(value, SMALLEST_FRACTION), 1.0):.4g}")


def _fit_stream(streams: list[Sample], bytes_per_us: float, latency_us: float) -> Fitted:
    """``mem_efficiency.<class>``: the median byte rate of its stream probes over the bandwidth."""
    rate = median_rate([s.bytes for s in streams], [s.median_us for s in streams], latency_us)
    return Fitted(
        fraction(rate_efficiency(rate, bytes_per_us)),
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
    slope) it falls back to `_fit_class` and n½ = 0. Where its r∞ is above the peak, the
    efficiency is capped at 1 and n½ refitted with r∞ at the peak (`_half_dim_at_peak`): the
    line's own n½ went with its r∞, and the tag's capped rate then ran the convs 2x slow.
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
    how = (
        f"Hockney's r∞ over {len(chosen)} probes (smallest GEMM dimension {dims[0]}..{dims[-1]})"
        f" at {threads} thread(s), (time - {latency_us:.3g} us fixed) / flops against 1 / d: "
        f"{rate / 1e3:.4g} GFLOP/s"
    )
    half_dim = line.slope / line.intercept
    if rate <= peak_per_us:
        fitted[f"efficiency.{group}"] = Fitted(
            fraction(rate_efficiency(rate, peak_per_us)),
            f"{how} over the peak {peak_per_us / 1e3:.4g} GFLOP/s",
        )
        fitted[f"gemm_half_dim.{group}"] = Fitted(
            round(half_dim, 2), "Hockney's n½ of the same fit: the dimension at half of r∞"
        )
        return fitted
    fitted[f"efficiency.{group}"] = Fitted(
        1.0, f"{how}, above the peak {peak_per_us / 1e3:.4g} GFLOP/s: capped at the peak"
    )
    fitted[f"gemm_half_dim.{group}"] = Fitted(
        round(_half_dim_at_peak(xs, ys, peak_per_us), 2),
        f"Hockney's n½ with r∞ at the peak: the median over the {len(chosen)} probes of the n½ "
        f"that gives each its measured rate (the line's own, {half_dim:.4g}, went with its r∞)",
    )
    return fitted


def _half_dim_at_peak(xs: list[float], ys: list[float], peak_per_us: float) -> float:
    """Hockney's n½ with r∞ fixed at `peak_per_us`: the median over the samples (``xs`` = 1 / d,
    ``ys`` = time per flop) of ``d · (peak · y - 1)``, each sample's own, and at least 0.

    The median, as `theil_sen` takes, so one disturbed sample cannot move it far: the tag then
    predicts as many probes too fast as too slow.

    >>> _half_dim_at_peak([1 / 16, 1 / 32, 1 / 64], [0.5, 0.5, 0.3125], peak_per_us=4.0)
    16.0
    >>> _half_dim_at_peak([1 / 16, 1 / 32], [0.2, 0.2], peak_per_us=4.0)  # faster than the peak
    0.0
    """
    return max(
        float(median([(peak_per_us * y - 1.0) / x for x, y in zip(xs, ys, strict=True)])), 0.0
    )


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
            fraction(rate_efficiency(rate, peak_per_us)),
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
