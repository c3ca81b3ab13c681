"""Calibration pieces that need no real timing: interleaved timing, the per-class fixed costs,
the plans' step count, and pooling accuracy rounds."""

from __future__ import annotations

import re

import pytest

from hetsim.calibrate.accuracy import Comparison, pool
from hetsim.calibrate.parameters import _fit_gemm_class, fit_fixed_costs
from hetsim.calibrate.plan import PLANS, STREAM_PROBES, TINY_PROBES
from hetsim.calibrate.probe import Sample, time_interleaved
from hetsim.calibrate.run import _jobs, steps
from hetsim.errors import HetsimError
from hetsim.kernels import OP_CLASSES


def test_interleaved_timing_calls_each_in_turn() -> None:
    order: list[str] = []
    calls = [lambda: order.append("a"), lambda: order.append("b")]
    samples = time_interleaved(calls, repeats=2, rounds=3)
    assert [len(s) for s in samples] == [2, 2]
    assert order == ["a", "b"] * (1 + 2 * 3)  # a warm-up round, then 2 samples × 3 rounds


def _tiny(name: str, us: float, op_class: str) -> Sample:
    return Sample(name, "tiny", 1, 4.0, 32.0, (us, 2 * us, us), op_class)


def test_fixed_costs_are_the_cheapest_class_and_each_class_beyond_it() -> None:
    tiny = [
        _tiny("Relu 4", 2.0, "elementwise"),
        _tiny("Add 4", 1.0, "elementwise"),
        _tiny("Sigmoid 4", 6.0, "elementwise"),
        _tiny("Concat 1x2", 2.5, "data_movement"),
        _tiny("MaxPool 1x2", 8.0, "reduction"),
        _tiny("GlobalAveragePool 1x2", 6.0, "reduction"),
    ]
    fitted = fit_fixed_costs(tiny)
    assert fitted["kernel_latency_us"].value == 2.0  # elementwise: median of 2, 1, 6
    values = {c: fitted[f"op_latency_us.{c}"].value for c in OP_CLASSES}
    assert values == {
        "matmul": 0.0,
        "conv": 0.0,
        "elementwise": 0.0,
        "reduction": 5.0,  # median 7 - 2
        "normalization": 0.0,
        "data_movement": 0.5,
        "other": 0.0,
    }
    assert fitted["op_latency_us.conv"].how == "not probed: 0"


def test_fixed_costs_need_a_classified_tiny_sample() -> None:
    with pytest.raises(
        HetsimError,
        match=r"fit_fixed_costs: expected tiny samples of an op class \('matmul', .*\), "
        r"got classes \[''\]",
    ):
        fit_fixed_costs([_tiny("Relu 4", 1.0, "")])


@pytest.mark.parametrize(("plan", "threads"), [("quick", 1), ("full", 1), ("full", 4)])
def test_steps_count_every_probe_the_plan_times(
    plan: str, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 8)  # counting, not measuring: any machine
    chosen = PLANS[plan]
    probes = sum(len(p) for p in chosen.probes.values())
    blas = sum(len(chosen.probes[g]) for g in ("matmul", "conv")) if threads > 1 else 0
    streams = sum(len(p) for p in chosen.streams.values())
    assert len(_jobs(chosen, threads)) == probes + blas + streams
    assert steps(plan, threads) == probes + blas + streams + len(TINY_PROBES) + 1


def test_both_plans_probe_the_matmul_stream() -> None:
    assert len(PLANS["full"].streams["matmul"]) == len(STREAM_PROBES["matmul"]) == 3
    assert len(PLANS["quick"].streams["matmul"]) == 1


def test_pooling_takes_the_median_prediction_and_every_sample() -> None:
    rounds = [
        [Comparison("mlp", 5, 10.0, (9.0, 10.0), {})],
        [Comparison("mlp", 5, 30.0, (12.0,), {})],
        [Comparison("mlp", 5, 12.0, (11.0,), {})],
    ]
    (pooled,) = pool(rounds)
    assert pooled.predicted_us == 12.0
    assert pooled.measured_us == (9.0, 10.0, 12.0, 11.0)
    assert pooled.error_pct == pytest.approx((12.0 - 10.5) / 10.5 * 100)


