"""The tests marked ``slow`` or ``timed``, which the README's test command (and so CI) leaves out.

A test too slow for the suite (over about 10 s: the whole suite must stay well under 15 minutes
on 2 cores) is marked ``@pytest.mark.slow``, and one that asserts on this machine's wall time
``@pytest.mark.timed`` (a shared machine's load swings it: a calibrated target predicting
`hetsim.execute` within 50% read 57% while other work ran); both run here instead. This runs
them (``pytest -m "slow or timed"`` from the project root, so the project's pytest settings
apply), prints each test's outcome and wall time, slowest first, and writes them, with the
interpreter, the versions of pytest, numpy and simpy and the BLAS thread pools the run had
(`sim_speed.environment`), to ``benchmarks/results/slow_tests.json``, or to the ``--out`` file
(its missing folders made). It exits with pytest's status: non-zero when a test failed; 0 when
no test is marked.

No test is marked slow today. The two that were (the functional outputs of the big ONNX light
models against `hetsim.execute`, and ``cost`` placement never slower than ``capability`` on
every shipped tag and light model: 49 cases) took 7 s together once the simulator had got
faster, less than the slowest unmarked test (6 s), so the suite runs them.

Usage: ``python benchmarks/slow_tests.py [--out FILE.json] [-k EXPR] [-x]`` (any further
arguments go to pytest).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from bench_args import add_out_option, blas_line, make_parents
from sim_speed import environment

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "slow_tests.json"


class _Outcomes:
    """A pytest plugin that keeps each test's outcome and the wall time of its call."""

    def __init__(self) -> None:
        self.tests: dict[str, dict[str, Any]] = {}
        self.ran = False  # a session started: not only --help or a usage error

    def pytest_sessionstart(self) -> None:
        self.ran = True

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        found = self.tests.setdefault(report.nodeid, {"outcome": "passed", "seconds": 0.0})
        found["seconds"] += report.duration  # setup, call and teardown
        if report.outcome != "passed":  # a failed setup or call, or a skip, is what it was
            found["outcome"] = report.outcome


def format_table(tests: dict[str, dict[str, Any]]) -> str:
    """One line per test, slowest first, then the count of each outcome ("" for no test)."""
    if not tests:
        return ""
    width = max((len(name) for name in tests), default=4)
    lines = [f"{'test':<{width}}  {'outcome':<8}{'s':>8}"]
    for name, found in sorted(tests.items(), key=lambda item: -item[1]["seconds"]):
        lines.append(f"{name:<{width}}  {found['outcome']:<8}{found['seconds']:>8.2f}")
    counts = Counter(found["outcome"] for found in tests.values())
    lines.append(", ".join(f"{count} {outcome}" for outcome, count in sorted(counts.items())))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the marked tests (`argv`: the command line's arguments, ``sys.argv[1:]`` by default;
    ``--out`` is this script's, the rest go to pytest), print and write their outcomes."""
    # no -h of its own: pytest's help lists the arguments that go to it
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    add_out_option(parser, RESULTS)
    args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    out = args.out.resolve()  # read from where it was run, before moving to the project root
    os.chdir(ROOT)  # the project's pyproject.toml holds the pytest settings
    print(blas_line(), flush=True)
    outcomes = _Outcomes()
    start = time.perf_counter()
    status = pytest.main(
        ["-m", "slow or timed", "-p", "no:cacheprovider", *rest], plugins=[outcomes]
    )
    seconds = time.perf_counter() - start
    if not outcomes.ran:
        return int(status)
    if status == pytest.ExitCode.NO_TESTS_COLLECTED and not rest:
        print("no test is marked slow or timed: the README's test command runs them all")
        status = pytest.ExitCode.OK
    elif status in (pytest.ExitCode.NO_TESTS_COLLECTED, pytest.ExitCode.USAGE_ERROR):
        # a -k that selects none, a path that does not exist: no run to record
        print(f"no test ran (pytest exit status {int(status)}); {out} left as it was")
        return int(status)
    else:
        print(format_table(outcomes.tests))
    print(f"{len(outcomes.tests)} tests in {seconds:.1f} s; pytest exit status {int(status)}")
    report = {
        "exit_status": int(status),
        "seconds": seconds,
        "tests": outcomes.tests,
        "environment": environment("pytest"),
    }
    make_parents(out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
