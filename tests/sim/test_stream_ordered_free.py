"""A FREE of a tensor that device work still uses in a memory the device does not own gives its
bytes back when that device's stream reaches the FREE (`Free.after`), not at the host's time:
the host runs ahead of the streams, and counted at its time the bytes had been reused while a
kernel or a copy still read them (docs/runtime.md, "Memories").

Tiny-target parameters (tests/sim/tiny.py): each tensor is 1000 B; host ALLOC 1 + 0.5 µs, FREE
1 + 0.25, CALL 1 µs then the kernel 1 + 2000 B / 1000 B/µs = 3 µs; LAUNCH 1 + 4 µs, a device
kernel 3 + 2000 B / 2000 B/µs = 4 µs; a device of ``memory_gib=0`` computes in host.mem.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from hetsim.api import platform_of, simulate
from hetsim.errors import SimulationError
from hetsim.ir import Op
from hetsim.kernels import propagate
from hetsim.runtime import Free, compile_vm, place
from hetsim.runtime.bytecode import MNEMONICS, operands
from hetsim.sim import run_program
from hetsim.sim.resources import MemoryState
from hetsim.sim.steps import AllocStep, FreeStep, Release
from tests.sim.tiny import device, graph, target


def listing(model: object, tgt: dict[str, object]) -> list[str]:
    """The program's instructions as its listing shows them, without their numbers."""
    platform = platform_of(tgt)
    program = compile_vm(model, platform, place(model, platform))
    return [f"{MNEMONICS[type(ins)]:<12} {operands(program, ins)}" for ins in program.code]


def spans_of(result: object) -> dict[tuple[str, str], tuple[float, float]]:
    return {(s.resource, s.name): (s.start_us, s.end_us) for s in result.spans}  # type: ignore[attr-defined]


SHARED = (
    Op("Relu", "r1", ("x",), ("a",)),  # on npu, in host.mem
    Op("Relu", "r2", ("a",), ("b",)),  # on npu: a's last reader
    Op("Neg", "n", ("x",), ("c",)),  # on the host, while r2 still reads a
)


def test_a_free_waits_for_the_stream_of_a_device_computing_in_host_memory() -> None:
    model = graph(*SHARED, outputs=("b", "c"))
    tgt = target(device("npu", ["Relu"], memory_gib=0))
    assert listing(model, tgt)[:6] == [
        "ALLOC        a in host.mem on npu",  # npu's work writes it (Alloc.writer)
        "LAUNCH       r1@npu(x) -> a",
        "ALLOC        b in host.mem on npu",
        "LAUNCH       r2@npu(a) -> b",
        "FREE         a in host.mem after npu",
        "ALLOC        c in host.mem",
    ]
    result = simulate(model, tgt, mode="timing")
    spans = spans_of(result)
    # host: ALLOC a 0-1.5, LAUNCH r1 1.5-6.5, ALLOC b 6.5-8, LAUNCH r2 8-13, FREE a 13-14.25,
    # ALLOC c 14.25-15.75; npu: r1 6.5-10.5, r2 13-17
    assert spans["npu", "r2"] == (13.0, 17.0)
    assert spans["host", "free a"] == (13.0, 14.25)
    assert spans["host", "alloc c"] == (14.25, 15.75)
    # from 14.25 to 17, host.mem holds x, a (r2 reads it), b and c: 4000 B (3000 at the
    # host's time: a had been back at 13)
    assert result.peak_memory_bytes == {"host.mem": 4000}
    tgt["host"]["memory_gib"] = 3999 / 2**30  # type: ignore[index]
    with pytest.raises(
        SimulationError,
        match=r"^sim at 14\.25 us, host: out of memory in host\.mem \(need 1000 B, 999 B free\) "
        r"for tensor c of op n$",
    ):
        simulate(model, tgt, mode="timing")


def test_a_free_after_a_sync_gives_the_bytes_back_at_once() -> None:
    # n reads b, made on npu's stream: a SYNC comes first, and the FREEs after it wait for no
    # stream: host.mem holds x, a, b and c at c's ALLOC, then x, a, c and d (4000 B)
    ops = (*SHARED[:2], Op("Neg", "n", ("b",), ("c",)), Op("Neg", "m", ("a",), ("d",)))
    model = graph(*ops, outputs=("c", "d"))
    tgt = target(device("npu", ["Relu"], memory_gib=0))
    code = listing(model, tgt)
    assert code.index("SYNC         npu") < code.index("FREE         a in host.mem")
    assert "FREE         b in host.mem" in code  # read last on the host: no stream to wait for
    assert not [line for line in code if " after " in line and line.startswith("FREE")]
    assert simulate(model, tgt, mode="timing").peak_memory_bytes == {"host.mem": 4000}


