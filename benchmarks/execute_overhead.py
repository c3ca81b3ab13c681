"""Per-op overhead of `hetsim.execute`: a long chain of tiny ops against the same numpy calls.

The tensors are 4 elements, so the time is dispatch, not arithmetic: the difference between the
two columns is what the compiled program (slot lookups, frees, memoized index arithmetic in
Reshape, Slice, Unsqueeze) adds per op. The two take turns, one of each per round (``--repeat``
rounds), and each keeps its fastest; the BLAS is held to one thread (threadpoolctl; these ops
call none of it), and the JSON records the thread pools (`sim_speed.environment`). Run:
``python benchmarks/execute_overhead.py [--repeat 15] [--out FILE.json]``; writes
``benchmarks/results/execute_overhead.json``, or the ``--out`` file (its missing folders made).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bench_args import add_out_option, blas_line, make_parents, positive, run_main
from sim_speed import environment
from threadpoolctl import threadpool_limits

from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import execute

RESULTS = Path(__file__).parent / "results" / "execute_overhead.json"
CHAIN = 2000


def _chain() -> Graph:
    ops, prev = [], "x"
    for i in range(CHAIN):
        kind = ("Relu", "Add", "Reshape", "Slice", "Unsqueeze", "Squeeze")[i % 6]
        extra = {
            "Add": ("one",),
            "Reshape": ("shape",),
            "Slice": ("s", "e"),
            "Unsqueeze": ("axis",),
            "Squeeze": ("axis",),
        }
        ops.append(Op(kind, f"n{i}", (prev, *extra.get(kind, ())), (f"t{i}",)))
        prev = f"t{i}"
    inits = {
        "one": np.ones(1, np.float32),
        "shape": np.array([1, 4]),
        "s": np.array([0]),
        "e": np.array([4]),
        "axis": np.array([0]),
    }
    return Graph("chain", tuple(ops), {"x": TensorType((1, 4), "float32")}, (prev,), inits)


def _bare(x: np.ndarray) -> np.ndarray:
    one = np.ones(1, np.float32)
    for i in range(CHAIN):
        k = i % 6
        if k == 0:
            x = np.maximum(x, 0)
        elif k == 1:
            x = x + one
        elif k == 2:
            x = x.reshape(1, 4)
        elif k == 3:
            x = x[0:4]
        elif k == 4:
            x = x.reshape(1, *x.shape)
        else:
            x = x.reshape(x.shape[1:])
    return x


def _seconds(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure(repeat: int) -> dict[str, float]:
    """µs per op of `execute` and of the bare numpy loop: the fastest of `repeat` rounds."""
    graph, x = _chain(), np.ones((1, 4), np.float32)
    runs: dict[str, Callable[[], object]] = {
        "execute": lambda: execute(graph, {"x": x}),
        "bare_numpy": lambda: _bare(x),
    }
    for run in runs.values():  # execute compiles its program on the first call
        run()
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeat):
        for name, run in runs.items():
            best[name] = min(best[name], _seconds(run))
    found = {f"{name}_us_per_op": seconds / CHAIN * 1e6 for name, seconds in best.items()}
    found["overhead_us_per_op"] = found["execute_us_per_op"] - found["bare_numpy_us_per_op"]
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat", type=positive, default=15, help="keep the fastest of N runs (default 15)"
    )
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv)
    with threadpool_limits(limits=1, user_api="blas"):
        print(blas_line(), flush=True)
        found = measure(args.repeat)
        report = {"ops": CHAIN, "repeat": args.repeat, **found, "environment": environment()}
    print(f"{CHAIN}-op chain of 4-element tensors, BLAS held to 1 thread, best of {args.repeat}")
    print(f"{'path':<16}{'us/op':>8}")
    print(f"{'hetsim.execute':<16}{found['execute_us_per_op']:>8.2f}")
    print(f"{'bare numpy':<16}{found['bare_numpy_us_per_op']:>8.2f}")
    print(f"{'overhead':<16}{found['overhead_us_per_op']:>8.2f}")
    make_parents(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    run_main(main)
