"""`build_platform`: a canonical target tree becomes a `Platform`.

Rules, applied level by level, depth first, host first:

- The root host is the processor ``host`` (role ``host``); the host of a nested ``hetero`` device
  at path ``p`` is ``p/host`` (role ``coprocessor``); every plain device is ``<level>/<name>``
  (role ``accelerator``).
- A processor with ``memory_gib > 0`` owns the memory ``<path>.mem``; one with ``memory_gib == 0``
  computes from its level host's memory. A coprocessor without memory of its own computes from
  its parent level host's memory; the root host always owns ``host.mem``.
- A plain device that owns its memory is joined to its level host's memory by a link with the
  device's ``link`` attribute; a coprocessor that owns its memory is joined to its parent level
  host's memory by the ``hetero`` device's ``link``. Memories that are shared need no link.
- A host has a control edge to each plain device and to the host of each nested level; an edge
  to a nested level carries that level's ``control_latency_us``, one to a plain device 0.

The target is trusted: `hetsim.target` has validated it and filled its defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import networkx as nx

from hetsim.platform.elements import Level, Link, Memory, Processor, memory_name
from hetsim.platform.graph import Platform, route_weight
from hetsim.target import Target
from hetsim.units import gib_to_bytes

__all__ = ["build_platform"]


def build_platform(target: Any) -> Platform:
    """Build the platform of a canonical target tree (a `hetsim.target.Target`).

    Parameters
    ----------
    target
        A canonical tree (its root is ``hetero`` with ``host``, ``executor``, ``runtime`` and
        ``devices``), or anything `Target` takes: a tag, a kind, a mapping, a file, a node of a
        tree (a device becomes the one device of a level, as `Target` makes it).

    Raises
    ------
    TargetError
        A `target` that `Target` refuses.

    Returns
    -------
    Platform
        Processors, memories, links and levels in tree order, and their networkx graph.
    """
    if isinstance(target, Target) or not hasattr(target, "devices"):  # fakes are trees too
        target = Target(target)  # a root as it is; a device below one becomes a root
    builder = _Builder()
    builder.add_level(target, path="", parent=None, parent_memory=None)
    return Platform(
        target=target,
        graph=builder.graph,
        processors=builder.processors,
        memories=builder.memories,
        links=builder.links,
        levels=builder.levels,
    )


def _join(level: str, name: str) -> str:
    """The path of `name` inside level `level`."""
    return f"{level}/{name}" if level else name


class _Builder:
    """Collects the parts of one platform while the tree is walked."""

    def __init__(self) -> None:
        self.graph = nx.MultiDiGraph()
        self.processors: dict[str, Processor] = {}
        self.memories: dict[str, Memory] = {}
        self.links: dict[str, Link] = {}
        self.levels: dict[str, Level] = {}

    def add_level(
        self, node: Any, *, path: str, parent: str | None, parent_memory: str | None
    ) -> str:
        """Add the level `node` at `path`; return its host's processor path."""
        host_path = _join(path, "host")
        device_paths = tuple(_join(path, device.name) for device in node.devices)
        self.levels[path] = Level(
            path=path,
            host=host_path,
            executor=node.executor,
            runtime=node.runtime,
            devices=device_paths,
            parent=parent,
            control_latency_us=0.0 if parent is None else float(node.attrs["control_latency_us"]),
            attrs=node.attrs,
        )
        role = "host" if parent is None else "coprocessor"
        host_memory = self.add_processor(
            node.host, host_path, role, path, parent_memory, node.attrs.get("link")
        )
        for device, device_path in zip(node.devices, device_paths, strict=True):
            if device.is_composite:
                nested_host = self.add_level(
                    device, path=device_path, parent=path, parent_memory=host_memory
                )
                self.add_control(host_path, nested_host, float(device.attrs["control_latency_us"]))
            else:
                self.add_processor(
                    device, device_path, "accelerator", path, host_memory, device.attrs["link"]
                )
                self.add_control(host_path, device_path, 0.0)
        return host_path

    def add_processor(
        self,
        node: Any,
        path: str,
        role: str,
        level: str,
        upper_memory: str | None,
        link: Mapping[str, float] | None,
    ) -> str:
        """Add processor `path`, its memory if it owns one and that memory's link; return it."""
        attrs = node.attrs
        if upper_memory is None or attrs["memory_gib"] > 0:
            memory = memory_name(path)
            self.add_memory(
                Memory(
                    memory,
                    gib_to_bytes(attrs["memory_gib"]),
                    float(attrs["mem_bandwidth_gbps"]),
                    level,
                )
            )
            if upper_memory is not None:
                assert link is not None, f"{path}: a memory below the root needs a link"
                self.add_link(upper_memory, memory, link)
        else:
            memory = upper_memory
        processor = Processor(path, role, node.kind, level, attrs, memory)
        self.processors[path] = processor
        self.graph.add_node(
            path, type="processor", role=role, kind=node.kind, level=level, memory=memory
        )
        return memory

    def add_memory(self, memory: Memory) -> None:
        self.memories[memory.name] = memory
        self.graph.add_node(
            memory.name,
            type="memory",
            capacity_bytes=memory.capacity_bytes,
            bandwidth_gbps=memory.bandwidth_gbps,
            level=memory.level,
        )

    def add_link(self, a: str, b: str, attrs: Mapping[str, float]) -> None:
        link = Link(f"{a}--{b}", a, b, float(attrs["bandwidth_gbps"]), float(attrs["latency_us"]))
        self.links[link.name] = link
        weight = route_weight(link)
        for u, v in ((a, b), (b, a)):
            self.graph.add_edge(
                u,
                v,
                key=link.name,
                type="link",
                link=link,
                bandwidth_gbps=link.bandwidth_gbps,
                latency_us=link.latency_us,
                weight=weight,
            )

    def add_control(self, host: str, device: str, latency_us: float) -> None:
        self.graph.add_edge(host, device, key="control", type="control", latency_us=latency_us)
