"""Invariants every simulated run must keep, checked on a `RunRecord` (or a `Result`'s record).

Owns the checks that hold whatever the engine does, so the engine's tests can run them on every
scenario:

- the makespan is a finite number, 0 or more (not NaN: every comparison with NaN is false, so
  NaN times broke no other check);
- every span names a resource of the run (a processor or a link) and a known category;
- every span starts and ends at finite times, lies inside ``[0, makespan]`` and ends at or after
  it starts;
- no two spans overlap on one stream of a processor (a stream runs one thing at a time); link
  spans may overlap unless ``exclusive_links`` is set, because transfers share a link's bandwidth;
- every flow id has exactly one source span and one target span, and the target starts at or
  after the source ends (a kernel runs only once its launch was dispatched);
- every link span carries ``args["bytes"]``, and the record's ``link_bytes`` of each link equals
  the sum of the bytes on its spans (not checked for a run recorded without spans).

Each broken invariant is a `Problem` whose message has the usual shape
``<where>: <expected>, got <found>``. Times compare with a tolerance of `TOLERANCE` times
``max(1, makespan)`` µs, so float rounding in long runs is not a violation.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from numbers import Integral

from hetsim.errors import Problem, SimulationError, is_count
from hetsim.report.arguments import check_record
from hetsim.report.breakdown import TOTALS_KEY
from hetsim.report.result import Result
from hetsim.sim.records import CATEGORIES, RunRecord, Span

__all__ = ["TOLERANCE", "assert_invariants", "check_invariants"]

TOLERANCE = 1e-9
"""Relative tolerance of time comparisons."""


def _where(span: Span) -> str:
    return f"span {span.name!r} on {span.resource}/{span.stream}"


def _interval(span: Span) -> str:
    return f"[{span.start_us:g}, {span.end_us:g}] us"


def _check_names(record: RunRecord) -> Iterable[Problem]:
    resources = {*record.processors, *record.links}
    for span in record.spans:
        if span.resource not in resources:
            yield Problem(
                _where(span),
                "expected a resource among the run's processors and links",
                repr(span.resource),
            )
        if span.category not in CATEGORIES:
            yield Problem(_where(span), f"expected a category in {CATEGORIES}", repr(span.category))


def _check_makespan(record: RunRecord) -> Iterable[Problem]:
    makespan = record.makespan_us
    if not (math.isfinite(makespan) and makespan >= 0):
        yield Problem("makespan_us", "expected a finite time of 0 us or more", repr(makespan))


def _check_bounds(record: RunRecord, tol: float) -> Iterable[Problem]:
    for span in record.spans:
        if not (math.isfinite(span.start_us) and math.isfinite(span.end_us)):
            yield Problem(_where(span), "expected a finite start and end", _interval(span))
            continue
        if span.end_us < span.start_us:
            yield Problem(_where(span), "expected an end at or after the start", _interval(span))
        if span.start_us < -tol or span.end_us > record.makespan_us + tol:
            yield Problem(
                _where(span),
                f"expected an interval inside [0, {record.makespan_us:g}] us",
                _interval(span),
            )


def _check_overlaps(record: RunRecord, tol: float, exclusive_links: bool) -> Iterable[Problem]:
    exclusive = set(record.processors) | (set(record.links) if exclusive_links else set())
    by_lane: dict[tuple[str, str], list[Span]] = defaultdict(list)
    for span in record.spans:
        if span.resource in exclusive:
            by_lane[span.resource, span.stream].append(span)
    for spans in by_lane.values():
        latest: Span | None = None
        for span in sorted(spans, key=lambda s: (s.start_us, s.end_us)):
            if latest is not None and span.start_us < latest.end_us - tol:
                yield Problem(
                    _where(span) + f" at {_interval(span)}",
                    "expected no overlap with another span on its stream",
                    f"an overlap with {latest.name!r} at {_interval(latest)}",
                )
            if latest is None or span.end_us > latest.end_us:
                latest = span


def _check_flows(record: RunRecord, tol: float) -> Iterable[Problem]:
    sources: dict[int, list[Span]] = defaultdict(list)
    targets: dict[int, list[Span]] = defaultdict(list)
    for span in record.spans:
        if span.flow_out is not None:
            sources[span.flow_out].append(span)
        if span.flow_in is not None:
            targets[span.flow_in].append(span)
    for flow_id in sorted(sources.keys() | targets.keys()):
        found_sources, found_targets = sources[flow_id], targets[flow_id]
        if len(found_sources) != 1 or len(found_targets) != 1:
            yield Problem(
                f"flow {flow_id}",
                "expected one source span and one target span",
                f"{len(found_sources)} sources and {len(found_targets)} targets",
            )
            continue
        source, target = found_sources[0], found_targets[0]
        if target.start_us < source.end_us - tol:
            yield Problem(
                f"flow {flow_id} ({source.name!r} -> {target.name!r})",
                f"expected the target to start at or after the source ends ({source.end_us:g} us)",
                f"a start at {target.start_us:g} us",
            )


def _check_link_bytes(record: RunRecord) -> Iterable[Problem]:
    if not record.spans and TOTALS_KEY in record.extra:
        return  # an untraced run kept no link spans to count
    links = set(record.links)
    carried: dict[str, int] = dict.fromkeys(record.links, 0)
    for span in record.spans:
        if span.resource not in links:
            continue
        size = span.args.get("bytes")
        if isinstance(size, Integral) and is_count(size):
            carried[span.resource] += int(size)
            continue
        yield Problem(_where(span), "expected args['bytes'] as a non-negative int", repr(size))
    for name in record.links:
        recorded = record.link_bytes.get(name, 0)
        if recorded != carried[name]:
            yield Problem(
                f"link {name}",
                f"expected link_bytes equal to the bytes on its spans ({carried[name]})",
                repr(recorded),
            )


def check_invariants(run: RunRecord | Result, *, exclusive_links: bool = False) -> list[Problem]:
    """Every broken invariant of `run` (see the module docstring); empty when all hold.

    Parameters
    ----------
    run
        An engine record, or a `Result` (its record is checked).
    exclusive_links
        Also require that spans on one link never overlap (for an engine that queues transfers
        on a link instead of sharing its bandwidth).

    Raises
    ------
    HetsimError
        `run` is neither a `RunRecord` nor a `Result`.

    Examples
    --------
    >>> record = RunRecord(
    ...     makespan_us=4.0,
    ...     spans=(Span("host", "exec", "launch k", "launch", 0.0, 2.0, flow_out=0),
    ...            Span("gpu0", "stream0", "k", "compute", 1.0, 4.0, flow_in=0)),
    ...     processors=("host", "gpu0"), links=(), link_bytes={}, peak_memory_bytes={},
    ...     placement={}, inputs={}, outputs={})
    >>> for problem in check_invariants(record):
    ...     print(problem)
    flow 0 ('launch k' -> 'k'): expected the target to start at or after the source ends \
(2 us), got a start at 1 us
    """
    record = check_record(run, "check_invariants")
    tol = TOLERANCE * max(1.0, abs(record.makespan_us))
    return [
        *_check_makespan(record),
        *_check_names(record),
        *_check_bounds(record, tol),
        *_check_overlaps(record, tol, exclusive_links),
        *_check_flows(record, tol),
        *_check_link_bytes(record),
    ]


def assert_invariants(run: RunRecord | Result, *, exclusive_links: bool = False) -> None:
    """Raise if `run` breaks an invariant.

    Raises
    ------
    SimulationError
        Naming every broken invariant, one per line.
    HetsimError
        `run` is neither a `RunRecord` nor a `Result`.
    """
    record = check_record(run, "assert_invariants")
    problems = check_invariants(record, exclusive_links=exclusive_links)
    if problems:
        raise SimulationError("\n".join(problem.message for problem in problems))
