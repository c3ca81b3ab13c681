"""Fitting: the arithmetic that turns timed samples into the parameters of a CPU target.

Owns the arithmetic that turns measurements into parameter values: straight-line fits of time
against work (the slope is a rate, the intercept a fixed cost), and the peak FP32 throughput a
CPU's instruction set allows. Every function here is pure, so it is tested on synthetic samples
with known answers; measuring is `hetsim.calibrate.run`, and which samples give which parameter
`hetsim.calibrate.parameters`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from numbers import Real

import numpy as np

from hetsim.errors import HetsimError
from hetsim.ir.nodes import shown

__all__ = [
    "Line",
    "fit_line",
    "flops_per_cycle",
    "median_rate",
    "rate_efficiency",
    "theil_sen",
]

# FP32 flops per core per cycle by the widest vector FMA the CPU flags announce: two FMA ports
# × lanes × 2 (an FMA counts two flops). The first flag present wins.
FLOPS_PER_CYCLE_BY_FLAG: tuple[tuple[str, float], ...] = (
    ("avx512f", 64.0),  # 2 ports × 16 lanes × 2
    ("fma", 32.0),  # AVX2 + FMA3: 2 ports × 8 lanes × 2
    ("avx", 16.0),  # AVX without FMA: 8-lane add + 8-lane mul
    ("asimd", 16.0),  # ARMv8 NEON: 2 pipes × 4 lanes × 2 (Cortex-A7x class)
)
BASELINE_FLOPS_PER_CYCLE = 8.0
"""A CPU announcing none of the flags above: SSE (4 lanes, add + mul)."""


@dataclass(frozen=True, slots=True)
class Line:
    """``y = intercept + slope · x``, fitted by least squares over `points` samples."""

    intercept: float
    slope: float
    points: int

    def __call__(self, x: float) -> float:
        """The fitted value at `x`."""
        return self.intercept + self.slope * x

    def __repr__(self) -> str:
        return f"<Line {self.intercept:.4g} + {self.slope:.4g}·x over {self.points} points>"


def _samples(where: str, **named: Sequence[float]) -> list[np.ndarray]:
    """Each of `named` as an array of floats, checked: a sequence of numbers (not bools, not
    str), all of one length, every one finite (NaN had numpy's LAPACK fail, printing to stderr).

    >>> _samples("f", xs=[1, 2.5], ys=[3.0, 4.0])
    [array([1. , 2.5]), array([3., 4.])]
    >>> _samples("f", xs=[1.0, 2.0], ys=[3.0])
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: f: expected xs and ys of one length, got 2 and 1
    """
    arrays = []
    for name, values in named.items():
        message = f"{where}: expected {name} a sequence of numbers, got {shown(values)}"
        try:
            array = np.asarray(values)
        except ValueError as err:  # a ragged list
            raise HetsimError(message) from err
        if array.ndim != 1 or array.dtype.kind not in "iuf":  # not bools, str or objects
            raise HetsimError(message)
        arrays.append(array.astype(float))
    lengths = [len(array) for array in arrays]
    if len(set(lengths)) > 1:
        raise HetsimError(
            f"{where}: expected {' and '.join(named)} of one length, got "
            + " and ".join(map(str, lengths))
        )
    for name, array in zip(named, arrays, strict=True):
        if not np.isfinite(array).all():
            got = list(map(float, array))
            raise HetsimError(f"{where}: expected {name} of finite numbers, got {got}")
    return arrays


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> Line:
    """Least-squares straight line through ``(xs[i], ys[i])``.

    Raises
    ------
    HetsimError
        `xs` or `ys` not a sequence of finite numbers, the two of different lengths, fewer than
        two points, or every x the same (no slope to fit).

    Examples
    --------
    >>> line = fit_line([1.0, 2.0, 3.0], [5.0, 7.0, 9.0])
    >>> round(line.intercept, 6), round(line.slope, 6), round(line(10.0), 6)
    (3.0, 2.0, 23.0)
    >>> fit_line([1.0], [2.0])
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: fit_line: expected at least two points with distinct x, got [1.0]
    """
    x, y = _samples("fit_line", xs=xs, ys=ys)
    if len(x) < 2 or np.ptp(x) == 0:
        raise HetsimError(
            f"fit_line: expected at least two points with distinct x, got {list(map(float, x))}"
        )
    slope, intercept = np.polyfit(x, y, 1)
    return Line(float(intercept), float(slope), len(x))


def theil_sen(xs: Sequence[float], ys: Sequence[float]) -> Line:
    """A robust straight line: the median of pairwise slopes, then the median intercept.

    One disturbed sample (a busy machine stalls one measurement) cannot move it far, where it
    drags a least-squares line (`fit_line`).

    Raises
    ------
    HetsimError
        `xs` or `ys` not a sequence of finite numbers, the two of different lengths, fewer than
        two points, or every x the same.

    Examples
    --------
    >>> line = theil_sen([1.0, 2.0, 3.0, 4.0, 5.0], [3.0, 5.0, 7.0, 9.0, 90.0])  # 1 + 2x, 1 outlier
    >>> line.intercept, line.slope
    (1.0, 2.0)
    """
    x, y = _samples("theil_sen", xs=xs, ys=ys)
    i, j = np.triu_indices(len(x), k=1)
    distinct = x[j] != x[i]
    if not distinct.any():
        raise HetsimError(
            f"theil_sen: expected at least two points with distinct x, got {list(map(float, x))}"
        )
    slope = float(np.median((y[j] - y[i])[distinct] / (x[j] - x[i])[distinct]))
    return Line(float(np.median(y - slope * x)), slope, len(x))


def rate_efficiency(rate_per_us: float, peak_per_us: float) -> float:
    """The fraction of `peak_per_us` that a sustained `rate_per_us` is, capped at 1.

    >>> rate_efficiency(100.0, peak_per_us=200.0), rate_efficiency(300.0, peak_per_us=200.0)
    (0.5, 1.0)
    """
    return float(min(1.0, rate_per_us / peak_per_us))


def median_rate(work: Sequence[float], us: Sequence[float], overhead_us: float) -> float:
    """The median over samples of ``work / (us - overhead_us)``: a sustained rate per µs.

    Each sample is one size; the median keeps one disturbed sample (a busy machine) from moving
    the answer, which a least-squares slope does not. Samples not above the overhead are skipped.

    Raises
    ------
    HetsimError
        `work` or `us` not a sequence of finite numbers, the two of different lengths,
        `overhead_us` not a finite number, or no sample takes longer than `overhead_us`.

    Examples
    --------
    >>> median_rate([100.0, 200.0, 400.0], [2.0, 3.0, 50.0], overhead_us=1.0)  # 100, 100, 8.2
    100.0
    >>> median_rate([100.0], [0.5], overhead_us=1.0)
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: median_rate: expected a sample above the 1.0 us overhead, got [0.5]
    """
    is_number = isinstance(overhead_us, Real) and not isinstance(overhead_us, bool)
    if not (is_number and math.isfinite(overhead_us)):
        got = shown(overhead_us)
        raise HetsimError(f"median_rate: expected overhead_us a finite number, got {got}")
    works, times = _samples("median_rate", work=work, us=us)
    rates = [w / (t - overhead_us) for w, t in zip(works, times, strict=True) if t > overhead_us]
    if not rates:
        raise HetsimError(
            f"median_rate: expected a sample above the {overhead_us} us overhead, got {list(us)}"
        )
    return float(np.median(rates))


def flops_per_cycle(flags: Iterable[str]) -> float:
    """FP32 flops per core per cycle that a CPU with `flags` (``/proc/cpuinfo``) can reach.

    >>> flops_per_cycle(["sse2", "avx", "fma", "avx2"]), flops_per_cycle(["sse2"])
    (32.0, 8.0)
    """
    present = set(flags)
    for flag, value in FLOPS_PER_CYCLE_BY_FLAG:
        if flag in present:
            return value
    return BASELINE_FLOPS_PER_CYCLE