def test_a_stream_reuses_at_once_the_bytes_its_host_freed_for_it() -> None:
    # a chain on one device computing in host.mem, kernels slower than the host (50 us): the
    # host runs ahead, and each FREE waits for the stream, but the next ALLOC, for the same
    # stream's next kernel, takes those bytes at once, as a stream-ordered allocator does: x
    # and two links of the chain, 3000 B, however long the chain (it had grown with it: 5000 B
    # at 4 ops, 9000 at 8, 16000 at 16, the host's run-ahead)
    tgt = target(device("npu", ["Relu"], memory_gib=0, kernel_latency_us=50.0))
    for n in (4, 16):
        ops = [Op("Relu", f"r{i}", (f"t{i - 1}" if i else "x",), (f"t{i}",)) for i in range(n)]
        model = graph(*ops, outputs=(f"t{n - 1}",))
        assert f"FREE         t{n - 3} in host.mem after npu" in listing(model, tgt)
        result = simulate(model, tgt, mode="timing")
        kernels = [s for s in result.spans if s.resource == "npu"]
        assert kernels[-1].end_us > 2 * [s for s in result.spans if s.name == "free t0"][-1].end_us
        assert result.peak_memory_bytes == {"host.mem": 3000}


def test_a_free_waits_for_every_stream_that_uses_the_tensor() -> None:
    # a, made and read on npu0 and read on npu1, comes back when both streams reach its FREE:
    # npu0 at 19.5 (the host's FREE; r2 ended at 17), npu1 when n1 ends at 23.5
    ops = (
        *SHARED[:2],
        Op("Neg", "n1", ("a",), ("c",)),  # on npu1: waits on the device for a, made on npu0
        Op("Sigmoid", "s", ("x",), ("d",)),  # on the host, after a's FREE
    )
    model = graph(*ops, outputs=("b", "c", "d"))
    tgt = target(device("npu0", ["Relu"], memory_gib=0), device("npu1", ["Neg"], memory_gib=0))
    assert "FREE         a in host.mem after npu0, npu1" in listing(model, tgt)
    result = simulate(model, tgt, mode="timing")
    spans = spans_of(result)
    assert spans["npu0", "r2"] == (13.0, 17.0)
    assert spans["npu1", "n1"] == (19.5, 23.5)
    assert spans["host", "free a"] == (19.5, 20.75)
    assert spans["host", "alloc d"] == (20.75, 22.25)
    # at 20.75, x, a, b, c and d: 5000 B (4000 with a back at the host's 19.5)
    assert result.peak_memory_bytes == {"host.mem": 5000}


def test_a_host_buffer_a_copy_reads_comes_back_when_the_copying_stream_passes_its_free() -> None:
    # h, made on the host, is copied to gpu0 (12-23 us on the link, queued on gpu0's stream,
    # then r, a sum into 4 B, 23-26.502); its FREE (19.75) waits for gpu0's stream, as a
    # stream-ordered free does: back when the work queued before it ends (26.502). d (21) and e
    # (26.5), the host's, come while h is held: x, h, d and e, 4000 B (3004 counted at the
    # host's time)
    ops = (
        Op("Neg", "n", ("x",), ("h",)),
        Op("ReduceSum", "r", ("h",), ("a",), {"keepdims": 0}),
        Op("Sigmoid", "s", ("x",), ("d",)),
        Op("Tanh", "u", ("x",), ("e",)),
    )
    model = graph(*ops, outputs=("a", "d", "e"))
    tgt = target(device("gpu0", ["ReduceSum"]))
    code = listing(model, tgt)
    assert "FREE         h in host.mem after gpu0" in code
    assert "FREE         h@gpu0.mem in gpu0.mem" in code  # gpu0's own memory: its stream's order
    result = simulate(model, tgt, mode="timing")
    spans = spans_of(result)
    assert spans["host.mem--gpu0.mem", "copy h@gpu0.mem"] == (12.0, 23.0)
    assert spans["gpu0", "r"] == (23.0, 23.0 + 3 + 1004 / 2000)
    assert spans["host", "free h"] == (19.75, 21.0)
    assert spans["host", "alloc e"][0] == 26.5
    assert result.peak_memory_bytes == {"host.mem": 4000, "gpu0.mem": 1004}


