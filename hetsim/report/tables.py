"""The summary of a run as tables: makespan, breakdown, processors, levels, links, peak memory.

Owns what the summary shows (`summary_tables`) and its two renderings: plain text
(`format_summary`, deterministic, used by tests and when rich is missing) and rich tables
(`print_summary`, for terminals). Both render the same `Table` values.
"""

from __future__ import annotations

import errno
import sys
from dataclasses import dataclass
from typing import Any, TextIO

from hetsim.errors import HetsimError, Problem
from hetsim.report.breakdown import BREAKDOWN_KEYS
from hetsim.report.result import Result
from hetsim.sim.records import RunRecord
from hetsim.units import format_bytes

__all__ = ["Table", "format_summary", "print_summary", "rich_console", "summary_tables"]


@dataclass(frozen=True, slots=True)
class Table:
    """A titled table of strings; `numeric` marks the right-aligned columns."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]


def _us(value: float) -> str:
    return f"{value:,.3f}"


def _percent(fraction: float) -> str:
    return f"{100 * fraction:.1f}%"


def _check_result(result: object, what: str) -> None:
    if not isinstance(result, Result):
        got = type(result).__name__
        if isinstance(result, RunRecord):
            got += " (Result.from_record makes one)"
        raise HetsimError(Problem(what, "expected a Result", got).message)


def summary_tables(result: Result) -> tuple[Table, ...]:
    """The tables of the summary; tables with no rows (a run without links) are left out.

    The breakdown's share is of the total processor time (processors × makespan).

    Raises
    ------
    HetsimError
        `result` is not a `Result`.
    """
    _check_result(result, "summary_tables")
    makespan = result.makespan_us
    total = makespan * len(result.processors)
    tables = [
        Table("Run", ("makespan (us)",), ((_us(makespan),),), (True,)),
        Table(
            "Breakdown (summed over processors)",
            ("category", "time (us)", "share"),
            tuple(
                (key, _us(value), _percent(value / total if total > 0 else 0.0))
                for key, value in result.breakdown_us.items()
            ),
            (False, True, True),
        ),
        Table(
            "Processors (us; busy includes sync_wait and a stream's transfers)",
            ("processor", "busy", "utilization", *BREAKDOWN_KEYS),
            tuple(
                (
                    path,
                    _us(s.busy_us),
                    _percent(s.utilization),
                    *(_us(s.breakdown_us.get(key, 0.0)) for key in BREAKDOWN_KEYS),
                )
                for path, s in result.processors.items()
            ),
            (False, True, True, *(True for _ in BREAKDOWN_KEYS)),
        ),
        Table(
            "Levels",
            (
                "level",
                "host",
                "processors",
                "busy, summed (us)",
                "host dispatch+launch (us)",
                "bytes on its links",
            ),
            tuple(
                (
                    path or "(root)",
                    st.host,
                    str(len(st.processors)),
                    _us(st.busy_us),
                    _us(st.dispatch_us),
                    format_bytes(st.link_bytes),
                )
                for path, st in result.levels.items()
            ),
            (False, False, True, True, True, True),
        ),
        Table(
            "Links",
            ("link", "bytes", "busy (us)"),
            tuple(
                (name, format_bytes(s.bytes), _us(s.busy_us)) for name, s in result.links.items()
            ),
            (False, True, True),
        ),
        Table(
            "Peak memory",
            ("memory", "peak"),
            tuple((name, format_bytes(size)) for name, size in result.peak_memory_bytes.items()),
            (False, True),
        ),
    ]
    return tuple(table for table in tables if table.rows)


def _format_table(table: Table) -> str:
    widths = [
        max(len(cell) for cell in column) for column in zip(table.headers, *table.rows, strict=True)
    ]

    def line(cells: tuple[str, ...]) -> str:
        aligned = (
            cell.rjust(width) if numeric else cell.ljust(width)
            for cell, width, numeric in zip(cells, widths, table.numeric, strict=True)
        )
        return "  ".join(aligned).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([table.title, line(table.headers), rule, *map(line, table.rows)])


def format_summary(result: Result) -> str:
    """The summary as plain text: one aligned table per figure, separated by blank lines.

    Raises
    ------
    HetsimError
        `result` is not a `Result`.

    Examples
    --------
    >>> from hetsim.sim.records import RunRecord, Span
    >>> record = RunRecord(
    ...     makespan_us=4.0,
    ...     spans=(Span("host", "exec", "launch k", "launch", 0.0, 1.0),
    ...            Span("gpu0", "stream0", "k", "compute", 1.0, 4.0)),
    ...     processors=("host", "gpu0"), links=(), link_bytes={},
    ...     peak_memory_bytes={"gpu0.mem": 4096}, placement={}, inputs={}, outputs={})
    >>> print(format_summary(Result.from_record(record)))
    Run
    makespan (us)
    -------------
            4.000
    <BLANKLINE>
    Breakdown (summed over processors)
    category   time (us)  share
    ---------  ---------  -----
    dispatch       0.000   0.0%
    launch         1.000  12.5%
    compute        3.000  37.5%
    transfer       0.000   0.0%
    sync_wait      0.000   0.0%
    capture        0.000   0.0%
    idle           4.000  50.0%
    <BLANKLINE>
    Processors (us; busy includes sync_wait and a stream's transfers)
    processor   busy  utilization  dispatch  launch  compute  transfer  sync_wait  capture   idle
    ---------  -----  -----------  --------  ------  -------  --------  ---------  -------  -----
    host       1.000        25.0%     0.000   1.000    0.000     0.000      0.000    0.000  3.000
    gpu0       3.000        75.0%     0.000   0.000    3.000     0.000      0.000    0.000  1.000
    <BLANKLINE>
    Peak memory
    memory       peak
    --------  -------
    gpu0.mem  4.0 KiB
    """
    _check_result(result, "format_summary")
    return "\n\n".join(_format_table(table) for table in summary_tables(result))


NATURAL_WIDTH = 10_000
"""Columns a `rich_console` allows when its output is not a terminal: wide enough that no name
is folded (rich tables, not expanded, take only the width their cells need; at 400, a link
between two devices of 200-character paths was folded)."""


def rich_console(file: TextIO | None = None) -> Any:
    """A rich ``Console`` on `file` (stdout by default) for tables: a terminal's width, else
    `NATURAL_WIDTH` (a pipe or a file has no width to keep to; rich would assume 80 columns and
    fold or cut names). Needs rich installed."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich's default points stdout at devnull and raises SystemExit(1), whatever file
            # the console writes: a library call must not exit, and the CLI stops quietly on
            # a BrokenPipeError (status 0, as with --json)
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    console = _Console(file=sys.stdout if file is None else file)
    if not console.is_terminal:
        console.width = NATURAL_WIDTH
    return console


def print_summary(result: Result, file: TextIO | None = None) -> None:
    """Print the summary to `file` (stdout by default): rich tables if rich is installed, else
    the plain text of `format_summary`.

    Raises
    ------
    HetsimError
        `result` is not a `Result`, or `file` is neither ``None`` nor a text file (with a
        ``write`` method).
    """
    _check_result(result, "print_summary")
    if file is not None and not callable(getattr(file, "write", None)):
        expected = "expected a text file (with a write method) or None"
        raise HetsimError(Problem("print_summary", expected, repr(file)).message)
    file = sys.stdout if file is None else file
    try:
        from rich.table import Table as RichTable
        from rich.text import Text

        console = rich_console(file)
    except ImportError:
        print(format_summary(result), file=file)
        return
    for table in summary_tables(result):
        rich_table = RichTable(title=table.title, title_justify="left", min_width=len(table.title))
        for header, numeric in zip(table.headers, table.numeric, strict=True):
            # a name folds onto a second line rather than lose its end to an ellipsis
            rich_table.add_column(header, justify="right" if numeric else "left", overflow="fold")
        for row in table.rows:
            rich_table.add_row(*(Text(cell) for cell in row))  # names are text, not markup
        console.print(rich_table)
