"""What the report's public functions take, checked: a record or a Result, a file to write."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from hetsim.calibrate.accuracy import Comparison as Measured
from hetsim.calibrate.benchreport import plot_accuracy
from hetsim.compare import Comparison, compare
from hetsim.errors import HetsimError, SimulationError
from hetsim.platform import build_platform, draw
from hetsim.report import (
    Result,
    assert_invariants,
    check_invariants,
    chrome_trace,
    format_summary,
    level_stats,
    plot_gantt,
    print_summary,
    summary_tables,
    totals,
    write_chrome_trace,
)
from hetsim.sweep import plot_sweep
from tests.report.scenarios import two_level_record

RESULT = Result.from_record(two_level_record())

SWEPT = {"index": 0, "status": "ok", "params": {"model": "mlp"}, "result": {"makespan_us": 2.0}}


@cache
def _comparison() -> Comparison:
    return compare("mlp", "x86-h100", ["none"], iterations=1)


WRITERS: dict[str, tuple[Callable[[Any], Path], str]] = {
    "to_chrome_trace": (RESULT.to_chrome_trace, ".json"),
    "plot_gantt": (RESULT.plot_gantt, ".png"),
    "write_chrome_trace": (lambda path: write_chrome_trace(RESULT.record, path), ".json"),
    "plot": (lambda path: _comparison().plot(path), ".png"),
    "plot_sweep": (lambda path: plot_sweep([SWEPT], [], path), ".png"),
    "plot_accuracy": (
        lambda path: plot_accuracy([Measured("mlp", 5, 3.0, (2.0, 4.0), {})], path),
        ".png",
    ),
    "draw": (lambda path: draw(build_platform("x86-h100"), path), ".png"),
}
"""Each function that writes a file (the report's, and the charts of a comparison, a sweep, a
calibration and a platform, which follow its rule): name -> (write to a path, its suffix)."""


def _raises(message: str) -> Any:
    return pytest.raises(HetsimError, match=f"^{re.escape(message)}$")


@pytest.mark.parametrize("name", WRITERS)
@pytest.mark.parametrize("path", [1, None, b"t.json", ""])
def test_a_path_that_is_not_a_str_or_path_like_is_named(name: str, path: object) -> None:
    # int and None raised pathlib's TypeError; "" wrote to (or failed on) the current directory
    write, _ = WRITERS[name]
    with _raises(f"{name}: expected a path (a str or an os.PathLike), got {path!r}"):
        write(path)


@pytest.mark.parametrize("name", WRITERS)
def test_a_directory_is_refused_before_anything_is_written(name: str, tmp_path: Path) -> None:
    # it raised IsADirectoryError, from PIL deep inside matplotlib for the chart
    write, _ = WRITERS[name]
    with _raises(f"{name}: expected a file to write, got the directory {str(tmp_path)!r}"):
        write(tmp_path)


@pytest.mark.parametrize("name", WRITERS)
def test_a_file_in_a_missing_directory_is_refused(name: str, tmp_path: Path) -> None:
    # it raised FileNotFoundError, after building the whole trace or drawing the chart
    write, suffix = WRITERS[name]
    path = tmp_path / "missing" / f"out{suffix}"
    message = (
        f"{name}: expected a file in an existing directory, got {str(path)!r} "
        f"(no directory {str(tmp_path / 'missing')!r})"
    )
    with _raises(message):
        write(path)


FULL_DISK = Path("/dev/full")  # Linux: every write to it fails with ENOSPC


@pytest.mark.skipif(not FULL_DISK.exists(), reason="no /dev/full")
@pytest.mark.parametrize("name", WRITERS)
def test_a_write_that_fails_anyway_raises_its_os_error(name: str) -> None:
    # the rule the docstrings give (docs/architecture.md): what a check finds before any work
    # is a HetsimError naming the function; a write that fails anyway, its OSError
    write, _ = WRITERS[name]
    with pytest.raises(OSError, match="No space left on device") as caught:
        write(FULL_DISK)
    assert not isinstance(caught.value, HetsimError)


@pytest.mark.parametrize("name", ["to_chrome_trace", "write_chrome_trace"])
@pytest.mark.parametrize("file", ["trace.png", "trace.txt"])
def test_a_trace_goes_to_a_json_path_only(name: str, file: str, tmp_path: Path) -> None:
    # it wrote JSON under any name, as the Gantt chart wrote PNG bytes (hetsim run --trace
    # refused these already)
    write, _ = WRITERS[name]
    with _raises(f"{name}: expected a .json path (or none), got {str(tmp_path / file)!r}"):
        write(tmp_path / file)
    assert not (tmp_path / file).exists()
    assert write(tmp_path / "TRACE.JSON").exists()
    assert write(tmp_path / "trace").exists()


def test_the_gantt_chart_checks_its_suffix_before_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "g.json"
    with _raises(f"plot_gantt: expected a .png path (or none), got {str(path)!r}"):
        RESULT.plot_gantt(path)


READERS: dict[str, Callable[[Any], object]] = {
    "Result.from_record": Result.from_record,
    "chrome_trace": chrome_trace,
    "write_chrome_trace": lambda record: write_chrome_trace(record, "unused.json"),
    "plot_gantt": lambda record: plot_gantt(record, "unused.png"),
    "totals": totals,
    "level_stats": level_stats,
    "check_invariants": check_invariants,
    "assert_invariants": assert_invariants,
}
"""Each function that reads a run's record, by the name its errors give."""


