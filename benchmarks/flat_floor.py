"""The least compiling, binding and running could cost per op, with programs as flat lists.

A yardstick for issue 4's cold goal (a first `simulate` of 1e5 ops within 8 raw SimPy timeouts
per op), not a simulator. `sim_speed.py` times hetsim's stages; this times, on the same graphs
and platform and in the same rounds, a compiler, binder and engine loop that keep only what the
per-op part of that run needs, in flat lists of integers and floats: a number per tensor, three
instructions per op (ALLOC, LAUNCH, FREE: one opcode and two operands each, in three lists),
each tensor's bytes and each op's kernel time by number, and a host loop that charges the same
formulas as the engine (``dispatch_us`` plus ``alloc_us`` or ``free_us``, ``dispatch_us`` plus
``launch_us``, the roofline kernel time on one in-order stream) inside one SimPy process. It
leaves out what the real stages also do: slots and instructions a person can read, checks,
copies between memories, waits across streams, spans, values, nested levels. So what it prints
is a floor that the array rewrite docs/runtime.md describes ("Performance") could approach,
never reach.

It checks itself against hetsim: its compute time (the GPU's kernels) must equal the run's, and
its host time may differ only by the run's instructions that are not per op (the input's COPY to
the GPU and the result's back, with their ALLOCs and FREEs, SYNC, RET). Propagation and
partition are hetsim's own (their outputs feed both), so the cold-ratio floor it prints is
``(propagate + partition + floor) / raw SimPy``.

Usage: ``python benchmarks/flat_floor.py [--ops 100000] [--repeat 5] [--out FILE.json]``;
writes ``benchmarks/results/flat_floor.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import time
from collections.abc import Sequence
from typing import Any

import simpy
from bench_args import PROJECT, add_out_option, blas_line, make_parents, positive, run_main
from sim_speed import GRAPHS, TARGET, environment, phases, raw_simpy_us

from hetsim.api import platform_of, simulate
from hetsim.cost import alloc_us, dispatch_us, free_us, kernel_timer, launch_us
from hetsim.ir import Graph
from hetsim.kernels import Cost, Meta, propagate_costs
from hetsim.partition import partition
from hetsim.platform import Platform

RESULTS = PROJECT / "benchmarks" / "results" / "flat_floor.json"
ALLOC, LAUNCH, FREE = 0, 1, 2
FLOOR_STAGES = ("compile", "bind", "run", "free")
"""The floor's stages: the three, and dropping what they made (`simulate` drops a first call's
program and bound program as it returns)."""


class FlatProgram:
    """Three instructions per op as an opcode list and two operand lists (a tensor or op number,
    and a processor number), with each op's input and output tensor numbers."""

    def __init__(self, graph: Graph, placement: dict[str, str]) -> None:
        ids: dict[str, int] = {name: number for number, name in enumerate(graph.inputs)}
        self.op_inputs: list[list[int]] = []
        self.op_outputs: list[list[int]] = []
        for op in graph.ops:
            self.op_inputs.append([ids[name] for name in op.inputs])
            made = []
            for name in op.outputs:
                made.append(len(ids))
                ids[name] = len(ids)
            self.op_outputs.append(made)
        self.names = list(ids)
        last = [-1] * len(ids)
        for number, inputs in enumerate(self.op_inputs):
            for tensor in inputs:
                last[tensor] = number
        kept = [False] * len(ids)
        for name in (*graph.inputs, *graph.outputs):
            kept[ids[name]] = True
        self.code: list[int] = []
        self.operand: list[int] = []
        self.processor: list[int] = []
        processors: dict[str, int] = {}
        code, operand, processor = self.code.append, self.operand.append, self.processor.append
        for number, op in enumerate(graph.ops):
            where = processors.setdefault(placement[op.name], len(processors))
            for tensor in self.op_outputs[number]:
                code(ALLOC)
                operand(tensor)
                processor(where)
            code(LAUNCH)
            operand(number)
            processor(where)
            for tensor in self.op_inputs[number]:
                if last[tensor] == number and not kept[tensor]:
                    code(FREE)
                    operand(tensor)
                    processor(where)
        self.processors = list(processors)


