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


def test_flow_arrows_go_from_each_launch_to_the_kernel_it_launched(events: list) -> None:
    flows = [e for e in events if e["ph"] in ("s", "f")]
    assert flows == [
        {"name": "launch", "cat": "launch", "ph": "s", "id": 1, "ts": 2.0, "pid": 1, "tid": 1},
        {"name": "launch", "cat": "launch", "ph": "f", "id": 1, "ts": 5.0, "pid": 2, "tid": 1,
         "bp": "e"},
        {"name": "launch", "cat": "launch", "ph": "s", "id": 2, "ts": 5.75, "pid": 3, "tid": 1},
        {"name": "launch", "cat": "launch", "ph": "f", "id": 2, "ts": 7.25, "pid": 4, "tid": 1,
         "bp": "e"},
    ]  # fmt: skip


def test_flow_without_a_target_draws_no_arrow() -> None:
    spans = (Span("host", "exec", "launch k", "launch", 0.0, 1.0, flow_out=3),)
    trace = chrome_trace(two_level_record(spans=spans, link_bytes={}))
    assert [e for e in trace["traceEvents"] if e["ph"] in ("s", "f")] == []


def test_every_flow_event_lies_strictly_inside_exactly_one_span(events: list) -> None:
    complete = [e for e in events if e["ph"] == "X"]
    for flow in (e for e in events if e["ph"] in ("s", "f")):
        enclosing = [
            e["name"]
            for e in complete
            if (e["pid"], e["tid"]) == (flow["pid"], flow["tid"])
            and e["ts"] < flow["ts"] < e["ts"] + e["dur"]
        ]
        assert len(enclosing) == 1, flow


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
