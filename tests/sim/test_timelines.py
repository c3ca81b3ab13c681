"""Hand-computed timelines: tiny models on tiny targets, every span from the documented formulas.

Parameters are round numbers (docs/cost-model.md, docs/runtime.md):

- host: VM ``dispatch_us = 1``; runtime ``alloc_us = 0.5``, ``free_us = 0.25``;
  host kernels: ``kernel_latency_us = 1`` and 1 GB/s (1000 B/µs), compute negligible.
- devices: ``kernel_latency_us = 3``, 2 GB/s (2000 B/µs), ``launch_us = 4``, ``sync_us = 2``;
  link 1 GB/s with ``latency_us = 10``; compute negligible (1e6 GFLOP/s).
- every tensor is float32[250]: 1000 bytes. An elementwise op on it reads 1000 B per input and
  writes 1000 B: a unary op moves 2000 B, a binary one 3000 B.

So: a host unary kernel takes 1 + 2000/1000 = 3 µs, a host Add 1 + 3000/1000 = 4 µs; a device
unary kernel 3 + 2000/2000 = 4 µs; a copy 10 + 1000/1000 = 11 µs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hetsim.api import simulate
from hetsim.ir import Graph, Op
from hetsim.kernels import execute
from tests.sim.tiny import N, assert_run_invariants, device, graph, target


def spans(result: Any) -> list[tuple[str, str, str, str, float, float]]:
    return [(s.resource, s.stream, s.name, s.category, s.start_us, s.end_us) for s in result.spans]


def run(model: Graph, tgt: dict[str, Any]) -> Any:
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    result = simulate(model, tgt, inputs={"x": x})
    assert_run_invariants(result, model, tgt)
    for name, value in execute(model, {"x": x}).items():
        np.testing.assert_array_equal(result.outputs[name], value)
    return result


H, E, G0, G1, L0, L1 = "host", "exec", "gpu0", "gpu1", "host.mem--gpu0.mem", "host.mem--gpu1.mem"
S, LK = "stream0", "link"


def test_one_op_on_the_host() -> None:
    # the only device runs Conv alone, so Relu stays on the host.
    result = run(
        graph(Op("Relu", "r", ("x",), ("y",)), outputs=("y",)), target(device("gpu0", ["Conv"]))
    )
    assert spans(result) == [
        (H, E, "alloc y", "dispatch", 0.0, 1.5),
        (H, E, "call r", "dispatch", 1.5, 2.5),
        (H, E, "r", "compute", 2.5, 5.5),
        (H, E, "ret", "dispatch", 5.5, 6.5),
    ]
    assert result.makespan_us == 6.5
    assert result.placement == {"r": "host"}
    assert result.peak_memory_bytes["host.mem"] == 2000  # x and y


def test_chain_of_three_on_a_device_over_a_slow_link() -> None:
    ops = (
        Op("Relu", "r1", ("x",), ("a",)),
        Op("Neg", "r2", ("a",), ("b",)),
        Op("Abs", "r3", ("b",), ("c",)),
    )
    result = run(graph(*ops, outputs=("c",)), target(device("gpu0", ["*"])))
    assert spans(result) == [
        (H, E, "alloc x@gpu0.mem", "dispatch", 0.0, 1.5),
        (H, E, "copy x@gpu0.mem", "dispatch", 1.5, 2.5),
        (H, E, "copy x@gpu0.mem", "launch", 2.5, 6.5),
        (H, E, "alloc a", "dispatch", 6.5, 8.0),
        (L0, LK, "copy x@gpu0.mem", "transfer", 6.5, 17.5),  # 10 + 1000 / 1000
        (G0, S, "copy x@gpu0.mem", "transfer", 6.5, 17.5),
        (H, E, "launch r1", "dispatch", 8.0, 9.0),
        (H, E, "launch r1", "launch", 9.0, 13.0),
        (H, E, "free x@gpu0.mem", "dispatch", 13.0, 14.25),  # x@gpu0's last use is r1
        (H, E, "alloc b", "dispatch", 14.25, 15.75),
        (H, E, "launch r2", "dispatch", 15.75, 16.75),
        (H, E, "launch r2", "launch", 16.75, 20.75),
        (G0, S, "r1", "compute", 17.5, 21.5),  # after the copy, not at its launch (13)
        (H, E, "free a", "dispatch", 20.75, 22.0),
        (G0, S, "r2", "compute", 21.5, 25.5),  # after r1, not at its launch (20.75)
        (H, E, "alloc c", "dispatch", 22.0, 23.5),
        (H, E, "launch r3", "dispatch", 23.5, 24.5),
        (H, E, "launch r3", "launch", 24.5, 28.5),
        (H, E, "free b", "dispatch", 28.5, 29.75),
        (G0, S, "r3", "compute", 28.5, 32.5),  # at its launch: the stream is idle
        (H, E, "alloc c@host.mem", "dispatch", 29.75, 31.25),
        (H, E, "copy c@host.mem", "dispatch", 31.25, 32.25),
        (H, E, "copy c@host.mem", "launch", 32.25, 36.25),
        (H, E, "free c", "dispatch", 36.25, 37.5),  # stream-ordered: after the copy back
        (L0, LK, "copy c@host.mem", "transfer", 36.25, 47.25),
        (G0, S, "copy c@host.mem", "transfer", 36.25, 47.25),
        (H, E, "sync gpu0", "dispatch", 37.5, 38.5),
        (H, E, "sync gpu0", "sync_wait", 38.5, 47.25),
        (H, E, "sync gpu0", "sync_wait", 47.25, 49.25),
        (H, E, "ret", "dispatch", 49.25, 50.25),
    ]
    assert result.makespan_us == 50.25
    assert result.links[L0].bytes == 2000  # x there, c back
    # gpu0 holds two tensors at a time: (x, a), then (a, b) after x is freed, then (b, c).
    assert result.peak_memory_bytes == {"host.mem": 2000, "gpu0.mem": 2000}


def test_two_branches_on_two_devices_overlap() -> None:
    ops = (
        Op("Relu", "relu", ("x",), ("a",)),
        Op("Neg", "neg", ("x",), ("b",)),
        Op("Add", "add", ("a", "b"), ("y",)),
    )
    tgt = target(device("gpu0", ["Relu"]), device("gpu1", ["Neg"]))
    result = run(graph(*ops, outputs=("y",)), tgt)
    assert result.placement == {"relu": "gpu0", "neg": "gpu1", "add": "host"}
    assert spans(result) == [
        (H, E, "alloc x@gpu0.mem", "dispatch", 0.0, 1.5),
        (H, E, "copy x@gpu0.mem", "dispatch", 1.5, 2.5),
        (H, E, "copy x@gpu0.mem", "launch", 2.5, 6.5),
        (H, E, "alloc a", "dispatch", 6.5, 8.0),
        (L0, LK, "copy x@gpu0.mem", "transfer", 6.5, 17.5),
        (G0, S, "copy x@gpu0.mem", "transfer", 6.5, 17.5),
        (H, E, "launch relu", "dispatch", 8.0, 9.0),
        (H, E, "launch relu", "launch", 9.0, 13.0),
        (H, E, "free x@gpu0.mem", "dispatch", 13.0, 14.25),
        (H, E, "alloc x@gpu1.mem", "dispatch", 14.25, 15.75),
        (H, E, "copy x@gpu1.mem", "dispatch", 15.75, 16.75),
        (H, E, "copy x@gpu1.mem", "launch", 16.75, 20.75),
        (G0, S, "relu", "compute", 17.5, 21.5),
        (H, E, "alloc b", "dispatch", 20.75, 22.25),
        (L1, LK, "copy x@gpu1.mem", "transfer", 20.75, 31.75),
        (G1, S, "copy x@gpu1.mem", "transfer", 20.75, 31.75),
        (H, E, "launch neg", "dispatch", 22.25, 23.25),
        (H, E, "launch neg", "launch", 23.25, 27.25),
        (H, E, "free x@gpu1.mem", "dispatch", 27.25, 28.5),
        (H, E, "alloc a@host.mem", "dispatch", 28.5, 30.0),
        (H, E, "copy a@host.mem", "dispatch", 30.0, 31.0),
        (H, E, "copy a@host.mem", "launch", 31.0, 35.0),
        (G1, S, "neg", "compute", 31.75, 35.75),
        (H, E, "alloc b@host.mem", "dispatch", 35.0, 36.5),
        (L0, LK, "copy a@host.mem", "transfer", 35.0, 46.0),
        (G0, S, "copy a@host.mem", "transfer", 35.0, 46.0),
        (H, E, "copy b@host.mem", "dispatch", 36.5, 37.5),
        (H, E, "copy b@host.mem", "launch", 37.5, 41.5),
        (H, E, "alloc y", "dispatch", 41.5, 43.0),
        (L1, LK, "copy b@host.mem", "transfer", 41.5, 52.5),
        (G1, S, "copy b@host.mem", "transfer", 41.5, 52.5),
        (H, E, "sync gpu0", "dispatch", 43.0, 44.0),
        (H, E, "sync gpu0", "sync_wait", 44.0, 46.0),
        (H, E, "sync gpu0", "sync_wait", 46.0, 48.0),
        (H, E, "sync gpu1", "dispatch", 48.0, 49.0),
        (H, E, "sync gpu1", "sync_wait", 49.0, 52.5),
        (H, E, "sync gpu1", "sync_wait", 52.5, 54.5),
        (H, E, "call add", "dispatch", 54.5, 55.5),
        (H, E, "add", "compute", 55.5, 59.5),  # 1 + 3000 / 1000
        (H, E, "free a@host.mem", "dispatch", 59.5, 60.75),
        (H, E, "free a", "dispatch", 60.75, 62.0),
        (H, E, "free b@host.mem", "dispatch", 62.0, 63.25),
        (H, E, "free b", "dispatch", 63.25, 64.5),
        (H, E, "ret", "dispatch", 64.5, 65.5),
    ]
    # the two devices compute at the same time: relu 17.5..21.5 while gpu1 copies 20.75..31.75
    assert result.makespan_us == 65.5
    assert result.links[L0].bytes == result.links[L1].bytes == 2000


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_timing_mode_gives_the_same_times(mode: str) -> None:
    ops = (Op("Relu", "r1", ("x",), ("a",)), Op("Neg", "r2", ("a",), ("b",)))
    model = graph(*ops, outputs=("b",))
    x = np.zeros(N, np.float32)
    functional = simulate(model, target(device("gpu0", ["*"])), inputs={"x": x})
    other = simulate(model, target(device("gpu0", ["*"])), inputs={"x": x}, mode=mode)
    assert spans(other) == spans(functional)
    assert (other.outputs == {}) == (mode == "timing")
