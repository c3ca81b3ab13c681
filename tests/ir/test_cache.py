"""`GraphCache`: entries kept by identity, within a count and an ops budget."""

from __future__ import annotations

import sys
import threading

from hetsim.ir import Graph, Op, TensorType
from hetsim.ir.cache import GraphCache, OpsBudget


def relus(n: int) -> Graph:
    ops = tuple(Op("Relu", f"r{i}", (f"t{i}",), (f"t{i + 1}",)) for i in range(n))
    return Graph(f"relus{n}", ops, {"t0": TensorType((1,), "float32")}, (f"t{n}",))


def test_a_graph_within_the_budget_is_made_once() -> None:
    cache, made = GraphCache[int](size=2, max_ops=10), []
    graph = relus(10)
    assert [cache.get(graph, lambda: made.append(1) or len(made)) for _ in range(3)] == [1, 1, 1]
    assert cache.ops == 10


def test_a_graph_over_the_budget_is_made_every_call_and_evicts_nothing() -> None:
    cache = GraphCache[str](size=2, max_ops=10)
    kept = relus(4)
    cache.get(kept, lambda: "kept")
    made = []
    big = relus(11)
    for _ in range(2):
        cache.get(big, lambda: made.append(1) or "big")
    assert len(made) == 2
    assert list(cache.graphs()) == [kept]
    assert cache.ops == 4


def test_the_oldest_entries_make_room_for_a_new_graphs_ops() -> None:
    cache = GraphCache[str](size=8, max_ops=10)
    a, b, c = relus(3), relus(4), relus(5)
    for graph in (a, b, c):
        cache.get(graph, lambda: "value")
    assert list(cache.graphs()) == [b, c]
    assert cache.ops == 9
    cache.get(a, lambda: "again")  # 9 + 3 > 10: b goes
    assert list(cache.graphs()) == [c, a]
    assert cache.ops == 8


def test_the_entry_count_still_bounds_the_cache() -> None:
    cache = GraphCache[str](size=2)
    graphs = [relus(1) for _ in range(3)]
    for graph in graphs:
        cache.get(graph, lambda: "value")
    assert list(cache.graphs()) == graphs[1:]
    assert cache.ops == 2
    cache.clear()
    assert list(cache.graphs()) == []
    assert cache.ops == 0


def test_threads_sharing_a_cache_keep_its_tables_whole() -> None:
    # a Dask worker with several threads runs points concurrently against one process's caches
    cache = GraphCache[int](size=3, max_ops=12, admit_after=2)
    graphs = [relus(n) for n in (1, 2, 3, 4, 5)]
    failures: list[BaseException] = []

    def hammer(seed: int) -> None:
        try:
            for i in range(3000):
                graph = graphs[(seed * 7 + i) % len(graphs)]
                assert cache.get(graph, lambda graph=graph: len(graph.ops)) == len(graph.ops)
        except BaseException as err:  # reported by the main thread
            failures.append(err)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show at once
    try:
        threads = [threading.Thread(target=hammer, args=(seed,)) for seed in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []
    kept = list(cache.graphs())
    assert cache.ops == sum(len(g.ops) for g in kept) <= 12
    assert len(kept) <= 3


def test_a_budget_lowered_while_a_value_is_made_keeps_it_out() -> None:
    # the limit was read before `make`: lowered (and the cache cleared) meanwhile, the value went
    # in above the new budget, and stayed, as bigger graphs returned before evicting anything
    budget = OpsBudget(100)
    cache: GraphCache[str] = GraphCache(4, budget)

    def make() -> str:
        budget.ops = 10
        cache.clear()
        return "made"

    assert cache.get(relus(50), make) == "made"
    assert cache.ops == 0
