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

from bench_args import run_main

from hetsim.cli import bench


def main(argv: list[str] | None = None) -> int:
    """Parse the ``bench dispatch`` options and run it."""
    parser = argparse.ArgumentParser(prog="dispatch_overhead")
    bench.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["bench", "dispatch", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args))


if __name__ == "__main__":
    run_main(main)
