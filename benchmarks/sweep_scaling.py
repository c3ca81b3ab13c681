"""Sweep scaling: 200 timing-mode points in this process, then on 1 and 2 Dask worker processes.

For each model (a ResNet-50 timing point takes about 4-5 ms in-process, a SqueezeNet one about
1: 202-276 and 999-1199 points per second in two runs), prints points per second for each, the
speedup of 2 workers over 1 against its goal (at least `SPEEDUP_GOAL`, 1.7x: met or NOT met, in
the table and the JSON), the overhead per point of running on Dask (1 worker) over calling
`simulate_point` in-process, and the time per point the client spends loading the sweep and
checking every point's target before any runs (part of the Dask runs' time); writes
``benchmarks/results/sweep_scaling.json`` (or the ``--out`` file, its missing folders made),
with the interpreter, library versions (dask and distributed, whose scaling this measures, among
them) and BLAS thread pools (`sim_speed.environment`; timing mode calls no BLAS). Each cluster
is started and warmed up (hetsim imported and the model loaded on every worker) before the
clock starts; the start time is reported apart. Each figure is the fastest of ``--repeat``
runs: other processes on a shared machine only ever slow a run down.

    python benchmarks/sweep_scaling.py [--points 200] [--models resnet50 squeezenet] [--repeat 2]
        [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from bench_args import add_out_option, blas_line, make_parents, positive, run_main
from sim_speed import environment

from hetsim.sweep import Point, load_sweep, local_cluster, run_sweep, simulate_point

RESULTS = Path(__file__).resolve().parent / "results" / "sweep_scaling.json"
SPEEDUP_GOAL = 1.7
"""The speedup of 2 workers over 1 that each model's sweep should reach, at least."""


def sweep_of(points: int, model: str) -> dict[str, Any]:
    """`points` timing-mode points of `model` on arm-riscv-soc, varying the VM's dispatch cost."""
    return {
        "name": "sweep-scaling",
        "target": "arm-riscv-soc",
        "models": [model],
        "vary": {"executor.dispatch_us": {"start": 0.1, "stop": 2.0, "num": points}},
        "mode": "timing",
    }


def _warm(point: Point) -> float:
    return float(simulate_point(point)["makespan_us"])


def in_process(spec: Any, repeat: int) -> float:
    """Least seconds, of `repeat` runs, to run every point with `simulate_point` in this process."""
    points = load_sweep(spec).points()
    _warm(points[0])
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for point in points:
            simulate_point(point)
        times.append(time.perf_counter() - start)
    return min(times)


def validation(spec: Any, repeat: int) -> float:
    """Least seconds, of `repeat` runs, to load the sweep and build (so check) every point's
    target: what `run_sweep` does in the client before any point runs."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        load_sweep(spec).points()
        times.append(time.perf_counter() - start)
    return min(times)


def on_dask(spec: Any, workers: int, repeat: int) -> tuple[float, float]:
    """(seconds to start and warm a local cluster, least seconds of `repeat` `run_sweep`s on it)."""
    from distributed import Client

    start = time.perf_counter()
    with local_cluster(workers) as cluster, Client(cluster) as client:
        client.run(_warm, load_sweep(spec).points()[0])
        started = time.perf_counter() - start
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            records = run_sweep(spec, scheduler=cluster.scheduler_address)
            times.append(time.perf_counter() - start)
            assert all(r["status"] == "ok" for r in records), "every benchmark point runs"
    return started, min(times)


def measure(points: int, model: str, repeat: int) -> dict[str, Any]:
    """The three measurements for one model, printed and returned."""
    spec = sweep_of(points, model)
    load = os.getloadavg()[0]  # other processes on these cores slow every measurement
    local_s = in_process(spec, repeat)
    validate_s = validation(spec, repeat)
    start1_s, one_s = on_dask(spec, 1, repeat)
    start2_s, two_s = on_dask(spec, 2, repeat)
    speedup = round(one_s / two_s, 3)  # the verdict goes by the figure printed and written
    report = {
        "points": points,
        "model": model,
        "repeat": repeat,
        "load_average_1min_before": round(load, 2),
        "in_process_points_per_s": round(points / local_s, 2),
        "workers_1_points_per_s": round(points / one_s, 2),
        "workers_2_points_per_s": round(points / two_s, 2),
        "speedup_2_over_1": speedup,
        "speedup_goal": SPEEDUP_GOAL,
        "speedup_goal_met": speedup >= SPEEDUP_GOAL,
        "overhead_per_point_ms": round((one_s - local_s) / points * 1e3, 3),
        "validation_per_point_ms": round(validate_s / points * 1e3, 3),
        "cluster_start_s": {"workers_1": round(start1_s, 2), "workers_2": round(start2_s, 2)},
    }
    print(f"{model}, {points} timing-mode points (load average before: {load:.2f})")
    print(f"  in process : {report['in_process_points_per_s']:8.1f} points/s")
    print(f"  1 worker   : {report['workers_1_points_per_s']:8.1f} points/s")
    print(f"  2 workers  : {report['workers_2_points_per_s']:8.1f} points/s")
    verdict = "met" if report["speedup_goal_met"] else "NOT met"
    print(f"  speedup    : {report['speedup_2_over_1']:8.3f}x (goal >= {SPEEDUP_GOAL}x): {verdict}")
    print(f"  overhead   : {report['overhead_per_point_ms']:8.3f} ms per point on Dask (1 worker)")
    print(f"  validation : {report['validation_per_point_ms']:8.3f} ms per point (client, first)")
    print(f"  cluster start (warm): {start1_s:.1f} s (1 worker), {start2_s:.1f} s (2 workers)")
    return report


def main(argv: list[str] | None = None) -> None:
    """Measure each model, print the figures and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--points", type=positive, default=200, help="points of each sweep (default 200)"
    )
    parser.add_argument(
        "--models",
        nargs="+",
        default=["resnet50", "squeezenet"],
        help="zoo models swept (default resnet50 squeezenet)",
    )
    parser.add_argument("--repeat", type=positive, default=2, help="keep the fastest of N runs")
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv)
    print(blas_line() + " (timing mode calls no BLAS)", flush=True)
    runs = [measure(args.points, model, args.repeat) for model in args.models]
    report = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "environment": environment("dask", "distributed"),
        "runs": runs,
    }
    make_parents(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    run_main(main)
