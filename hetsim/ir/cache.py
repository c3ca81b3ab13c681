"""`GraphCache`: what is compiled from a graph, kept for the next call on the same graph.

Owns the one rule every compile-once cache in hetsim follows (`hetsim.execute`'s programs,
`hetsim.simulate`'s plans and metas, the simulator's kernels and bound programs): a graph is
immutable, so
what is made from it (and from other immutable objects, such as a `Platform`) can be reused
while those are the same objects. Entries are keyed by identity and hold what they are keyed
on alive, so an ``id`` is never reused while cached; the oldest entry goes first.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

from hetsim.ir.graph import Graph

__all__ = ["CACHE_MAX_OPS", "GraphCache"]

T = TypeVar("T")

CACHE_MAX_OPS = 20_000
"""The simulator's caches (plans, metas, kernels, bound programs) keep nothing for a graph of
more ops than this: what they keep grows with the ops (a run allocates about 1.4 kB per op,
`benchmarks/sim_speed.py`), and a big graph's compile time is small against its run's anyway."""


class GraphCache(Generic[T]):
    """Values made from a graph, kept for the last `size` keys; none for a graph over `max_ops`.

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
    """

    def __init__(self, size: int, max_ops: int | None = None) -> None:
        self.size = size
        self.max_ops = max_ops
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
        if self.max_ops is not None and len(graph.ops) > self.max_ops:
            return make()
        key = (id(graph), *map(id, held), extra)
        found = self._entries.get(key)
        if found is not None and found[0] is graph and all(map(_same, found[1], held)):
            return found[2]
        value = make()
        if len(self._entries) >= self.size:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = (graph, held, value)
        return value

    def graphs(self) -> Iterator[Graph]:
        """The graphs of the cached entries, oldest first."""
        return (entry[0] for entry in self._entries.values())

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()


def _same(a: Any, b: Any) -> bool:
    return a is b
