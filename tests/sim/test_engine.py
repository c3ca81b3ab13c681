"""The engine primitives on hand-written steps: host clock, streams, links, memories, deadlocks.

Every expected time below is worked out by hand from the rules in the module docstring of
`hetsim.sim.engine` (and docs/runtime.md): a host instruction takes its ``cost_us``; a launch adds
``launch_us`` and queues the kernel at the end of it; a stream item starts at
``max(queued time, previous end, inputs ready)``; a copy holds each link in turn, FIFO.
"""

from __future__ import annotations

import numpy as np
import pytest

from hetsim.errors import SimulationError
from hetsim.sim.engine import Simulation
from hetsim.sim.records import RunRecord
from hetsim.sim.steps import (
    STAGE_OP,
    AllocStep,
    BranchStep,
    CallStep,
    CopyStep,
    FreeStep,
    Hop,
    LaunchStep,
    RetStep,
    SyncStep,
    no_run,
)

MIB = 1024**2


def make_sim(trace: bool = True) -> Simulation:
    return Simulation(
        "host",
        ["gpu0", "gpu1"],
        {"host.mem": 100 * MIB, "gpu0.mem": 10 * MIB, "gpu1.mem": 10 * MIB},
        ["host.mem--gpu0.mem", "host.mem--gpu1.mem"],
        trace=trace,
    )


def alloc(tensor: str, memory: str, size: int, op: str = "op") -> AllocStep:
    proc = memory.removesuffix(".mem")
    return AllocStep(f"alloc {tensor}", 1.0, memory, size, tensor, proc, op, {})


def free(tensor: str, memory: str, size: int, slot: int) -> FreeStep:
    return FreeStep(f"free {tensor}", 1.0, memory, size, slot, {})


def launch(
    op: str, device: str, kernel_us: float, produces: tuple[int, ...] = (),
    waits: tuple[int, ...] = (), run=no_run,
) -> LaunchStep:  # fmt: skip
    return LaunchStep(f"launch {op}", 1.0, op, 5.0, device, kernel_us, waits, produces, run, {})


def copy(
    tensor: str, device: str, link: str, duration_us: float, size: int,
    produces: tuple[int, ...] = (), waits: tuple[int, ...] = (),
) -> CopyStep:  # fmt: skip
    hops = (Hop(link, duration_us),)
    return CopyStep(
        f"copy {tensor}", 1.0, tensor, 5.0, device, hops, size, waits, produces, no_run, {}
    )


def sync(device: str) -> SyncStep:
    return SyncStep(f"sync {device}", 1.0, device, 2.0, {})


RET = RetStep("ret", 1.0, {}, {})


def spans(record: RunRecord) -> list[tuple[str, str, str, str, float, float]]:
    return [(s.resource, s.stream, s.name, s.category, s.start_us, s.end_us) for s in record.spans]


def device_spans(record: RunRecord) -> list[tuple[str, str, str, str, float, float]]:
    """The spans of device streams: kernels and copies."""
    return [s for s in spans(record) if s[1] == "stream0"]


def sync_times(record: RunRecord, device: str) -> list[tuple[float, float]]:
    """(start, end) of each span of the SYNCs of `device`: dispatch, wait, sync."""
    return [s[4:] for s in spans(record) if s[2] == f"sync {device}"]


def test_one_kernel_timeline() -> None:
    # Same-time spans keep the order they were recorded in: the host records an instruction's
    # spans when it executes it, a stream records a kernel when it reaches it (here at the
    # launch, before the SYNC), a copy or a link span when it ends.
    sim = make_sim()
    code = [alloc("y", "gpu0.mem", 64), launch("relu", "gpu0", 10.0, (0,)),
            sync("gpu0"), RET]  # fmt: skip
    record = sim.run(code, ["y"])
    assert spans(record) == [
        ("host", "exec", "alloc y", "dispatch", 0.0, 1.0),
        ("host", "exec", "launch relu", "dispatch", 1.0, 2.0),
        ("host", "exec", "launch relu", "launch", 2.0, 7.0),
        ("gpu0", "stream0", "relu", "compute", 7.0, 17.0),
        ("host", "exec", "sync gpu0", "dispatch", 7.0, 8.0),
        ("host", "exec", "sync gpu0", "sync_wait", 8.0, 17.0),
        ("host", "exec", "sync gpu0", "sync_wait", 17.0, 19.0),
        ("host", "exec", "ret", "dispatch", 19.0, 20.0),
    ]
    assert record.makespan_us == 20.0
    assert record.peak_memory_bytes == {"host.mem": 0, "gpu0.mem": 64, "gpu1.mem": 0}


