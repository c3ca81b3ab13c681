"""The dispatch-overhead benchmark as a script: ``hetsim bench dispatch`` with its options.

For chains and fan-outs of tiny kernels on every shipped platform tag: the simulated per-op
overhead (slope of makespan over op count) and fixed cost of the VM, the graph executor, a
nested level and CUDA-graph replay, where each crosses the kernel time of a typical op, a table
and a log-log plot. Run: ``python benchmarks/dispatch_overhead.py [--ops 1,10,100,1000,10000]
[--target T] [--json] [--plot dispatch.png] [--out FILE.json]`` (the options of ``hetsim bench
dispatch``, and ``--out``).

Like the other scripts it prints its table and writes ``benchmarks/results/dispatch_overhead.json``
(or the ``--out`` file, its missing folders made):
the command's JSON (the machine, the op counts, every row and its raw makespans) with the
interpreter, library versions and BLAS thread pools (`sim_speed.environment`). ``--json`` prints
that JSON of the command on stdout too, as ``hetsim bench dispatch --json`` does; the table then
goes to stderr, so that stdout stays JSON.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from bench_args import add_out_option, blas_line, make_parents, run_main
from sim_speed import environment

from hetsim.calibrate.bench import BenchRow
from hetsim.calibrate.benchreport import bench_table
from hetsim.cli import bench

RESULTS = Path(__file__).parent / "results" / "dispatch_overhead.json"


def main(argv: list[str] | None = None) -> int:
    """Parse the ``bench dispatch`` options, run it, print its table and write its JSON."""
    args = dispatch_parser().parse_args(argv)
    shown = sys.stderr if args.json else sys.stdout  # ``--json`` prints the JSON on stdout
    print(blas_line() + " (simulated times only: no BLAS calls)", file=sys.stderr)
    printed = io.StringIO()
    # the command prints its table or its JSON: asked for the JSON, whose rows give the table
    with redirect_stdout(printed):
        status = int(args.func(argparse.Namespace(**{**vars(args), "json": True})))
    found = json.loads(printed.getvalue())
    if args.json:
        print(printed.getvalue(), end="")
    print(bench_table([_row(row) for row in found["rows"]]), file=shown)
    report = {"environment": environment(), **found}
    make_parents(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}", file=shown)
    return status


def _row(row: dict[str, Any]) -> BenchRow:
    """The `BenchRow` whose `BenchRow.to_dict` is `row`."""
    return BenchRow(**{key: tuple(v) if isinstance(v, list) else v for key, v in row.items()})


def dispatch_parser() -> argparse.ArgumentParser:
    """The ``bench dispatch`` parser, named as this script is run: parsed alone, so that its
    usage and errors read ``dispatch_overhead.py [-h] ...``, not ``... bench dispatch [-h]``;
    with the script's own ``--out``."""
    root = argparse.ArgumentParser()
    bench.register(root.add_subparsers())
    dispatch = _commands(_commands(root)["bench"])["dispatch"]
    dispatch.prog = Path(__file__).name
    add_out_option(dispatch, RESULTS)
    return dispatch


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    # argparse has no public way to reach a sub-command's parser
    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


if __name__ == "__main__":
    run_main(main)
