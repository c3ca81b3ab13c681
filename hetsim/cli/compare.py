"""``hetsim compare MODEL --target T --cuda-graph none,whole,regions,buckets``: offload strategies.

Owns the command's options and what it prints: one table (or ``--json``) with, per CUDA-graph
strategy, total and per-iteration simulated time, speedup over eager (``none``; without it, over
the first strategy listed, which a note names), captures, capture time (with instantiation),
replays, iterations past every bucket, graph memory and padding waste, then the notes;
``--plot`` writes a bar chart. The comparison itself is `hetsim.compare.compare`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys

from hetsim.cli.choices import STRATEGY_NAMES, check_choice
from hetsim.cli.counts import count_type, integer, parse_seed
from hetsim.cli.files import input_path, png_file, writing
from hetsim.cli.lists import split_list
from hetsim.errors import HetsimError, ModelError, printable_lines

__all__ = [
    "DEFAULT_STRATEGIES",
    "MAX_BUCKET",
    "MAX_ITERATIONS",
    "parse_buckets",
    "parse_strategies",
    "register",
    "run",
]

DEFAULT_STRATEGIES = STRATEGY_NAMES
"""``--cuda-graph``'s default: every strategy of `hetsim.runtime.cuda_graph.STRATEGIES`, in its
order (written out: the engine's imports are not needed to build the parser)."""

MAX_ITERATIONS = 1_000_000
"""``--iterations``' most. A comparison keeps, per iteration, its dims and one simulated time
per strategy, and runs one simulation per strategy: ``hetsim compare squeezenet --target x86-h100
--iterations 2000`` took 4.2 s and 65.3 MB at its peak, against 1.0 s and 64.3 MB at 200 (about
1.8 ms and 0.6 KB per iteration of the four strategies), so a million iterations take about half
an hour and some 600 MB. Far larger counts are typos. `hetsim.compare.MAX_ITERATIONS`, the API's
own cap, is the same number (written out here: the parser is built without importing the
engine)."""

MAX_BUCKET = 2**63 - 1
"""``--buckets``' largest size: an int64, as ONNX holds dims. `hetsim.compare.traces.MAX_SIZE`, the
largest number of a ``--seq-dist`` spec or a ``--shapes`` file, is the same number (written out
here, as `MAX_ITERATIONS` is)."""


def parse_strategies(text: str) -> list[str]:
    """``--cuda-graph``: strategy names, comma-separated (`split_list`: none empty), at least
    one, each once, each known (`check_choice`: an unknown one with the closest).

    >>> parse_strategies("none,whole")
    ['none', 'whole']
    >>> parse_strategies(",")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected one or more of none,whole,regions,buckets, got ','
    >>> parse_strategies("whole,whole")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected each strategy once, got 'whole' twice
    >>> parse_strategies("none,regons")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected one of none, whole, regions, buckets, got 'regons' (...)
    """
    names = [check_choice(name, STRATEGY_NAMES) for name in split_list(text)]
    if not names:
        raise argparse.ArgumentTypeError(
            f"expected one or more of {','.join(DEFAULT_STRATEGIES)}, got {text!r}"
        )
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        raise argparse.ArgumentTypeError(f"expected each strategy once, got {twice!r} twice")
    return names


def parse_seq_dist(text: str) -> str:
    """`text`, a ``--seq-dist`` spec, checked in form when the command line is read (its draws
    are made once the model's dims are known): a malformed one had been refused after the model
    loaded, with exit status 1, and for a model without dims as a model to draw from.

    >>> parse_seq_dist("decode:32")
    'decode:32'
    >>> parse_seq_dist("fixed:-1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected fixed:N, uniform:LO:HI or ..., got 'fixed:-1'
    """
    from hetsim.compare.traces import dims_trace  # numpy's, when the option is given only

    try:
        dims_trace(text, 1)
    except HetsimError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--seq-dist: ")) from err
    return text


def parse_buckets(text: str) -> list[int]:
    """Comma-separated bucket sizes (`split_list`: none empty), at least one (an empty value ran
    the default buckets).

    >>> parse_buckets("16,32,64")
    [16, 32, 64]
    >>> parse_buckets("16,big")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected comma-separated positive integers, got 'big'
    >>> parse_buckets("")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected one or more comma-separated positive integers, got ''
    >>> parse_buckets("8,4")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected increasing positive integers, got '8,4'
    >>> parse_buckets("1," + "9" * 5000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected positive integers up to 2**63 - 1, got '999...'
    """
    parts = split_list(text)
    if not parts:
        raise argparse.ArgumentTypeError(
            f"expected one or more comma-separated positive integers, got {text!r}"
        )
    sizes = []
    for part in parts:
        # not "²", which int() refuses; None: more digits than int() reads
        size = integer(part) if part.isascii() and part.isdigit() else 0
        if size == 0:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated positive integers, got {part!r}"  # argparse names it
            )
        if size is None or size > MAX_BUCKET:
            raise argparse.ArgumentTypeError(
                f"expected positive integers up to 2**63 - 1, got {part!r}"
            )
        sizes.append(size)
    if any(a >= b for a, b in itertools.pairwise(sizes)):  # said "buckets:", not the option
        raise argparse.ArgumentTypeError(f"expected increasing positive integers, got {text!r}")
    return sizes


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``compare`` command."""
    parser = subparsers.add_parser(
        "compare",
        help="compare CUDA-graph offload strategies over many iterations",
        description=(
            "Run MODEL on TARGET for many iterations under each CUDA-graph strategy and print "
            "one table: time, speedup over eager (none; without it, over the first strategy "
            "listed), captures, capture time, replays, iterations past every bucket, graph "
            "memory, padding."
        ),
    )
    parser.add_argument("model", metavar="MODEL", help="a zoo model name or an .onnx file")
    parser.add_argument("--target", required=True, metavar="TARGET", help="a tag, kind or file")
    parser.add_argument(
        "--cuda-graph",
        type=parse_strategies,
        default=list(DEFAULT_STRATEGIES),
        metavar="S[,S...]",
        help="strategies to compare (default: none,whole,regions,buckets)",
    )
    parser.add_argument(
        "--iterations",
        type=count_type(1, MAX_ITERATIONS),
        metavar="N",
        help=f"iterations, 1 to {MAX_ITERATIONS} (default 20, or the --shapes file's length)",
    )
    shapes = parser.add_mutually_exclusive_group()
    shapes.add_argument(
        "--shapes", type=input_path, metavar="FILE", help="dims per iteration: JSON list or ints"
    )
    shapes.add_argument(
        "--seq-dist",
        type=parse_seq_dist,
        metavar="SPEC",
        help="symbolic dims per iteration: fixed:N, uniform:LO:HI or decode:START[:STEP] "
        "(default decode:32 for a model with symbolic dims)",
    )
    parser.add_argument(
        "--buckets",
        type=parse_buckets,
        metavar="B[,B...]",
        help="increasing bucket sizes of the buckets strategy (default powers of 2, 1...2048)",
    )
    parser.add_argument("--seed", type=parse_seed, default=0, help="seed of --seq-dist (default 0)")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument("--plot", type=png_file, metavar="FILE.png", help="write a bar chart")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compare, print the table or the JSON, write the plot; return 0."""
    # Imported when the command runs: the engine's imports are not needed to build the parser.
    from hetsim.compare import DEFAULT_ITERATIONS, check_trace, compare, dims_trace, load_shapes
    from hetsim.models import load_model
    from hetsim.models.inputs import check_seed
    from hetsim.runtime.cuda_graph import DEFAULT_BUCKETS
    from hetsim.target import target_argument

    model = load_model(args.model)
    symbols = model.symbols
    check_seed(args.seed)  # also when nothing draws from it: -1 passed unless --seq-dist drew
    trace = None
    if args.shapes is not None:
        trace = load_shapes(args.shapes, dims=symbols)
        try:  # checked here too, so that a bad dim name names the file it is in
            check_trace(model, trace)
        except ModelError as err:
            raise ModelError(f"--shapes {args.shapes}: {err}") from err
    elif args.seq_dist is not None:
        if not symbols:  # nothing to draw: the sizes would change nothing, without a word
            raise HetsimError(
                f"--seq-dist: expected a model with symbolic dims to draw, got {model.name} "
                "(none; --iterations counts its runs)"
            )
        trace = dims_trace(
            args.seq_dist,
            DEFAULT_ITERATIONS if args.iterations is None else args.iterations,
            seed=args.seed,
            dims=symbols,
        )
    comparison = compare(
        model,
        target_argument(args.target, "--target"),
        args.cuda_graph,
        iterations=args.iterations,
        trace=trace,
        buckets=args.buckets or DEFAULT_BUCKETS,
    )
    if args.json:
        print(json.dumps(comparison.to_dict(), indent=2))
    else:
        print(printable_lines(comparison.format_table()))  # a model's names are any text
    if args.plot is not None:
        with writing("--plot", args.plot) as path:
            comparison.plot(path)
        print(f"wrote plot to {args.plot}", file=sys.stderr)
    return 0
