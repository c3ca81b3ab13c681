"""`GraphCache`: what is compiled from a graph, kept for the next call on the same graph.

Owns the one rule every compile-once cache in hetsim follows (`hetsim.execute`'s programs,
`hetsim.simulate`'s plans and metas, the simulator's kernels and bound programs): a graph is
immutable, so
what is made from it (and from other immutable objects, such as a `Platform`) can be reused
while those are the same objects. Entries are keyed by identity and hold what they are keyed
on alive, so an ``id`` is never reused while cached; the oldest entry goes first, when the
cache holds `size` entries or when a new entry's graph would take the ops of the graphs held
over `max_ops` (what an entry keeps grows with its graph's ops).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

from hetsim.ir.graph import Graph

__all__ = ["CACHE_MAX_OPS", "GraphCache"]

T = TypeVar("T")

CACHE_MAX_OPS = 100_000
"""The ops of the graphs each of the simulator's caches (plans, metas, kernels, bound programs)
holds at most, together. What they keep grows with the ops: about 1.3 kB per op of a timing-mode
chain for all of them together, so a 1e5-op model keeps about 130 MB. A graph of more ops is
compiled and bound anew each call, which costs about five times its engine run
(`benchmarks/sim_speed.py`: the ``warm`` column against ``simulate``)."""


class GraphCache(Generic[T]):
    """Values made from a graph, kept for the last `size` keys whose graphs hold at most
    `max_ops` ops together (`None`: no bound); none for a graph of more ops than that alone.

    Examples
    --------
    >>> from hetsim.ir.graph import Graph
    >>> cache, made = GraphCache[str](size=2), []
    >>> g = Graph("g", (), {}, ())
    >>> make = lambda: made.append(1) or "compiled"
    >>> cache.get(g, make, extra="fused"), cache.get(g, make, extra="fused"), len(made)
    ('compiled', 'compiled', 1)
    >>> _ = cache.get(g, make, extra="plain"); len(made), list(cache.graphs()) == [g, g]
    (2, True)

    With `max_ops`, the oldest entries make room for a new graph's ops:

    >>> from hetsim.ir import Op, TensorType
    >>> def relus(n):
    ...     ops = tuple(Op("Relu", f"r{i}", (f"t{i}",), (f"t{i + 1}",)) for i in range(n))
    ...     return Graph(f"g{n}", ops, {"t0": TensorType((1,), "float32")}, (f"t{n}",))
    >>> small = GraphCache[str](size=4, max_ops=5)
    >>> a, b, c = relus(2), relus(3), relus(4)
    >>> for graph in (a, b, c):
    ...     _ = small.get(graph, lambda: "kept")
    ...     print(graph.name, [g.name for g in small.graphs()], small.ops)
    g2 ['g2'] 2
    g3 ['g2', 'g3'] 5
    g4 ['g4'] 4
    >>> _ = small.get(relus(6), lambda: "too big"); [g.name for g in small.graphs()]
    ['g4']
    """

    def __init__(self, size: int, max_ops: int | None = None) -> None:
        self.size = size
        self.max_ops = max_ops
        self.ops = 0
        """The ops of the graphs of the entries (a graph counts once per entry)."""
        self._entries: dict[tuple[Any, ...], tuple[Graph, tuple[Any, ...], T]] = {}

    def get(
        self,
        graph: Graph,
        make: Callable[[], T],
        *,
        held: tuple[Any, ...] = (),
        extra: Hashable = None,
    ) -> T:
        """The value for `graph`, the objects `held` (by identity) and `extra` (by value),
        made by `make()` when missing (and every time for a graph of more than `max_ops` ops)."""
        ops = len(graph.ops)
        if self.max_ops is not None and ops > self.max_ops:
            return make()
        key = (id(graph), *map(id, held), extra)
        entries = self._entries
        found = entries.get(key)
        if found is not None and found[0] is graph and all(map(_same, found[1], held)):
            return found[2]
        value = make()
        if found is not None:  # a stale entry: its graph or a held object is gone
            self._drop(key)
        limit = self.max_ops if self.max_ops is not None else float("inf")
        while entries and (len(entries) >= self.size or self.ops + ops > limit):
            self._drop(next(iter(entries)))
        entries[key] = (graph, held, value)
        self.ops += ops
        return value

    def _drop(self, key: tuple[Any, ...]) -> None:
        self.ops -= len(self._entries.pop(key)[0].ops)

    def graphs(self) -> Iterator[Graph]:
        """The graphs of the cached entries, oldest first."""
        return (entry[0] for entry in self._entries.values())

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()
        self.ops = 0


def _same(a: Any, b: Any) -> bool:
    return a is b
