"""Where CUDA graphs start to pay off, per GPU tag: break-even iterations and kernel duration.

For each GPU (``nvidia/h100``, ``nvidia/h200`` behind the Xeon VM host of ``x86-h100``, and the
``jetson-agx-orin`` platform's ``nvidia/orin-gpu``) and each workload of ``n`` dependent
elementwise kernels of ``w`` µs of work each (an Add of a resident constant and a one-float
input, then Relus, on a tensor whose size gives ``w`` at the device's memory bandwidth), this
simulates one eager iteration ``E``, the first graph iteration ``F`` (capture, instantiate,
launch) and a replay ``R`` (strategy ``regions``, timing mode), and prints:

- the **break-even iteration count** ``N* = ceil((F − R) / (E − R))``: from ``N*`` iterations
  on, capturing once and replaying beats launching eagerly (``∞`` when ``E <= R``);
- the **break-even kernel duration**: for each ``n``, the largest ``w`` at which graphs pay off
  within ``--budget`` iterations (bisection on ``w`` from 0.01 to 1000 µs; 1000: at any ``w``).

Usage: ``python benchmarks/cuda_graph.py [--budget 10] [--plot FILE.png] [--json FILE]``; the
folders the files go in are made if missing. The JSON also records the interpreter, libraries
and BLAS thread pools (`sim_speed.environment`; timing mode calls no BLAS).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
from bench_args import blas_line, make_parents, output_path, positive, run_main
from sim_speed import environment

from hetsim.api import platform_of
from hetsim.compare import compare
from hetsim.ir import Graph, GraphBuilder
from hetsim.platform import Platform

PLATFORMS: dict[str, Any] = {
    "nvidia/h100": "x86-h100",
    "nvidia/h200": {
        "kind": "hetero",
        "host": "x86/xeon-8480c",
        "executor": "tvm/relax-vm",
        "runtime": "cpp",
        "devices": [{"tag": "nvidia/h200", "name": "gpu0"}],
    },
    "nvidia/orin-gpu": "jetson-agx-orin",
}
"""GPU tag -> the platform it is simulated on (a VM host driving it as gpu0)."""
COUNTS = (1, 4, 16, 80, 320)
WORK_US = (0.5, 2.0, 8.0, 32.0, 128.0)
PLOT_WORK_US = (0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0, 16.0, 64.0)


def chain(n: int, elements: int) -> Graph:
    """`n` dependent kernels on float32[elements]: Add(w, x), then Relus.

    The input x is one float and w a resident constant, so no input copy overlaps the capture
    (the host captures while the stream would still be copying a large input); the output's copy
    back comes after the last kernel in every strategy alike.
    """
    b = GraphBuilder(f"chain{n}")
    x = b.input("x", (1,))
    h = b.op("Add", b.initializer(np.zeros(elements, np.float32), "w"), x, name="r0")
    for i in range(1, n):
        h = b.op("Relu", h, name=f"r{i}")
    return b.build(h)


def elements_for(platform: Platform, work_us: float) -> int:
    """Tensor size whose Relu (read + write, 8 B per element) takes `work_us` on gpu0."""
    bytes_per_us = platform.processors["gpu0"].attrs["mem_bandwidth_gbps"] * 1e3
    return max(1, round(work_us * bytes_per_us / 8))


def measure(platform: Platform, n: int, work_us: float) -> dict[str, float]:
    """Eager, first-graph and replay iteration times of the chain (µs)."""
    model = chain(n, elements_for(platform, work_us))
    found = compare(model, platform, ("none", "regions"), iterations=2)
    eager, graphs = found.runs
    first, replay = graphs.iterations_us
    return {"eager_us": eager.iterations_us[1], "first_us": first, "replay_us": replay}


def break_even(times: dict[str, float]) -> float:
    """Iterations from which capture-once-and-replay beats eager (``inf`` if never)."""
    saving = times["eager_us"] - times["replay_us"]
    if saving <= 0:
        return math.inf
    return float(max(1, math.ceil((times["first_us"] - times["replay_us"]) / saving)))


def duration_break_even(platform: Platform, n: int, budget: int) -> float:
    """Largest work per kernel (µs) at which graphs pay off within `budget` iterations."""
    low, high = 0.01, 1000.0
    if break_even(measure(platform, n, low)) > budget:
        return 0.0
    if break_even(measure(platform, n, high)) <= budget:
        return high
    for _ in range(20):
        middle = math.sqrt(low * high)
        if break_even(measure(platform, n, middle)) <= budget:
            low = middle
        else:
            high = middle
    return low


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=positive, default=10, help="iterations (default 10)")
    parser.add_argument("--plot", type=output_path, help="write break-even iterations vs duration")
    parser.add_argument("--json", type=output_path, help="write every number as JSON")
    args = parser.parse_args(argv)
    print(blas_line() + " (timing mode calls no BLAS)")
    results: dict[str, Any] = {}
    for tag, spec in PLATFORMS.items():
        platform = platform_of(spec)
        grid = {(n, w): measure(platform, n, w) for n in COUNTS for w in WORK_US}
        durations = {n: duration_break_even(platform, n, args.budget) for n in COUNTS}
        results[tag] = {"grid": grid, "durations": durations}
        print(f"\n{tag}: break-even iterations N* (rows: kernels n; columns: work w per kernel)")
        print("n \\ w (us) " + "".join(f"{w:>9g}" for w in WORK_US))
        for n in COUNTS:
            cells = "".join(f"{_fmt(break_even(grid[n, w])):>9}" for w in WORK_US)
            print(f"{n:>10} {cells}")
        print(f"largest w (us) paying off within {args.budget} iterations: "
              + ", ".join(f"n={n}: {durations[n]:.2f}" for n in COUNTS))  # fmt: skip
        replay = grid[80, 0.5]
        print(f"80 kernels of 0.5 us: eager {replay['eager_us']:.1f} us, first graph "
              f"{replay['first_us']:.1f} us, replay {replay['replay_us']:.1f} us")  # fmt: skip
    if args.json is not None:
        report = {"environment": environment(), **_plain(results)}
        make_parents(args.json).write_text(json.dumps(report, indent=2))
    if args.plot is not None:
        _plot(make_parents(args.plot))
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _fmt(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:g}"


def _plain(results: dict[str, Any]) -> dict[str, Any]:
    return {
        tag: {
            "grid": [
                {"n": n, "work_us": w, **times, "break_even": _fmt(break_even(times))}
                for (n, w), times in found["grid"].items()
            ],
            "duration_break_even_us": {str(n): d for n, d in found["durations"].items()},
        }
        for tag, found in results.items()
    }


def _plot(path: Path) -> None:
    """Break-even iterations against work per kernel, 80 kernels, each GPU, on a fine grid."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4), dpi=100)
    axes = figure.add_subplot()
    for tag, spec in PLATFORMS.items():
        platform = platform_of(spec)
        values = [break_even(measure(platform, 80, w)) for w in PLOT_WORK_US]
        axes.plot(PLOT_WORK_US, values, marker="o", label=f"{tag}, 80 kernels")
    axes.set_xscale("log")
    axes.set_xlabel("work per kernel (µs)")
    axes.set_ylabel("break-even iterations N*")
    axes.set_title("Iterations before capture-once-and-replay beats eager launches")
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, format="png")


if __name__ == "__main__":
    run_main(main)
