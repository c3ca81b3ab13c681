"""busy_us and totals against independent references."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.errors import HetsimError
from hetsim.report import BUCKET_OF, busy_us, totals
from hetsim.report.result import Result
from hetsim.sim.records import CATEGORIES, RunRecord, Span

quarters = st.integers(0, 40)


@settings(max_examples=80, derandomize=True, deadline=None)
@given(st.lists(st.tuples(quarters, quarters), max_size=8))
def test_busy_time_equals_the_covered_quarter_microseconds(pairs: list[tuple[int, int]]) -> None:
    # Reference: mark each quarter-µs cell that some interval covers, then count the cells.
    covered = np.zeros(40, dtype=bool)
    spans = []
    for a, b in pairs:
        start, end = min(a, b), max(a, b)
        covered[start:end] = True
        spans.append(Span("host", f"s{a % 3}", "op", "compute", start / 4, end / 4))
    assert busy_us(spans) == covered.sum() / 4


@pytest.mark.parametrize(
    ("spans", "got"),
    [
        (None, "NoneType"),
        ("host", "str"),
        ([(0.0, 1.0)], "list holding tuple"),
        ((Span("host", "exec", "a", "compute", 0.0, 1.0), 2), "tuple holding int"),
    ],
)
def test_busy_time_of_what_is_not_spans_is_refused(spans: object, got: str) -> None:
    # they raised TypeError ('NoneType' object is not iterable) or AttributeError
    message = f"busy_us: expected spans (Span objects), got {got}"
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        busy_us(spans)  # type: ignore[arg-type]


def test_every_category_has_a_breakdown_key_and_invoke_counts_as_launch() -> None:
    assert set(BUCKET_OF) == set(CATEGORIES)
    assert {key: value for key, value in BUCKET_OF.items() if key != value} == {"invoke": "launch"}


RESOURCES = ("host", "gpu0", "bus")


@settings(max_examples=80, derandomize=True, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(RESOURCES), st.sampled_from(("compute", "dispatch")), quarters,
                  quarters),
        max_size=12,
    ),
    st.booleans(),
)  # fmt: skip
def test_totals_equal_covered_cells_and_sums_in_start_order_or_not(
    drawn: list[tuple[str, str, int, int]], in_start_order: bool
) -> None:
    # In start order, as the engine records spans, totals sweeps them once; in any other order
    # it sorts each resource's intervals. Both must give the reference: covered quarter-µs
    # cells per resource, and durations summed per category.
    covered = {name: np.zeros(40, dtype=bool) for name in RESOURCES}
    sums: dict[str, dict[str, float]] = {name: {} for name in RESOURCES}
    spans = []
    for resource, category, a, b in drawn:
        start, end = min(a, b), max(a, b)
        covered[resource][start:end] = True
        sums[resource][category] = sums[resource].get(category, 0.0) + (end - start) / 4
        spans.append(Span(resource, "stream0", "op", category, start / 4, end / 4))
    if in_start_order:
        spans.sort(key=lambda span: span.start_us)
    record = RunRecord(
        makespan_us=10.0, spans=tuple(spans), processors=("host", "gpu0"), links=("bus",),
        link_bytes={}, peak_memory_bytes={}, placement={}, inputs={}, outputs={},
    )  # fmt: skip
    by_category, busy = totals(record)
    assert busy == {name: covered[name].sum() / 4 for name in RESOURCES}
    assert by_category == sums


def test_busy_time_rounded_past_the_makespan_is_cut_to_it() -> None:
    # 0.1 + 0.2 == 0.30000000000000004 > 0.3: the host is busy the whole run, no longer
    untraced = RunRecord(
        makespan_us=0.3, spans=(), processors=("host",), links=(), link_bytes={},
        peak_memory_bytes={}, placement={}, inputs={}, outputs={},
        extra={"busy_us": {"host": {"dispatch": 0.1, "compute": 0.2}}},
    )  # fmt: skip
    traced = RunRecord(
        makespan_us=0.3,
        spans=(Span("host", "exec", "a", "dispatch", 0.0, 0.1),
               Span("host", "exec", "b", "compute", 0.1, 0.3)),
        processors=("host",), links=(), link_bytes={}, peak_memory_bytes={}, placement={},
        inputs={}, outputs={},
    )  # fmt: skip
    for record in (untraced, traced):
        result = Result.from_record(record)
        host = result.processors["host"]
        assert (host.busy_us, host.utilization, host.breakdown_us["idle"]) == (0.3, 1.0, 0.0)
        assert result.breakdown_us["idle"] == 0.0
