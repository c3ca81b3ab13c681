"""Figures per level of a nested platform: time, dispatch overhead, and bytes into the level.

A run of a plan over nested levels (`hetsim.sim.run_program` of a compiled plan) records, in
``RunRecord.extra["levels"]``, each level's host, processors and links. From the run's totals
(`hetsim.report.breakdown.totals`) this module derives, per level:

- ``busy_us``: the sum of its processors' busy times;
- ``dispatch_us``: what its host spent dispatching: its ``dispatch``, ``launch`` and ``invoke``
  time (the VM's per-instruction or the graph executor's per-node cost, launches, and taking or
  answering an invocation);
- ``link_bytes``: bytes over the level's data links, those whose device end is a memory of the
  level (its devices' links to its host's memory, and the link that joins its host's memory to
  the level above): each link counted once, in the level it leads down into.

A record without ``extra["levels"]`` (a single program compiled by hand) has no level figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hetsim.report.arguments import check_record
from hetsim.report.breakdown import Totals, totals
from hetsim.sim.records import RunRecord

__all__ = ["DISPATCH_CATEGORIES", "LevelStats", "level_stats"]

DISPATCH_CATEGORIES = ("dispatch", "launch", "invoke")
"""Span categories of a level host that count as its dispatch overhead."""


@dataclass(frozen=True, slots=True)
class LevelStats:
    """One level's figures in a run (see the module docstring)."""

    host: str
    processors: tuple[str, ...]
    busy_us: float
    dispatch_us: float
    link_bytes: int


def level_stats(record: RunRecord, run_totals: Totals | None = None) -> dict[str, LevelStats]:
    """Level path -> its figures, in the platform's tree order; empty without level data.
    `run_totals`: the record's `totals`, when the caller has them (`Result.from_record`).

    Raises
    ------
    HetsimError
        `record` is neither a `RunRecord` nor a `Result` (whose record it reads).

    Examples
    --------
    >>> from hetsim.sim.records import Span
    >>> record = RunRecord(
    ...     makespan_us=6.0,
    ...     spans=(Span("host", "exec", "invoke v", "dispatch", 0.0, 1.0),
    ...            Span("host.mem--v/host.mem", "link", "copy x", "transfer", 0.0, 2.0,
    ...                 args={"bytes": 64}),
    ...            Span("v/host", "exec", "invoke v", "invoke", 1.0, 3.0),
    ...            Span("v/host", "exec", "launch k", "dispatch", 3.0, 3.5),
    ...            Span("v/npu", "stream0", "k", "compute", 3.5, 6.0)),
    ...     processors=("host", "v/host", "v/npu"), links=("host.mem--v/host.mem",),
    ...     link_bytes={"host.mem--v/host.mem": 64}, peak_memory_bytes={}, placement={},
    ...     inputs={}, outputs={},
    ...     extra={"levels": {"": {"host": "host", "processors": ["host"], "links": []},
    ...                       "v": {"host": "v/host", "processors": ["v/host", "v/npu"],
    ...                             "links": ["host.mem--v/host.mem"]}}})
    >>> for path, s in level_stats(record).items():
    ...     print(repr(path), s.busy_us, s.dispatch_us, s.link_bytes)
    '' 1.0 1.0 0
    'v' 5.0 2.5 64
    """
    record = check_record(record, "level_stats")
    levels: Mapping[str, Mapping[str, Any]] = record.extra.get("levels", {})
    if not levels:
        return {}
    by_category, busy = totals(record) if run_totals is None else run_totals
    stats = {}
    for path, level in levels.items():
        host = str(level["host"])
        processors = tuple(level["processors"])
        categories = by_category.get(host, {})
        stats[path] = LevelStats(
            host=host,
            processors=processors,
            busy_us=sum(busy.get(p, 0.0) for p in processors),
            dispatch_us=sum(categories.get(c, 0.0) for c in DISPATCH_CATEGORIES),
            link_bytes=sum(int(record.link_bytes.get(name, 0)) for name in level["links"]),
        )
    return stats
