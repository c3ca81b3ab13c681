"""check_invariants: a sound run has no violation; each broken invariant is named in full."""

from __future__ import annotations

import math
import re

import pytest

from hetsim.errors import SimulationError
from hetsim.report import Result, assert_invariants, check_invariants
from hetsim.sim.records import Span
from tests.report.scenarios import LINK, SPANS, two_level_record


def _with(*extra: Span, **changes: object) -> list[str]:
    record = two_level_record(spans=SPANS + extra, **changes)
    return [problem.message for problem in check_invariants(record)]


def test_sound_run_has_no_violation() -> None:
    assert check_invariants(two_level_record()) == []
    assert check_invariants(Result.from_record(two_level_record())) == []


def test_spans_that_touch_on_a_stream_do_not_overlap() -> None:
    assert _with(Span("host", "exec", "noop", "dispatch", 10.0, 10.0)) == []


def test_float_rounding_is_not_an_overlap() -> None:
    assert _with(Span("gpu0", "stream1", "k3", "compute", 6.0 - 1e-12, 7.0)) == []


@pytest.mark.parametrize(
    ("span", "message"),
    [
        (
            Span("gpu0", "stream0", "k3", "compute", 5.0, 6.0),
            "span 'k3' on gpu0/stream0 at [5, 6] us: expected no overlap with another span on "
            "its stream, got an overlap with 'k1' at [3, 7] us",
        ),
        (
            Span("host", "exec", "late", "dispatch", 10.0, 11.0),
            "span 'late' on host/exec: expected an interval inside [0, 10] us, got [10, 11] us",
        ),
        (
            Span("vdevice0/npu", "stream0", "back", "compute", 2.0, 1.0),
            "span 'back' on vdevice0/npu/stream0: expected an end at or after the start, "
            "got [2, 1] us",
        ),
        (
            Span("gpu9", "stream0", "k", "compute", 0.0, 1.0),
            "span 'k' on gpu9/stream0: expected a resource among the run's processors and "
            "links, got 'gpu9'",
        ),
        (
            Span("gpu0", "stream2", "k", "think", 0.0, 1.0),
            "span 'k' on gpu0/stream2: expected a category in ('dispatch', 'launch', 'compute', "
            "'transfer', 'sync_wait', 'capture', 'invoke'), got 'think'",
        ),
        (
            Span("gpu0", "stream2", "k1 again", "compute", 4.0, 5.0, flow_in=1),
            "flow 1: expected one source span and one target span, got 1 sources and 2 targets",
        ),
        (
            Span("host", "exec", "launch k9", "launch", 10.0, 10.0, flow_out=9),
            "flow 9: expected one source span and one target span, got 1 sources and 0 targets",
        ),
        (
            Span(LINK, "link", "copy z", "transfer", 0.0, 1.0),
            "span 'copy z' on host.mem--gpu0.mem/link: expected args['bytes'] as a "
            "non-negative int, got None",
        ),
        (
            Span(LINK, "link", "copy z", "transfer", 0.0, 1.0, args={"bytes": 2.5}),
            "span 'copy z' on host.mem--gpu0.mem/link: expected args['bytes'] as a "
            "non-negative int, got 2.5",
        ),
    ],
    ids=[
        "overlap",
        "after-makespan",
        "end-before-start",
        "unknown-resource",
        "unknown-category",
        "two-flow-targets",
        "no-flow-target",
        "link-span-without-bytes",
        "link-span-with-float-bytes",
    ],
)
def test_broken_invariant_is_named_in_full(span: Span, message: str) -> None:
    assert _with(span) == [message]


def test_kernel_starting_before_its_launch_ends_is_a_violation() -> None:
    spans = (
        Span("host", "exec", "launch k", "launch", 0.0, 2.0, flow_out=0),
        Span("gpu0", "stream0", "k", "compute", 1.5, 3.0, flow_in=0),
    )
    problems = check_invariants(two_level_record(spans=spans, link_bytes={}))
    assert [p.message for p in problems] == [
        "flow 0 ('launch k' -> 'k'): expected the target to start at or after the source ends "
        "(2 us), got a start at 1.5 us"
    ]


def test_link_bytes_must_equal_the_bytes_on_the_links_spans() -> None:
    assert _with(link_bytes={LINK: 4096}) == [
        "link host.mem--gpu0.mem: expected link_bytes equal to the bytes on its spans (8000), "
        "got 4096"
    ]


def test_untraced_run_is_not_checked_against_link_spans() -> None:
    sums = {"host": {"dispatch": 10.0}, LINK: {"transfer": 2.0}}
    record = two_level_record(spans=(), extra={"busy_us": sums})
    assert check_invariants(record) == []


def test_transfers_may_share_a_link_unless_links_are_exclusive() -> None:
    extra = Span(LINK, "link", "copy z", "transfer", 8.0, 10.0, args={"bytes": 100})
    record = two_level_record(spans=(*SPANS, extra), link_bytes={LINK: 8100})
    assert check_invariants(record) == []
    assert [p.message for p in check_invariants(record, exclusive_links=True)] == [
        "span 'copy z' on host.mem--gpu0.mem/link at [8, 10] us: expected no overlap with "
        "another span on its stream, got an overlap with 'copy y' at [7, 9] us"
    ]


def test_assert_invariants_raises_with_every_violation() -> None:
    record = two_level_record(link_bytes={LINK: 1}, makespan_us=9.5)
    expected = (
        "span 'return' on host/exec: expected an interval inside [0, 9.5] us, got [9, 10] us\n"
        "link host.mem--gpu0.mem: expected link_bytes equal to the bytes on its spans (8000), "
        "got 1"
    )
    with pytest.raises(SimulationError, match=f"^{re.escape(expected)}$"):
        assert_invariants(Result.from_record(record))
    assert_invariants(two_level_record())


@pytest.mark.parametrize(
    ("start", "end", "interval"),
    [(math.nan, 1.0, "[nan, 1]"), (0.0, math.nan, "[0, nan]"), (0.0, math.inf, "[0, inf]")],
)
def test_a_span_time_that_is_not_finite_is_a_violation(
    start: float, end: float, interval: str
) -> None:
    # every comparison with NaN is false: a NaN start or end broke no invariant
    assert _with(Span("gpu0", "stream2", "k", "compute", start, end)) == [
        f"span 'k' on gpu0/stream2: expected a finite start and end, got {interval} us"
    ]


@pytest.mark.parametrize("makespan", [math.nan, -1.0, math.inf])
def test_a_makespan_that_is_not_a_finite_time_is_a_violation(makespan: float) -> None:
    # NaN and -1 passed (with no spans to fall outside them): -1 gave busy_us -1.0
    record = two_level_record(spans=(), link_bytes={}, makespan_us=makespan)
    assert [problem.message for problem in check_invariants(record)] == [
        f"makespan_us: expected a finite time of 0 us or more, got {makespan!r}"
    ]
