"""The Chrome trace: processes, threads, complete events, flow arrows, determinism."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hetsim import simulate
from hetsim.errors import SimulationError
from hetsim.report import Result, chrome_trace
from hetsim.report.trace import V1_CLEAR_IDS
from hetsim.sim.records import Span
from tests.report.scenarios import LINK, SPANS, two_level_record

PROCESSES = ["host", "gpu0", "vdevice0/host", "vdevice0/npu", LINK]


@pytest.fixture
def events() -> list[dict[str, Any]]:
    return chrome_trace(two_level_record())["traceEvents"]


def _metadata(events: list[dict[str, Any]], name: str) -> list[tuple[Any, ...]]:
    return [
        (e["pid"], e.get("tid"), e["args"]["name"])
        for e in events
        if e["ph"] == "M" and e["name"] == name
    ]


def test_one_named_process_per_processor_and_link_in_platform_order(events: list) -> None:
    assert _metadata(events, "process_name") == [
        (pid, None, name) for pid, name in enumerate(PROCESSES, start=1)
    ]


def test_one_named_thread_per_stream_in_order_of_first_span(events: list) -> None:
    assert _metadata(events, "thread_name") == [
        (1, 1, "exec"),
        (2, 1, "stream0"),
        (2, 2, "stream1"),
        (3, 1, "exec"),
        (4, 1, "stream0"),
        (5, 1, "link"),
    ]


def test_one_complete_event_per_span_with_name_category_and_args(events: list) -> None:
    complete = [e for e in events if e["ph"] == "X"]
    assert len(complete) == len(SPANS)
    k1 = next(e for e in complete if e["name"] == "k1")
    assert k1 == {
        "name": "k1",
        "cat": "compute",
        "ph": "X",
        "ts": 3.0,
        "dur": 4.0,
        "pid": 2,
        "tid": 1,
        "args": {"flops": 900},
        "bind_id": 1,
        "flow_in": True,
    }
    assert type(k1["args"]["flops"]) is int


def test_complete_events_are_ordered_by_start_then_process_and_thread(events: list) -> None:
    complete = [(e["ts"], e["pid"], e["tid"], e["name"]) for e in events if e["ph"] == "X"]
    assert complete[:5] == [
        (0.0, 1, 1, "alloc a"),
        (1.0, 1, 1, "launch k1"),
        (3.0, 1, 1, "invoke vdevice0"),
        (3.0, 2, 1, "k1"),
        (4.0, 2, 2, "k2"),
    ]
    assert complete == sorted(complete)  # no two spans here share (ts, pid, tid)


def test_spans_starting_together_on_one_stream_keep_the_record_order() -> None:
    first = Span("host", "exec", "free a", "dispatch", 1.0, 1.0)
    second = Span("host", "exec", "alloc b", "dispatch", 1.0, 2.0)
    for spans in ((first, second), (second, first)):
        trace = chrome_trace(two_level_record(spans=spans, link_bytes={}))
        names = [e["name"] for e in trace["traceEvents"] if e["ph"] == "X"]
        assert names == [span.name for span in spans]


def _bound(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(bind_id, name, end) of each complete event bound to a flow: "out" or "in"."""
    return sorted(
        (e["bind_id"], e["name"], "out" if e.get("flow_out") else "in")
        for e in events
        if e["ph"] == "X" and "bind_id" in e
    )


def test_flow_arrows_go_from_each_launch_to_the_kernel_it_launched(events: list) -> None:
    assert _bound(events) == [
        (1, "k1", "in"),
        (1, "launch k1", "out"),
        (2, "launch n1", "out"),
        (2, "n1", "in"),
    ]
    assert [e for e in events if e["ph"] in ("s", "f")] == []


def test_flow_without_a_target_draws_no_arrow() -> None:
    spans = (Span("host", "exec", "launch k", "launch", 0.0, 1.0, flow_out=3),)
    trace = chrome_trace(two_level_record(spans=spans, link_bytes={}))
    assert _bound(trace["traceEvents"]) == []
    assert [e for e in trace["traceEvents"] if e["ph"] in ("s", "f")] == []


def test_a_flow_of_a_zero_length_span_binds_to_that_span_alone() -> None:
    # v1 flow events sat at the span's midpoint: at 1.0 for `launch k` (0 µs), which also
    # ends `alloc a` and starts `alloc b`, so a viewer could draw the arrow from either
    spans = (
        Span("host", "exec", "alloc a", "dispatch", 0.0, 1.0),
        Span("host", "exec", "launch k", "launch", 1.0, 1.0, flow_out=4),
        Span("host", "exec", "alloc b", "dispatch", 1.0, 2.0),
        Span("gpu0", "stream0", "k", "compute", 2.0, 2.0, flow_in=4),
        Span("gpu0", "stream0", "k2", "compute", 2.0, 3.0),
    )
    events = chrome_trace(two_level_record(spans=spans, link_bytes={}))["traceEvents"]
    assert _bound(events) == [(4, "k", "in"), (4, "launch k", "out")]


