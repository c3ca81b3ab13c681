"""What `hetsim.calibrate` refuses before any measuring or benchmarking (a plan, a thread count,
op counts, tags), and a CPU name that YAML would misread, written so that it reads back."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import hetsim.calibrate.bench as bench
import hetsim.calibrate.run as run
from hetsim.calibrate import LOCAL_TAG, bench_dispatch, calibrate, steps, write_tag
from hetsim.calibrate.benchchecks import MAX_OPS, check_ops
from hetsim.errors import HetsimError, TargetError
from hetsim.target import Target, add_tag_dir, remove_tag_dir
from tests.calibrate.synthetic import synthetic


@pytest.fixture
def unmeasured(monkeypatch: pytest.MonkeyPatch) -> None:
    """A calibration that gets past its checks fails at once, instead of measuring for long."""

    def measure() -> None:
        raise AssertionError("calibrate measured this machine")

    monkeypatch.setattr(run, "describe_machine", measure)


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ("ful", "plan: expected one of full, quick, got 'ful' (did you mean 'full'?)"),
        ("QUICK", "plan: expected one of full, quick, got 'QUICK' (did you mean 'quick'?)"),
        ("", "plan: expected one of full, quick, got ''"),
        (None, "plan: expected one of full, quick, got None"),
    ],
)
@pytest.mark.usefixtures("unmeasured")
def test_unknown_plan_names_the_plans(plan: object, message: str) -> None:
    # a KeyError: 'ful'
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        calibrate(plan)  # type: ignore[arg-type]
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        steps(plan, 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("threads", [0, -1, 2.5, "4", True, (os.cpu_count() or 1) + 1])
@pytest.mark.usefixtures("unmeasured")
def test_threads_not_a_positive_integer_are_refused(threads: object) -> None:
    # 0 measured with every thread ("all"); -1 and 2.5 reached threadpoolctl; steps counted
    # them; more than the machine's CPUs fitted every efficiency to its floor
    cpus = os.cpu_count() or 1
    message = (
        f"threads: expected an integer from 1 to this machine's CPUs ({cpus}), got {threads!r}"
    )
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        calibrate("quick", threads=threads)  # type: ignore[arg-type]
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        steps("quick", threads)  # type: ignore[arg-type]


AWKWARD_CPU_NAMES = [
    "ARM: Cortex-A72 # rev 3",
    "*star",
    "&anchor",
    "'quoted",
    'AMD "Epyc" 7B13',
    "yes",
    "null",
    "12.5",
    "- dash",
    "[x]",
    "{brace}",
    "%pct",
    "@at",
    "!tag",
    "|pipe",
    "> folded",
    "",
    "  padded  ",
    "two\nlines",
    "tab\there",
    "Intel(R) Xeon(R) CPU @ 2.20GHz",
]


@pytest.fixture
def tag_folder(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    remove_tag_dir(tmp_path)


@pytest.mark.parametrize("cpu", AWKWARD_CPU_NAMES)
def test_cpu_name_reads_back_from_the_tag_file(tag_folder: Path, cpu: str) -> None:
    # written as "model: <name>": a YAML error, an alias, None, True or 12.5 when read back
    write_tag(synthetic("quick", cpu), tag_folder / f"{LOCAL_TAG}.yaml")
    add_tag_dir(tag_folder)
    assert Target(LOCAL_TAG).host.attrs["model"] == cpu


@pytest.fixture
def unbenchmarked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A benchmark that gets past its checks fails at once, instead of simulating."""

    def bench_row(*_args: object) -> None:
        raise AssertionError("bench_dispatch benchmarked a tag")

    monkeypatch.setattr(bench, "bench_row", bench_row)


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ([0, 10], "ops[0]: expected a positive integer (an op count), got 0"),
        ([1, -5], "ops[1]: expected a positive integer (an op count), got -5"),
        ([1.5, 10], "ops[0]: expected a positive integer (an op count), got 1.5"),
        ([True, 10], "ops[0]: expected a positive integer (an op count), got True"),
        ([10, 10], "ops: expected two or more distinct op counts (a line is fitted through "
                   "them), got [10, 10]"),
        ([1], "ops: expected two or more distinct op counts (a line is fitted through them), "
              "got [1]"),
        ("1,10", "ops: expected a sequence of op counts, got str '1,10'"),
        (10, "ops: expected a sequence of op counts, got int 10"),
    ],
)  # fmt: skip
@pytest.mark.usefixtures("unbenchmarked")
def test_bad_op_counts_are_refused_before_benchmarking(ops: object, message: str) -> None:
    # 0 and -5 gave a slope from graphs of no ops; 1.5 and "1,10" a TypeError from range()
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        bench_dispatch(["x86-h100"], ops)  # type: ignore[arg-type]


@pytest.mark.usefixtures("unbenchmarked")
def test_unknown_tags_are_refused_before_benchmarking() -> None:
    # x86-h100 was benchmarked first, then Target('x86-h10') failed without saying where
    expected = (
        "tags: unknown kind or tag 'x86-h10' (did you mean 'x86-h100'?)\n"
        "tags: unknown kind or tag 'nosuch'"
    )
    with pytest.raises(TargetError, match=f"^{re.escape(expected)}$"):
        bench_dispatch(["x86-h100", "x86-h10", "nosuch"], (1, 10))


@pytest.mark.usefixtures("unbenchmarked")
def test_one_tag_as_a_str_is_refused() -> None:
    # its letters were benchmarked as tags: "unknown kind or tag 'x'"
    expected = "tags: expected a list of tag names, got str 'x86-h100'"
    with pytest.raises(TargetError, match=f"^{re.escape(expected)}$"):
        bench_dispatch("x86-h100", (1, 10))


@pytest.mark.usefixtures("unbenchmarked")
def test_no_tags_are_refused() -> None:
    # [] benchmarked every shipped platform tag, as None (the default) does
    expected = "tags: expected a list of one or more tag names, got list []"
    with pytest.raises(TargetError, match=f"^{re.escape(expected)}$"):
        bench_dispatch([], (1, 10))


@pytest.mark.usefixtures("unbenchmarked")
def test_tags_that_are_not_names_are_refused() -> None:
    # a Target was benchmarked, then failed with a TypeError in bench_table and the JSON
    target = Target("x86-h100")
    expected = (
        f"tags[1]: expected a tag name (a str), got Target {target!r}\n"
        "tags[2]: expected a tag name (a str), got int 3"
    )
    with pytest.raises(TargetError, match=f"^{re.escape(expected)}$"):
        bench_dispatch(["x86-h100", target, 3], (1, 10))  # type: ignore[list-item]


def test_an_op_count_past_the_cap_is_refused_before_any_graph_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the API took any count, where --ops stops at MAX_OPS: [1, 10**8] raised a MemoryError
    # (or was killed, out of memory) building its graphs
    def row(*args: object) -> None:
        raise AssertionError("bench_row: the op counts were taken")

    monkeypatch.setattr(bench, "bench_row", row)
    message = f"ops[1]: expected an op count of at most {MAX_OPS}, got 100000000"
    with pytest.raises(HetsimError, match=f"^{re.escape(message)}$"):
        bench_dispatch(["arm-riscv-soc"], [1, 10**8])
    assert check_ops([1, MAX_OPS]) == (1, MAX_OPS)  # the cap itself is allowed