@pytest.mark.parametrize("name", READERS)
@pytest.mark.parametrize(("run", "got"), [(None, "NoneType"), ({}, "dict")])
def test_a_run_that_is_neither_a_record_nor_a_result_is_named(
    name: str, run: object, got: str
) -> None:
    # each raised an AttributeError from deep inside ('NoneType' object has no attribute ...)
    with _raises(f"{name}: expected a RunRecord or a Result, got {got}"):
        READERS[name](run)


def test_a_result_is_read_by_its_record() -> None:
    # typed for a record, chrome_trace and totals read a Result by duck typing, and still do;
    # level_stats(result) raised AttributeError: 'Result' object has no attribute 'extra'
    record = RESULT.record
    assert chrome_trace(RESULT) == chrome_trace(record)  # type: ignore[arg-type]
    assert totals(RESULT) == totals(record)  # type: ignore[arg-type]
    assert level_stats(RESULT) == level_stats(record)  # type: ignore[arg-type]
    assert check_invariants(RESULT) == check_invariants(record) == []


@pytest.mark.parametrize(
    "summary",
    [summary_tables, format_summary, print_summary],
    ids=lambda f: f.__name__,
)
def test_a_summary_takes_a_result(summary: Callable[[Any], object]) -> None:
    # each raised AttributeError: 'RunRecord' object has no attribute 'breakdown_us'
    name = summary.__name__
    message = f"{name}: expected a Result, got RunRecord (Result.from_record makes one)"
    with _raises(message):
        summary(RESULT.record)
    with _raises(f"{name}: expected a Result, got NoneType"):
        summary(None)


@pytest.mark.parametrize("file", ["summary.txt", 1])
def test_a_summary_is_printed_to_a_text_file_only(file: object) -> None:
    # a path raised AttributeError: 'str' object has no attribute 'write', from inside rich
    message = f"print_summary: expected a text file (with a write method) or None, got {file!r}"
    with _raises(message):
        print_summary(RESULT, file)  # type: ignore[arg-type]


def test_a_summary_is_printed_to_the_file_given() -> None:
    out = io.StringIO()
    print_summary(RESULT, out)
    assert "makespan" in out.getvalue()


@pytest.mark.parametrize("name", ["chrome_trace", "write_chrome_trace", "plot_gantt"])
def test_an_untraced_record_has_no_trace_or_timeline(name: str, tmp_path: Path) -> None:
    # the functions wrote a trace of metadata only, and a chart of empty rows, without a word
    untraced = replace(two_level_record(), spans=(), extra={"busy_us": {"host": {"launch": 1.0}}})
    message = (
        f"{name}: expected a run with spans, got one made with trace=False (it keeps totals "
        "only): simulate again with trace=True"
    )
    with pytest.raises(SimulationError, match=f"^{re.escape(message)}$"):
        READERS[name](untraced)