def test_launch_flows_link_dispatch_to_kernel() -> None:
    sim = make_sim()
    record = sim.run([launch("a", "gpu0", 1.0), launch("b", "gpu0", 1.0), RET], [])
    outs = [(s.name, s.flow_out) for s in record.spans if s.flow_out is not None]
    ins = [(s.name, s.flow_in) for s in record.spans if s.flow_in is not None]
    assert outs == [("launch a", 1), ("launch b", 2)]
    assert ins == [("a", 1), ("b", 2)]


def test_stream_runs_in_order_and_host_runs_ahead() -> None:
    sim = make_sim()
    code = [launch("a", "gpu0", 10.0), launch("b", "gpu0", 10.0), sync("gpu0"), RET]
    record = sim.run(code, [])
    kernels = device_spans(record)
    # a: queued at 6, runs 6..16; b: queued at 12, waits for a, runs 16..26.
    assert kernels == [
        ("gpu0", "stream0", "a", "compute", 6.0, 16.0),
        ("gpu0", "stream0", "b", "compute", 16.0, 26.0),
    ]
    # the sync is dispatched at 12..13 and waits for the stream to drain at 26.
    assert [s for s in spans(record) if s[0] == "host"][-3:] == [
        ("host", "exec", "sync gpu0", "sync_wait", 13.0, 26.0),
        ("host", "exec", "sync gpu0", "sync_wait", 26.0, 28.0),
        ("host", "exec", "ret", "dispatch", 28.0, 29.0),
    ]


def test_sync_on_an_idle_stream_pays_only_sync_us() -> None:
    sim = make_sim()
    record = sim.run([sync("gpu1"), RET], [])
    assert spans(record) == [
        ("host", "exec", "sync gpu1", "dispatch", 0.0, 1.0),
        ("host", "exec", "sync gpu1", "sync_wait", 1.0, 3.0),
        ("host", "exec", "ret", "dispatch", 3.0, 4.0),
    ]


def test_streams_of_two_devices_overlap() -> None:
    sim = make_sim()
    code = [launch("a", "gpu0", 20.0), launch("b", "gpu1", 20.0),
            sync("gpu0"), sync("gpu1"), RET]  # fmt: skip
    record = sim.run(code, [])
    kernels = device_spans(record)
    assert kernels == [
        ("gpu0", "stream0", "a", "compute", 6.0, 26.0),
        ("gpu1", "stream0", "b", "compute", 12.0, 32.0),
    ]
    # sync gpu0: dispatch 12..13, wait to 26, sync 26..28; sync gpu1: 28..29, wait to 32, 32..34.
    assert sync_times(record, "gpu1") == [
        (28.0, 29.0),
        (29.0, 32.0),
        (32.0, 34.0),
    ]
    assert record.makespan_us == 35.0


def test_link_serves_transfers_one_at_a_time_in_request_order() -> None:
    sim = Simulation(
        "host", ["gpu0", "gpu1"], {"host.mem": MIB, "gpu0.mem": MIB, "gpu1.mem": MIB}, ["bus"]
    )
    code = [copy("x", "gpu0", "bus", 30.0, 1000, (0,)),
            copy("y", "gpu1", "bus", 30.0, 500, (1,)), RET]  # fmt: skip
    record = sim.run(code, ["x@gpu0", "y@gpu1"])
    link = [s for s in spans(record) if s[0] == "bus"]
    assert link == [
        ("bus", "link", "copy x", "transfer", 6.0, 36.0),
        ("bus", "link", "copy y", "transfer", 36.0, 66.0),
    ]
    # the second copy's stream is busy from its queue time, waiting for the link included.
    assert ("gpu1", "stream0", "copy y", "transfer", 12.0, 66.0) in spans(record)
    assert record.link_bytes == {"bus": 1500}
    assert record.makespan_us == 66.0