def test_pooling_matches_rounds_by_model_not_position() -> None:
    # rounds of the same models in another order were zipped by position: mlp's prediction was
    # the median of mlp's and cnn's, and its samples mixed both models'
    first = [Comparison("mlp", 5, 10.0, (9.0,), {}), Comparison("cnn", 12, 100.0, (90.0,), {})]
    second = [Comparison("cnn", 12, 110.0, (95.0,), {}), Comparison("mlp", 5, 12.0, (11.0,), {})]
    pooled = pool([first, second])
    assert [(c.model, c.ops, c.predicted_us, c.measured_us) for c in pooled] == [
        ("mlp", 5, 11.0, (9.0, 11.0)),
        ("cnn", 12, 105.0, (90.0, 95.0)),
    ]


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (
            [Comparison("mlp", 5, 12.0, (11.0,), {}), Comparison("rnn", 7, 1.0, (1.0,), {})],
            "pool: expected rounds[1] to compare the models of rounds[0] (mlp, cnn), got mlp, rnn",
        ),
        (
            [Comparison("mlp", 5, 12.0, (11.0,), {})],
            "pool: expected rounds[1] to compare the models of rounds[0] (mlp, cnn), got mlp",
        ),
        (
            [Comparison("mlp", 5, 12.0, (11.0,), {}), Comparison("mlp", 5, 1.0, (1.0,), {})],
            "pool: expected each model once in rounds[1], got 'mlp' twice",
        ),
    ],
)
def test_pooling_rounds_of_other_models_is_refused(second: list[Comparison], message: str) -> None:
    # a shorter round raised zip()'s ValueError; other models were pooled with the first's
    first = [Comparison("mlp", 5, 10.0, (9.0,), {}), Comparison("cnn", 12, 100.0, (90.0,), {})]
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        pool([first, second])


def _conv_sample(dim: int, flops: float, us: float) -> Sample:
    return Sample(f"Conv d{dim}", "conv", 1, flops, 0.0, (us,), "conv", dim)


def test_conv_rate_is_fitted_as_hockneys_r_infinity_and_n_half() -> None:
    # r∞ = 100 flops/µs, n½ = 20: time = fixed 5 µs + flops · (1 + 20/d) / 100
    samples = [_conv_sample(d, 1e6, 5.0 + 1e6 * (1 + 20 / d) / 100) for d in (16, 32, 64, 196)]
    fitted = _fit_gemm_class(samples, "conv", 1, peak_per_us=200.0, latency_us=5.0)
    assert fitted["efficiency.conv"].value == pytest.approx(0.5)  # 100 of a 200 peak
    assert fitted["gemm_half_dim.conv"].value == pytest.approx(20.0)


def test_a_conv_fit_without_a_spread_of_dims_keeps_a_flat_rate() -> None:
    samples = [_conv_sample(64, 1e6, 5.0 + 1e4), _conv_sample(64, 2e6, 5.0 + 2e4)]
    fitted = _fit_gemm_class(samples, "conv", 1, peak_per_us=200.0, latency_us=5.0)
    assert fitted["efficiency.conv"].value == pytest.approx(0.5)  # the median rate, 100
    assert fitted["gemm_half_dim.conv"].value == 0.0


def test_a_conv_line_above_the_peak_refits_n_half_at_the_peak() -> None:
    # r∞ = 400 flops/µs, n½ = 400 on a 200 peak: the capped efficiency kept the line's n½, and
    # the tag ran every probe at half its measured rate (7.7 flops/µs at d = 16, measured 15.4)
    dims = (16, 32, 64, 128)
    samples = [_conv_sample(d, 1e6, 5.0 + 1e6 * (1 + 400 / d) / 400) for d in dims]
    fitted = _fit_gemm_class(samples, "conv", 1, peak_per_us=200.0, latency_us=5.0)
    assert fitted["efficiency.conv"].value == 1.0
    # each probe's own n½ at the peak, d · (200 · time per flop - 1) = 200 - d / 2: 192, 184,
    # 168, 136; their median
    assert fitted["gemm_half_dim.conv"].value == pytest.approx(176.0)
    for d in dims:
        measured = 400 * d / (d + 400)
        assert 200 * d / (d + 176.0) == pytest.approx(measured, rel=0.15)
    assert fitted["efficiency.conv"].how.endswith(
        "0.4 GFLOP/s, above the peak 0.2 GFLOP/s: capped at the peak"
    )
    assert fitted["gemm_half_dim.conv"].how == (
        "Hockney's n½ with r∞ at the peak: the median over the 4 probes of the n½ that gives "
        "each its measured rate (the line's own, 400, went with its r∞)"
    )


def test_a_conv_line_below_the_peak_keeps_its_own_n_half() -> None:
    # r∞ = 100 of a 200 peak: the line's n½ stands (20), however the probes spread
    samples = [_conv_sample(d, 1e6, 5.0 + 1e6 * (1 + 20 / d) / 100) for d in (16, 196)]
    fitted = _fit_gemm_class(samples, "conv", 1, peak_per_us=200.0, latency_us=5.0)
    assert fitted["gemm_half_dim.conv"].how == (
        "Hockney's n½ of the same fit: the dimension at half of r∞"
    )