def test_an_allocation_a_later_copy_writes_reuses_what_its_stream_was_left() -> None:
    # a@host.mem, the copy back of r's output, is written by gpu0's stream, queued after the
    # work that read h: it takes h's bytes, left to gpu0, before gpu0 reaches h's FREE (at 27,
    # after r): x, h (then a@host.mem) and d, 3000 B, where counting it anew gave 4000
    ops = (
        Op("Neg", "n", ("x",), ("h",)),
        Op("Relu", "r", ("h",), ("a",)),
        Op("Sigmoid", "s", ("x",), ("d",)),
    )
    model = graph(*ops, outputs=("a", "d"))
    tgt = target(device("gpu0", ["Relu"]))
    result = simulate(model, tgt, mode="timing")
    spans = spans_of(result)
    assert spans["gpu0", "r"] == (23.0, 27.0)
    assert spans["host", "alloc a@host.mem"] == (26.5, 28.0)
    assert result.peak_memory_bytes == {"host.mem": 3000, "gpu0.mem": 2000}


def test_an_overflow_on_the_spot_is_not_hidden_by_a_release_not_reached_yet() -> None:
    # gpu0.mem overflows on the spot at the host's 41.75 us while the engine is still at 0: the
    # Release of h (FREE h after gpu0) was not reached yet, and host.mem, settled on what it had,
    # looked full at 27.5 (c's ALLOC), where it holds 3000 B at most and fits
    def tgt(host_bytes: int, gpu_bytes: int) -> dict[str, object]:
        tgt = target(
            device("gpu0", ["Relu", "Add"], memory_gib=gpu_bytes / 2**30),
            device("npu", ["Sigmoid"], memory_gib=0),
        )
        tgt["host"]["memory_gib"] = host_bytes / 2**30  # type: ignore[index]
        return tgt

    ops = (
        Op("Neg", "n", ("x",), ("h",)),  # host
        Op("Relu", "r", ("h",), ("a",)),  # gpu0, from h copied out of host.mem
        Op("Sigmoid", "q", ("a",), ("c",)),  # npu, in host.mem
        Op("Add", "m", ("a", "c"), ("f",)),  # gpu0
    )
    model = graph(*ops, outputs=("f",))
    result = simulate(model, tgt(2**30, 2**30), mode="timing")
    assert result.peak_memory_bytes == {"host.mem": 3000, "gpu0.mem": 3000}
    assert "FREE         h in host.mem after gpu0" in listing(model, tgt(2**30, 2**30))
    simulate(model, tgt(3000, 3000), mode="timing")  # both at their peaks: it fits
    with pytest.raises(
        SimulationError,
        match=r"^sim at 41\.75 us, gpu0: out of memory in gpu0\.mem \(need 1000 B, 999 B free\) "
        r"for tensor f of op m$",
    ):
        simulate(model, tgt(3000, 2999), mode="timing")


def test_an_invocation_s_arguments_stay_until_its_level_has_run() -> None:
    # the root freed x@node0/host.mem at its 5 us, and the invocation reading it began at 13.5:
    # node0's host, allocating b in that memory at 15.53 while r read x (18.03-21.03), found x's
    # bytes back (peak 2000 B: x and the result buffer c); they are back when node0's stream
    # passes the FREE now: x, c and b, 3000 B
    def tgt(node_bytes: int) -> dict[str, object]:
        root = target()
        node_host = {**root["host"], "memory_gib": node_bytes / 2**30}  # type: ignore[dict-item]
        root["devices"] = [
            {
                "name": "node0",
                "kind": "hetero",
                "host": node_host,
                "executor": root["executor"],
                "runtime": root["runtime"],
                "link": {"bandwidth_gbps": 1.0, "latency_us": 10.0},
                "devices": [device("acc", ["Sigmoid"])],
            }
        ]
        return root

    ops = (Op("Relu", "r", ("x",), ("b",)), Op("Neg", "n", ("b",), ("c",)))
    model = graph(*ops, outputs=("c",))
    rules = [{"op": "*", "device": "node0/host"}]
    result = simulate(model, tgt(2**30), mode="timing", partition="rules", rules=rules)
    spans = spans_of(result)
    assert spans["node0/host", "alloc b"][0] == pytest.approx(15.532, abs=1e-3)
    assert spans["node0/host", "r"][0] > spans["node0/host", "alloc b"][0]
    assert result.peak_memory_bytes["node0/host.mem"] == 3000
    with pytest.raises(
        SimulationError,
        match=r"^sim at 15\.532 us, node0/host: out of memory in node0/host\.mem \(need 1000 B, "
        r"999 B free\) for tensor b of op r$",
    ):
        simulate(model, tgt(2999), mode="timing", partition="rules", rules=rules)