def test_copy_holds_each_hop_in_turn() -> None:
    sim = make_sim()
    hops = (Hop("host.mem--gpu0.mem", 4.0), Hop("host.mem--gpu1.mem", 6.0))
    step = CopyStep("copy x", 1.0, "x", 5.0, "gpu0", hops, 8, (), (0,), no_run, {})
    record = sim.run([step, sync("gpu0"), RET], ["x@gpu1"])
    link = [s[4:] for s in spans(record) if s[1] == "link"]
    assert link == [(6.0, 10.0), (10.0, 16.0)]
    assert record.link_bytes == {"host.mem--gpu0.mem": 8, "host.mem--gpu1.mem": 8}


def test_kernel_waits_for_a_tensor_from_another_stream() -> None:
    sim = make_sim()
    code = [launch("a", "gpu0", 50.0, produces=(0,)),
            launch("b", "gpu1", 10.0, waits=(0,)), RET]  # fmt: skip
    record = sim.run(code, ["a_out"])
    kernels = device_spans(record)
    assert kernels == [
        ("gpu0", "stream0", "a", "compute", 6.0, 56.0),
        ("gpu1", "stream0", "b", "compute", 56.0, 66.0),
    ]


def test_host_call_and_functional_values() -> None:
    sim = make_sim()
    values: list[object] = [np.arange(3.0), None]

    def run(table: list) -> None:  # the engine passes the run's value table
        table[1] = table[0] * 2

    call = CallStep("call double", 1.0, "double", 4.0, run, (1,), {})
    code = [alloc("y", "host.mem", 24), call, RetStep("ret", 1.0, {"y": 1}, {})]
    record = sim.run(code, ["x", "y"], ready=[0], values=values)
    assert spans(record)[1:3] == [
        ("host", "exec", "call double", "dispatch", 1.0, 2.0),
        ("host", "exec", "double", "compute", 2.0, 6.0),
    ]
    np.testing.assert_array_equal(record.outputs["y"], [0.0, 2.0, 4.0])


def test_free_returns_memory_and_peak_counts_live_tensors() -> None:
    sim = make_sim()
    code = [alloc("a", "gpu0.mem", 4 * MIB), alloc("b", "gpu0.mem", 4 * MIB),
            free("a", "gpu0.mem", 4 * MIB, 0), alloc("c", "gpu0.mem", 5 * MIB),
            RET]  # fmt: skip
    record = sim.run(code, ["a", "b", "c"])
    assert record.peak_memory_bytes["gpu0.mem"] == 9 * MIB


def test_out_of_memory_names_memory_tensor_and_op() -> None:
    sim = make_sim()
    code = [alloc("a", "gpu0.mem", 8 * MIB, "conv1"),
            alloc("b", "gpu0.mem", 3 * MIB, "conv2"), RET]  # fmt: skip
    with pytest.raises(
        SimulationError,
        match=r"^sim at 1\.0 us, gpu0: out of memory in gpu0\.mem \(need 3\.0 MiB, 2\.0 MiB free\)"
        r" for tensor b of op conv2$",
    ):
        sim.run(code, ["a", "b"])


def test_deadlock_names_what_waits_on_what() -> None:
    sim = make_sim()
    code = [launch("b", "gpu1", 10.0, waits=(0,)), sync("gpu1"), RET]
    with pytest.raises(
        SimulationError,
        match=r"^sim at 7\.0 us: deadlock: host waits for gpu1/stream0 to finish at 'sync gpu1'; "
        r"gpu1/stream0 waits for tensor 'never' before 'launch b'$",
    ):
        sim.run(code, ["never"])


