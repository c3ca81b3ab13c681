"""A run's spans are kept as rows and made into `Span`s when first read: the same spans, the
same totals, whichever way they are read."""

from __future__ import annotations

import copy
import gc
import pickle
from typing import Any

import numpy as np
import pytest
import simpy

from hetsim.api import simulate
from hetsim.ir import Graph, Op, TensorType
from hetsim.report import Result, check_invariants
from hetsim.report.breakdown import busy_us, totals
from hetsim.sim.records import Span, Spans
from hetsim.sim.resources import wait_until


def test_simulate_sums_the_rows_without_making_spans() -> None:
    result = simulate("cnn", "x86-h100", mode="timing")
    spans = result.record.spans
    assert isinstance(spans, Spans)
    assert all(type(row) is tuple for row in spans.rows)  # not made yet: the totals read rows
    made = tuple(spans)
    assert all(type(span) is Span for span in made)
    assert all(type(row) is Span for row in spans.rows)  # the rows gave way to the spans
    assert len(made) == len(spans)
    assert spans[0] == made[0]
    assert spans[-2:] == made[-2:]
    # the totals read from the rows equal those read from the made spans
    again = Result.from_record(result.record)
    assert again.to_dict() == result.to_dict()
    by_resource: dict[str, list[Span]] = {}
    for span in made:
        by_resource.setdefault(span.resource, []).append(span)
    busy = totals(result.record)[1]
    for resource, found in by_resource.items():
        assert busy[resource] == busy_us(found)


def test_spans_compare_and_pickle_as_the_tuple_of_them() -> None:
    rows = (
        ("host", "exec", "a", "dispatch", 0.0, 1.0, None, None, {}),
        ("gpu0", "stream0", "k", "compute", 1.0, 3.0, None, 1, {"op_type": "Relu"}),
    )
    spans = Spans(rows)
    as_tuple = tuple(Span(*row) for row in rows)
    assert spans == as_tuple
    assert as_tuple == spans
    assert spans == list(as_tuple)
    assert spans == Spans(rows)
    assert spans != as_tuple[:1]
    assert spans != Spans(rows[:1])
    assert pickle.loads(pickle.dumps(spans)) == as_tuple
    assert type(pickle.loads(pickle.dumps(Spans(rows)))) is tuple
    assert repr(spans) == "<Spans 2>"
    assert spans[1].duration_us == 2.0


def test_making_spans_leaves_the_collector_as_it_was() -> None:
    rows = (("host", "exec", "a", "dispatch", 0.0, 1.0, None, None, {}),)
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            assert len(tuple(Spans(rows))) == 1
            assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_a_span_made_without_args_pickles_and_copies() -> None:
    # "cannot pickle 'mappingproxy' object": the shared read-only default of args
    span = Span("host", "exec", "a", "dispatch", 0.0, 1.0)
    for again in (pickle.loads(pickle.dumps(span)), copy.deepcopy(span)):
        assert type(again) is Span
        assert again == span
        assert again.args == {}
    for flows in ((None, 1), (2, None)):
        with_args = Span("gpu0", "stream0", "k", "compute", 1.0, 3.0, *flows, {"op_type": "Relu"})
        assert pickle.loads(pickle.dumps(with_args)) == with_args


def test_a_copy_of_an_empty_tensor_does_not_end_before_it_starts() -> None:
    # the copy of t1 (0 x 3: no bytes, no time) back to the host starts at the stream's clock,
    # 11.679999999999998 us; SimPy reached it as now + (start - now), 11.679999999999996, and
    # the span ended there: check_invariants refused the run (found by a random-target audit)
    target = {
        "kind": "hetero",
        "host": "riscv-cpu",
        "executor": "vm",
        "devices": [
            {"tag": "nvidia/nvdla", "link": {"bandwidth_gbps": 0.001, "latency_us": 0.1}},
            {"kind": "x86-cpu", "ops": ["MatMul", "Add", "Relu", "Softmax"], "name": "d1"},
        ],
    }
    ops = (
        Op("Neg", "op0", ("x",), ("t0",)),
        Op("MatMul", "op1", ("x", "w"), ("t1",)),
        Op("ReduceMax", "op2r", ("t0",), ("t2r",), {"axes": [-1], "keepdims": 1}),
        Op("Sub", "op2", ("t0", "t2r"), ("t2",)),
        Op("Softmax", "op7", ("t2",), ("t7",), {"axis": -1}),
        Op("Max", "op9", ("t0", "t1"), ("t9",)),
    )
    weights = {"w": np.ones((3, 3), np.float32)}
    graph = Graph("g", ops, {"x": TensorType(("n", 3), "float32")}, ("t9", "t7"), weights, opset=17)
    result = simulate(graph, target, inputs={"x": np.zeros((0, 3), np.float32)})
    copies = {
        s.resource: (s.start_us, s.end_us)
        for s in result.spans
        if s.name == "copy t1@host.mem" and s.category == "transfer"
    }
    at = 11.679999999999998  # the stream's clock: when it was queued
    assert copies == {"d1": (at, at), "host.mem--d1.mem": (at, at)}  # its stream, its link
    assert check_invariants(result) == []


@pytest.mark.parametrize(
    ("now", "at"),
    [
        (0.5699993338763802, 3.9967884035428614),  # now + (at - now) rounds below at
        (0.002026676581985817, 0.02032952071880331),  # ... and above it
    ],
)
def test_wait_until_lands_on_its_time(now: float, at: float) -> None:
    env = simpy.Environment()
    landed = []

    def process() -> Any:
        yield env.timeout(now)
        yield from wait_until(env, at)
        landed.append(env.now)

    env.process(process())
    env.run()
    assert landed == [at]
