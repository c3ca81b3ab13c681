"""``hetsim sweep FILE``: run a design-space sweep on Dask and report the best points per model.

Owns the command's options and what it shows: a progress bar on stderr (points done, failed, time
left; rich when installed, else one line per point), then a table of the best point per model on
stdout (or, with ``--json``, the counts and best records as JSON) and the counts, with the first
failure, on stderr, and on request a plot of the metric over the swept parameters. A sweep whose
every point failed exits with status 1; Ctrl-C stops the sweep and says how to resume it. The
sweep itself is `hetsim.sweep.run_sweep`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from hetsim.cli.counts import count_type, integer
from hetsim.cli.files import input_path, png_file, suffixed_file, writing
from hetsim.errors import HetsimError, printable_lines
from hetsim.report.tables import rich_console
from hetsim.sweep import (
    SweepProgress,
    SweepSpec,
    best_points,
    is_tie,
    load_sweep,
    metric_value,
    no_effect,
    plot_sweep,
    run_sweep,
)
from hetsim.units import counted

__all__ = [
    "MAX_WORKERS",
    "SCHEDULER_SCHEMES",
    "best_rows",
    "failures_line",
    "format_eta",
    "register",
    "scheduler_address",
    "sweep",
]

INTERRUPTED = 130  # the shell's status for a run stopped by SIGINT
ALL_FAILED = 1  # as an error a user caused: nothing to rank

MAX_WORKERS = 256
"""``--workers``' most. Each worker of the local cluster is a process of its own (an interpreter
with numpy and hetsim loaded) with one thread: past the
machine's cores, more workers only cost memory and start-up time, and a count far past any
machine's cores kept Dask starting processes until the memory ran out. A larger cluster runs its
own scheduler (``--scheduler``)."""

SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss")
"""The schemes of a ``--scheduler`` address that `distributed` connects to (``inproc`` is a
scheduler inside this process; ``ucx`` needs a package of its own, without which `distributed`
fails with a `TypeError`)."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``sweep`` command."""
    parser = subparsers.add_parser(
        "sweep",
        help="run a design-space sweep of simulations on Dask",
        description="Run every point of the sweep FILE (YAML; see docs/sweeps.md) on Dask, "
        "write one JSON line per point, and show the best point per model.",
    )
    parser.add_argument("file", metavar="FILE", type=input_path, help="the sweep file (YAML)")
    parser.add_argument(
        "--out",
        type=suffixed_file(".jsonl"),
        metavar="RESULTS.jsonl",
        help="results file, one JSON line per point",
    )
    parser.add_argument(
        "--workers",
        type=count_type(0, MAX_WORKERS),
        default=2,
        metavar="N",
        help=f"worker processes of the local cluster, 0 to {MAX_WORKERS} (default 2; 0 runs in "
        "this process)",
    )
    parser.add_argument(
        "--scheduler",
        type=scheduler_address,
        metavar="ADDRESS",
        help="a running Dask scheduler, [SCHEME://]HOST:PORT (tcp://10.0.0.5:8786); SCHEME is "
        f"{', '.join(SCHEDULER_SCHEMES)} (default tcp)",
    )
    parser.add_argument(
        "--resume", action="store_true", help="complete --out, skipping the points it holds"
    )
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="with --resume: run again the points --out holds as failed",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the counts, the best points and the varied paths that changed no result",
    )
    parser.add_argument("--plot", type=png_file, metavar="FILE", help="plot the metric to a PNG")
    parser.set_defaults(func=sweep)


