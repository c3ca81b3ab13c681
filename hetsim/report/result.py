"""`Result`: what a simulated run returns to the user, built from the engine's `RunRecord`.

Owns the user-facing figures of one run (makespan, breakdown, per-processor, per-link and
per-memory totals, placement, inputs and outputs) and their JSON form. The rules that compute the
totals live in `hetsim.report.breakdown`; the Chrome trace (`trace.py`) and the Gantt chart
(`gantt.py`) draw the record's spans, and the tables (`tables.py`) show a `Result`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from hetsim.errors import SimulationError
from hetsim.report.arguments import check_record, output_path
from hetsim.report.breakdown import breakdown_us, totals
from hetsim.report.gantt import plot_gantt
from hetsim.report.lanes import check_traced
from hetsim.report.levels import LevelStats, level_stats
from hetsim.report.plain import JsonValue, to_plain
from hetsim.report.trace import write_chrome_trace
from hetsim.sim.records import RunRecord, Span

__all__ = ["LinkStats", "ProcessorStats", "Result"]


@dataclass(frozen=True, slots=True)
class ProcessorStats:
    """Busy time of one processor and its utilization (busy over makespan; 0.0 for an empty run),
    and where its time went: µs per key of `hetsim.report.breakdown.BREAKDOWN_KEYS`, its
    ``idle`` the makespan less its busy time (`breakdown_us`; the run's breakdown is their sum).

    Busy time counts a host waiting in a SYNC (``sync_wait``) and a device's stream carrying a
    copy (``transfer``): the categories tell them from compute."""

    busy_us: float
    utilization: float
    breakdown_us: Mapping[str, float] = field(default_factory=dict, repr=False)

    def __reduce__(self) -> tuple[Any, ...]:
        # a mapping proxy does not pickle: the breakdown goes as a dict, frozen again
        return _processor_stats, (self.busy_us, self.utilization, dict(self.breakdown_us))


def _processor_stats(busy_us: float, utilization: float, breakdown: dict[str, float]) -> Any:
    """The `ProcessorStats` that `ProcessorStats.__reduce__` pickled."""
    return ProcessorStats(busy_us, utilization, _frozen(breakdown))


@dataclass(frozen=True, slots=True)
class LinkStats:
    """Bytes that crossed one link and the time it carried at least one transfer."""

    bytes: int
    busy_us: float


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


def _tensor_summary(tensors: Mapping[str, np.ndarray]) -> dict[str, JsonValue]:
    return {
        name: {"shape": [int(d) for d in np.shape(array)], "dtype": str(np.asarray(array).dtype)}
        for name, array in tensors.items()
    }


@dataclass(frozen=True, slots=True, eq=False)
class Result:
    """The outcome of one simulated run: timings, totals, placement, inputs and outputs.

    Build one with `Result.from_record`; `hetsim.simulate` returns one. Two results are equal
    only as the same object: compare their figures with ``a.to_dict() == b.to_dict()`` (arrays
    summarized by shape and dtype; compare `inputs` and `outputs` with `numpy.array_equal`).
    A result pickles (and `copy.deepcopy` copies it) field by field, so a worker process can
    send one back.

    Attributes
    ----------
    makespan_us
        Simulated time from the start of the run to its last event.
    breakdown_us
        Simulated µs per key of `hetsim.report.breakdown.BREAKDOWN_KEYS`, summed over processors.
    processors
        Processor path → `ProcessorStats`, in platform order.
    links
        Link name → `LinkStats`, in platform order.
    peak_memory_bytes
        Memory name → the most bytes it held at once.
    placement
        Op name → path of the processor it ran on.
    inputs, outputs
        Tensor name → array: the inputs used (given, or made from a seed) and the outputs.
    record
        The engine's record: every span, for traces and plots.
    levels
        Level path → `LevelStats` (`hetsim.report.level_stats`), found with the other totals.

    Examples
    --------
    >>> record = RunRecord(
    ...     makespan_us=4.0,
    ...     spans=(Span("host", "exec", "launch k", "launch", 0.0, 1.0, flow_out=0),
    ...            Span("gpu0", "stream0", "k", "compute", 1.0, 4.0, flow_in=0)),
    ...     processors=("host", "gpu0"), links=(), link_bytes={}, peak_memory_bytes={},
    ...     placement={"k": "gpu0"}, inputs={}, outputs={})
    >>> result = Result.from_record(record)
    >>> result
    <Result makespan=4 us, 2 processors, 0 links>
    >>> result.processors["gpu0"]
    ProcessorStats(busy_us=3.0, utilization=0.75)
    >>> result.breakdown_us["idle"]
    4.0
    """

    makespan_us: float
    breakdown_us: Mapping[str, float]
    processors: Mapping[str, ProcessorStats]
    links: Mapping[str, LinkStats]
    peak_memory_bytes: Mapping[str, int]
    placement: Mapping[str, str]
    inputs: Mapping[str, np.ndarray] = field(repr=False)
    outputs: Mapping[str, np.ndarray] = field(repr=False)
    record: RunRecord = field(repr=False)
    levels: Mapping[str, LevelStats] = field(default_factory=dict, repr=False)

    @classmethod
    def from_record(cls, record: RunRecord) -> Result:
        """Compute every total of `record` (see `hetsim.report.breakdown` for the rules).

        Raises
        ------
        HetsimError
            `record` is not a `RunRecord` (a `Result` gives its own record).
        SimulationError
            A makespan that is NaN or negative (busy times were cut to it), a span whose NaN or
            infinite start or end makes a total so (named; spans are not checked one by one
            otherwise: the engine makes none), or totals that overflow to infinity.
        """
        record = check_record(record, "Result.from_record")
        makespan = float(record.makespan_us)
        if not makespan >= 0:  # NaN too
            raise SimulationError(
                f"Result.from_record: expected a makespan_us of 0 us or more, got {makespan!r}"
            )
        run_totals = totals(record)
        busy = run_totals[1]
        processors = {
            path: ProcessorStats(
                busy[path],
                busy[path] / makespan if makespan > 0 else 0.0,
                _frozen(breakdown_us(run_totals, (path,), makespan)),
            )
            for path in record.processors
        }
        links = {
            name: LinkStats(int(record.link_bytes.get(name, 0)), busy[name])
            for name in record.links
        }
        breakdown = breakdown_us(run_totals, record.processors, makespan)
        figures = (*breakdown.values(), *(link.busy_us for link in links.values()))
        if not all(math.isfinite(us) for us in figures):
            _check_span_times(record)  # a record made by hand: which span, rather than a sum
        overflown = [category for category, us in breakdown.items() if not us < math.inf]
        if overflown:  # every span is finite (checked), but sums near 1.8e308 are not
            raise SimulationError(
                f"expected finite figures, got an infinite breakdown for {', '.join(overflown)}: "
                f"a makespan of {makespan:g} µs summed over {len(record.processors)} processors "
                "overflows (a time parameter of the platform near 1e308 µs?)"
            )
        return cls(
            makespan_us=makespan,
            breakdown_us=_frozen(breakdown),
            processors=_frozen(processors),
            links=_frozen(links),
            peak_memory_bytes=_frozen({k: int(v) for k, v in record.peak_memory_bytes.items()}),
            placement=_frozen(record.placement),
            inputs=_frozen(record.inputs),
            outputs=_frozen(record.outputs),
            record=record,
            levels=_frozen(level_stats(record, run_totals)),  # one pass over the spans for all
        )

    @property
    def spans(self) -> Sequence[Span]:
        """Every span of the run, in start order (`hetsim.sim.records.Spans`: a sequence that
        makes its `Span`s when first read, and equals the tuple of them)."""
        return self.record.spans

    def to_dict(self) -> dict[str, JsonValue]:
        """The run's figures as plain JSON values (arrays are summarized by shape and dtype).

        Keys: ``makespan_us``, ``breakdown_us``, ``processors`` (path → ``busy_us``,
        ``utilization``, ``breakdown_us``: µs per category of that processor), ``links`` (name →
        ``bytes``, ``busy_us``), ``levels`` (level path → ``busy_us``, ``dispatch_us``,
        ``link_bytes``: `hetsim.report.level_stats`, as the run's Levels table shows them; empty
        for a program run without levels), ``peak_memory_bytes``, ``placement``, ``inputs`` and
        ``outputs`` (name → ``shape``, ``dtype``) and ``extra`` (whatever the engine added to its
        record).
        """
        return {
            "makespan_us": self.makespan_us,
            "breakdown_us": dict(self.breakdown_us),
            "processors": {
                path: {
                    "busy_us": s.busy_us,
                    "utilization": s.utilization,
                    "breakdown_us": dict(s.breakdown_us),
                }
                for path, s in self.processors.items()
            },
            "links": {
                name: {"bytes": s.bytes, "busy_us": s.busy_us} for name, s in self.links.items()
            },
            "levels": {
                path: {
                    "busy_us": stats.busy_us,
                    "dispatch_us": stats.dispatch_us,
                    "link_bytes": stats.link_bytes,
                }
                for path, stats in self.levels.items()
            },
            "peak_memory_bytes": dict(self.peak_memory_bytes),
            "placement": dict(self.placement),
            "inputs": _tensor_summary(self.inputs),
            "outputs": _tensor_summary(self.outputs),
            "extra": to_plain(self.record.extra),
        }

    def to_chrome_trace(self, path: str | Path) -> Path:
        """Write the run as Chrome Trace Event JSON (Perfetto, chrome://tracing); return the path.

        See `hetsim.report.trace.chrome_trace` for the layout.

        Raises
        ------
        SimulationError
            The run kept no spans (``simulate(..., trace=False)``).
        HetsimError
            `path` is not a file it can write: not a path, a suffix other than ``.json``, a
            directory, a missing directory (`hetsim.report.arguments.output_path`).
        OSError
            Writing failed anyway (a read-only folder, a full disk).
        """
        check_traced(self.record, "to_chrome_trace")
        return write_chrome_trace(self.record, output_path(path, "to_chrome_trace", ".json"))

    def plot_gantt(self, path: str | Path) -> Path:
        """Draw the run as a PNG timeline, one row per processor or link stream; return the path.

        Needs matplotlib. See `hetsim.report.gantt.plot_gantt`.

        Raises
        ------
        SimulationError
            The run kept no spans (``simulate(..., trace=False)``).
        HetsimError
            matplotlib is not installed, or `path` is not a file it can write: not a path, a
            suffix other than ``.png``, a directory, a missing directory
            (`hetsim.report.arguments.output_path`).
        OSError
            Writing failed anyway (a read-only folder, a full disk).
        """
        check_traced(self.record, "plot_gantt")
        return plot_gantt(self.record, output_path(path, "plot_gantt", ".png"))

    def __reduce__(self) -> tuple[Any, ...]:
        # a mapping proxy does not pickle: each mapping goes as a dict and is frozen again as
        # it was, not recomputed from the record (`from_record` would sum every span again)
        mappings = {name: dict(getattr(self, name)) for name in _MAPPINGS}
        return _unpickled, (self.makespan_us, self.record, mappings)

    def __repr__(self) -> str:
        return (
            f"<Result makespan={self.makespan_us:g} us, {len(self.processors)} processors, "
            f"{len(self.links)} links>"
        )


_MAPPINGS = (
    "breakdown_us",
    "processors",
    "links",
    "peak_memory_bytes",
    "placement",
    "inputs",
    "outputs",
    "levels",
)
"""The fields of a `Result` that are mappings (proxies of dicts, as `Result.from_record` makes
them)."""


def _unpickled(
    makespan_us: float, record: RunRecord, mappings: Mapping[str, Mapping[str, Any]]
) -> Result:
    """The `Result` that `Result.__reduce__` pickled."""
    frozen = {name: _frozen(mapping) for name, mapping in mappings.items()}
    return Result(makespan_us=makespan_us, record=record, **frozen)


def _check_span_times(record: RunRecord) -> None:
    """Refuse the first span of `record` that starts or ends at NaN or infinity (the engine
    makes none: a record made by hand); its totals had read as an overflow."""
    for row in getattr(record.spans, "rows", record.spans):  # `Spans`, or a tuple of them
        start, end = row[4], row[5]
        if not (math.isfinite(start) and math.isfinite(end)):
            raise SimulationError(
                f"expected finite span times, got {row[2]!r} on {row[0]}/{row[1]} from "
                f"{start!r} to {end!r} us"
            )
