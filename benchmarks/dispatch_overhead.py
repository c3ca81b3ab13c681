"""The dispatch-overhead benchmark as a script: ``hetsim bench dispatch`` with its options.

For chains and fan-outs of tiny kernels on every shipped platform tag: the simulated per-op
overhead (slope of makespan over op count) and fixed cost of the VM, the graph executor, a
nested level and CUDA-graph replay, where each crosses the kernel time of a typical op, a table
and a log-log plot. Run: ``python benchmarks/dispatch_overhead.py [--ops 1,10,100,1000,10000]
[--target T] [--json] [--plot dispatch.png]`` (the options of ``hetsim bench dispatch``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench_args import blas_line, run_main

from hetsim.cli import bench


def main(argv: list[str] | None = None) -> int:
    """Parse the ``bench dispatch`` options and run it."""
    args = dispatch_parser().parse_args(argv)
    # on stderr: ``--json`` prints the JSON on stdout
    print(blas_line() + " (simulated times only: no BLAS calls)", file=sys.stderr)
    return int(args.func(args))


def dispatch_parser() -> argparse.ArgumentParser:
    """The ``bench dispatch`` parser, named as this script is run: parsed alone, so that its
    usage and errors read ``dispatch_overhead.py [-h] ...``, not ``... bench dispatch [-h]``."""
    root = argparse.ArgumentParser()
    bench.register(root.add_subparsers())
    dispatch = _commands(_commands(root)["bench"])["dispatch"]
    dispatch.prog = Path(__file__).name
    return dispatch


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    # argparse has no public way to reach a sub-command's parser
    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


if __name__ == "__main__":
    run_main(main)
