"""What the benchmark scripts share on their command lines: counts checked when read, output
files whose missing folders are made, a `main` whose hetsim errors end in a one-line message,
as the ``hetsim`` command's do, and the lines that say whether each goal is met.

A count of 0 had divided by zero (``--sizes 0``, ``--repeats 0``) or printed inf and written
its JSON (``--repeat 0``); a model or tag that does not exist ended in a traceback above
hetsim's own message; ``cuda_graph.py --json new/out.json`` ran to the end and then failed on
the missing folder.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hetsim.cli.counts import integer
from hetsim.errors import HetsimError

__all__ = [
    "add_out_option",
    "at_least",
    "blas_line",
    "goal_lines",
    "make_parents",
    "positive",
    "positive_list",
    "run_main",
]


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least `minimum` (read as the ``hetsim`` command's
    counts are, `hetsim.cli.counts.integer`).

    >>> at_least(0)("3")
    3
    >>> at_least(1)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer >= 1, got '0'
    """

    def parse(text: str) -> int:
        value = integer(text)
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}")
        return value

    return parse


positive = at_least(1)
"""An argparse type: an integer >= 1 (sizes, repeats, rounds, points, threads)."""


def positive_list(text: str) -> list[int]:
    """An argparse type: comma-separated integers >= 1 (thread counts).

    >>> positive_list("1,2")
    [1, 2]
    >>> positive_list("1,0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer >= 1, got '0'
    """
    return [positive(part.strip()) for part in text.split(",")]


def output_path(text: str) -> Path:
    """An output file option (``--json``, ``--plot``, ``--out``): refused when it is a folder,
    when the command line is read (it failed with IsADirectoryError after the whole run).

    >>> output_path(".")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a file to write, got the folder '.'
    """
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"expected a file to write, got the folder {text!r}")
    return path


PROJECT = Path(__file__).resolve().parent.parent
"""The project's root, where a default output's path is said from."""


def add_out_option(parser: argparse.ArgumentParser, default: Path) -> None:
    """``--out FILE.json``: the JSON file a script writes (`output_path`), `default` (under
    ``benchmarks/results/``, which git ignores) unless given.

    >>> parser = argparse.ArgumentParser()
    >>> add_out_option(parser, PROJECT / "benchmarks" / "results" / "x.json")
    >>> parser.parse_args(["--out", "y.json"]).out, parser.parse_args([]).out.name
    (PosixPath('y.json'), 'x.json')
    >>> [a.help for a in parser._actions if a.dest == "out"]
    ['the JSON file to write (default benchmarks/results/x.json)']
    """
    where = default.resolve()
    shown = where.relative_to(PROJECT) if where.is_relative_to(PROJECT) else default
    parser.add_argument(
        "--out",
        type=output_path,
        default=default,
        help=f"the JSON file to write (default {shown.as_posix()})",
    )


def make_parents(path: Path) -> Path:
    """`path`, an output file of a script (``--json``, ``--plot``, ``--out``), once the folders
    it goes in exist: missing ones are made, as ``kernels.py --out`` makes them.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     out = make_parents(Path(root) / "new" / "out.json")
    ...     out.parent.is_dir()
    True
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def blas_line() -> str:
    """The BLAS thread pools this process has now (threadpoolctl), as one line for a script to
    print above its table: the library and its thread count, per pool.

    >>> blas_line().startswith("BLAS threads (threadpoolctl): ")
    True
    """
    from threadpoolctl import threadpool_info

    pools = [p for p in threadpool_info() if p["user_api"] == "blas"]
    found = ", ".join(f"{p['num_threads']} ({p['internal_api']} {p['version']})" for p in pools)
    return f"BLAS threads (threadpoolctl): {found or 'no BLAS loaded'}"


def goal_lines(
    found: Sequence[Mapping[str, Any]], describe: Callable[[Mapping[str, Any]], str], none: str
) -> str:
    """A script's goals, one line each: ``goal <describe(goal)>: met``, or ``NOT met``, by the
    goal's ``met``; with no goal checked, one line that says why (`none`).

    >>> found = [{"value": 1.5, "met": True}, {"value": 3.0, "met": False}]
    >>> print(goal_lines(found, lambda goal: f"{goal['value']}x (limit 2x)", "1 thread only"))
    goal 1.5x (limit 2x): met
    goal 3.0x (limit 2x): NOT met
    >>> goal_lines([], str, "1 thread only")
    'goals: none checked (1 thread only)'
    """
    if not found:
        return f"goals: none checked ({none})"
    return "\n".join(
        f"goal {describe(goal)}: {'met' if goal['met'] else 'NOT met'}" for goal in found
    )


def run_main(main: Callable[[], Any]) -> None:
    """Run a script's `main`; a `HetsimError` (an unknown model or tag) is one line on stderr
    and exit status 1, as the ``hetsim`` command reports it."""
    try:
        status = main()
    except HetsimError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(1)
    sys.exit(status if isinstance(status, int) else 0)
