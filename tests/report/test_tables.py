"""The summary tables: plain text exactly, rich when installed, plain when it is not."""

from __future__ import annotations

import io
import sys

import pytest

from hetsim.api import simulate
from hetsim.report import Result, format_summary, print_summary, summary_tables
from tests.report.scenarios import two_level_record

SUMMARY = """\
Run
makespan (us)
-------------
       10.000

Breakdown (summed over processors)
category   time (us)  share
---------  ---------  -----
dispatch       2.500   6.2%
launch         4.500  11.2%
compute        8.500  21.2%
transfer       2.000   5.0%
sync_wait      6.500  16.2%
capture        0.000   0.0%
idle          18.000  45.0%

Processors (us; busy includes sync_wait and a stream's transfers)
processor        busy  utilization  dispatch  launch  compute  transfer  sync_wait  capture   idle
-------------  ------  -----------  --------  ------  -------  --------  ---------  -------  -----
host           10.000       100.0%     2.000   4.000    0.000     0.000      4.000    0.000  0.000
gpu0            6.000        60.0%     0.000   0.000    6.000     2.000      0.000    0.000  4.000
vdevice0/host   3.500        35.0%     0.500   0.500    0.000     0.000      2.500    0.000  6.500
vdevice0/npu    2.500        25.0%     0.000   0.000    2.500     0.000      0.000    0.000  7.500

Links
link                  bytes  busy (us)
------------------  -------  ---------
host.mem--gpu0.mem  7.8 KiB      2.000

Peak memory
memory       peak
--------  -------
host.mem  4.0 KiB
gpu0.mem  7.8 KiB"""


PROCESSORS = "Processors (us; busy includes sync_wait and a stream's transfers)"


@pytest.fixture
def result() -> Result:
    return Result.from_record(two_level_record())


def test_plain_summary_shows_every_figure(result: Result) -> None:
    assert format_summary(result) == SUMMARY


def test_summary_leaves_out_empty_tables() -> None:
    record = two_level_record(links=(), link_bytes={}, peak_memory_bytes={}, spans=())
    titles = [table.title for table in summary_tables(Result.from_record(record))]
    assert titles == ["Run", "Breakdown (summed over processors)", PROCESSORS]


def test_rich_summary_holds_the_same_rows(result: Result) -> None:
    out = io.StringIO()
    print_summary(result, file=out)
    text = out.getvalue()
    for table in summary_tables(result):
        assert table.title in text
        for row in table.rows:
            assert all(cell in text for cell in row), row
    assert "│" in text  # drawn by rich, not the plain renderer


def test_summary_without_rich_is_the_plain_text(
    result: Result, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "rich.console", None)
    out = io.StringIO()
    print_summary(result, file=out)
    assert out.getvalue() == SUMMARY + "\n"


def test_rich_summary_keeps_long_and_bracketed_names_whole() -> None:
    """A pipe has no width: no name loses its end to an ellipsis, and a name with brackets is
    printed as written, not read as rich markup."""
    memory = "machine1/vdevice0/host-with-a-long-name.mem[bold]"
    record = two_level_record(peak_memory_bytes={memory: 4096})
    out = io.StringIO()
    print_summary(Result.from_record(record), file=out)
    assert memory in out.getvalue()


def test_rich_summary_keeps_a_link_between_long_paths_on_one_line() -> None:
    # at 400 columns, a link between two devices of 200-character paths was folded
    long = "d" * 200
    target = {"kind": "hetero", "devices": [{"kind": "hetero", "name": long, "devices": ["cuda"]}]}
    out = io.StringIO()
    print_summary(simulate("mlp", target, mode="timing"), file=out)
    link = f"{long}/host.mem--{long}/dev0.mem"
    (line,) = [line for line in out.getvalue().splitlines() if link in line]
    assert line.split()[1] == link