def flat_bind(
    graph: Graph, program: FlatProgram, metas: dict[str, Meta], costs: dict[str, Cost],
    platform: Platform,
) -> tuple[list[int], list[float]]:  # fmt: skip
    """Each tensor's bytes and each op's kernel µs (one processor: the benchmark's graphs)."""
    known: dict[int, int] = {}
    sizes = []
    for name in program.names:
        meta = metas[name]
        size = known.get(id(meta))
        if size is None:
            size = known[id(meta)] = meta.nbytes
        sizes.append(size)
    (device,) = program.processors
    timer = kernel_timer(platform.processors[device])
    timed: dict[int, float] = {}
    kernel_us = []
    for op in graph.ops:
        cost = costs[op.name]
        found = timed.get(id(cost))
        if found is None:
            found = timed[id(cost)] = timer(cost)
        kernel_us.append(found)
    return sizes, kernel_us


def flat_run(
    program: FlatProgram, sizes: Sequence[int], kernel_us: Sequence[float], platform: Platform
) -> dict[str, float]:
    """Run the program's host loop in a SimPy process; the host's dispatch and launch time, the
    stream's compute time, and when the last kernel ends."""
    level = platform.levels[""]
    dispatch = dispatch_us(level.executor)
    alloc_cost = dispatch + alloc_us(level.runtime)
    free_cost = dispatch + free_us(level.runtime)
    (device,) = program.processors
    launch = launch_us(platform.processors[device])
    capacity = platform.memories[platform.processors[device].memory].capacity_bytes
    code, operand = program.code, program.operand
    op_inputs, op_outputs = program.op_inputs, program.op_outputs
    ready = [0.0] * len(program.names)
    totals: dict[str, float] = {}
    env = simpy.Environment()

    def host() -> Any:
        t = tail = dispatched = launched = compute = 0.0
        used = peak = 0
        for pc, opcode in enumerate(code):
            if opcode == ALLOC:
                used += sizes[operand[pc]]
                if used > capacity:
                    raise MemoryError(f"tensor {program.names[operand[pc]]}")
                if used > peak:
                    peak = used
                dispatched += alloc_cost
                t += alloc_cost
            elif opcode == FREE:
                used -= sizes[operand[pc]]
                dispatched += free_cost
                t += free_cost
            else:
                number = operand[pc]
                issued = t + dispatch + launch
                dispatched += dispatch
                launched += launch
                t = issued
                start = tail if tail > issued else issued  # `if`, not max(): a floor
                for tensor in op_inputs[number]:
                    if ready[tensor] > start:
                        start = ready[tensor]
                tail = start + kernel_us[number]
                compute += tail - start
                for tensor in op_outputs[number]:
                    ready[tensor] = tail
        yield env.timeout(max(t, tail))
        totals.update(dispatch=dispatched, launch=launched, compute=compute, end=tail)

    env.process(host())
    env.run()
    return totals


def floor_stages(graph: Graph, platform: Platform) -> tuple[dict[str, float], dict[str, float]]:
    """Wall seconds of each of `FLOOR_STAGES` (the collector paused, as `simulate` pauses it),
    and the run's totals."""
    metas, costs = propagate_costs(graph, {})
    plan = partition(graph, platform, "capability", None, dims={}, metas=metas, costs=costs)
    placement = dict(plan.placement)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        clock = time.perf_counter
        marks = [clock()]
        program = FlatProgram(graph, placement)
        marks.append(clock())
        sizes, kernel_us = flat_bind(graph, program, metas, costs, platform)
        marks.append(clock())
        totals = flat_run(program, sizes, kernel_us, platform)
        marks.append(clock())
        del program, sizes, kernel_us
        marks.append(clock())
    finally:
        if was_enabled:
            gc.enable()
    stages = zip(FLOOR_STAGES, marks[:-1], marks[1:], strict=True)
    return {stage: end - start for stage, start, end in stages}, totals


