"""What a simulated run leaves behind: spans of busy time and the run's totals.

The engine (`hetsim.sim`) writes these; `hetsim.report` reads them to build a `Result`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

__all__ = ["CATEGORIES", "RunRecord", "Span"]

CATEGORIES = ("dispatch", "launch", "compute", "transfer", "sync_wait", "capture", "invoke")
"""Span categories; a `Result`'s breakdown sums spans by category (idle is what is left)."""


NO_ARGS: Mapping[str, Any] = MappingProxyType({})
"""The args of a span that has none (shared, read only)."""


class Span(NamedTuple):
    """One interval during which a resource did one thing.

    A named tuple, not a dataclass: a traced 1e5-op run records 5e5 spans, and the engine makes
    each from its row at once (``tuple.__new__(Span, row)``: 0.15 µs, where a frozen dataclass took
    0.73).

    Parameters
    ----------
    resource
        A processor path (``"host"``, ``"vdevice0/npu"``) or a link name.
    stream
        The thread within the resource: ``"exec"`` for an executor on a host, ``"stream0"`` for a
        device stream, ``"link"`` for a link.
    name
        What ran: an op name, or an instruction (``"launch conv1"``, ``"copy x"``).
    category
        One of `CATEGORIES`.
    flow_out, flow_in
        Ids of flow arrows: a dispatch that launched a kernel has ``flow_out=k`` and the kernel
        has ``flow_in=k``.
    args
        Details for traces: op type, bytes, flops.
    """

    resource: str
    stream: str
    name: str
    category: str
    start_us: float
    end_us: float
    flow_out: int | None = None
    flow_in: int | None = None
    args: Mapping[str, Any] = NO_ARGS

    @property
    def duration_us(self) -> float:
        return self.end_us - self.start_us


@dataclass(frozen=True, slots=True, eq=False)
class RunRecord:
    """Everything one simulated run produced, in engine terms.

    ``extra["busy_us"]`` (resource -> category -> µs) is set instead of `spans` when the run was
    not traced; `hetsim.report` computes its figures from it.
    """

    makespan_us: float
    spans: tuple[Span, ...]
    processors: tuple[str, ...]
    links: tuple[str, ...]
    link_bytes: Mapping[str, int]
    peak_memory_bytes: Mapping[str, int]
    placement: Mapping[str, str]
    inputs: Mapping[str, np.ndarray]
    outputs: Mapping[str, np.ndarray]
    extra: Mapping[str, Any] = field(default_factory=dict)
