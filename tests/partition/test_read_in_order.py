"""What partitioning reads in order rather than by name (a speed trick at 1e6 ops): each such
read gives what the lookup by name gives, whatever the order of the tables it is handed."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import propagate_costs
from hetsim.partition import partition
from hetsim.partition.context import LevelContext
from hetsim.partition.segments import grouping
from hetsim.platform import Platform
from tests.partition.tiny import LINK, level, nested, platform_of, proc


@st.composite
def one_device_ops(draw: st.DrawFn, *, omitted: bool = True) -> list[Op]:
    """Sums reading earlier outputs, the input x, a weight w or (`omitted`) no input ('')."""
    n = draw(st.integers(1, 12))
    ops = []
    for i in range(n):
        earlier = [f"t{j}" for j in range(i)]
        pool = st.sampled_from([*earlier, "x", "w", *([""] * omitted)])
        reads = draw(st.lists(pool, min_size=1, max_size=3))
        ops.append(Op("Sum", f"op{i}", tuple(reads), (f"t{i}",)))
    return ops


def _outside(ops: list[Op]) -> tuple[str, ...]:
    """The tensors `ops` read that none of them makes, first read first: by name."""
    made = {name for op in ops for name in op.outputs}
    return tuple(dict.fromkeys(t for op in ops for t in op.inputs if t not in made))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(one_device_ops())
def test_one_group_notes_what_it_reads_from_outside(ops: list[Op]) -> None:
    cut = grouping(ops, dict.fromkeys((op.name for op in ops), "npu"))
    if len(cut.groups) == 1:
        assert cut.outside == _outside(ops)
    else:  # several components: their inputs are core's to find
        assert cut.outside is None


@settings(max_examples=150, deadline=None, derandomize=True)
@given(one_device_ops(), st.lists(st.sampled_from(("npu", "host")), min_size=12, max_size=12))
def test_a_placement_in_another_order_groups_alike(ops: list[Op], devices: list[str]) -> None:
    placed = {op.name: device for op, device in zip(ops, devices, strict=False)}
    backwards = dict(reversed(placed.items()))  # read by name, not in order
    assert grouping(ops, backwards) == grouping(ops, placed)


def _graph(ops: list[Op]) -> Graph:
    read = {t for op in ops for t in op.inputs}
    return Graph(
        "g",
        tuple(ops),
        {"x": TensorType((4,), "float32")},
        tuple(t for op in ops for t in op.outputs if t not in read),
        {"w": np.ones(4, "float32")},
    )


@settings(max_examples=100, deadline=None, derandomize=True)
@given(one_device_ops(omitted=False))
def test_one_segment_reads_what_a_lookup_by_name_finds(ops: list[Op]) -> None:
    graph = _graph(ops)
    npu = platform_of(level(proc("arm-cpu"), [proc("npu", name="npu", link=LINK)]))
    plan = partition(graph, npu)
    _, costs = propagate_costs(graph, {})  # the folded ops' too, as simulate hands them
    kept = [op for op in graph.ops if op.name not in plan.folded]  # folded: sums of w alone
    constants = {"w", *(t for op in graph.ops if op.name in plan.folded for t in op.outputs)}
    for segment in plan.segments:
        members = [op for op in kept if op.name in segment.ops]
        assert segment.inputs == tuple(t for t in _outside(members) if t not in constants)
        leaving = {*graph.outputs, *(t for op in kept if op.name not in segment.ops
                                     for t in op.inputs)}  # fmt: skip
        assert segment.outputs == tuple(t for op in members for t in op.outputs if t in leaving)
        assert segment.flops == sum(costs[name].flops for name in segment.ops)
    assert list(plan.placement) == [op.name for op in graph.ops]  # the graph's order


def test_flops_and_placement_alike_from_tables_in_any_order(
    host_npu: Platform, chain: Graph
) -> None:
    metas, costs = propagate_costs(chain, {})
    backwards = dict(reversed(costs.items()))
    ordered = partition(chain, host_npu, metas=metas, costs=costs)
    shuffled = partition(chain, host_npu, metas=metas, costs=backwards)
    assert [s.flops for s in shuffled.segments] == [s.flops for s in ordered.segments]
    assert [s.flops for s in ordered.segments] == [1000.0, 1000.0, 1000.0]
    assert list(ordered.placement) == ["relu0", "neg0", "add0"]  # three segments: rebuilt
    assert dict(ordered.placement) == {"relu0": "npu", "neg0": "host", "add0": "npu"}


def _context(platform: Platform, dtypes: frozenset[str] | None) -> LevelContext:
    ops = (Op("Relu", "r", ("x",), ("y",)),)
    metas, _ = propagate_costs(Graph("g", ops, {"x": TensorType((4,), "float64")}, ("y",)), {})
    return LevelContext(platform, platform.levels[""], ops, metas, {}, dtypes=dtypes)


def test_candidates_read_dtypes_where_a_choice_lacks_one() -> None:
    npu = proc("npu", name="npu", link=LINK, dtypes=["float32"])
    platform = platform_of(level(proc("arm-cpu"), [npu]))
    op = Op("Relu", "r", ("x",), ("y",))
    for dtypes in (None, frozenset({"float64"})):  # unknown, or one the NPU lacks
        assert _context(platform, dtypes).candidates(op) == ("host",)
    # told the graph holds float32 alone (wrongly here), no choice refuses one: none read
    assert _context(platform, frozenset({"float32"})).candidates(op) == ("npu", "host")


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    st.lists(st.tuples(st.sampled_from(("Relu", "Neg", "Abs")), st.booleans()), max_size=10),
    st.sets(st.integers(0, 9)),
    st.sampled_from((None, frozenset({"float32", "float64"}), frozenset({"float32"}))),
)
def test_first_choices_are_each_ops_first_candidate(
    ops_drawn: list[tuple[str, bool]], dynamic: set[int], dtypes: frozenset[str] | None
) -> None:
    # found once per op type where no op is dynamic and no choice refuses a dtype the graph has
    # (`dtypes`, None for unknown); op by op else. A dynamic op cannot go to the nested level
    # (its graph executor is static), nor a float64 one (its NPU computes float32 only), unless
    # the level is told, wrongly, that the graph holds float32 alone.
    npu = proc("npu", name="npu", link=LINK, ops=["Relu", "Abs"], dtypes=["float32"])
    platform = platform_of(level(proc("arm-cpu"), [nested("vdev", [npu])]))
    ops, last = [], {False: "x", True: "z"}  # two chains: float32 from x, float64 from z
    for i, (op_type, wide) in enumerate(ops_drawn):
        ops.append(Op(op_type, f"op{i}", (last[wide],), (f"t{i}",)))
        last[wide] = f"t{i}"
    inputs = {"x": TensorType((4,), "float32"), "z": TensorType((4,), "float64")}
    graph = Graph("g", (*ops, Op("Identity", "end", ("x",), ("y",))), inputs, ("y", *last.values()))
    metas, _ = propagate_costs(graph, {})
    names = frozenset(f"op{i}" for i in dynamic if i < len(ops))
    context = LevelContext(
        platform, platform.levels[""], tuple(ops), metas, {}, dynamic=names, dtypes=dtypes
    )
    expected = {op.name: context.candidates(op)[0] for op in ops}
    assert context.first_choices() == expected
    assert list(context.first_choices()) == [op.name for op in ops]
    for op, (_, wide) in zip(ops, ops_drawn, strict=True):
        fits = not wide or dtypes == frozenset({"float32"})
        on_device = op.type != "Neg" and op.name not in names and fits
        assert expected[op.name] == ("vdev" if on_device else "host")
