"""A memory holds exactly its capacity: the plan's weight check and the engine's allocations
agree on the boundary (a byte more is refused, by the one that sees it first).

Tiny-target parameters (tests/sim/tiny.py): x is float32[250] (1000 B); gpu0's memory is set in
bytes (``memory_gib = bytes / 2**30``, exact for these sizes). On the host, ALLOC x@gpu0.mem
takes 1 + 0.5 µs and its COPY 1 + 4 µs, so the next ALLOC is at 6.5 µs.
"""

from __future__ import annotations

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.errors import PartitionError, SimulationError
from hetsim.ir import Graph, Op, TensorType
from tests.sim.tiny import N, device, graph, target


def gpu_of(capacity_bytes: int) -> dict[str, object]:
    return target(device("gpu0", ["Relu", "Add"], memory_gib=capacity_bytes / 2**30))


def test_activations_that_fill_a_memory_exactly_fit() -> None:
    relu = graph(Op("Relu", "r1", ("x",), ("y",)), outputs=("y",))
    result = simulate(relu, gpu_of(2000), mode="timing")  # x@gpu0.mem and y: 2000 B
    assert result.peak_memory_bytes["gpu0.mem"] == 2000
    with pytest.raises(
        SimulationError,
        match=r"^sim at 6\.5 us, gpu0: out of memory in gpu0\.mem \(need 1000 B, 999 B free\) "
        r"for tensor y of op r1$",
    ):
        simulate(relu, gpu_of(1999), mode="timing")


def weighted() -> Graph:
    """y = x + w on gpu0, w a 1000 B weight resident there."""
    inputs = {"x": TensorType((N,), "float32")}
    add = Op("Add", "a1", ("x", "w"), ("y",))
    return Graph("w", (add,), inputs, ("y",), {"w": np.ones(N, np.float32)})


def test_weights_that_fill_a_memory_exactly_pass_the_plan() -> None:
    assert simulate(weighted(), gpu_of(3000), mode="timing").peak_memory_bytes["gpu0.mem"] == 3000
    with pytest.raises(
        PartitionError,
        match=r"^memory gpu0\.mem: expected the weights of the ops placed on it to fit in 999 B, "
        r"got 1000 B \(1 weight tensor: w, read by op a1\)$",
    ):
        simulate(weighted(), gpu_of(999), mode="timing")
    # the weight fits the plan's check; the input copied next to it does not
    with pytest.raises(
        SimulationError,
        match=r"^sim at 0\.0 us, gpu0: out of memory in gpu0\.mem \(need 1000 B, 0 B free\) "
        r"for tensor x@gpu0\.mem of op a1$",
    ):
        simulate(weighted(), gpu_of(1000), mode="timing")


def test_sizes_that_read_alike_are_given_in_bytes_too() -> None:
    # a byte short, the two sizes read alike ("need 4.0 KiB, 4.0 KiB free", "fit in 1024.0 KiB,
    # got 1.0 MiB"): the message did not say why one does not fit the other
    wide = Graph(
        "wide",
        (Op("Relu", "r1", ("x",), ("y",)),),
        {"x": TensorType((1024,), "float32")},
        ("y",),
    )  # x and y: 4096 B each
    with pytest.raises(
        SimulationError,
        match=r"^sim at \S+ us, gpu0: out of memory in gpu0\.mem \(need 4\.0 KiB \(4096 B\), "
        r"4\.0 KiB \(4095 B\) free\) for tensor y of op r1$",
    ):
        simulate(wide, gpu_of(8191), mode="timing")
    heavy = Graph(
        "heavy",
        (Op("Add", "a1", ("x", "w"), ("y",)),),
        {"x": TensorType((2**18,), "float32")},
        ("y",),
        {"w": np.ones(2**18, np.float32)},
    )  # w: 1 MiB
    with pytest.raises(
        PartitionError,
        match=r"^memory gpu0\.mem: expected the weights of the ops placed on it to fit in "
        r"1024\.0 KiB \(1048575 B\), got 1\.0 MiB \(1048576 B\) "
        r"\(1 weight tensor: w, read by op a1\)$",
    ):
        simulate(heavy, gpu_of(2**20 - 1), mode="timing")


