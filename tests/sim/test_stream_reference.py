"""The engine's streams against an independent reference: random programs, times worked out by
a forward pass over the program.

A program is a random sequence of LAUNCH and COPY on two device streams (each item makes one
new tensor and may wait for tensors made earlier on any stream) and SYNCs, then a SYNC of each
stream and RET. Each copy has a link of its own, so no two transfers contend, and every time
follows from the rules of docs/runtime.md in program order: the host pays each instruction's
own time (LAUNCH and COPY also their launch time) and queues the item at the end of it; an item
starts at ``max(queued time, end of the previous item on its stream, ready time of each tensor
it waits for)`` and runs for its duration; a SYNC waits until everything queued on its stream has
ended, then pays ``sync_us``. The engine gets there differently: kernels scheduled when their
stream reaches them, copies as SimPy processes, items queued behind a copy, kernels blocked on a
tensor a copy has not made yet, drain events.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.sim.engine import Simulation
from hetsim.sim.records import RunRecord
from hetsim.sim.steps import CopyStep, Hop, LaunchStep, RetStep, SyncStep, no_run

DISPATCH_US, LAUNCH_US, SYNC_US = 1.0, 5.0, 2.0
STREAMS = ("gpu0", "gpu1")


@st.composite
def programs(draw: st.DrawFn) -> list[tuple]:
    """``("launch" | "copy", stream, duration, waits)`` and ``("sync", stream)`` items; item i of
    the first two kinds makes tensor number (its index among them)."""
    items: list[tuple] = []
    made = 0
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(("launch", "launch", "copy", "sync")))
        stream = draw(st.sampled_from(STREAMS))
        if kind == "sync":
            items.append(("sync", stream))
            continue
        duration = float(draw(st.integers(1, 30)))
        waits = draw(st.lists(st.integers(0, made - 1), max_size=2, unique=True)) if made else []
        items.append((kind, stream, duration, tuple(waits)))
        made += 1
    return items


def reference(items: list[tuple]) -> tuple[list[tuple[str, float, float]], float]:
    """Each item's (stream, start, end) in program order, and the makespan."""
    t = 0.0
    tail = dict.fromkeys(STREAMS, 0.0)
    ready: list[float] = []
    spans = []
    for item in [*items, *(("sync", s) for s in STREAMS)]:
        if item[0] == "sync":
            t = max(t + DISPATCH_US, tail[item[1]]) + SYNC_US
            continue
        _, stream, duration, waits = item
        t += DISPATCH_US + LAUNCH_US
        start = max(t, tail[stream], *(ready[w] for w in waits))
        tail[stream] = start + duration
        ready.append(start + duration)
        spans.append((stream, start, start + duration))
    return spans, t + DISPATCH_US


def simulate(items: list[tuple]) -> RunRecord:
    made = sum(1 for item in items if item[0] != "sync")
    links = [f"link{i}" for i in range(made)]
    sim = Simulation("host", STREAMS, {"host.mem": 1 << 20}, links)
    code: list = []
    number = 0
    for item in [*items, *(("sync", s) for s in STREAMS)]:
        if item[0] == "sync":
            code.append(SyncStep(f"sync {item[1]}", DISPATCH_US, item[1], SYNC_US, {}))
            continue
        kind, stream, duration, waits = item
        name, produces = f"t{number}", (number,)
        if kind == "launch":
            code.append(
                LaunchStep(
                    f"launch {name}",
                    DISPATCH_US,
                    name,
                    LAUNCH_US,
                    stream,
                    duration,
                    waits,
                    produces,
                    no_run,
                    {},
                )
            )
        else:
            hops = (Hop(links[number], duration),)
            code.append(
                CopyStep(
                    f"copy {name}",
                    DISPATCH_US,
                    name,
                    LAUNCH_US,
                    stream,
                    hops,
                    8,
                    waits,
                    produces,
                    no_run,
                    {},
                )
            )
        number += 1
    code.append(RetStep("ret", DISPATCH_US, {}, {}))
    return sim.run(code, [f"t{i}" for i in range(made)])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(programs())
def test_streams_match_the_reference_timeline(items: list[tuple]) -> None:
    record = simulate(items)
    # a kernel's span is named after its tensor here ("t3"), a copy's after the copy ("copy t3")
    by_tensor = {
        s.name.split()[-1]: (s.resource, s.start_us, s.end_us)
        for s in record.spans
        if s.stream == "stream0"
    }
    expected, makespan = reference(items)
    assert [by_tensor[f"t{i}"] for i in range(len(expected))] == expected
    assert record.makespan_us == makespan