@pytest.mark.parametrize(
    ("after", "message"),
    [
        (
            ("nope",),
            "bind: program of level (root) of tiny: expected platform hetero[cuda] to have "
            "'nope', which the program names, got none (a program compiled for another "
            "platform?)",
        ),
        (("host",), "FREE a: expected device streams to wait for, got 'host', the program's host"),
    ],
)
def test_a_free_written_by_hand_waits_for_device_streams_only(
    after: tuple[str, ...], message: str
) -> None:
    tgt = target(device("npu", ["Relu"], memory_gib=0))
    model = graph(*SHARED[:2], outputs=("b",))
    platform = platform_of(tgt)
    program = compile_vm(model, platform, place(model, platform))
    code = tuple(
        ins._replace(after=after) if isinstance(ins, Free) else ins for ins in program.code
    )
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}$"):
        run_program(
            dataclasses.replace(program, code=code), platform, propagate(model, {}),
            is_functional=False,
        )  # fmt: skip


def test_bytes_back_before_an_allocation_are_not_handed_to_it_again() -> None:
    # a@host.mem's FREE (27.25) waits for npu, whose stream reaches it when n1 ends (36.5), a
    # point the engine had not reached when the host, far ahead, made d (49.75) for npu: d took
    # a's bytes as if still held, a stayed counted past 36.5, and a host.mem of 5000 B (x, c,
    # h0, h1, h2 at 40.75, its peak) was refused at 40.75
    def tgt(host_bytes: int) -> dict[str, object]:
        tgt = target(device("gpu0", ["Abs"]), device("npu", ["Neg"], memory_gib=0))
        tgt["host"]["memory_gib"] = host_bytes / 2**30  # type: ignore[index]
        return tgt

    ops = (
        Op("Abs", "p", ("x",), ("a",)),  # gpu0, copied back for npu
        Op("Neg", "n1", ("a",), ("c",)),  # npu
        Op("Sigmoid", "h0", ("x",), ("h0",)),  # the host's, from here
        Op("Sigmoid", "h1", ("h0",), ("h1",)),
        Op("Add", "h2", ("h0", "h1"), ("h2",)),
        Op("Neg", "n2", ("h2",), ("d",)),  # npu
    )
    model = graph(*ops, outputs=("c", "d"))
    rules = [{"op": name, "device": "host"} for name in ("h0", "h1", "h2")]
    result = simulate(model, tgt(2**30), mode="timing", partition="rules", rules=rules)
    spans = spans_of(result)
    assert spans["npu", "n1"] == (32.5, 36.5)
    assert spans["host", "free a@host.mem"][0] == 27.25
    assert spans["host", "alloc d"][0] == 49.75
    assert result.peak_memory_bytes["host.mem"] == 5000
    simulate(model, tgt(5000), mode="timing", partition="rules", rules=rules)