def test_a_copy_through_the_host_takes_host_memory_while_it_waits_there() -> None:
    # gpu0 -> gpu1 is routed through host.mem, store and forward: a (1000 B) sits in host.mem
    # from its first hop's end (32.5 us) to its second's (43.5), beside x and b@host.mem
    # (allocated at 29.75): 3000 B, where the staging copy had been counted nowhere (2000)
    ops = (Op("Relu", "r1", ("x",), ("a",)), Op("Neg", "r2", ("a",), ("b",)))
    model = graph(*ops, outputs=("b",))
    two = target(device("gpu0", ["Relu"]), device("gpu1", ["Neg"]))
    assert simulate(model, two, mode="timing").peak_memory_bytes["host.mem"] == 3000
    two["host"]["memory_gib"] = 2999 / 2**30
    with pytest.raises(
        SimulationError,
        match=r"^sim at 32\.5 us, gpu0: out of memory in host\.mem \(need 1000 B, 999 B free\) "
        r"for tensor a@gpu1\.mem staged on its way gpu0\.mem -> gpu1\.mem$",
    ):
        simulate(model, two, mode="timing")


def test_a_result_that_does_not_fit_its_way_back_is_named_so() -> None:
    # a (1000 B) is copied back into host.mem beside x for RET: the message said "of segment RET
    # (an invocation of )", as if an invocation of no level had made it
    model = graph(Op("Relu", "r1", ("x",), ("a",)), outputs=("a",))
    one = target(device("gpu0", ["Relu"]))
    assert simulate(model, one, mode="timing").peak_memory_bytes["host.mem"] == 2000
    one["host"]["memory_gib"] = 1999 / 2**30
    with pytest.raises(
        SimulationError,
        match=r"^sim at \S+ us, host: out of memory in host\.mem \(need 1000 B, 999 B free\) "
        r"for tensor a@host\.mem, a result copied into its level host's memory to return$",
    ):
        simulate(model, one, mode="timing")


def test_a_memory_two_clocks_change_is_counted_in_simulated_time() -> None:
    # x (4000 B) sits in host.mem; a, gpu0 -> gpu1, is staged there from its first hop's end
    # (14.373 us) to its second's (15.437); b's copy back is allocated at 18.53. The host
    # allocated b at its own clock before the engine staged a, so counting in the order made
    # held 12000 B, and a host.mem of 8000 B, which at no time holds more, was refused
    ops = (Op("Relu", "r1", ("x",), ("a",)), Op("Neg", "r2", ("a",), ("b",)))
    model = Graph("g", ops, {"x": TensorType((1000,), "float32")}, ("b",))
    spec: dict[str, object] = {
        "kind": "hetero",
        "host": {"kind": "x86-cpu"},
        "devices": [
            {"kind": "cuda", "name": "gpu0", "ops": ["Relu"]},
            {"kind": "cuda", "name": "gpu1", "ops": ["Neg"]},
        ],
    }
    result = simulate(model, spec, mode="timing")
    spans = {(s.resource, s.name): s for s in result.record.spans}
    staged_to = spans["host.mem--gpu1.mem", "copy a@gpu1.mem"].end_us
    assert staged_to < spans["host", "alloc b@host.mem"].start_us  # never held together
    assert result.peak_memory_bytes["host.mem"] == 8000
    spec["host"] = {"kind": "x86-cpu", "memory_gib": 8000 / 2**30}
    assert simulate(model, spec, mode="timing").peak_memory_bytes["host.mem"] == 8000
    spec["host"] = {"kind": "x86-cpu", "memory_gib": 7999 / 2**30}
    # a byte short, the first ALLOC without room in simulated time is a's staging, though the
    # host made b's (also without room, at 18.53 us) before the engine staged a
    staged_from = spans["host.mem--gpu0.mem", "copy a@gpu1.mem"].end_us
    with pytest.raises(
        SimulationError,
        match=rf"^sim at {staged_from:.3f} us, gpu0: out of memory in host\.mem \(need .*4000 B"
        r"\), .*3999 B\) free\) for tensor a@gpu1\.mem staged on its way gpu0\.mem -> gpu1\.mem$",
    ):
        simulate(model, spec, mode="timing")


def test_weights_that_overflow_name_the_largest_and_an_op_reading_it() -> None:
    # two weights of 1000 B and one of 4 B: the largest, the first by name of the equal ones
    ops = (
        Op("Add", "a1", ("x", "wb"), ("y1",)),
        Op("Add", "a2", ("y1", "wa"), ("y2",)),
        Op("Add", "a3", ("y2", "s"), ("y",)),
    )
    weights = {
        "wb": np.ones(N, np.float32),
        "wa": np.ones(N, np.float32),
        "s": np.ones(1, np.float32),
    }
    three = Graph("w3", ops, {"x": TensorType((N,), "float32")}, ("y",), weights)
    with pytest.raises(PartitionError) as refused:
        simulate(three, gpu_of(1000), mode="timing")
    assert str(refused.value) == (
        "memory gpu0.mem: expected the weights of the ops placed on it to fit in 1000 B, got "
        "2.0 KiB (3 weight tensors: the largest wa, 1000 B, read by op a2)"
    )
