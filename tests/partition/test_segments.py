"""Segments: maximal, connected, single-device groups whose DAG never has a cycle."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.ir import Op
from hetsim.partition import group_ops
from hetsim.partition.segments import data_edges

DEVICES = ("a", "b", "c")


def _ops(reads: list[list[int]]) -> list[Op]:
    """Op i reads the outputs of the earlier ops listed in reads[i] (or the input x)."""
    return [
        Op("Add", f"op{i}", tuple(f"t{j}" for j in sorted(set(r))) or ("x",), (f"t{i}",))
        for i, r in enumerate(reads)
    ]


@st.composite
def placed_dags(draw: st.DrawFn) -> tuple[list[Op], dict[str, str]]:
    n = draw(st.integers(1, 12))
    reads = [draw(st.lists(st.integers(0, i - 1), max_size=3)) if i else [] for i in range(n)]
    ops = _ops(reads)
    device = {op.name: draw(st.sampled_from(DEVICES)) for op in ops}
    return ops, device


def _group_dag(ops: list[Op], groups: list[tuple[str, tuple[Op, ...]]]) -> nx.DiGraph:
    index = {op.name: g for g, (_, members) in enumerate(groups) for op in members}
    dag = nx.DiGraph()
    dag.add_nodes_from(range(len(groups)))
    for i, j in data_edges(ops):
        if index[ops[i].name] != index[ops[j].name]:
            dag.add_edge(index[ops[i].name], index[ops[j].name])
    return dag


@settings(max_examples=150, deadline=None, derandomize=True)
@given(placed_dags())
def test_segments_cover_ops_once_on_one_device_connected(
    case: tuple[list[Op], dict[str, str]],
) -> None:
    ops, device = case
    groups = group_ops(ops, device)
    names = [op.name for _, members in groups for op in members]
    assert sorted(names) == sorted(op.name for op in ops)
    edges = data_edges(ops)
    position = {op.name: i for i, op in enumerate(ops)}
    for where, members in groups:
        assert {device[op.name] for op in members} == {where}
        inside = {position[op.name] for op in members}
        graph = nx.Graph()
        graph.add_nodes_from(inside)
        graph.add_edges_from((i, j) for i, j in edges if i in inside and j in inside)
        assert nx.is_connected(graph)
        assert [position[op.name] for op in members] == sorted(inside)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(placed_dags())
def test_segment_dag_is_acyclic_and_in_execution_order(
    case: tuple[list[Op], dict[str, str]],
) -> None:
    ops, device = case
    groups = group_ops(ops, device)
    dag = _group_dag(ops, groups)
    assert nx.is_directed_acyclic_graph(dag)
    assert all(u < v for u, v in dag.edges)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(placed_dags())
def test_segments_are_maximal(case: tuple[list[Op], dict[str, str]]) -> None:
    ops, device = case
    groups = group_ops(ops, device)
    dag = _group_dag(ops, groups)
    for u, v in dag.edges:
        if groups[u][0] == groups[v][0]:
            merged = nx.contracted_nodes(dag, u, v, self_loops=False)
            assert not nx.is_directed_acyclic_graph(merged), f"{u} and {v} could merge"


def test_parallel_branches_on_one_device_stay_separate_segments() -> None:
    ops = [
        Op("Relu", "a", ("x",), ("ya",)),
        Op("Neg", "b", ("x",), ("yb",)),
        Op("Add", "c", ("ya", "yb"), ("z",)),
    ]
    groups = group_ops(ops, {"a": "npu", "b": "npu", "c": "host"})
    assert [(d, [o.name for o in g]) for d, g in groups] == [
        ("npu", ["a"]),
        ("npu", ["b"]),
        ("host", ["c"]),
    ]


def test_chain_through_same_device_merges_into_one_segment() -> None:
    ops = _ops([[], [0], [1], [0, 2]])
    groups = group_ops(ops, dict.fromkeys((op.name for op in ops), "npu"))
    assert [[o.name for o in g] for _, g in groups] == [["op0", "op1", "op2", "op3"]]


def _reference_group_ops(ops: list[Op], device: dict[str, str]) -> list[tuple[str, tuple[Op, ...]]]:
    """The merge rule written plainly on networkx (the implementation before the union-find)."""
    dag = nx.DiGraph()
    dag.add_nodes_from(range(len(ops)))
    edges = data_edges(ops)
    dag.add_edges_from(edges)
    group = list(range(len(ops)))

    def find(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    merged = True
    while merged:
        merged = False
        for u, v in edges:
            a, b = find(u), find(v)
            if a == b or device[ops[a].name] != device[ops[b].name]:
                continue
            if any(s != b and nx.has_path(dag, s, b) for s in dag.successors(a)):
                continue
            keep, gone = min(a, b), max(a, b)
            nx.contracted_nodes(dag, keep, gone, self_loops=False, copy=False)
            group[gone] = keep
            merged = True
    members: dict[int, list[Op]] = {}
    for i, op in enumerate(ops):
        members.setdefault(find(i), []).append(op)
    order = nx.lexicographical_topological_sort(dag, key=lambda n: n)
    return [(device[ops[n].name], tuple(members[n])) for n in order]


@st.composite
def wide_placed_dags(draw: st.DrawFn) -> tuple[list[Op], dict[str, str]]:
    n = draw(st.integers(1, 40))
    reads = [
        draw(st.lists(st.integers(max(0, i - 6), i - 1), max_size=4)) if i else [] for i in range(n)
    ]
    ops = _ops(reads)
    device = {op.name: draw(st.sampled_from(DEVICES[:2])) for op in ops}
    return ops, device


@settings(max_examples=300, deadline=None, derandomize=True)
@given(wide_placed_dags())
def test_segments_equal_the_plain_networkx_merge(case: tuple[list[Op], dict[str, str]]) -> None:
    ops, device = case
    assert group_ops(ops, device) == _reference_group_ops(ops, device)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(wide_placed_dags())
def test_segments_on_one_device_equal_the_plain_networkx_merge(
    case: tuple[list[Op], dict[str, str]],
) -> None:
    ops, _ = case  # every op on one device: group_ops takes its connected-components path
    device = dict.fromkeys((op.name for op in ops), "npu")
    assert group_ops(ops, device) == _reference_group_ops(ops, device)
