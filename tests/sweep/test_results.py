"""Ranking records: the metrics a result holds, and the number a metric names in a record."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pytest

from hetsim.api import simulate
from hetsim.errors import SweepError
from hetsim.report import Result
from hetsim.sweep import METRICS, best_points, metric_value, no_effect
from hetsim.sweep.results import metric_problem


def _result() -> Result:
    return simulate("mlp", "arm-riscv-soc", mode="timing", trace=False)


def test_metrics_are_the_numbers_of_a_result() -> None:
    assert METRICS == (
        "makespan_us",
        "breakdown_us.<category>",
        "processors.<path>.busy_us",
        "processors.<path>.utilization",
        "processors.<path>.breakdown_us.<category>",
        "links.<link>.bytes",
        "links.<link>.busy_us",
        "peak_memory_bytes.<memory>",
    )


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("makespan_us", lambda r: r.makespan_us),
        ("breakdown_us.sync_wait", lambda r: r.breakdown_us["sync_wait"]),
        ("processors.vdevice0/npu.utilization", lambda r: r.processors["vdevice0/npu"].utilization),
        (  # a processor's own breakdown, which to_dict holds since it has one
            "processors.vdevice0/npu.breakdown_us.idle",
            lambda r: r.processors["vdevice0/npu"].breakdown_us["idle"],
        ),
        (
            "links.host.mem--vdevice0/host.mem.bytes",
            lambda r: r.links["host.mem--vdevice0/host.mem"].bytes,
        ),
        ("peak_memory_bytes.vdevice0/npu.mem", lambda r: r.peak_memory_bytes["vdevice0/npu.mem"]),
    ],
)
def test_metric_value_reads_names_that_hold_dots(
    metric: str, expected: Callable[[Result], float]
) -> None:
    result = _result()
    record = {"status": "ok", "result": result.to_dict()}
    assert metric_value(record, metric) == float(expected(result))
    assert metric_problem(metric) is None


def test_a_failed_point_has_no_value() -> None:
    assert math.isnan(metric_value({"status": "failed", "result": None}, "breakdown_us.idle"))


def test_a_name_the_result_lacks_lists_the_names_it_has() -> None:
    message = (
        "metric processors.vdevice0/nup.busy_us: expected a name in the result's processors "
        "('host', 'vdevice0/host', 'vdevice0/npu'), got 'vdevice0/nup' "
        "(did you mean 'vdevice0/npu'?)"
    )
    with pytest.raises(SweepError, match="^" + re.escape(message) + "$"):
        metric_value(
            {"status": "ok", "result": _result().to_dict()}, "processors.vdevice0/nup.busy_us"
        )


def test_a_metric_that_is_not_a_number_is_refused_even_for_a_failed_point() -> None:
    with pytest.raises(
        SweepError, match=r"^metric: expected a number of the result: .*got 'processors'$"
    ):
        metric_value({"status": "failed", "result": None}, "processors")


@pytest.mark.parametrize(
    ("value", "got"),
    [
        (math.nan, "nan"),  # ranked as a failed point, silently
        (-math.inf, "-inf"),  # won
        (math.inf, "inf"),
        ("fast", "'fast'"),  # ValueError from float()
        (None, "None"),  # TypeError from float()
        (True, "True"),  # ranked as 1.0
        (10**400, "a 401-digit integer"),  # OverflowError from float()
        (-5.0, "-5.0"),  # a negative time, which no run gives, won
    ],
    ids=["nan", "-inf", "inf", "str", "None", "bool", "huge-int", "negative"],
)
def test_a_metric_value_that_is_not_a_finite_number_names_the_point(
    value: object, got: str
) -> None:
    record = {"index": 3, "status": "ok", "result": {"makespan_us": value}}
    message = f"metric makespan_us of point 3: expected a finite number >= 0, got {got}"
    with pytest.raises(SweepError, match="^" + re.escape(message) + "$"):
        metric_value(record)


def test_a_nan_never_wins_silently() -> None:
    runs = [
        {"index": i, "status": "ok", "params": {"model": "mlp"}, "result": {"makespan_us": t}}
        for i, t in enumerate([2.0, math.nan])
    ]
    with pytest.raises(SweepError, match=r"^metric makespan_us of point 1: .* got nan$"):
        best_points(runs)


def test_a_metric_name_some_points_lack_names_the_point() -> None:
    # the message listed names the other points have, without saying which point lacked one
    result = _result().to_dict()
    lacking = {**result, "links": {}}
    runs = [
        {"index": i, "status": "ok", "params": {"model": "mlp"}, "result": r}
        for i, r in enumerate([result, lacking])
    ]
    metric = "links.host.mem--vdevice0/host.mem.bytes"
    message = (
        f"metric {metric} of point 1: expected a name in the result's links (), "
        "got 'host.mem--vdevice0/host.mem'"
    )
    with pytest.raises(SweepError, match="^" + re.escape(message) + "$"):
        best_points(runs, metric)


def _point(index: int, status: str = "ok", **params: object) -> dict[str, object]:
    result = {"makespan_us": float(params.get("bw", 1))} if status == "ok" else None
    return {"index": index, "status": status, "params": {"model": "mlp", **params},
            "result": result}  # fmt: skip


def test_no_effect_compares_points_that_differ_in_one_name_alone() -> None:
    grid = [_point(i, lat=lat, bw=bw) for i, (lat, bw) in enumerate([(1, 2), (2, 2), (1, 4)])]
    assert no_effect(grid, ["lat", "bw"]) == ["lat"]  # bw 4 has one latency: nothing to compare
    zipped = [_point(0, lat=1, bw=2), _point(1, lat=2, bw=4)]  # a list sweep: each differs in both
    assert no_effect(zipped, ["lat", "bw"]) == []
    failed = [_point(0, lat=1, bw=2), _point(1, "failed", lat=2, bw=2)]
    assert no_effect(failed, ["lat"]) == []  # a failed point is no result to compare
    changed = [*grid, {**_point(3, lat=2, bw=4), "result": {"makespan_us": 5.0}}]
    assert no_effect(changed, ["lat"]) == []


def test_best_points_takes_the_lowest_index_of_values_equal_but_for_rounding() -> None:
    # values an ulp apart, as the same spans summed in another order give (cnn's compute on
    # arm-riscv-soc as dispatch_us varies); the later point, an ulp lower, had been the best
    runs = [
        {"index": i, "status": "ok", "params": {"model": "cnn"}, "result": {"makespan_us": t}}
        for i, t in enumerate([32.826875, 32.826874999999996, 40.0])
    ]
    assert best_points(runs)["cnn"]["index"] == 0
    assert (
        best_points([*runs, {**runs[2], "index": 3, "result": {"makespan_us": 32.0}}])["cnn"][
            "index"
        ]
        == 3
    )


def test_no_effect_takes_results_equal_but_for_rounding_as_equal() -> None:
    first = _point(0, lat=1)
    rounded = {**_point(1, lat=2), "result": {"makespan_us": 1.0 + 2**-52}}
    assert no_effect([first, rounded], ["lat"]) == ["lat"]
    apart = {**_point(1, lat=2), "result": {"makespan_us": 1.0 + 1e-6}}
    assert no_effect([first, apart], ["lat"]) == []
