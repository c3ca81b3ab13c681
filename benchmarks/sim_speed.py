"""How fast the engine simulates: ops per wall-clock second, next to a raw SimPy loop.

For synthetic chains (each op reads the previous one) and DAGs (each op adds the two previous
outputs) of 1e3, 1e4, 1e5 (and with ``--big`` 1e6) ops, in timing mode on a host+GPU target
(every op a kernel launched on the GPU: ALLOC, LAUNCH, FREE per op), this times, per op:
`hetsim.simulate` without and with spans (the graph is built beforehand), each stage of it
(compile to bytecode, shape propagation, binding, the engine run), and, in the same process, a
raw SimPy loop doing one ``env.timeout`` per op. It prints the ratios engine / raw SimPy and
simulate / raw SimPy, and the memory hetsim allocated (tracemalloc peak of a separate run, so
tracing does not slow the timed ones).

Goals (issue 4): ratio at 1e5 ops ≤ 8; wall time per op flat (within 1.5x) from 1e3 to 1e6;
memory per op flat. It also compares functional mode with `hetsim.execute` on resnet50 (goal:
at most 10% added wall time).

Usage: ``python benchmarks/sim_speed.py [--big] [--sizes 1000 10000] [--repeat 3]``; writes
``benchmarks/results/sim_speed.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import simpy

from hetsim.api import make_inputs, platform_of, simulate
from hetsim.ir import Graph, Op, TensorType
from hetsim.kernels import execute, propagate
from hetsim.models import load_model
from hetsim.runtime import compile_vm, place
from hetsim.sim import bind, simulation_for

RESULTS = Path(__file__).parent / "results" / "sim_speed.json"
TARGET = "x86-h100"


def chain(n: int) -> Graph:
    """x -> Relu -> Relu -> ... (n ops)."""
    ops, previous = [], "x"
    for i in range(n):
        ops.append(Op("Relu", f"op{i}", (previous,), (f"t{i}",)))
        previous = f"t{i}"
    return Graph(f"chain{n}", tuple(ops), {"x": TensorType((1, 64), "float32")}, (previous,))


def dag(n: int) -> Graph:
    """Each op adds the outputs of the two ops before it (a ladder: two live tensors at a time)."""
    ops, older, newer = [], "x", "x"
    for i in range(n):
        ops.append(Op("Add", f"op{i}", (older, newer), (f"t{i}",)))
        older, newer = newer, f"t{i}"
    return Graph(f"dag{n}", tuple(ops), {"x": TensorType((1, 64), "float32")}, (newer,))


def raw_simpy_us(n: int) -> float:
    """Wall µs per event of a bare SimPy process doing one timeout per op."""
    env = simpy.Environment()

    def loop() -> Any:
        for _ in range(n):
            yield env.timeout(1.0)

    env.process(loop())
    start = time.perf_counter()
    env.run()
    return (time.perf_counter() - start) / n * 1e6


def best_of(repeat: int, run: Callable[[], Any]) -> float:
    """The fastest of `repeat` runs, in seconds (garbage collected before each)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def phases(graph: Graph, platform: Any) -> dict[str, float]:
    """Wall seconds of each stage of one timing-mode run without spans."""
    clock = time.perf_counter
    start = clock()
    program = compile_vm(graph, platform, place(graph, platform))
    compiled = clock()
    metas = propagate(graph, {})
    propagated = clock()
    sim = simulation_for(program, platform, trace=False)
    bound = bind(program, platform, sim, metas)
    ready = clock()
    sim.run(bound.code, bound.slot_names, ready=bound.ready, resident=bound.resident)
    done = clock()
    return {
        "compile": compiled - start,
        "propagate": propagated - compiled,
        "bind": ready - propagated,
        "engine": done - ready,
    }


