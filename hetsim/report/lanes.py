"""The display order of a run's resources and their streams, shared by traces and plots.

Resources come in platform order (processors, then links); a resource that has spans but is not
listed by the record comes last, so no span is ever dropped from a display. Streams of a
resource come in the order of their first span. A run recorded without spans has nothing to
display (`check_traced`).
"""

from __future__ import annotations

from hetsim.errors import SimulationError
from hetsim.report.breakdown import TOTALS_KEY
from hetsim.sim.records import RunRecord

__all__ = ["check_traced", "lanes"]


def check_traced(record: RunRecord, what: str) -> None:
    """Raise a `SimulationError` if `record` kept totals only (``simulate(..., trace=False)``):
    its trace or chart would be empty, not the run."""
    if not record.spans and TOTALS_KEY in record.extra:
        raise SimulationError(
            f"{what}: expected a run with spans, got one made with trace=False (it keeps "
            "totals only): simulate again with trace=True"
        )


def lanes(record: RunRecord) -> dict[str, tuple[str, ...]]:
    """Resource name → its streams, both in display order.

    Examples
    --------
    >>> from hetsim.sim.records import Span
    >>> record = RunRecord(
    ...     makespan_us=3.0,
    ...     spans=(Span("gpu0", "stream1", "b", "compute", 0.0, 1.0),
    ...            Span("gpu0", "stream0", "a", "compute", 1.0, 3.0),
    ...            Span("host", "exec", "c", "dispatch", 0.0, 1.0)),
    ...     processors=("host", "gpu0"), links=("host.mem--gpu0.mem",), link_bytes={},
    ...     peak_memory_bytes={}, placement={}, inputs={}, outputs={})
    >>> lanes(record)
    {'host': ('exec',), 'gpu0': ('stream1', 'stream0'), 'host.mem--gpu0.mem': ()}
    """
    streams: dict[str, dict[str, None]] = {name: {} for name in (*record.processors, *record.links)}
    for span in record.spans:
        streams.setdefault(span.resource, {})[span.stream] = None
    return {resource: tuple(names) for resource, names in streams.items()}