def scheduler_address(text: str) -> str:
    """``--scheduler``: `text`, checked to be a Dask address ``[SCHEME://]HOST:PORT``, so that a
    typo is a usage error, not a `ValueError` from `distributed` after the sweep is loaded.

    Whether a scheduler answers there is for the connection to find out.

    Examples
    --------
    >>> scheduler_address("tcp://10.0.0.5:8786"), scheduler_address("[::1]:8786")
    ('tcp://10.0.0.5:8786', '[::1]:8786')
    >>> scheduler_address("tcp://host:notaport")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a port from 1 to 65535, got 'notaport' in \
'tcp://host:notaport'
    >>> scheduler_address("http://host:8786")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a scheme among tcp, tls, ws, wss, got 'http' in \
'http://host:8786'
    """
    scheme, sep, rest = text.rpartition("://")
    host, colon, port = rest.rpartition(":")
    if sep and scheme not in SCHEDULER_SCHEMES:
        raise argparse.ArgumentTypeError(
            f"expected a scheme among {', '.join(SCHEDULER_SCHEMES)}, got {scheme!r} in {text!r}"
        )
    if not colon or not host or not _is_host(host):
        raise argparse.ArgumentTypeError(
            "expected an address [SCHEME://]HOST:PORT such as tcp://10.0.0.5:8786 (an IPv6 "
            f"host in brackets: [::1]:8786), got {text!r}"
        )
    number = integer(port) if port.isascii() and port.isdigit() else None  # not ' 1', '+1'
    if number is None or not 1 <= number <= 65535:
        raise argparse.ArgumentTypeError(
            f"expected a port from 1 to 65535, got {port!r} in {text!r}"
        )
    return text


def _is_host(host: str) -> bool:
    """Whether `host` reads as a host name or IPv4 address, or an IPv6 one in brackets."""
    if host.startswith("[") and host.endswith("]"):
        return len(host) > 2 and all(c in "0123456789abcdefABCDEF:." for c in host[1:-1])
    return not any(c in ":/[]@" or c.isspace() for c in host)


