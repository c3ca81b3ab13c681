"""`Platform`: the processors, memories, links and levels of a target, as one networkx graph.

This module owns the graph's shape and routing between memories. Building a platform from a
target tree is `hetsim.platform.build`; drawing it is `hetsim.platform.render`.

Routing cost: a route is the path between two memories with the least sum, over its links, of
``latency_us + ROUTE_REFERENCE_BYTES / bandwidth`` (the time to move 1 MiB over an idle link;
Dijkstra). The route between a pair is fixed for the platform: it does not depend on the size of
a transfer or on contention. Routes are computed once per source memory, on first use, and cached.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from hetsim.errors import HetsimError, Problem, TargetError
from hetsim.platform.elements import Level, Link, Memory, Processor
from hetsim.target.schema import closest
from hetsim.units import BYTES_PER_MIB, transfer_us

__all__ = ["ROUTE_REFERENCE_BYTES", "Platform", "check_platform", "route_weight"]

ROUTE_REFERENCE_BYTES = BYTES_PER_MIB
"""The transfer size routing compares links by."""


def route_weight(link: Link) -> float:
    """The routing cost of one link: µs to move `ROUTE_REFERENCE_BYTES` over it when idle.

    >>> route_weight(Link("host.mem--gpu0.mem", "host.mem", "gpu0.mem", 32.0, 1.0))
    33.768
    """
    return transfer_us(ROUTE_REFERENCE_BYTES, link.bandwidth_gbps, link.latency_us)


@dataclass(frozen=True, slots=True, eq=False)
class Platform:
    """A target tree made concrete: processors, memories, data links, control edges, levels.

    Parameters
    ----------
    target
        The canonical target tree it was built from.
    graph
        A `networkx.MultiDiGraph`; nodes are processor paths (``type="processor"``) and memory
        names (``type="memory"``); ``type="control"`` edges go from a host to each device it
        drives, ``type="link"`` edges join two memories, one edge each way per link, keyed by
        the link's name.
    processors, memories, links, levels
        Mappings by path or name, in tree order (depth first, host first).
    """

    target: Any
    graph: nx.MultiDiGraph
    processors: Mapping[str, Processor]
    memories: Mapping[str, Memory]
    links: Mapping[str, Link]
    levels: Mapping[str, Level]
    _routes: dict[str, dict[str, tuple[Link, ...]]] = field(
        default_factory=dict, init=False, repr=False
    )
    _memory_graph: nx.Graph = field(init=False, repr=False)
    _layout: tuple[Any, ...] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_memory_graph", _memory_graph(self.memories, self.links))

    @property
    def layout(self) -> tuple[Any, ...]:
        """Everything placing and compiling a model read of the platform, as one hashable value.

        Two platforms of equal layouts get the same plan under the ``capability`` and ``rules``
        policies and the same compiled programs (`hetsim.runtime.compile_plan`): those read the
        platform's name, its processors (path, role, kind, level, memory, ``ops``, ``dtypes``),
        memories (level, capacity), levels (host, devices, executor and runtime kinds, the
        executor's ``is_static``) and links, and the route between two memories. The cost parameters
        (``dispatch_us``, peak flops, bandwidths, latencies, ...) are left out, so a sweep over
        them compiles once (`hetsim.simulate` keys its compiled plans by the layout). A route
        depends on the links' costs only where two paths join a pair of memories (a cycle, or
        parallel links); then the layout holds every link's routing cost (`route_weight`).

        Code in `hetsim.partition` or `hetsim.runtime` that starts reading something else of
        the platform must add it here. `tests/platform/test_layout.py` scales every cost
        parameter of each shipped tag and of random trees and checks that the plans and the
        programs stay equal: a cost parameter read there that changes a plan or a program fails it.

        >>> from hetsim.target import Target
        >>> from hetsim.platform import build_platform
        >>> soc = Target("arm-riscv-soc")
        >>> fast = soc.override({"executor": {"dispatch_us": 0.1}})
        >>> build_platform(soc).layout == build_platform(fast).layout
        True
        >>> npu = {"npu": {"memory_gib": 0.5}}
        >>> small = soc.override({"devices": {"vdevice0": {"devices": npu}}})
        >>> build_platform(soc).layout == build_platform(small).layout
        False
        """
        if self._layout is None:
            object.__setattr__(self, "_layout", _layout_of(self))
        assert self._layout is not None
        return self._layout

    @property
    def name(self) -> str:
        """The target's name, else its tag, else ``hetero[<device tags or kinds>]``."""
        target = self.target
        if target.name or target.tag:
            return str(target.name or target.tag)
        return f"hetero[{', '.join(d.tag or d.kind for d in target.devices)}]"

    def __repr__(self) -> str:
        return (
            f"<Platform {self.name}: {len(self.processors)} processors, "
            f"{len(self.memories)} memories, {len(self.links)} links, {len(self.levels)} levels>"
        )

    def memory_of(self, processor: str) -> Memory:
        """The memory processor `processor` computes from.

        Raises
        ------
        TargetError
            If `processor` is not a processor path of the platform.
        """
        found = self.processors.get(processor) if isinstance(processor, str) else None
        if found is None:
            expected = f"expected a processor of platform {self.name!r}"
            hint = closest(processor, self.processors)
            raise TargetError([Problem("memory_of", expected, repr(processor), hint)])
        return self.memories[found.memory]

    def route(self, src_memory: str, dst_memory: str) -> tuple[Link, ...]:
        """The links a transfer from `src_memory` to `dst_memory` crosses, in order.

        The same pair always gives the same tuple (cached); a memory to itself is ``()``.

        Raises
        ------
        TargetError
            If a name is not a memory of the platform, or no route joins the two.
        """
        routes = self._routes.get(src_memory) if isinstance(src_memory, str) else None
        if routes is None:
            routes = self._routes[src_memory] = self._routes_from(src_memory)
        found = routes.get(dst_memory) if isinstance(dst_memory, str) else None
        if found is None:
            self._check_memory(dst_memory)
            raise TargetError(
                [Problem("route", f"expected a link path from {src_memory!r}", repr(dst_memory))]
            )
        return found

    def _routes_from(self, src_memory: str) -> dict[str, tuple[Link, ...]]:
        self._check_memory(src_memory)
        paths = nx.single_source_dijkstra_path(self._memory_graph, src_memory, weight="weight")
        return {dst: self._hops(path) for dst, path in paths.items()}

    def _hops(self, path: list[str]) -> tuple[Link, ...]:
        return tuple(self._memory_graph[a][b]["link"] for a, b in itertools.pairwise(path))

    def _check_memory(self, name: object) -> None:
        if not isinstance(name, str) or name not in self.memories:
            expected = f"expected a memory of platform {self.name!r}"
            hint = closest(name, self.memories)
            raise TargetError([Problem("route", expected, repr(name), hint)])

    def to_dict(self) -> dict[str, Any]:
        """A plain, JSON-ready description: processors, memories, links, levels, control edges."""
        return {
            "name": self.name,
            "processors": {
                p.path: {
                    "role": p.role,
                    "kind": p.kind,
                    "level": p.level,
                    "memory": p.memory,
                    # what `hetsim platform show` prints of its compute, as the tree shows it
                    **{key: p.attrs[key] for key in ("cores", "freq_ghz", "flops_per_cycle")},
                }
                for p in self.processors.values()
            },
            "memories": {
                m.name: {
                    "capacity_bytes": m.capacity_bytes,
                    "bandwidth_gbps": m.bandwidth_gbps,
                    "level": m.level,
                }
                for m in self.memories.values()
            },
            "links": {
                k.name: {
                    "a": k.a,
                    "b": k.b,
                    "bandwidth_gbps": k.bandwidth_gbps,
                    "latency_us": k.latency_us,
                }
                for k in self.links.values()
            },
            "levels": {
                v.path: {
                    "host": v.host,
                    "executor": v.executor.kind if v.executor else None,
                    "runtime": v.runtime.kind if v.runtime else None,
                    "devices": list(v.devices),
                    "parent": v.parent,
                    "control_latency_us": v.control_latency_us,
                }
                for v in self.levels.values()
            },
            "control": [
                [u, v, data["latency_us"]]
                for u, v, data in self.graph.edges(data=True)
                if data["type"] == "control"
            ],
        }


