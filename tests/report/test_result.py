"""Result.from_record: the breakdown, busy times, link and memory figures, and the JSON form."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import pickle
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.api import simulate
from hetsim.errors import SimulationError
from hetsim.report import BREAKDOWN_KEYS, LinkStats, ProcessorStats, Result, format_summary
from hetsim.sim.records import RunRecord, Span
from tests.report.scenarios import (
    BREAKDOWN,
    BUSY,
    LINK,
    PROCESSOR_BREAKDOWN,
    two_level_record,
)

BREAKDOWN_ZERO = dict.fromkeys(BREAKDOWN_KEYS, 0.0)


@pytest.fixture
def result() -> Result:
    return Result.from_record(two_level_record())


def test_breakdown_sums_span_durations_by_category_over_processors(result: Result) -> None:
    assert dict(result.breakdown_us) == BREAKDOWN
    assert tuple(result.breakdown_us) == BREAKDOWN_KEYS


def test_busy_time_is_the_union_of_a_processors_streams(result: Result) -> None:
    assert {path: s.busy_us for path, s in result.processors.items()} == BUSY


def test_utilization_is_busy_over_makespan(result: Result) -> None:
    assert {p: (s.busy_us, s.utilization) for p, s in result.processors.items()} == {
        "host": (10.0, 1.0),
        "gpu0": (6.0, 0.6),
        "vdevice0/host": (3.5, 0.35),
        "vdevice0/npu": (2.5, 0.25),
    }


def test_each_processor_has_its_own_breakdown_and_they_sum_to_the_runs(result: Result) -> None:
    # the busy time alone did not tell a host waiting in a SYNC from one computing: the host
    # read 100% busy with no compute at all
    by_processor = {p: dict(s.breakdown_us) for p, s in result.processors.items()}
    assert by_processor == PROCESSOR_BREAKDOWN
    for key in BREAKDOWN_KEYS:
        assert sum(b[key] for b in by_processor.values()) == result.breakdown_us[key]
    assert result.to_dict()["processors"]["gpu0"] == {
        "busy_us": 6.0,
        "utilization": 0.6,
        "breakdown_us": PROCESSOR_BREAKDOWN["gpu0"],
    }


def test_idle_is_makespan_minus_busy_summed_over_processors(result: Result) -> None:
    assert result.breakdown_us["idle"] == sum(10.0 - busy for busy in BUSY.values())


def test_breakdown_exceeds_processor_time_by_the_overlap_of_streams(result: Result) -> None:
    # gpu0's stream1 runs k2 (2 us) while stream0 runs k1: counted in compute, not in busy.
    assert sum(result.breakdown_us.values()) == 4 * 10.0 + 2.0


def test_invoke_span_counts_as_launch() -> None:
    spans = (Span("host", "exec", "invoke vdevice0", "invoke", 0.0, 3.0),)
    record = two_level_record(spans=spans, links=(), link_bytes={}, makespan_us=3.0)
    assert Result.from_record(record).breakdown_us["launch"] == 3.0


def test_link_spans_count_per_link_and_not_in_the_breakdown(result: Result) -> None:
    assert dict(result.links) == {LINK: LinkStats(bytes=8000, busy_us=2.0)}
    assert result.breakdown_us["transfer"] == 2.0  # gpu0's copy span only


def test_untraced_run_takes_its_figures_from_the_engines_sums() -> None:
    sums = {
        "host": {"dispatch": 2.0, "launch": 2.0, "invoke": 2.0, "sync_wait": 4.0},
        "gpu0": {"compute": 4.0, "transfer": 2.0},
        LINK: {"transfer": 2.0},
    }
    record = two_level_record(spans=(), processors=("host", "gpu0"), extra={"busy_us": sums})
    result = Result.from_record(record)
    assert dict(result.breakdown_us) == {
        "dispatch": 2.0,
        "launch": 4.0,
        "compute": 4.0,
        "transfer": 2.0,
        "sync_wait": 4.0,
        "capture": 0.0,
        "idle": 4.0,
    }
    assert dict(result.processors) == {
        "host": ProcessorStats(10.0, 1.0, {**BREAKDOWN_ZERO, "dispatch": 2.0, "launch": 4.0,
                                           "sync_wait": 4.0}),
        "gpu0": ProcessorStats(6.0, 0.6, {**BREAKDOWN_ZERO, "compute": 4.0, "transfer": 2.0,
                                          "idle": 4.0}),
    }  # fmt: skip
    assert dict(result.links) == {LINK: LinkStats(bytes=8000, busy_us=2.0)}


def test_empty_run_has_zero_utilization() -> None:
    record = two_level_record(makespan_us=0.0, spans=(), link_bytes={})
    result = Result.from_record(record)
    assert {s.utilization for s in result.processors.values()} == {0.0}
    assert dict(result.breakdown_us) == dict.fromkeys(BREAKDOWN_KEYS, 0.0)
    assert result.links[LINK] == LinkStats(bytes=0, busy_us=0.0)


def test_inputs_outputs_placement_and_peak_memory_come_from_the_record(result: Result) -> None:
    np.testing.assert_array_equal(result.inputs["x"], np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(result.outputs["y"], np.full((2, 2), 0.5))
    assert dict(result.placement) == {"k1": "gpu0", "k2": "gpu0", "n1": "vdevice0/npu"}
    assert dict(result.peak_memory_bytes) == {"host.mem": 4096, "gpu0.mem": 8000}
    assert result.spans == two_level_record().spans


def test_result_cannot_be_changed(result: Result) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.makespan_us = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError, match="does not support item assignment"):
        result.breakdown_us["idle"] = 0.0  # type: ignore[index]


COPIES: dict[str, Callable[[Result], Result]] = {
    "pickle": lambda result: pickle.loads(pickle.dumps(result)),
    "deepcopy": copy.deepcopy,
}


@pytest.mark.parametrize("how", list(COPIES))
def test_a_copied_result_has_the_same_figures_and_works(how: str, tmp_path: Path) -> None:
    # pickling raised "cannot pickle 'mappingproxy' object": a worker could not send one back.
    # Spans get args of their own: a Span's default args, a mapping proxy, does not pickle
    # (the engine's spans never have it)
    spans = tuple(span._replace(args=dict(span.args)) for span in two_level_record().spans)
    result = Result.from_record(two_level_record(spans=spans))
    copied = COPIES[how](result)
    assert type(copied) is Result
    assert copied.to_dict() == result.to_dict()
    assert format_summary(copied) == format_summary(result)
    assert copied.spans == result.spans
    np.testing.assert_array_equal(copied.inputs["x"], result.inputs["x"])
    assert copied.to_chrome_trace(tmp_path / "copied.json").read_text() == (
        result.to_chrome_trace(tmp_path / "result.json").read_text()
    )
    with pytest.raises(TypeError, match="does not support item assignment"):
        copied.breakdown_us["idle"] = 0.0  # type: ignore[index]


def test_a_simulated_result_pickles() -> None:
    result = simulate("mlp", "x86-h100", mode="timing")
    assert pickle.loads(pickle.dumps(result)).to_dict() == result.to_dict()


def test_to_dict_holds_every_figure(result: Result) -> None:
    assert result.to_dict() == {
        "makespan_us": 10.0,
        "breakdown_us": BREAKDOWN,
        "processors": {
            path: {
                "busy_us": busy,
                "utilization": busy / 10.0,
                "breakdown_us": PROCESSOR_BREAKDOWN[path],
            }
            for path, busy in BUSY.items()
        },
        "links": {LINK: {"bytes": 8000, "busy_us": 2.0}},
        "levels": {},  # the record names no levels
        "peak_memory_bytes": {"host.mem": 4096, "gpu0.mem": 8000},
        "placement": {"k1": "gpu0", "k2": "gpu0", "n1": "vdevice0/npu"},
        "inputs": {"x": {"shape": [2, 3], "dtype": "float32"}},
        "outputs": {
            "y": {"shape": [2, 2], "dtype": "float64"},
            "file": {"shape": [3], "dtype": "int64"},
        },
        "extra": {"mode": "functional", "seed": 0},
    }


def test_to_dict_holds_the_figures_of_each_level() -> None:
    # as the run's Levels table shows them; --json had only each level's host and processors
    found = simulate("cnn", "arm-riscv-soc", mode="timing").to_dict()
    processors, links = found["processors"], found["links"]
    assert set(found["levels"]) == {"", "vdevice0"}
    for path, level in found["extra"]["levels"].items():
        figures = found["levels"][path]
        busy = sum(processors[p]["busy_us"] for p in level["processors"])
        assert figures["busy_us"] == pytest.approx(busy, rel=1e-12)
        into = [
            s["bytes"]
            for name, s in links.items()
            if name.split("--")[1][:-4] in level["processors"]
        ]
        assert figures["link_bytes"] == sum(into)
        assert 0 < figures["dispatch_us"] <= processors[level["host"]]["busy_us"]
    assert found["levels"]["vdevice0"]["link_bytes"] > 0 == found["levels"][""]["link_bytes"]


def test_to_dict_round_trips_through_json(result: Result) -> None:
    as_dict = result.to_dict()
    assert json.loads(json.dumps(as_dict, allow_nan=False)) == as_dict


def test_to_dict_holds_no_numpy_types() -> None:
    record = two_level_record(
        makespan_us=np.float64(10.0),
        link_bytes={LINK: np.int64(8000)},
        peak_memory_bytes={"host.mem": np.int64(4096)},
    )

    def types(value: object) -> set[type]:
        if isinstance(value, dict):
            return {dict} | {t for key, item in value.items() for t in types(key) | types(item)}
        if isinstance(value, list):
            return {list} | {t for item in value for t in types(item)}
        return {type(value)}

    assert types(Result.from_record(record).to_dict()) <= {dict, list, str, int, float}


def test_repr_names_makespan_processors_and_links(result: Result) -> None:
    assert repr(result) == "<Result makespan=10 us, 4 processors, 1 links>"


@st.composite
def sequential_runs(draw: st.DrawFn) -> RunRecord:
    """Records whose processors each run one stream of back-to-back or gapped spans."""
    processors = ("host", "gpu0", "gpu1")[: draw(st.integers(1, 3))]
    spans, ends = [], []
    categories = st.sampled_from(("dispatch", "launch", "compute", "sync_wait", "invoke"))
    for path in processors:
        now = 0.0
        for _ in range(draw(st.integers(0, 6))):
            start = now + draw(st.integers(0, 4)) / 4
            now = start + draw(st.integers(0, 8)) / 4
            spans.append(Span(path, "s", "op", draw(categories), start, now))
        ends.append(now)
    return two_level_record(
        makespan_us=max(ends) + draw(st.integers(0, 4)) / 4,
        spans=tuple(spans),
        processors=processors,
        links=(),
        link_bytes={},
    )


@settings(max_examples=60, derandomize=True, deadline=None)
@given(sequential_runs())
def test_breakdown_adds_up_to_processor_time_when_streams_do_not_overlap(
    record: RunRecord,
) -> None:
    # Quarter-microsecond times keep every sum exact in binary floating point.
    result = Result.from_record(record)
    assert sum(result.breakdown_us.values()) == len(record.processors) * record.makespan_us


@pytest.mark.parametrize("makespan", [math.nan, -1.0])
def test_a_makespan_that_is_nan_or_negative_is_refused(makespan: float) -> None:
    # NaN read as an overflow ("an infinite breakdown ... overflows"); -1 gave busy_us -1.0
    message = f"Result.from_record: expected a makespan_us of 0 us or more, got {makespan!r}"
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}$"):
        Result.from_record(two_level_record(makespan_us=makespan))


@pytest.mark.parametrize(("start", "end"), [(math.nan, 1.0), (0.0, math.inf)])
def test_a_span_time_that_is_not_finite_is_named(start: float, end: float) -> None:
    # it read as "an infinite breakdown for compute: a makespan of 10 µs summed over 4
    # processors overflows (a time parameter of the platform near 1e308 µs?)"
    spans = (*two_level_record().spans, Span("gpu0", "stream2", "k", "compute", start, end))
    message = f"expected finite span times, got 'k' on gpu0/stream2 from {start!r} to {end!r} us"
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}$"):
        Result.from_record(two_level_record(spans=spans))