def test_an_allocation_that_reuses_part_of_its_bytes_needs_the_rest() -> None:
    # host.mem: x 1000, a 1000, b 2000; c (4000) reuses a's 1000: 7000; d (4000) reuses b's
    # 2000 and needs 2000 more: 9000 at 22 us (x, a/c, b/d: what each FREE left to npu)
    ops = (
        Op("Relu", "r0", ("x",), ("a",)),
        Op("Concat", "c1", ("a", "a"), ("b",), {"axis": 0}),
        Op("Concat", "c2", ("b", "b"), ("c",), {"axis": 0}),
        Op("Relu", "r1", ("c",), ("d",)),
    )
    model = graph(*ops, outputs=("d",))

    def tgt(host_bytes: int) -> dict[str, object]:
        tgt = target(device("npu", ["Relu", "Concat"], memory_gib=0, kernel_latency_us=50.0))
        tgt["host"]["memory_gib"] = host_bytes / 2**30  # type: ignore[index]
        return tgt

    assert simulate(model, tgt(9000), mode="timing").peak_memory_bytes == {"host.mem": 9000}
    with pytest.raises(
        SimulationError,
        match=r"^sim at 22\.0 us, npu: out of memory in host\.mem \(need 2\.0 KiB \(2000 B\), "
        r"2\.0 KiB \(1999 B\) free; it reuses another 2\.0 KiB freed for its stream\) for "
        r"tensor "
        r"d of op r1$",
    ):
        simulate(model, tgt(8999), mode="timing")


def test_only_the_freeing_stream_s_own_work_takes_its_bytes() -> None:
    # a's FREE (13 us) waits for npu, whose r1 reads a until 108.5; c@host.mem (28.5), written
    # by gpu0's copy (35.75-46.75), may not take a's bytes: it would write them while r1 still
    # reads a. host.mem holds x, a, b and c@host.mem: 4000 B
    tgt = target(
        device("npu", ["Relu"], memory_gib=0, kernel_latency_us=50.0), device("gpu0", ["Abs"])
    )
    ops = (
        Op("Relu", "r0", ("x",), ("a",)),
        Op("Relu", "r1", ("a",), ("b",)),
        Op("Abs", "g", ("x",), ("c",)),
    )
    model = graph(*ops, outputs=("b", "c"))
    result = simulate(model, tgt, mode="timing")
    spans = spans_of(result)
    assert spans["npu", "r1"] == (57.5, 108.5)
    assert spans["host", "alloc c@host.mem"][0] == 28.5
    assert spans["gpu0", "copy c@host.mem"] == (35.75, 46.75)
    assert result.peak_memory_bytes["host.mem"] == 4000


def test_a_free_that_waits_for_two_streams_leaves_its_bytes_to_neither() -> None:
    # a is read by npu0 (r2) and npu1 (n1, 19.5-23.5): its FREE (19.5) waits for both, and f
    # (20.75), for npu0, may not take a's bytes: npu1 still reads a until 23.5. x, a, b, c and
    # f: 5000 B
    ops = (
        *SHARED[:2],
        Op("Neg", "n1", ("a",), ("c",)),  # npu1
        Op("Relu", "r5", ("c",), ("f",)),  # npu0, after a's FREE
    )
    model = graph(*ops, outputs=("b", "f"))
    tgt = target(device("npu0", ["Relu"], memory_gib=0), device("npu1", ["Neg"], memory_gib=0))
    result = simulate(model, tgt, mode="timing")
    spans = spans_of(result)
    assert spans["npu1", "n1"] == (19.5, 23.5)
    assert spans["host", "free a"][0] == 19.5
    assert spans["host", "alloc f"][0] == 20.75
    assert result.peak_memory_bytes["host.mem"] == 5000


def test_bytes_back_are_counted_once_though_their_stream_was_left_them() -> None:
    # a, left to npu, comes back at 2 us: d (3 us, for npu) takes new bytes, and x (4 us) next
    # to it makes 1500 B; handing d a's bytes again after they came back read 1000
    memory = MemoryState("host.mem", 10**6)
    memory.is_deferred = True
    a = AllocStep("alloc a", 0.0, "host.mem", 1000, "a", "host", "p", {}, "")
    release = Release(FreeStep("free a", 0.25, "host.mem", 1000, 3, {}, ("npu",)), 1.0)
    d = AllocStep("alloc d", 0.0, "host.mem", 1000, "d", "npu", "n", {}, "npu")
    x = AllocStep("alloc x", 0.0, "host.mem", 500, "x", "host", "p", {}, "")
    memory.changes = [
        (0.0, 1000, a, None),
        (1.0, 0, release, ("npu", "host")),  # its FREE, at 1: into npu's pool
        (2.0, 0, release, None),  # npu reached it: what no allocation took comes back
        (3.0, 1000, d, ("npu", "host")),
        (4.0, 500, x, None),
    ]
    assert memory.settle() is None
    assert memory.peak_bytes == 1500