def test_work_left_waiting_after_ret_is_a_deadlock() -> None:
    sim = make_sim()
    code = [launch("b", "gpu1", 10.0, waits=(0,)), RET]
    with pytest.raises(
        SimulationError,
        match=r"^sim at 7\.0 us: deadlock: gpu1/stream0 waits for tensor 'never' before "
        r"'launch b'$",
    ):
        sim.run(code, ["never"])


@pytest.mark.parametrize(("value", "taken"), [(128, True), (64, False)])
def test_branch_on_a_bound_dim(value: int, taken: bool) -> None:
    sim = make_sim()
    branch = BranchStep("branch seq>=128", 1.0, value, lambda v: v >= 128, 3, {})
    code = [branch, launch("small", "gpu0", 1.0), RET, launch("big", "gpu0", 1.0), RET]
    record = sim.run(code, [])
    kernels = [s.name for s in record.spans if s.stream == "stream0"]
    assert kernels == (["big"] if taken else ["small"])


def test_totals_mode_keeps_busy_time_without_spans() -> None:
    sim = make_sim(trace=False)
    code = [launch("a", "gpu0", 10.0), sync("gpu0"), RET]
    record = sim.run(code, [])
    assert record.spans == ()
    assert record.extra["busy_us"] == {
        "gpu0": {"compute": 10.0},
        "host": {"dispatch": 3.0, "launch": 5.0, "sync_wait": 11.0},
    }
    assert record.makespan_us == 19.0


def test_same_run_twice_gives_the_same_trace() -> None:
    def once() -> list[tuple[str, str, str, str, float, float]]:
        sim = make_sim()
        code = [copy("x", "gpu0", "host.mem--gpu0.mem", 3.0, 10, (0,)),
                launch("a", "gpu0", 7.0, waits=(0,)), launch("b", "gpu1", 7.0),
                sync("gpu0"), sync("gpu1"), RET]  # fmt: skip
        return spans(sim.run(code, ["x@gpu0"]))

    assert once() == once()


def test_kernels_queued_behind_a_copy_start_when_it_ends() -> None:
    sim = make_sim()
    code = [copy("x", "gpu0", "host.mem--gpu0.mem", 30.0, 8, (0,)),
            launch("a", "gpu0", 10.0), launch("b", "gpu0", 10.0),
            sync("gpu0"), RET]  # fmt: skip
    record = sim.run(code, ["x@gpu0"])
    # copy: queued at 6 (dispatch 0..1, launch 1..6), on the link 6..36. a: queued at 12 behind
    # the copy, runs 36..46; b: queued at 18, runs 46..56. The SYNC (dispatch 18..19) waits for
    # the stream to drain at 56.
    assert device_spans(record) == [
        ("gpu0", "stream0", "copy x", "transfer", 6.0, 36.0),
        ("gpu0", "stream0", "a", "compute", 36.0, 46.0),
        ("gpu0", "stream0", "b", "compute", 46.0, 56.0),
    ]
    assert sync_times(record, "gpu0") == [
        (18.0, 19.0),
        (19.0, 56.0),
        (56.0, 58.0),
    ]
    assert record.makespan_us == 59.0


def test_kernel_waiting_for_a_copy_on_another_stream_resumes_when_it_lands() -> None:
    sim = make_sim()
    code = [copy("x", "gpu0", "host.mem--gpu0.mem", 30.0, 8, (0,)),
            launch("a", "gpu1", 10.0, produces=(1,), waits=(0,)),
            launch("b", "gpu1", 10.0, waits=(1,)), sync("gpu1"), RET]  # fmt: skip
    record = sim.run(code, ["x@gpu0", "a_out"])
    # a is queued at 12 and waits for x (ready at 36); b queues behind it and runs 46..56.
    assert [s for s in spans(record) if s[0] == "gpu1"] == [
        ("gpu1", "stream0", "a", "compute", 36.0, 46.0),
        ("gpu1", "stream0", "b", "compute", 46.0, 56.0),
    ]
    assert sync_times(record, "gpu1")[-1] == (56.0, 58.0)