def _layout_of(platform: Platform) -> tuple[Any, ...]:
    """`Platform.layout`, made."""
    processors = tuple(
        (
            p.path,
            p.role,
            p.kind,
            p.level,
            p.memory,
            _frozen(p.attrs.get("ops")),
            _frozen(p.attrs.get("dtypes")),
        )
        for p in platform.processors.values()
    )
    memories = tuple((m.name, m.level, m.capacity_bytes) for m in platform.memories.values())
    levels = tuple(
        (
            v.path,
            v.host,
            v.devices,
            v.parent,
            v.executor.kind if v.executor is not None else None,
            bool(v.executor.attrs.get("is_static", False)) if v.executor is not None else None,
            v.runtime.kind if v.runtime is not None else None,
        )
        for v in platform.levels.values()
    )
    links = tuple((k.name, k.a, k.b) for k in platform.links.values())
    graph = platform._memory_graph
    one_path = graph.number_of_edges() == len(platform.links) and nx.is_forest(graph)
    weights = () if one_path else tuple(route_weight(k) for k in platform.links.values())
    return (platform.name, processors, memories, levels, links, weights)


def _frozen(value: Any) -> Any:
    """A list or tuple of an attribute as a tuple (hashable); anything else as it is."""
    return tuple(value) if isinstance(value, list | tuple) else value


def _memory_graph(memories: Mapping[str, Memory], links: Mapping[str, Link]) -> nx.Graph:
    """The memories joined by their links; of parallel links, an edge keeps the cheapest."""
    graph = nx.Graph()
    graph.add_nodes_from(memories)
    for link in links.values():
        weight = route_weight(link)
        if not graph.has_edge(link.a, link.b) or graph[link.a][link.b]["weight"] > weight:
            graph.add_edge(link.a, link.b, weight=weight, link=link)
    return graph


def check_platform(platform: object, what: str, error: type[HetsimError] = HetsimError) -> Platform:
    """`platform`, if it is a `Platform`; the function `what` that takes it refuses anything else
    (a tag's name, a `Target`) by name, where it failed inside on an attribute of it.

    Raises
    ------
    HetsimError
        Not a Platform: `error` (`partition` raises a `PartitionError`).

    Examples
    --------
    >>> check_platform("x86-h100", "render_tree")
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: render_tree: expected platform a Platform \
(hetsim.platform.build_platform gives one), got str
    """
    if not isinstance(platform, Platform):
        raise error(
            f"{what}: expected platform a Platform (hetsim.platform.build_platform gives one), "
            f"got {type(platform).__name__}"
        )
    return platform
