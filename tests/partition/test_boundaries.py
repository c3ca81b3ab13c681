"""A segment's inputs and outputs equal their definition over the whole graph, at every level.

`partition` finds them in one pass per level (a tensor leaves its segment when a later segment
of the level reads it, or when it leaves the parent segment); the reference here reads the
definition: the tensors a segment reads and does not make (constants aside), and the tensors it
makes that are graph outputs or have a reader, anywhere in the graph, outside the segment.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.ir import Graph, Op, TensorType
from hetsim.partition import Plan, Segment, fold, partition
from tests.partition.tiny import LINK, level, nested, platform_of, proc

TYPES = ("Relu", "Neg", "Add", "Mul")


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    """Ops reading recent tensors, the input x or a weight; some intermediates are outputs."""
    weights = {f"w{i}": np.ones(4, "float32") for i in range(draw(st.integers(0, 2)))}
    tensors = ["x", *weights]
    ops = []
    for i in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(TYPES))
        arity = 2 if kind in ("Add", "Mul") else 1
        reads = tuple(draw(st.sampled_from(tensors[-5:] + tensors[:3])) for _ in range(arity))
        ops.append(Op(kind, f"op{i}", reads, (f"t{i}",)))
        tensors.append(f"t{i}")
    made = [op.outputs[0] for op in ops]
    extra = draw(st.lists(st.sampled_from(made), max_size=3))
    outputs = tuple(dict.fromkeys([made[-1], *extra]))
    return Graph("g", tuple(ops), {"x": TensorType((4,), "float32")}, outputs, weights)


@st.composite
def platforms(draw: st.DrawFn) -> dict[str, Any]:
    """A root level whose devices are accelerators or nested levels (two deep at most)."""

    def device(name: str, depth: int) -> dict[str, Any]:
        if depth < 2 and draw(st.booleans()):
            inner = [device(f"{name}{j}", depth + 1) for j in range(draw(st.integers(1, 2)))]
            return nested(name, inner)
        ops = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True))
        return proc("npu", name=name, ops=ops, link=LINK)

    return level(proc("arm-cpu"), [device(f"d{j}", 0) for j in range(draw(st.integers(1, 2)))])


def _expected(graph: Graph, segment: Segment, constants: set[str]) -> tuple[tuple[str, ...], ...]:
    ops = [op for op in graph.ops if op.name in segment.ops]
    made = {t for op in ops for t in op.outputs}
    inputs = dict.fromkeys(
        t for op in ops for t in op.inputs if t not in made and t not in constants
    )
    outside = {t for op in graph.ops if op.name not in segment.ops for t in op.inputs}
    outputs = [t for op in ops for t in op.outputs if t in graph.outputs or t in outside]
    return tuple(inputs), tuple(outputs)


def _check(graph: Graph, plan: Plan) -> None:
    constants = set(fold(graph)[0])
    for segment in plan.segments:
        assert (segment.inputs, segment.outputs) == _expected(graph, segment, constants), segment


@settings(max_examples=150, deadline=None, derandomize=True)
@given(graphs(), platforms())
def test_segment_inputs_and_outputs_follow_their_definition(
    graph: Graph, config: dict[str, Any]
) -> None:
    _check(graph, partition(graph, platform_of(config)))