def check_against_hetsim(graph: Graph, platform: Platform, totals: dict[str, float]) -> float:
    """The floor's compute time equals the run's; return the host time the run has beyond it
    (its instructions that are not per op: a few, whatever the graph's size)."""
    breakdown = simulate(graph, platform, mode="timing", trace=False).to_dict()["breakdown_us"]
    if not math.isclose(breakdown["compute"], totals["compute"], rel_tol=1e-12):
        raise AssertionError(
            f"{graph.name}: the floor computes {totals['compute']} µs, hetsim "
            f"{breakdown['compute']}: it does not run the same kernels"
        )
    extra = breakdown["dispatch"] + breakdown["launch"] - totals["dispatch"] - totals["launch"]
    if not 0 <= extra < 100:  # a handful of instructions at a few µs each
        raise AssertionError(f"{graph.name}: hetsim's host time differs by {extra} µs")
    return extra


def measure(kind: str, n: int, repeat: int, platform: Platform) -> dict[str, Any]:
    """One graph: the fastest round of each of hetsim's stages and of the floor's, and of the raw
    SimPy loop, in µs per op; the rounds alternate them."""
    graph = GRAPHS[kind](n)
    best: dict[str, float] = {}
    totals: dict[str, float] = {}
    for _ in range(repeat):
        gc.collect()
        for stage, seconds in phases(graph, platform).items():
            best[f"hetsim_{stage}"] = min(best.get(f"hetsim_{stage}", math.inf), seconds * 1e6 / n)
        gc.collect()
        seconds, totals = floor_stages(graph, platform)
        for stage, value in seconds.items():
            best[f"floor_{stage}"] = min(best.get(f"floor_{stage}", math.inf), value * 1e6 / n)
        best["raw_simpy"] = min(best.get("raw_simpy", math.inf), raw_simpy_us(n))
    row: dict[str, Any] = {"graph": kind, "ops": n, "rounds": repeat, **best}
    row["host_us_beyond_floor"] = check_against_hetsim(graph, platform, totals)
    shared = best["hetsim_propagate"] + best["hetsim_partition"]
    row["hetsim_rest"] = sum(best[f"hetsim_{s}"] for s in ("compile", "bind", "run", "result"))
    row["floor_rest"] = sum(best[f"floor_{s}"] for s in FLOOR_STAGES)
    row["hetsim_ratio"] = (shared + row["hetsim_rest"]) / best["raw_simpy"]
    row["floor_ratio"] = (shared + row["floor_rest"]) / best["raw_simpy"]
    return row


def format_table(rows: list[dict[str, Any]]) -> str:
    """Per graph: hetsim's stages and the floor's, µs per op, and the cold ratio of each."""
    lines = [
        f"{'graph':<6} {'ops':>8} {'raw':>6} {'prop':>6} {'part':>6} | hetsim: {'comp':>6} "
        f"{'bind':>6} {'run':>6} {'ratio':>6} | floor: {'comp':>6} {'bind':>6} {'run':>6} "
        f"{'free':>6} {'ratio':>6}"
    ]
    for r in rows:
        lines.append(
            f"{r['graph']:<6} {r['ops']:>8} {r['raw_simpy']:>6.2f} {r['hetsim_propagate']:>6.2f} "
            f"{r['hetsim_partition']:>6.2f} | hetsim: {r['hetsim_compile']:>6.2f} "
            f"{r['hetsim_bind']:>6.2f} {r['hetsim_run']:>6.2f} {r['hetsim_ratio']:>6.2f} | "
            f"floor: {r['floor_compile']:>6.2f} {r['floor_bind']:>6.2f} {r['floor_run']:>6.2f} "
            f"{r['floor_free']:>6.2f} {r['floor_ratio']:>6.2f}"
        )
    lines.append(
        "µs per op, the fastest of the rounds; ratio: (prop + part + the rest) / raw SimPy. "
        "hetsim's ratio sums its stages (sim_speed.py's phases: a whole cold simulate takes more, "
        "freeing its program among it); the floor's leaves out all but the per-op work."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=positive, default=100_000, help="ops per graph (1e5)")
    parser.add_argument("--repeat", type=positive, default=5, help="rounds, the fastest kept")
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv)
    platform = platform_of(TARGET)
    print(blas_line(), flush=True)
    rows = [measure(kind, args.ops, args.repeat, platform) for kind in ("chain", "dag")]
    print(format_table(rows))
    out = make_parents(args.out)
    report = {"target": TARGET, "environment": environment(), "rows": rows}
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    run_main(main)
