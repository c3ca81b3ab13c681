"""Fitting functions on synthetic samples with known answers."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from hetsim.calibrate.fit import (
    Line,
    fit_line,
    flops_per_cycle,
    median_rate,
    rate_efficiency,
    theil_sen,
)
from hetsim.errors import HetsimError


def test_fit_line_recovers_a_noisy_line() -> None:
    rng = np.random.default_rng(7)
    xs = np.linspace(1, 1000, 50)
    ys = 12.5 + 0.75 * xs + rng.normal(0, 0.01, xs.size)
    line = fit_line(xs.tolist(), ys.tolist())
    assert line.slope == pytest.approx(0.75, abs=1e-4)
    assert line.intercept == pytest.approx(12.5, abs=1e-2)
    assert line.points == 50


def test_fit_line_needs_two_distinct_points() -> None:
    with pytest.raises(
        HetsimError,
        match=r"^fit_line: expected at least two points with distinct x, got \[3\.0, 3\.0\]$",
    ):
        fit_line([3.0, 3.0], [1.0, 2.0])


def test_theil_sen_ignores_one_outlier_that_moves_least_squares() -> None:
    xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    ys = [4.0 + 3.0 * x for x in xs]
    ys[5] = 500.0  # one stalled measurement
    robust = theil_sen(xs, ys)
    assert (robust.intercept, robust.slope) == (4.0, 3.0)
    assert fit_line(xs, ys).slope > 10.0


def test_theil_sen_needs_two_distinct_points() -> None:
    with pytest.raises(
        HetsimError,
        match=r"^theil_sen: expected at least two points with distinct x, got \[1\.0\]$",
    ):
        theil_sen([1.0], [1.0])


def test_median_rate_subtracts_the_overhead() -> None:
    # 1000 flops per µs after a 2 µs overhead, at three sizes
    work = [1e3, 1e4, 1e5]
    us = [2.0 + w / 1000.0 for w in work]
    assert median_rate(work, us, overhead_us=2.0) == pytest.approx(1000.0)


def test_median_rate_skips_samples_within_the_overhead() -> None:
    assert median_rate([10.0, 100.0], [0.5, 3.0], overhead_us=1.0) == pytest.approx(50.0)


def test_median_rate_needs_a_sample_above_the_overhead() -> None:
    with pytest.raises(
        HetsimError,
        match=r"^median_rate: expected a sample above the 2\.0 us overhead, got \[1\.0\]$",
    ):
        median_rate([5.0], [1.0], overhead_us=2.0)


@pytest.mark.parametrize(
    ("rate", "peak", "expected"), [(50.0, 200.0, 0.25), (200.0, 200.0, 1.0), (400.0, 200.0, 1.0)]
)
def test_rate_efficiency_is_a_capped_fraction(rate: float, peak: float, expected: float) -> None:
    assert rate_efficiency(rate, peak) == expected


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["sse2", "avx", "avx2", "fma", "avx512f"], 64.0),
        (["sse2", "avx", "avx2", "fma"], 32.0),
        (["sse2", "avx"], 16.0),
        (["fp", "asimd"], 16.0),
        (["sse2"], 8.0),
    ],
)
def test_flops_per_cycle_follows_the_widest_fma(flags: list[str], expected: float) -> None:
    assert flops_per_cycle(flags) == expected


def test_line_evaluates() -> None:
    assert Line(1.0, 2.0, 2)(3.0) == 7.0


LENGTH = "expected xs and ys of one length, got 3 and 2"
OVERHEAD = "median_rate: expected overhead_us a finite number"
NUMBERS = "expected xs a sequence of numbers"


@pytest.mark.parametrize(
    ("fit", "message"),
    [
        (lambda: fit_line([1, 2, 3], [1, 2]), f"fit_line: {LENGTH}"),
        (lambda: theil_sen([1, 2, 3], [1, 2]), f"theil_sen: {LENGTH}"),
        (lambda: median_rate([1.0], [2.0, 3.0], 0.0),
         "median_rate: expected work and us of one length, got 1 and 2"),
        (lambda: fit_line([1, 2, np.nan], [1, 2, 3]),
         "fit_line: expected xs of finite numbers, got [1.0, 2.0, nan]"),
        (lambda: theil_sen([1, 2], [1, np.inf]),
         "theil_sen: expected ys of finite numbers, got [1.0, inf]"),
        (lambda: median_rate([1.0], [np.nan], 0.0),
         "median_rate: expected us of finite numbers, got [nan]"),
        (lambda: median_rate([1.0], [2.0], np.nan), f"{OVERHEAD}, got float nan"),
        (lambda: median_rate([1.0], [2.0], None), f"{OVERHEAD}, got None"),
        (lambda: fit_line("12", [1, 2]), f"fit_line: {NUMBERS}, got str '12'"),
        (lambda: fit_line([1, 2], [True, False]),
         "fit_line: expected ys a sequence of numbers, got list [True, False]"),
        (lambda: theil_sen([[1, 2], [3]], [1, 2]),
         f"theil_sen: {NUMBERS}, got list [[1, 2], [3]]"),
    ],
)  # fmt: skip
def test_bad_samples_are_named(fit: Callable[[], object], message: str) -> None:
    # IndexError, TypeError and zip()'s ValueError for different lengths; NaN had numpy's LAPACK
    # print "On entry to DLASCL parameter number 4 had an illegal value" and raise LinAlgError
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        fit()
