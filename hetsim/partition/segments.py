"""Segments: maximal connected groups of ops placed on one device, never forming a cycle.

Owns the merge rule. Given one level's ops and the device each was placed on, every op starts as
its own group; two groups joined by a data edge and placed on the same device merge unless the
merge would close a cycle in the graph of groups (another path joins them through a third group).
Merging repeats until no edge can merge, so the groups are maximal; the edges are tried in
`data_edges` order, pass after pass, so the result is one fixed function of the ops' order. The
group DAG is a union-find over the ops plus successor and predecessor sets per group (built once,
updated per merge); its lexicographic topological order (by first op) is the segments' order.
Which device each op gets is the policies' job; transfers are `hetsim.partition.core`'s.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from hetsim.errors import PartitionError
from hetsim.ir import Op, op_label
from hetsim.ir.nodes import shown
from hetsim.ir.tables import in_order

__all__ = ["Grouping", "data_edges", "group_ops", "grouping"]


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


class _GroupDag:
    """Groups of ops (union-find, a group is named by its first op) and the edges between them."""

    def __init__(self, size: int, edges: Sequence[tuple[int, int]]) -> None:
        self.parent = list(range(size))
        self.succ: list[set[int]] = [set() for _ in range(size)]
        self.pred: list[set[int]] = [set() for _ in range(size)]
        for u, v in edges:
            self.succ[u].add(v)
            self.pred[v].add(u)

    def find(self, i: int) -> int:
        """The group of op `i` (with path halving)."""
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def would_cycle(self, a: int, b: int) -> bool:
        """Whether merging groups `a` -> `b` closes a cycle: a path a ~> b other than the edge.

        Searches forward from a's other successors and backward from b's other predecessors,
        one frontier at a time (the smaller first), until they meet or one runs out.
        """
        succ, pred = self.succ, self.pred
        if len(succ[a]) == 1 or len(pred[b]) == 1:
            return False  # the edge a -> b is all either has: no other path (the common case)
        seen_f, seen_b = {a}, {b}
        frontier_f = [s for s in succ[a] if s != b]
        frontier_b = [p for p in pred[b] if p != a]
        seen_f.update(frontier_f)
        if not seen_b.isdisjoint(frontier_f) or not seen_f.isdisjoint(frontier_b):
            return True
        seen_b.update(frontier_b)
        while frontier_f and frontier_b:
            if len(frontier_f) <= len(frontier_b):
                stepped = _step(frontier_f, succ, seen_f, seen_b)
                if stepped is None:
                    return True
                frontier_f = stepped
            else:
                stepped = _step(frontier_b, pred, seen_b, seen_f)
                if stepped is None:
                    return True
                frontier_b = stepped
        return False

    def merge(self, a: int, b: int) -> None:
        """Contract groups `a` and `b` into the one with the smaller name."""
        keep, gone = (a, b) if a < b else (b, a)
        succ, pred = self.succ, self.pred
        for p in pred[gone]:
            succ[p].discard(gone)
            if p != keep:
                succ[p].add(keep)
                pred[keep].add(p)
        for s in succ[gone]:
            pred[s].discard(gone)
            if s != keep:
                pred[s].add(keep)
                succ[keep].add(s)
        succ[gone], pred[gone] = set(), set()
        self.parent[gone] = keep

    def order(self) -> list[int]:
        """The groups in lexicographic topological order (smallest name first among the ready)."""
        roots = [i for i in range(len(self.parent)) if self.parent[i] == i]
        waiting = {i: len(self.pred[i]) for i in roots}
        ready = [i for i in roots if not waiting[i]]
        heapq.heapify(ready)
        found = []
        while ready:
            group = heapq.heappop(ready)
            found.append(group)
            for s in self.succ[group]:
                waiting[s] -= 1
                if not waiting[s]:
                    heapq.heappush(ready, s)
        assert len(found) == len(roots), "the group graph has a cycle"
        return found


def _step(
    frontier: list[int], edges: list[set[int]], seen: set[int], other: set[int]
) -> list[int] | None:
    """One level of a breadth-first search; ``None`` when it reaches the other side."""
    following = []
    for node in frontier:
        for nxt in edges[node]:
            if nxt in other:
                return None
            if nxt not in seen:
                seen.add(nxt)
                following.append(nxt)
    return following


class Grouping(NamedTuple):
    """`group_ops`' segments, and what `hetsim.partition.core` reads of one group's ops."""

    groups: list[tuple[str, tuple[Op, ...]]]
    outside: tuple[str, ...] | None
    """With one group: the tensors its ops read that none of them makes (graph inputs,
    constants, ``""`` for an omitted input, a nested level's arguments), in the order first
    read; None with several (their inputs depend on which group makes what)."""


def _components(ops: Sequence[Op], device: str) -> Grouping:
    """`group_ops` when every op is on one `device`: the weakly connected components.

    With one device no merge can close a cycle (a cycle needs a path through a group on another
    device), so the merge rule joins every data edge; with no edges between components, the
    lexicographic topological order is by first op. A speed trick, equal to the general merge
    (tests/partition/test_segments.py): the edges are followed as the ops are read (in
    topological order, a producer comes first), not listed by `data_edges`, and one component is
    returned whole (a 1e5-op chain on one GPU cut in 0.04 s, where the general merge took 0.17),
    with the tensors read from outside it noted on the way (`Grouping.outside`: the segment's
    inputs, with no second table of what each op makes).
    """
    parent = list(range(len(ops)))
    producer: dict[str, int] = {}
    outside: dict[str, None] = {}
    joins = 0
    for v, op in enumerate(ops):
        root = v  # the group of op v, as its edges join it to its producers'
        for name in op.inputs:
            u = producer.get(name)
            if u is None:
                outside[name] = None
                continue
            while parent[u] != u:
                parent[u] = u = parent[parent[u]]
            if u != root:
                joins += 1
                if u < root:
                    parent[root], root = u, u
                else:
                    parent[u] = root
        for name in op.outputs:
            if name:
                producer[name] = v
    if joins == len(ops) - 1:
        return Grouping([(device, tuple(ops))], tuple(outside))
    members: dict[int, list[Op]] = {}
    for i, op in enumerate(ops):
        root = i
        while parent[root] != root:
            root = parent[root]
        parent[i] = root
        members.setdefault(root, []).append(op)
    return Grouping([(device, tuple(group)) for group in members.values()], None)


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

    Raises
    ------
    PartitionError
        `ops` is not a sequence of Ops, `device` not a mapping, or an op has no device there.
    """
    return grouping(ops, device).groups


def grouping(ops: Sequence[Op], device: Mapping[str, str]) -> Grouping:
    """`group_ops`, with what the one group reads from outside where all are one (`Grouping`)."""
    try:
        # a placement made in the ops' order (every policy's) is read in order (`in_order`)
        where = list(in_order(device, tuple([op.name for op in ops])))
    except (AttributeError, KeyError, TypeError) as err:  # found on failure only
        raise PartitionError(f"group_ops: {_grouping_problem(ops, device)}") from err
    if len(set(where)) == 1:
        return _components(ops, where[0])
    edges = data_edges(ops)
    dag = _GroupDag(len(ops), edges)
    find, parent = dag.find, dag.parent
    merged = True
    while merged:
        merged = False
        for u, v in edges:
            # inlined for speed: find() only for an op whose group is not itself or its parent
            a = parent[u]
            if parent[a] != a:
                a = find(a)
            b = parent[v]
            if parent[b] != b:
                b = find(b)
            if a == b or where[a] != where[b] or dag.would_cycle(a, b):
                continue
            dag.merge(a, b)
            merged = True
    members: dict[int, list[Op]] = {}
    for i, op in enumerate(ops):
        members.setdefault(find(i), []).append(op)
    return Grouping([(where[n], tuple(members[n])) for n in dag.order()], None)


def _grouping_problem(ops: object, device: object) -> str:
    """What `group_ops` was given that it cannot group."""
    if not isinstance(device, Mapping):
        return f"expected device a mapping of op name -> device, got {shown(device)}"
    if not isinstance(ops, Sequence):
        return f"expected ops a sequence of Ops (a Graph's .ops), got {shown(ops)}"
    other = next((op for op in ops if not isinstance(op, Op)), None)
    if other is not None:
        return f"expected ops a sequence of Ops, got {shown(other)} in it"
    op = next(op for op in ops if op.name not in device)
    return f"expected a device for every op, got none for {op_label(op)}"
