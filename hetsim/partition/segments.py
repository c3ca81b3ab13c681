"""Segments: maximal connected groups of ops placed on one device, never forming a cycle.

Owns the merge rule. Given one level's ops and the device each was placed on, every op starts as
its own group; two groups joined by a data edge and placed on the same device merge unless the
merge would close a cycle in the graph of groups (another path joins them through a third group).
Merging repeats until no edge can merge, so the groups are maximal. The group DAG is a
``networkx.DiGraph``; its lexicographic topological order (by first op) is the segments' order.
Which device each op gets is the policies' job; transfers are `hetsim.partition.core`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import networkx as nx

from hetsim.ir import Op

__all__ = ["data_edges", "group_ops"]


def data_edges(ops: Sequence[Op]) -> list[tuple[int, int]]:
    """``(producer, consumer)`` index pairs among `ops` (a topologically ordered sequence).

    Examples
    --------
    >>> a, b = Op("Relu", "a", ("x",), ("y",)), Op("Add", "b", ("y", "y"), ("z",))
    >>> data_edges([a, b])
    [(0, 1)]
    """
    producer = {name: i for i, op in enumerate(ops) for name in op.outputs if name}
    edges: dict[tuple[int, int], None] = {}
    for j, op in enumerate(ops):
        for name in op.inputs:
            i = producer.get(name)
            if i is not None:
                edges[(i, j)] = None
    return list(edges)


def _would_cycle(dag: nx.DiGraph, a: int, b: int) -> bool:
    """Whether merging `a` into `b` (edge a -> b) closes a cycle: another path a ~> b exists."""
    return any(s != b and nx.has_path(dag, s, b) for s in dag.successors(a))


def group_ops(ops: Sequence[Op], device: Mapping[str, str]) -> list[tuple[str, tuple[Op, ...]]]:
    """Cut `ops` into segments: ``(device, ops in graph order)`` in execution order.

    Parameters
    ----------
    ops
        One level's ops, topologically ordered.
    device
        Op name -> the device (processor or nested level path) the op was placed on.

    Returns
    -------
    list
        Maximal connected same-device groups whose DAG is acyclic, ordered topologically (ties
        by first op).

    Examples
    --------
    A diamond whose middle op sits elsewhere cannot merge its two ends (that would be a cycle):

    >>> ops = [Op("Relu", "a", ("x",), ("y",)), Op("Neg", "b", ("y",), ("z",)),
    ...        Op("Add", "c", ("y", "z"), ("w",))]
    >>> [(d, [o.name for o in g]) for d, g in group_ops(ops, {"a": "npu", "b": "host", "c": "npu"})]
    [('npu', ['a']), ('host', ['b']), ('npu', ['c'])]
    >>> [(d, [o.name for o in g]) for d, g in group_ops(ops, {"a": "npu", "b": "npu", "c": "npu"})]
    [('npu', ['a', 'b', 'c'])]
    """
    dag = nx.DiGraph()
    dag.add_nodes_from(range(len(ops)))
    edges = data_edges(ops)
    dag.add_edges_from(edges)
    group = list(range(len(ops)))

    def find(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    merged = True
    while merged:
        merged = False
        for u, v in edges:
            a, b = find(u), find(v)
            if a == b or device[ops[a].name] != device[ops[b].name] or _would_cycle(dag, a, b):
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
