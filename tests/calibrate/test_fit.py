"""Fitting functions on synthetic samples with known answers."""

from __future__ import annotations

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
