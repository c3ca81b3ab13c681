"""hetsim.platform: a canonical target tree as processors, memories, links and levels (networkx).

`build_platform(target)` makes a frozen `Platform`; `Platform.route` gives the cheapest path
between two memories; `render_tree` and `draw` picture it. Durations are `hetsim.cost`'s job.
"""

from __future__ import annotations

from hetsim.platform.build import build_platform
from hetsim.platform.elements import (
    ROLES,
    Level,
    Link,
    Memory,
    Processor,
    empty_memory_note,
    memory_name,
)
from hetsim.platform.graph import ROUTE_REFERENCE_BYTES, Platform, check_platform, route_weight
from hetsim.platform.render import draw, png_path, render_tree

__all__ = [
    "ROLES",
    "ROUTE_REFERENCE_BYTES",
    "Level",
    "Link",
    "Memory",
    "Platform",
    "Processor",
    "build_platform",
    "check_platform",
    "draw",
    "empty_memory_note",
    "memory_name",
    "png_path",
    "render_tree",
    "route_weight",
]
