"""``hetsim bench dispatch``: the simulated dispatch overhead of each runtime level, per platform.

Owns the command's options and output: the table (or ``--json``: the machine, every row and its
raw makespans) on stdout and an optional log-log plot. The benchmark is
`hetsim.calibrate.bench_dispatch`; the table and plot are `hetsim.calibrate.benchreport`.
"""

from __future__ import annotations

import argparse
import json
import sys

from hetsim.calibrate import bench_dispatch, describe_machine, platform_tags
from hetsim.calibrate.bench import DEFAULT_OPS, VARIANTS, check_tags
from hetsim.calibrate.benchchecks import MAX_OPS
from hetsim.calibrate.benchreport import bench_table, plot_bench
from hetsim.cli.calibrate import progress
from hetsim.cli.counts import integer
from hetsim.cli.files import input_path, png_file, writing
from hetsim.cli.lists import split_list
from hetsim.target import add_tag_dir

__all__ = ["MAX_OPS", "parse_ops", "register"]


def parse_ops(text: str) -> tuple[int, ...]:
    """Op counts from a comma-separated list of positive integers (`split_list`: none empty; at
    least two distinct: the benchmark fits a line through them), each at most `MAX_OPS`;
    argparse names the option.

    >>> parse_ops("1,10,100")
    (1, 10, 100)
    >>> parse_ops("1,ten")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected comma-separated positive integers, got 'ten' in '1,ten'
    >>> parse_ops("10,10")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected two or more distinct op counts (1,10,100), got '10,10'
    >>> parse_ops("1,1000000")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected op counts of at most 100000, got 1000000
    >>> parse_ops("200000")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected op counts of at most 100000, got 200000
    """
    counts: list[int] = []
    for part in split_list(text):
        count = integer(part) if part.isascii() and part.isdigit() else None  # not '²', not '-1'
        if not count:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated positive integers, got {part!r} in {text!r}"
            )
        counts.append(count)
    if counts and max(counts) > MAX_OPS:  # first: "two distinct counts" hid a single count
        raise argparse.ArgumentTypeError(
            f"expected op counts of at most {MAX_OPS}, got {max(counts)}"
        )
    if len(set(counts)) < 2:
        raise argparse.ArgumentTypeError(
            f"expected two or more distinct op counts (1,10,100), got {text!r}"
        )
    return tuple(counts)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``bench`` command group (``bench dispatch``)."""
    group = subparsers.add_parser("bench", help="benchmarks of the simulated runtimes")
    sub = group.add_subparsers(dest="bench_command", metavar="COMMAND", required=True)
    parser = sub.add_parser(
        "dispatch",
        help="per-op overhead and fixed cost of each runtime level, on every platform tag",
        description=(
            "Simulate chains and fan-outs of tiny kernels at each runtime level ("
            + ", ".join(VARIANTS)
            + "); fit makespan over op count: the slope, less the op's own kernel where the "
            "level's host runs it, is the per-op overhead, the intercept the fixed cost; say "
            "below which op size dispatch takes longer than the kernel (or never)."
        ),
    )
    parser.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="T",
        help="a platform tag (repeatable; default: every shipped platform tag)",
    )
    parser.add_argument(
        "--ops",
        type=parse_ops,
        default=DEFAULT_OPS,
        metavar="N,N,...",
        help=f"op counts, each 1 to {MAX_OPS} (default {','.join(map(str, DEFAULT_OPS))})",
    )
    parser.add_argument(
        "--tags",
        action="append",
        default=[],
        type=input_path,
        metavar="DIR",
        help="a folder of tag files to register first (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print the machine and rows as JSON")
    parser.add_argument("--plot", type=png_file, metavar="FILE", help="write a log-log plot (PNG)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the benchmark and print its table or JSON (`hetsim.cli.main` has registered the
    user's tags)."""
    for folder in args.tags:
        add_tag_dir(folder)
    # checked before the bar is drawn, named as the option (bench_dispatch checks them again:
    # resolved targets are kept, so that costs a lookup each)
    tags = check_tags(args.target, "--target") if args.target else platform_tags()
    total = len(tags) * len(VARIANTS) * 2
    with progress(total, "benchmarking") as advance:
        rows = bench_dispatch(tags, args.ops, advance=advance)
    if args.json:
        data = {"machine": describe_machine(), "ops": list(args.ops)}
        data["rows"] = [r.to_dict() for r in rows]
        print(json.dumps(data, indent=2))
    else:
        print(bench_table(rows))
    if args.plot:
        with writing("--plot", args.plot) as path:
            plot_bench(rows, path)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0