def test_kernels_that_wait_for_nothing_create_no_simpy_events() -> None:
    # Each kernel is scheduled when the stream reaches it, from known times (docs/runtime.md):
    # the events of a run are the interpreter's start and end and RET's timeout, however many
    # kernels it launches.
    counts = []
    for n in (1, 100):
        sim = make_sim()
        scheduled = 0
        schedule = sim.env.schedule

        def counting(*args, schedule=schedule, **kwargs) -> None:
            nonlocal scheduled
            scheduled += 1
            schedule(*args, **kwargs)

        sim.env.schedule = counting  # type: ignore[method-assign]
        code = [launch(f"k{i}", "gpu0", 10.0, produces=(i,)) for i in range(n)]
        record = sim.run([*code, sync("gpu0"), RET], [f"t{i}" for i in range(n)])
        assert record.makespan_us == 6.0 + 10.0 * n + 3.0  # first queued at 6; sync 2, ret 1
        counts.append(scheduled)
    assert counts[0] == counts[1] == 3


def _staged_copy(size: int) -> CopyStep:
    """x (`size` B) from gpu0.mem to gpu1.mem through host.mem: staged there from the end of
    its first hop (6 + 4 = 10 us, at the engine's time) to the end of its second (16)."""
    hops = (Hop("host.mem--gpu0.mem", 4.0), Hop("host.mem--gpu1.mem", 6.0))
    args = {"bytes": size, "src": "gpu0.mem", "dst": "gpu1.mem"}
    stage = AllocStep("stage x", 0.0, "host.mem", size, "x", "gpu0", STAGE_OP, args)
    return CopyStep("copy x", 1.0, "x", 5.0, "gpu0", hops, size, (), (0,), no_run, args, (stage,))


def test_a_memory_two_clocks_change_is_checked_in_simulated_time() -> None:
    # the host's clock runs ahead of the engine's: ten ALLOC/FREE pairs take it to 26 us, and
    # its ALLOC of y there was counted before the engine staged x at 10 and gave it back at
    # 16: 150 B in the order made, at no simulated time; the peak is 100 B, which fits
    busy = [
        step for _ in range(10) for step in (alloc("z", "gpu0.mem", 8), free("z", "gpu0.mem", 8, 1))
    ]
    code = [_staged_copy(50), *busy, alloc("y", "host.mem", 100), sync("gpu0"), RET]
    sim = Simulation("host", ["gpu0"], {"host.mem": 100, "gpu0.mem": MIB, "gpu1.mem": MIB},
                     ["host.mem--gpu0.mem", "host.mem--gpu1.mem"])  # fmt: skip
    record = sim.run(code, ["x@gpu1", "z", "y"])
    assert ("host", "exec", "alloc y", "dispatch", 26.0, 27.0) in spans(record)
    assert ("host.mem--gpu1.mem", "link", "copy x", "transfer", 10.0, 16.0) in spans(record)
    assert record.peak_memory_bytes["host.mem"] == 100


def test_an_alloc_past_the_capacity_in_simulated_time_is_found_when_the_run_ends() -> None:
    # y (60 B) is taken at 6 us on the host's clock; x, staged at 10 on the engine's, finds
    # 60 B in use: the second clock defers the check, which then names x and its time
    code = [_staged_copy(50), alloc("y", "host.mem", 60), sync("gpu0"), RET]
    sim = Simulation("host", ["gpu0"], {"host.mem": 100, "gpu0.mem": MIB, "gpu1.mem": MIB},
                     ["host.mem--gpu0.mem", "host.mem--gpu1.mem"])  # fmt: skip
    with pytest.raises(
        SimulationError,
        match=r"^sim at 10\.0 us, gpu0: out of memory in host\.mem \(need 50 B, 40 B free\) "
        r"for tensor x staged on its way gpu0\.mem -> gpu1\.mem$",
    ):
        sim.run(code, ["x@gpu1", "y"])
    assert sim.memories["host.mem"].is_deferred