def measure(kind: str, n: int, repeat: int, platform: Any) -> dict[str, Any]:
    graph = {"chain": chain, "dag": dag}[kind](n)
    row: dict[str, Any] = {"graph": kind, "ops": n}
    for trace in (False, True):
        seconds = best_of(repeat, partial(simulate, graph, platform, mode="timing", trace=trace))
        row[f"simulate_us_per_op_trace_{str(trace).lower()}"] = seconds / n * 1e6
    best: dict[str, float] = {}
    for _ in range(repeat):
        gc.collect()
        for stage, seconds in phases(graph, platform).items():
            best[stage] = min(best.get(stage, float("inf")), seconds)
    row.update({f"{stage}_us_per_op": s / n * 1e6 for stage, s in best.items()})
    row["raw_simpy_us_per_op"] = min(raw_simpy_us(n) for _ in range(repeat))
    row["ratio_engine"] = row["engine_us_per_op"] / row["raw_simpy_us_per_op"]
    row["ratio_simulate"] = row["simulate_us_per_op_trace_false"] / row["raw_simpy_us_per_op"]
    gc.collect()
    tracemalloc.start()
    simulate(graph, platform, mode="timing", trace=False)
    row["peak_bytes_per_op"] = tracemalloc.get_traced_memory()[1] / n
    tracemalloc.stop()
    return row


def functional_overhead(repeat: int, platform: Any) -> dict[str, Any]:
    """Functional simulate() vs execute() on resnet50, same inputs."""
    graph = load_model("resnet50")
    inputs = make_inputs(graph, 0)
    execute(graph, inputs)  # warm the kernel cache and BLAS
    reference = best_of(repeat, lambda: execute(graph, inputs))
    simulated = best_of(repeat, lambda: simulate(graph, platform, inputs=inputs))
    return {
        "model": "resnet50",
        "execute_s": reference,
        "simulate_s": simulated,
        "added": simulated / reference - 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10_000, 100_000])
    parser.add_argument("--big", action="store_true", help="also 1e6 ops (minutes)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-functional", action="store_true")
    args = parser.parse_args()
    sizes = [*args.sizes, *([1_000_000] if args.big else [])]
    platform = platform_of(TARGET)
    rows = []
    header = ("graph", "ops", "simulate", "traced", "compile", "shapes", "bind", "engine", "simpy",
              "engine/simpy", "simulate/simpy", "B/op")  # fmt: skip
    print(" ".join(f"{h:>9}" for h in header), "   (us per op)")
    for kind in ("chain", "dag"):
        for n in sizes:
            row = measure(kind, n, args.repeat if n < 1_000_000 else 1, platform)
            rows.append(row)
            cells = (
                kind, n,
                row["simulate_us_per_op_trace_false"], row["simulate_us_per_op_trace_true"],
                row["compile_us_per_op"], row["propagate_us_per_op"], row["bind_us_per_op"],
                row["engine_us_per_op"], row["raw_simpy_us_per_op"], row["ratio_engine"],
                row["ratio_simulate"], row["peak_bytes_per_op"],
            )  # fmt: skip
            print(" ".join(f"{c:>9.2f}" if isinstance(c, float) else f"{c:>9}" for c in cells))
    report: dict[str, Any] = {"target": TARGET, "rows": rows}
    for kind in ("chain", "dag"):
        for stage in ("simulate_us_per_op_trace_false", "engine_us_per_op", "peak_bytes_per_op"):
            values = [r[stage] for r in rows if r["graph"] == kind]
            if not values:
                continue
            report[f"{kind}_{stage}_max_over_min"] = max(values) / min(values)
            print(f"{kind}: {stage} max/min over sizes = {max(values) / min(values):.2f}")
    if not args.skip_functional:
        functional = functional_overhead(args.repeat, platform)
        report["functional"] = functional
        print(
            f"resnet50 functional: execute {functional['execute_s'] * 1e3:.1f} ms, simulate "
            f"{functional['simulate_s'] * 1e3:.1f} ms, added {functional['added']:+.1%}"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
