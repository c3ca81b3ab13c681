"""Chrome Trace Event JSON for a run, the format Perfetto and chrome://tracing open.

Owns the trace layout: one process per processor or link (``pid`` in platform order, from 1),
named by ``process_name`` metadata; one thread per stream (``tid`` from 1 within its process, in
the order of the stream's first span), named by ``thread_name`` metadata; one complete event
(``ph: "X"``, ``ts`` and ``dur`` in µs, which is also the simulated unit) per span, with the span's
name, its category as ``cat`` and its args; and a flow arrow per flow id that has both ends, bound
to the two complete events themselves (the format's flow v2: ``bind_id`` with ``flow_out: true``
on the launching span's event, ``flow_in: true`` on the launched one's).

A flow event placed by time (``ph: "s"``/``"f"``, v1) binds to whatever slice encloses it: on a
span of 0 µs (a dispatch cost of 0), it touched the neighbours ending and starting there too, and
a viewer drew the arrow to one of them. v1 events remain only for a flow into a span that
also starts one, which one ``bind_id`` cannot hold (the engine makes none: a flow runs from a
host's dispatch to a stream's work); such a flow is v1 at both ends, and the trace's ``bind_id``s
then start at `V1_CLEAR_IDS`.

Times are written to the nanosecond, each span's end rounded as its start is (``dur = round(end)
- round(start)`` in ns), each as a float that reads back as its nanosecond whether the reader
rounds it or truncates it (`as_read_ns`): Perfetto converts ``ts`` and ``dur`` to ns each on its
own (truncated by its JSON importer), which could make a span overlap its neighbour by 1 ns.
The event order depends on the record alone, so the same run always writes the same file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hetsim.report.arguments import check_record, output_path
from hetsim.report.lanes import check_traced, lanes
from hetsim.report.plain import to_plain
from hetsim.sim.collector import paused
from hetsim.sim.records import RunRecord, Span

__all__ = ["chrome_trace", "write_chrome_trace"]

FLOW_NAME = "launch"
"""Name and category of every flow arrow (Perfetto pairs ``s`` and ``f`` by name, cat and id)."""


def _metadata(
    resource_streams: dict[str, tuple[str, ...]],
) -> tuple[list[dict[str, Any]], dict[tuple[str, str], tuple[int, int]]]:
    events: list[dict[str, Any]] = []
    ids: dict[tuple[str, str], tuple[int, int]] = {}
    for pid, (resource, streams) in enumerate(resource_streams.items(), start=1):
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": resource}})
        events.append(
            {"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}}
        )
        for tid, stream in enumerate(streams, start=1):
            ids[resource, stream] = (pid, tid)
            events.append(
                {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": stream}}
            )
            events.append(
                {
                    "name": "thread_sort_index",
                    "ph": "M",
                    "pid": pid,
                    "tid": tid,
                    "args": {"sort_index": tid},
                }
            )
    return events, ids


def as_read_ns(ns: int) -> float:
    """`ns` nanoseconds as the µs a trace writes: the float nearest ``ns / 1000``, or the next
    one up where that one times 1000 falls short of `ns`, so that a reader that truncates
    (Perfetto's JSON importer: ``int64(v * 1000)``) reads `ns`, as one that rounds does
    (2093.207 read as 2093206 ns: a span from 1635.956 lasting 457.251 µs ended inside the one
    that started there; and a duration written as a difference of two rounded times,
    0.9999999999999991, read 1 ns short).

    >>> int(2093.207 * 1000), as_read_ns(2093207), int(as_read_ns(2093207) * 1000)
    (2093206, 2093.2070000000003, 2093207)
    >>> as_read_ns(1500)
    1.5
    """
    us = ns / 1000
    while int(us * 1000) < ns:
        us = math.nextafter(us, math.inf)
    return us


V1_CLEAR_IDS = 1 << 32
"""Added to every ``bind_id`` of a trace that also holds v1 flow events: Perfetto numbers v1
flows from its own counter, in the ids v2 ``bind_id``s name, and a clash joined two arrows."""


Placed = list[tuple[int, Span, Span]]
"""Flows written as v1 events: id, source span, target span."""


def _flows(spans: tuple[Span, ...]) -> tuple[dict[int, dict[str, Any]], Placed]:
    """Span index -> the flow v2 fields of its complete event, and the flows (both ends
    present) whose target also starts a flow, so holds that one's ``bind_id``: those are
    written as v1 events at both ends."""
    sources = {s.flow_out: i for i, s in enumerate(spans) if s.flow_out is not None}
    targets = {s.flow_in: i for i, s in enumerate(spans) if s.flow_in is not None}
    paired = sorted(sources.keys() & targets.keys())
    starts = {sources[flow_id] for flow_id in paired}
    placed = {flow_id for flow_id in paired if targets[flow_id] in starts}
    base = V1_CLEAR_IDS if placed else 0
    fields: dict[int, dict[str, Any]] = {}
    for flow_id in paired:
        if flow_id not in placed:
            fields[sources[flow_id]] = {"bind_id": base + flow_id, "flow_out": True}
            fields[targets[flow_id]] = {"bind_id": base + flow_id, "flow_in": True}
    ends = [(f, spans[sources[f]], spans[targets[f]]) for f in paired if f in placed]
    return fields, ends


def _placed_flow_events(
    ids: dict[tuple[str, str], tuple[int, int]], placed: Placed
) -> list[dict[str, Any]]:
    """v1 flow events (``s`` and ``f``, at the midpoints of their spans) of the flows `placed`."""
    events = []
    for flow_id, source, target in placed:
        for phase, span in (("s", source), ("f", target)):
            pid, tid = ids[span.resource, span.stream]
            event = {"name": FLOW_NAME, "cat": FLOW_NAME, "ph": phase, "id": flow_id}
            event |= {"ts": (span.start_us + span.end_us) / 2, "pid": pid, "tid": tid}
            if phase == "f":
                event["bp"] = "e"
            events.append(event)
    return events


def chrome_trace(record: RunRecord) -> dict[str, Any]:
    """The Chrome Trace Event object of `record` (see the module docstring for the layout).

    Events whose spans share an args mapping share its plain copy: read the object, or write it
    out (`write_chrome_trace`), rather than edit one event's args in place.

    Raises
    ------
    HetsimError
        `record` is neither a `RunRecord` nor a `Result` (`hetsim.report.arguments`).
    SimulationError
        The run kept no spans (``simulate(..., trace=False)``).

    Examples
    --------
    >>> record = RunRecord(
    ...     makespan_us=4.0,
    ...     spans=(Span("host", "exec", "launch k", "launch", 0.0, 1.0, flow_out=7),
    ...            Span("gpu0", "stream0", "k", "compute", 1.0, 4.0, flow_in=7)),
    ...     processors=("host", "gpu0"), links=(), link_bytes={}, peak_memory_bytes={},
    ...     placement={}, inputs={}, outputs={})
    >>> events = chrome_trace(record)["traceEvents"]
    >>> [(e["pid"], e["tid"], e["name"], e["bind_id"]) for e in events if e["ph"] == "X"]
    [(1, 1, 'launch k', 7), (2, 1, 'k', 7)]
    >>> [(e.get("flow_out"), e.get("flow_in")) for e in events if e["ph"] == "X"]
    [(True, None), (None, True)]
    """
    record = check_record(record, "chrome_trace")
    check_traced(record, "chrome_trace")
    resource_streams = lanes(record)
    events, ids = _metadata(resource_streams)
    spans = tuple(record.spans)  # indexed below: a tuple's items, not a sequence's method
    order = sorted(
        range(len(spans)),
        key=lambda i: (spans[i].start_us, *ids[_lane(spans[i])], i),
    )
    # A run shares one args mapping among the spans of one op signature or allocation size:
    # each is made plain once (to_plain was 60% of a 5e5-span trace), and its events share it.
    plain: dict[int, Any] = {}
    flows, placed = _flows(spans)
    for i in order:
        span = spans[i]
        pid, tid = ids[_lane(span)]
        args = plain.get(id(span.args))
        if args is None:
            args = plain[id(span.args)] = to_plain(span.args)
        start = round(span.start_us * 1000)  # in ns: the end rounded as the start is
        event = {
            "name": span.name,
            "cat": span.category,
            "ph": "X",
            "ts": as_read_ns(start),
            "dur": as_read_ns(round(span.end_us * 1000) - start),
            "pid": pid,
            "tid": tid,
            "args": args,
        }
        flow = flows.get(i)
        if flow is not None:
            event |= flow
        events.append(event)
    events += _placed_flow_events(ids, placed)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {"makespan_us": record.makespan_us, "time_unit": "simulated us"},
    }


def _lane(span: Span) -> tuple[str, str]:
    return span.resource, span.stream


def write_chrome_trace(record: RunRecord, path: str | Path) -> Path:
    """Write `chrome_trace(record)` as JSON to `path` and return the path.

    The collector is paused meanwhile (`hetsim.sim.collector`): a 1e5-op chain's trace is 5e5
    event dicts, which took 2.5-3.2 s to make and dump with it on and 2.0 off.

    Raises
    ------
    HetsimError
        `record` is neither a `RunRecord` nor a `Result`, or `path` is not a file it can write:
        not a path, a suffix other than ``.json``, a directory, a missing directory
        (`hetsim.report.arguments.output_path`; checked before the trace is built).
    SimulationError
        The run kept no spans (``simulate(..., trace=False)``).
    OSError
        Writing failed anyway (a read-only folder, a full disk).
    """
    record = check_record(record, "write_chrome_trace")
    check_traced(record, "write_chrome_trace")
    out = output_path(path, "write_chrome_trace", ".json")
    with paused():
        out.write_text(json.dumps(chrome_trace(record), separators=(",", ":")) + "\n")
    return out
