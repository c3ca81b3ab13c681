"""What a simulated run leaves behind: spans of busy time and the run's totals.

The engine (`hetsim.sim`) writes these; `hetsim.report` reads them to build a `Result`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from types import MappingProxyType
from typing import Any, NamedTuple, overload

import numpy as np

from hetsim.sim.collector import paused

__all__ = ["CATEGORIES", "RunRecord", "Span", "Spans"]

CATEGORIES = ("dispatch", "launch", "compute", "transfer", "sync_wait", "capture", "invoke")
"""Span categories; a `Result`'s breakdown sums spans by category (idle is what is left)."""


NO_ARGS: Mapping[str, Any] = MappingProxyType({})
"""The args of a span that has none (shared, read only)."""


class Span(NamedTuple):
    """One interval during which a resource did one thing.

    A named tuple, not a dataclass: a traced 1e5-op run records 5e5 spans, each made from the
    engine's row when first read (`Spans`; ``tuple.__new__(Span, row)``: 0.13 µs, where a frozen
    dataclass took 0.73).

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

    def __reduce__(self) -> tuple[Any, ...]:
        # the shared default of args, a mappingproxy, does not pickle: a span that has it goes
        # without it and takes the default again; every other span goes as its fields
        return (Span, tuple(self[:8]) if self.args is NO_ARGS else tuple(self))


class Spans(Sequence[Span]):
    """A run's spans, in start order, made into `Span`s when first read.

    The engine keeps each span as a plain tuple of `Span`'s fields (a *row*). Making 5e5 rows
    into named tuples took 0.62 µs per op of a traced 1e5-op chain, a seventh of a warm traced
    `simulate`, which does not need them: `hetsim.report.breakdown.totals` sums the `rows`.
    Reading a span (a trace, a Gantt chart, `Result.spans`) makes them all, once. It equals any
    sequence of equal spans (a tuple of `Span`s too), and pickles as a tuple of them.

    >>> spans = Spans((("host", "exec", "a", "dispatch", 0.0, 1.0, None, None, {}),))
    >>> spans[0].duration_us, len(spans), spans == (Span("host", "exec", "a", "dispatch", 0, 1),)
    (1.0, 1, True)
    """

    __slots__ = ("_rows", "_spans")

    def __init__(self, rows: Sequence[tuple[Any, ...]] = ()) -> None:
        self._rows = rows
        self._spans: tuple[Span, ...] | None = None

    @property
    def rows(self) -> Sequence[tuple[Any, ...]]:
        """The spans as plain tuples of `Span`'s fields (the `Span`s themselves, once made)."""
        return self._rows

    def _made(self) -> tuple[Span, ...]:
        spans = self._spans
        if spans is None:  # two threads may both make them: the same spans, one kept
            with paused():  # 5e5 spans: 0.57 s with the collector on, 0.08 off
                spans = self._spans = tuple(map(tuple.__new__, repeat(Span), self._rows))
            self._rows = spans  # the rows are no longer needed
        return spans

    @overload
    def __getitem__(self, index: int) -> Span: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Span, ...]: ...

    def __getitem__(self, index: int | slice) -> Span | tuple[Span, ...]:
        return self._made()[index]

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[Span]:
        return iter(self._made())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Spans):
            return self._rows == other._rows
        if isinstance(other, Sequence):
            return self._made() == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # spans hold dicts (args): never hashable

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self._made(),))

    def __repr__(self) -> str:
        return f"<Spans {len(self)}>"


@dataclass(frozen=True, slots=True, eq=False)
class RunRecord:
    """Everything one simulated run produced, in engine terms.

    ``extra["busy_us"]`` (resource -> category -> µs) is set instead of `spans` when the run was
    not traced; `hetsim.report` computes its figures from it. `spans`: the engine gives `Spans`;
    any sequence of `Span`s in start order will do.
    """

    makespan_us: float
    spans: Sequence[Span]
    processors: tuple[str, ...]
    links: tuple[str, ...]
    link_bytes: Mapping[str, int]
    peak_memory_bytes: Mapping[str, int]
    placement: Mapping[str, str]
    inputs: Mapping[str, np.ndarray]
    outputs: Mapping[str, np.ndarray]
    extra: Mapping[str, Any] = field(default_factory=dict)
