"""Instructions per op of each stage of a cold timing-mode `simulate`, counted by callgrind.

`sim_speed.py` times the stages in wall time, which on a shared machine moves by a third
between runs; a change of a few percent to one stage hides in that. The number of instructions
the CPU runs hardly moves: for the same interpreter, inputs and environment, valgrind's
callgrind counts nearly the same total, whatever else the machine does (three runs of one child
counted the same; a recount of a 1e4-op stage child differed by 22 instructions per op, of
about 80,000 a cold call takes). This counts them per stage
(`sim_speed.PHASES`: propagate, partition, compile, bind, run, result), on sim_speed.py's chain
and DAG, so that a change to a stage can be measured exactly, before and after.

How: a child process runs this script's ``--child`` mode under ``valgrind --tool=callgrind``,
with ``PYTHONHASHSEED=0`` (string hashes decide how many probes a dict lookup takes) and one BLAS
thread (`ONE_BLAS_THREAD`; timing mode computes nothing with it). The child builds the graph
and the platform, runs every stage once on a small graph (so that imports and first-call
tables are made before counting), then, `REPS` times, runs the stages up to one
(`sim_speed.run_stages`, with the collector paused as `simulate` pauses it) and drops what they
made. With ``I(k)`` the instructions of a child that stops after stage ``k`` (``I(0)``: after
none),

    instructions per op of stage k = (I(k) - I(k - 1)) / (REPS × ops)

so everything the child does besides (starting Python, the imports, building the graph) cancels,
and a stage's count includes dropping what it made. Instructions are not time: a dict lookup
that misses the caches costs the same count as one that hits, so a 1e6-op graph's slowdown
(docs/runtime.md, "Performance") does not show here; use it to compare code, not machines.

Needs valgrind on PATH. Usage: ``python benchmarks/stage_instructions.py [--ops 10000]
[--graphs chain dag] [--out FILE.json]``; writes ``benchmarks/results/stage_instructions.json``.
It runs ``(1 + len(PHASES))`` children per graph, two at a time: at 1e4 ops, about three
minutes a graph on a 2-core machine.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench_args import PROJECT, add_out_option, blas_line, make_parents, positive, run_main
from sim_speed import GRAPHS, PHASES, TARGET, environment, run_stages

from hetsim.api import platform_of

RESULTS = PROJECT / "benchmarks" / "results" / "stage_instructions.json"
REPS = 2
"""Runs of the stages per child: more only lengthen the run (a count hardly moves)."""
WARM_OPS = 20
"""Ops of the graph each child runs the stages on once before counting."""

ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""The children's BLAS pools: one thread. A pool's idle threads spin, and callgrind counts every
thread: with openblas's default pool, one child's count varied by 0.4% from run to run."""

_COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.MULTILINE)


def child(kind: str, ops: int, stages: int) -> None:
    """The counted process: build the graph, warm up, then run the first `stages` stages `REPS`
    times, each time dropping what they made."""
    graph = GRAPHS[kind](ops)
    platform = platform_of(TARGET)
    for _ in run_stages(GRAPHS[kind](WARM_OPS), platform):
        pass
    gc.collect()
    gc.disable()  # as `simulate` pauses it: no collection lands in one child and not another
    for _ in range(REPS):
        for _ in itertools.islice(run_stages(graph, platform), stages):
            pass  # the generator's locals, what the stages made, go when the loop drops it


def collected(stderr: str) -> int:
    """The instructions callgrind says it counted, from its report on standard error.

    >>> collected("==12== Events    : Ir\\n==12== Collected : 1234\\n")
    1234
    """
    found = _COLLECTED.search(stderr)
    if found is None:
        tail = stderr.strip().splitlines()[-5:]
        raise RuntimeError(f"expected callgrind's 'Collected' line, got: {tail}")
    return int(found.group(1))


def count(kind: str, ops: int, stages: int) -> int:
    """The instructions of a child that runs the first `stages` stages (`child`) under callgrind."""
    command = [
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
        sys.executable, __file__, "--child", kind, str(ops), str(stages),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONHASHSEED": "0", **ONE_BLAS_THREAD}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} {ops} ops, {stages} stages: child failed:\n{done.stderr}")
    return collected(done.stderr)


def per_stage(totals: Sequence[int], ops: int, reps: int = REPS) -> dict[str, float]:
    """Instructions per op of each stage, from the totals of children that stop after 0, 1, ...
    `len(PHASES)` stages.

    >>> per_stage([100, 1100, 1500, 1500, 2100, 2300, 2340], ops=10, reps=2)["partition"]
    20.0
    """
    if len(totals) != len(PHASES) + 1:
        raise ValueError(f"expected {len(PHASES) + 1} totals (0 to {len(PHASES)} stages), got "
                         f"{len(totals)}")  # fmt: skip
    return {
        stage: (after - before) / (reps * ops)
        for stage, before, after in zip(PHASES, totals[:-1], totals[1:], strict=True)
    }


def measure(kind: str, ops: int, workers: int) -> dict[str, Any]:
    """One graph's row: instructions per op of each stage, and of them all."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        totals = list(pool.map(lambda stages: count(kind, ops, stages), range(len(PHASES) + 1)))
    stages = per_stage(totals, ops)
    return {"graph": kind, "ops": ops, "totals": totals, **stages, "all": sum(stages.values())}


def format_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Instructions per op, a column per stage."""
    lines = [f"{'graph':<6}{'ops':>9}" + "".join(f"{c:>11}" for c in (*PHASES, "all"))]
    for row in rows:
        cells = "".join(f"{row[c]:>11,.0f}" for c in (*PHASES, "all"))
        lines.append(f"{row['graph']:<6}{row['ops']:>9}{cells}")
    lines.append(
        f"instructions per op of a cold timing-mode simulate's stages on {TARGET} (callgrind, "
        f"{REPS} runs less none, PYTHONHASHSEED=0, one BLAS thread; dropping what a stage "
        "made included)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=positive, default=10_000, help="ops per graph (1e4)")
    parser.add_argument(
        "--graphs", nargs="+", choices=sorted(GRAPHS), default=list(GRAPHS), help="graphs to count"
    )
    parser.add_argument(
        "--child", nargs=3, metavar=("GRAPH", "OPS", "STAGES"), help=argparse.SUPPRESS
    )
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv)
    if args.child is not None:
        kind, ops, stages = args.child
        child(kind, int(ops), int(stages))
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("stage_instructions.py: expected valgrind on PATH, found none")
    workers = min(2, os.cpu_count() or 1)
    print(blas_line(), "here; each child: 1", flush=True)  # `ONE_BLAS_THREAD`
    rows = []
    for kind in args.graphs:
        print(f"counting {kind} {args.ops}", flush=True)
        rows.append(measure(kind, args.ops, workers))
    print(format_table(rows))
    out = make_parents(args.out)
    report = {"target": TARGET, "reps": REPS, "environment": environment(), "rows": rows}
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    run_main(main)