def test_a_span_that_starts_and_ends_flows_keeps_its_second_as_placed_events() -> None:
    # one bind_id per event: the flow into a span that also starts one is written as v1 at
    # both ends (its source had kept a bind_id too, a v2 flow that never ended), and the v2
    # ids move clear of the ids Perfetto gives v1 flows (a clash joined two arrows)
    spans = (
        Span("host", "exec", "launch n", "launch", 0.0, 1.0, flow_out=1),
        Span("vdevice0/host", "exec", "run n", "launch", 1.0, 3.0, flow_in=1, flow_out=2),
        Span("vdevice0/npu", "stream0", "n", "compute", 3.0, 4.0, flow_in=2),
    )
    events = chrome_trace(two_level_record(spans=spans, link_bytes={}))["traceEvents"]
    assert _bound(events) == [(V1_CLEAR_IDS + 2, "n", "in"), (V1_CLEAR_IDS + 2, "run n", "out")]
    placed = [(e["ph"], e["id"], e["ts"], e["pid"]) for e in events if e["ph"] in ("s", "f")]
    assert placed == [("s", 1, 0.5, 1), ("f", 1, 2.0, 3)]


def test_back_to_back_spans_do_not_overlap_once_read_to_the_nanosecond() -> None:
    # Perfetto rounds ts and dur to ns each on its own (half away from zero): written raw,
    # [0.0006, 0.0012] read as 1 ns + 1 ns, ending at 2 ns where the next span starts at 1 ns
    def ns(value: float) -> int:
        return int(value * 1000 + 0.5)

    spans = (
        Span("host", "exec", "a", "dispatch", 0.0006, 0.0012),
        Span("host", "exec", "b", "dispatch", 0.0012, 0.002),
    )
    events = chrome_trace(two_level_record(spans=spans, link_bytes={}))["traceEvents"]
    a, b = (e for e in events if e["ph"] == "X")
    assert (ns(a["ts"]), ns(a["ts"]) + ns(a["dur"]), ns(b["ts"])) == (1, 1, 1)


def test_trace_file_is_json_with_the_makespan(tmp_path: Path) -> None:
    path = Result.from_record(two_level_record()).to_chrome_trace(tmp_path / "trace.json")
    trace = json.loads(path.read_text())
    assert trace["otherData"] == {"makespan_us": 10.0, "time_unit": "simulated us"}
    assert trace == chrome_trace(two_level_record())


def test_same_run_writes_an_identical_trace(tmp_path: Path) -> None:
    first = Result.from_record(two_level_record()).to_chrome_trace(tmp_path / "a.json")
    second = Result.from_record(two_level_record()).to_chrome_trace(tmp_path / "b.json")
    assert first.read_bytes() == second.read_bytes()


def test_an_untraced_run_has_no_trace_or_timeline_to_write(tmp_path: Path) -> None:
    untraced = simulate("mlp", "x86-h100", mode="timing", trace=False)
    for write, file in ((untraced.to_chrome_trace, "t.json"), (untraced.plot_gantt, "g.png")):
        name = write.__name__
        message = (
            f"{name}: expected a run with spans, got one made with trace=False (it keeps totals "
            "only): simulate again with trace=True"
        )
        with pytest.raises(SimulationError, match=f"^{re.escape(message)}$"):
            write(tmp_path / file)
        assert not (tmp_path / file).exists()


def test_times_read_as_their_nanosecond_by_a_reader_that_truncates(tmp_path: Path) -> None:
    # Perfetto's JSON importer truncates ts * 1000 and dur * 1000: durations were written as
    # differences such as 0.9999999999999991, read a nanosecond short, and 2093.207 read 2093206
    path = tmp_path / "t.json"
    simulate("cnn", "arm-riscv-soc", mode="timing").to_chrome_trace(path)
    events = [e for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X"]
    assert events
    for event in events:
        for key in ("ts", "dur"):
            assert int(event[key] * 1000) == round(event[key] * 1000), (key, event)


def test_back_to_back_spans_do_not_overlap_when_read_truncated() -> None:
    # 2093.207 * 1000 truncates to 2093206: b started a nanosecond inside a (1635956 + 457251)
    def ns(value: float) -> int:
        return int(value * 1000)

    spans = (
        Span("host", "exec", "a", "dispatch", 1635.956, 2093.207),
        Span("host", "exec", "b", "dispatch", 2093.207, 2100.0),
    )
    events = chrome_trace(two_level_record(spans=spans, link_bytes={}))["traceEvents"]
    a, b = (e for e in events if e["ph"] == "X")
    assert (ns(a["ts"]) + ns(a["dur"]), ns(b["ts"])) == (2093207, 2093207)
