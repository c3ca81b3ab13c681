"""Simulated latency on the calibrated ``local`` target against measured ``hetsim.execute`` time.

For every zoo model and ONNX light model: the makespan `hetsim.simulate` predicts on ``local``,
the median wall time of several eager runs (`hetsim.execute`'s compiled program, op by op as
the simulator runs the graph; ``--fused`` times the default run with BatchNormalizations and
per-channel Mul/Add folded into Convs) on this machine, and the error in percent; then the
median and the largest absolute error against the goal (`GOAL_MEDIAN_PCT`, `GOAL_MAX_PCT`, stated
for the op-by-op run: met or NOT met, printed and in the JSON; ``--fused`` checks none), a JSON
file with the machine (its BLAS threads read as the timed runs had them, as the printed
``BLAS threads (threadpoolctl): ...`` line reads them), the calibration and every raw sample,
and a log-log scatter plot.

Run: ``python benchmarks/accuracy.py [--calibration FILE | --quick] [--threads N] [--repeats 5]
[--rounds 1] [--models mlp,cnn] [--fused] [--json OUT.json] [--plot OUT.png]``. Without
``--calibration`` it calibrates first (into a temporary tag folder, removed after its round);
``--calibration`` takes a calibrated target file of any name (``hetsim calibrate``'s
``local.yaml``) and times at the BLAS threads it was calibrated with (a different ``--threads``
is refused; ``--quick``, which picks the calibration plan, is refused with it). With ``--rounds
N`` it calibrates and times every model N times and pools the rounds
(`hetsim.calibrate.accuracy.pool`), so that a load change between one calibration and its timed
runs on a shared machine weighs less; with ``--calibration`` it times every model N times with
that one calibration and pools those rounds' samples. Both the calibration and the timed runs use
the same BLAS thread count (``--threads``, default: all). The folders of the ``--json`` and
``--plot`` files are made if missing. See docs/validation.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from bench_args import blas_line, goal_lines, make_parents, output_path, positive, run_main
from threadpoolctl import threadpool_limits

from hetsim.calibrate import (
    LOCAL_TAG,
    Calibration,
    calibrate,
    compare_model,
    describe_machine,
    write_tag,
)
from hetsim.calibrate.accuracy import Comparison, pool, summarize
from hetsim.calibrate.benchreport import accuracy_table, plot_accuracy
from hetsim.calibrate.run import is_thread_count, thread_range
from hetsim.cli.calibrate import thread_count
from hetsim.models import ZOO
from hetsim.target import Target, add_tag_dir, remove_tag_dir

GOAL_MEDIAN_PCT = 10.0
"""The median absolute error over the models, in percent, at most (docs/validation.md: "median
<= 10%, none beyond 25%"), in the op-by-op run it is stated for."""
GOAL_MAX_PCT = 25.0
"""Every model's absolute error, in percent, at most."""


def main(argv: list[str] | None = None) -> int:
    """Calibrate (or read a calibration), compare every model, print and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--calibration", type=Path, help="an existing local.yaml to use")
    source.add_argument("--quick", action="store_true", help="a quick calibration")
    parser.add_argument("--threads", type=thread_count, help="BLAS threads (default: all)")
    parser.add_argument("--repeats", type=positive, default=5, help="timed samples per model")
    parser.add_argument(
        "--rounds",
        type=positive,
        default=1,
        help="calibrate-and-time rounds (with --calibration: timed rounds), pooled (default 1)",
    )
    parser.add_argument("--models", help="comma-separated names (default: the whole zoo)")
    parser.add_argument(
        "--fused",
        action="store_true",
        help="time execute()'s fused run, not the op-by-op one the simulator models",
    )
    parser.add_argument("--json", type=output_path, help="write machine, calibration and samples")
    parser.add_argument("--plot", type=output_path, help="write a predicted-vs-measured PNG")
    args = parser.parse_args(argv)

    models = args.models.split(",") if args.models else list(ZOO)
    unknown = [name for name in models if name not in ZOO]
    if unknown:  # before the calibration, which takes minutes
        parser.error(f"argument --models: expected zoo names from {list(ZOO)}, got {unknown}")
    calibrations = []
    rounds: list[list[Comparison]] = []
    if args.calibration:
        threads = _calibrated_threads(args.calibration, args.threads)
    else:
        threads = args.threads or os.cpu_count() or 1
    compare = partial(_compare, models, threads=threads, repeats=args.repeats, fused=args.fused)
    for index in range(args.rounds):
        if args.calibration:
            rounds.append(compare(str(args.calibration)))
        else:
            with _local_tag("quick" if args.quick else "full", threads, index) as calibration:
                rounds.append(compare(LOCAL_TAG))
            calibrations.append(calibration.to_dict())
    comparisons = pool(rounds)
    with threadpool_limits(limits=threads, user_api="blas"):  # read as the timed runs had them
        print(blas_line())
    print(
        f"{'fused' if args.fused else 'op-by-op'} eager run; "
        f"median of {args.repeats} samples per model"
        + (f", {len(rounds)} rounds pooled" if len(rounds) > 1 else "")
    )
    print(accuracy_table(comparisons))
    summary = summarize(comparisons)
    found = [] if args.fused else goals(summary, len(comparisons))
    print(goal_lines(found, _goal, "they are stated for the op-by-op run: drop --fused"))
    if args.json:
        with threadpool_limits(limits=threads, user_api="blas"):  # the BLAS the runs had
            machine = describe_machine()
        data = {
            "machine": machine,
            "threads": threads,
            "repeats": args.repeats,
            "measured": "execute, fused" if args.fused else "execute(fuse=False), op by op",
            "calibrations": calibrations or [str(args.calibration)],
            "summary": summary,
            "goals": found,
            "models": [c.to_dict() for c in comparisons],
            "rounds": [[c.to_dict() for c in one] for one in rounds],
        }
        make_parents(args.json).write_text(json.dumps(data, indent=2) + "\n")
    if args.plot:
        plot_accuracy(comparisons, make_parents(args.plot))
    return 0


def goals(summary: Mapping[str, float], models: int) -> list[dict[str, Any]]:
    """The goal's two halves against `summary` (`summarize` over `models` models), each met or
    not: the table said the errors and left the verdict to the reader."""
    checks = (
        ("median |error|", summary["median_abs_error_pct"], GOAL_MEDIAN_PCT),
        ("max |error|", summary["max_abs_error_pct"], GOAL_MAX_PCT),
    )
    found = []
    for goal, value, limit in checks:
        shown = round(value, 1)  # judged as printed: a printed 10.0% is never "NOT met"
        found.append(
            {"goal": goal, "models": models, "value": shown, "limit": limit, "met": shown <= limit}
        )
    return found


def _goal(goal: Mapping[str, Any]) -> str:
    return (
        f"{goal['goal']} {goal['value']:.1f}% (limit <= {goal['limit']:g}%; models compared: "
        f"{goal['models']})"
    )


def _calibrated_threads(path: Path, asked: int | None) -> int:
    """The BLAS threads the calibration file at `path` models (its host's ``cores``); `asked`
    (``--threads``), when given, must be the same: other threads would time another machine."""
    if not path.is_file():
        raise SystemExit(f"--calibration {path}: expected a calibrated target file, found none")
    cores = int(Target(str(path)).host.attrs["cores"])
    if not is_thread_count(cores):  # not calibrated here: as many threads would oversubscribe
        raise SystemExit(
            f"--calibration {path}: its host's cores ({cores}) are not BLAS threads of this "
            f"machine: {thread_range()}; calibrate here (hetsim calibrate) and pass that file"
        )
    if asked is not None and asked != cores:
        raise SystemExit(
            f"--threads {asked}: expected the {cores} BLAS thread(s) that {path} was calibrated "
            f"with (its host's cores), or no --threads"
        )
    return cores


@contextmanager
def _local_tag(plan: str, threads: int, index: int) -> Iterator[Calibration]:
    """Calibrate this machine (round `index`) and register the result as the ``local`` tag for
    the block, from a temporary folder that is unregistered and removed when the block ends."""
    calibration = calibrate(plan, threads=threads)
    with tempfile.TemporaryDirectory(prefix=f"hetsim-local-{index}-") as name:
        path = write_tag(calibration, Path(name) / f"{LOCAL_TAG}.yaml")
        add_tag_dir(name)
        print(f"round {index + 1}, calibrated: {path} (removed after the round)", file=sys.stderr)
        try:
            yield calibration
        finally:
            remove_tag_dir(name)


def _compare(
    models: list[str], target: str, threads: int, repeats: int, fused: bool
) -> list[Comparison]:
    """One round: every model compared on `target` (a calibrated tag or target file) at
    `threads` BLAS threads."""
    comparisons = []
    with threadpool_limits(limits=threads, user_api="blas"):
        for name in models:
            comparisons.append(compare_model(name, target, repeats=repeats, fused=fused))
            print(f"  {name}: {comparisons[-1].error_pct:+.1f}%", file=sys.stderr)
    return comparisons


if __name__ == "__main__":
    run_main(main)
