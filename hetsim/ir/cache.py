"""`GraphCache`: what is compiled from a graph, kept for the next call on the same graph.

Owns the one rule every compile-once cache in hetsim follows (`hetsim.execute`'s programs and fused
weights, `hetsim.simulate`'s plans and metas, the simulator's kernels, fused groups and bound
programs): a graph is immutable, so what is made from it (and from other immutable objects, such as
a `Platform`) can be reused while those are the same objects and the values it also depends on
(``extra``: dims, a mode, a platform's `Platform.layout`) are equal. Entries are keyed by identity
and by those values, and hold the objects they are keyed on alive, so an ``id`` is never reused
while cached; the oldest entry goes first, when the cache holds `size` entries or when a new entry's
graph would take the ops of the graphs held over `max_ops` (what an entry keeps grows with its
graph's ops). With ``admit_after=2`` a value is kept only when its key is asked for a second time:
what a sweep compiles once per platform layout then leaves nothing behind for the collector to
traverse and for the cache to free later.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

from hetsim.ir.graph import Graph

__all__ = ["CACHE_MAX_OPS", "GHOSTS_PER_ENTRY", "SIMULATOR_BUDGET", "GraphCache", "OpsBudget"]

T = TypeVar("T")

CACHE_MAX_OPS = 100_000
"""The ops of the graphs each of the simulator's caches (plans, metas, kernels, and the bound
programs of each kept compiled program: `hetsim.sim.bind.bound_for`) holds at most, together, by
default (`SIMULATOR_BUDGET`; `hetsim.api.set_cache_max_ops` changes it). What they keep grows
with the ops: about 1.3 kB per op of a timing-mode chain for all of them together, so a 1e5-op
model keeps about 130 MB. A graph of more ops is compiled and bound anew
each call, which costs 3-4 times its engine run (at 1e5 ops,
`benchmarks/sim_speed.py --big`: compile plus bind 5.8-8.1 µs per op, the run 1.8-2.1)."""


class OpsBudget:
    """The ops each of a group of caches may hold, together, at most: one object the caches
    share, so that changing `ops` changes the bound of every one of them at once."""

    def __init__(self, ops: int) -> None:
        self.ops = ops

    def __repr__(self) -> str:
        return f"<OpsBudget {self.ops} ops>"


SIMULATOR_BUDGET = OpsBudget(CACHE_MAX_OPS)
"""The budget of `hetsim.simulate`'s caches (plans, metas, kernels, fused groups, bound
programs): `CACHE_MAX_OPS` unless `hetsim.api.set_cache_max_ops` changed it."""


GHOSTS_PER_ENTRY = 8
"""Keys not yet admitted (``admit_after`` > 1) a cache counts requests for, per entry it keeps."""


class GraphCache(Generic[T]):
    """Values made from a graph, kept for the last `size` keys whose graphs hold at most
    `max_ops` ops together (`None`: no bound; an `OpsBudget`: its ``ops`` at the time of each
    request); none for a graph of more ops than that alone.

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

    With ``admit_after=2``, the second request for a key keeps its value; the third reuses it:

    >>> second, made = GraphCache[int](size=2, admit_after=2), []
    >>> [second.get(g, lambda: made.append(1) or len(made)) for _ in range(4)]
    [1, 2, 2, 2]
    """

    def __init__(
        self, size: int, max_ops: int | OpsBudget | None = None, *, admit_after: int = 1
    ) -> None:
        self.size = size
        self.max_ops = max_ops
        self.admit_after = admit_after
        """A key's value is kept from its `admit_after`-th request on (1: the first)."""
        self.ops = 0
        """The ops of the graphs of the entries (a graph counts once per entry)."""
        self._entries: dict[tuple[Any, ...], tuple[Graph, tuple[Any, ...], T]] = {}
        # key -> requests so far, for keys not yet admitted (the last `GHOSTS_PER_ENTRY * size`)
        self._requests: dict[tuple[Any, ...], int] = {}
        self._lock = threading.Lock()  # held while the tables change, never while making a value

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
        limit = self.limit
        if ops > limit:
            return make()
        key = (id(graph), *map(id, held), extra)
        entries = self._entries
        found = entries.get(key)
        if found is not None and found[0] is graph and all(map(_same, found[1], held)):
            return found[2]
        value = make()
        with self._lock:  # threads of one process share the caches (a Dask worker's tasks)
            limit = self.limit  # again: lowered while `make` ran, the caches were cleared
            if ops > limit or (self.admit_after > 1 and not self._admits(key)):
                return value
            if key in entries:  # made meanwhile by another thread, or stale: replaced
                self._drop(key)
            while entries and (len(entries) >= self.size or self.ops + ops > limit):
                self._drop(next(iter(entries)))
            entries[key] = (graph, held, value)
            self.ops += ops
        return value

    @property
    def limit(self) -> float:
        """The ops the entries may hold together now (`max_ops`; infinite without one)."""
        bound = self.max_ops
        if bound is None:
            return float("inf")
        return bound.ops if isinstance(bound, OpsBudget) else bound

    def _admits(self, key: tuple[Any, ...]) -> bool:
        """Count a request for `key`; whether it is the `admit_after`-th. Keys hold ids of
        objects that may have died since: a reused id only admits a value sooner, and a value is
        only ever returned for the very objects it was made for."""
        requests = self._requests
        count = requests.pop(key, 0) + 1
        if count >= self.admit_after:
            return True
        if len(requests) >= GHOSTS_PER_ENTRY * self.size:
            del requests[next(iter(requests))]
        requests[key] = count
        return False

    def _drop(self, key: tuple[Any, ...]) -> None:
        self.ops -= len(self._entries.pop(key)[0].ops)

    def graphs(self) -> Iterator[Graph]:
        """The graphs of the cached entries, oldest first."""
        with self._lock:
            return iter([entry[0] for entry in self._entries.values()])

    def clear(self) -> None:
        """Forget every entry, and the requests counted for admission."""
        with self._lock:
            self._entries.clear()
            self._requests.clear()
            self.ops = 0


def _same(a: Any, b: Any) -> bool:
    return a is b