def format_eta(seconds: float | None) -> str:
    """Seconds left as ``h:mm:ss``, or ``?`` before the first point finishes.

    >>> format_eta(3725.2), format_eta(None)
    ('1:02:05', '?')
    """
    if seconds is None:
        return "?"
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def best_rows(records: list[dict[str, Any]], spec: SweepSpec) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the best-points table: model, metric, point id, parameters.

    Examples
    --------
    >>> from hetsim.sweep import load_sweep
    >>> spec = load_sweep({"target": "arm-riscv-soc", "models": ["mlp"]})
    >>> runs = [{"index": 0, "id": "ab12", "status": "ok", "params": {"model": "mlp"},
    ...          "result": {"makespan_us": 21.44625}}]
    >>> best_rows(runs, spec)
    (['model', 'makespan_us', 'tied', 'point', 'parameters'], [['mlp', '21.446', '1', 'ab12', '-']])

    ``tied`` counts the model's points whose metric equals the best one's (1: the best alone):
    where a varied value changes nothing, every point ties, and the first one's parameters
    shown alone had read as the best choice.
    """
    header = ["model", spec.metric, "tied", "point", "parameters"]
    # one pass over the records (a failed point's NaN is close to nothing, the best included)
    seen: dict[str, list[float]] = {}
    for r in records:
        seen.setdefault(r["params"]["model"], []).append(metric_value(r, spec.metric))
    rows = []
    for model, record in best_points(records, spec.metric).items():
        best = metric_value(record, spec.metric)
        others = {k: v for k, v in record["params"].items() if k != "model"}
        tied = str(sum(is_tie(value, best) for value in seen[model]))
        rows.append([model, f"{best:.3f}", tied, record["id"], _params_text(others) or "-"])
    return header, rows


def _params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def failures_line(records: list[dict[str, Any]]) -> str:
    """How many of `records` (in point order) failed, and the first failure's point and error.

    Examples
    --------
    >>> ok = {"index": 0, "status": "ok", "params": {"model": "mlp"}, "error": None}
    >>> bad = {"index": 1, "status": "failed", "params": {"model": "cnn"}, "error": "E: no"}
    >>> failures_line([ok]), failures_line([ok, bad])
    ('1 point, 0 failed', '2 points, 1 failed; the first, point 1 (model=cnn): E: no')
    >>> failures_line([bad, {**bad, "index": 2}])
    'all 2 points failed; the first, point 1 (model=cnn): E: no'
    >>> failures_line([bad])
    'the one point failed, point 1 (model=cnn): E: no'
    """
    count = counted(len(records), "point")
    failed = [r for r in records if r["status"] != "ok"]
    if not failed:
        return f"{count}, 0 failed"
    first = failed[0]
    error = f"point {first['index']} ({_params_text(first['params'])}): {first['error']}"
    if len(failed) == len(records):
        return (
            f"the one point failed, {error}"
            if len(records) == 1
            else f"all {count} failed; the first, {error}"
        )
    return f"{count}, {len(failed)} failed; the first, {error}"


def no_effect_line(name: str) -> str:
    """What the command says of a varied name that changed no result (`no_effect`)."""
    return (
        f"no result changed with {name}: the points that differ in it alone are equal (a path "
        "no run reads, docs/sweeps.md, or a value no point is sensitive to)"
    )


def sweep(args: argparse.Namespace) -> int:
    """Run the sweep with a progress bar, then print the best points; return the exit status."""
    if args.resume and args.out is None:  # before the sweep loads: nothing to complete
        raise HetsimError("--resume: expected --out (the results file to complete), got none")
    if args.retry_failed and not args.resume:
        raise HetsimError(
            "--retry-failed: expected --resume (it retries the failed points of --out), got none"
        )
    options = {"out": args.out, "workers": args.workers, "scheduler": args.scheduler}
    # another sweep's, unless resumed (an empty file is begun anew, as ResultsLog begins it)
    existed = args.out is not None and args.out.exists() and args.out.stat().st_size > 0
    try:
        # every problem at once, before the bar; run_sweep reuses the points it made (checking
        # a big sweep's takes minutes: a Ctrl-C then is an interruption as any)
        spec = load_sweep(args.file)
        with _progress() as report:
            records = run_sweep(
                spec,
                resume=args.resume,
                retry_failed=args.retry_failed,
                progress=report,
                **options,
            )
    except KeyboardInterrupt:
        # begun by this run (not while the sweep was checked), or the one it completes
        started = args.out is not None and args.out.exists() and (args.resume or not existed)
        where = f"; rerun with --resume to complete {args.out}" if started else ""
        print(f"interrupted{where}", file=sys.stderr)
        return INTERRUPTED
    failed = [r for r in records if r["status"] != "ok"]
    unchanged = no_effect(records, spec.varied)
    if args.json:
        best = best_points(records, spec.metric)
        summary = {"sweep": spec.hash, "points": len(records), "failed": len(failed)}
        print(json.dumps(summary | {"best": best, "no_effect": unchanged}, indent=2))
    if failed and len(failed) == len(records):  # nothing to rank or plot: not an empty table
        print(f"error: {failures_line(records)}", file=sys.stderr)
        return ALL_FAILED
    if not args.json:
        _print_table(*best_rows(records, spec))
    print(failures_line(records), file=sys.stderr)
    for name in unchanged:  # a path no run reads gives equal points: say so, not a "best" value
        print(f"note: {printable_lines(no_effect_line(name))}", file=sys.stderr)
    if args.plot is not None:
        with writing("--plot", args.plot) as path:
            plot_sweep(records, spec.varied, path, spec.metric)
        print(f"wrote plot to {args.plot}", file=sys.stderr)
    return 0


def _print_table(header: list[str], rows: list[list[str]]) -> None:
    try:
        from rich.markup import escape
        from rich.table import Table
    except ImportError:
        for row in [header, *rows]:
            print("  ".join(row))
        return
    table = Table(title="best point per model")
    for name in header:
        table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(*map(escape, row))  # override paths hold [device] brackets
    rich_console().print(table)


@contextmanager
def _progress() -> Iterator[Callable[[SweepProgress], None]]:
    """A progress callback: a rich bar on stderr, or plain lines without rich."""
    try:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
    except ImportError:
        yield _plain_report
        return
    columns = (
        TextColumn("sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("failed {task.fields[failed]}  eta {task.fields[eta]}"),
    )
    bar = Progress(*columns, console=Console(stderr=True))
    task = None

    def report(state: SweepProgress) -> None:
        nonlocal task
        if task is None:  # drawn from the first report on: not over an error before it
            bar.start()
            task = bar.add_task("sweep", total=None, failed=0, eta="?")
        eta = format_eta(state.eta_s)
        bar.update(task, total=state.total, completed=state.done, failed=state.failed, eta=eta)

    try:
        yield report
    finally:
        bar.stop()


def _plain_report(state: SweepProgress) -> None:
    line = f"{state.done}/{state.total} done, {state.failed} failed, eta {format_eta(state.eta_s)}"
    print(line, file=sys.stderr)
