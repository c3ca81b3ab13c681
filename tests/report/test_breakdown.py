"""busy_us and totals against independent references."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.report import BUCKET_OF, busy_us
from hetsim.sim.records import CATEGORIES, Span

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


def test_every_category_has_a_breakdown_key_and_invoke_counts_as_launch() -> None:
    assert set(BUCKET_OF) == set(CATEGORIES)
    assert {key: value for key, value in BUCKET_OF.items() if key != value} == {"invoke": "launch"}
