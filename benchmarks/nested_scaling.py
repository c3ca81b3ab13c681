"""How `simulate` scales with the nested invocations of a plan, next to a one-level chain.

A graph whose ops alternate between one a nested level runs (Relu, on ``arm-riscv-soc``'s
RISC-V co-processor and its NPU) and one only the root host runs (Softmax) makes one nested
invocation per two ops: one program to compile, bind and invoke for each. This times a cold,
untraced timing-mode `simulate` of it per op at 1e3 to 1.6e4 ops (``--sizes``), and, in the same
process and the same rounds, the same per-op figure for a chain of as many Relus on the
one-level ``x86-h100`` (the baseline: `benchmarks/sim_speed.py`'s chain). Each keeps its fastest
of ``--repeat`` rounds. It prints µs per op of both, their ratio, and the max over min per op
across the sizes: flat means no cost that grows with the invocations (compiling asked the plan
for each invocation's segments by scanning all of them, which made it quadratic: 99, 175 and
269 µs per op at 1000, 4000 and 8000 ops). It is now flat up to 16 000: 108-117 µs per op (max
over min 1.03-1.08), 9.5-10.7 times the chain's, in two runs of ``python
benchmarks/nested_scaling.py`` on this 2-core shared machine (2026-12-07). The µs per op move
with the machine and its load (other sittings here read 73-83, and up to about 200); the ratio
to the chain, timed in the same rounds, is the steadier figure. Timing mode computes no values,
so no BLAS thread runs; the JSON records the thread pools anyway (`sim_speed.environment`).

Usage: ``python benchmarks/nested_scaling.py [--sizes 1000 4000 16000] [--repeat 3]
[--out FILE.json]``; writes ``benchmarks/results/nested_scaling.json``, or the ``--out`` file
(its missing folders made).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench_args import add_out_option, blas_line, make_parents, positive, run_main
from sim_speed import chain, environment, timed

from hetsim.api import platform_of, simulate
from hetsim.ir import Graph, Op, TensorType

RESULTS = Path(__file__).parent / "results" / "nested_scaling.json"
NESTED_TARGET = "arm-riscv-soc"
BASELINE_TARGET = "x86-h100"


def alternating(n: int) -> Graph:
    """x -> Relu -> Softmax -> Relu -> ... (n ops): a nested invocation for every Relu."""
    ops, previous = [], "x"
    for i in range(n):
        ops.append(Op("Relu" if i % 2 == 0 else "Softmax", f"op{i}", (previous,), (f"t{i}",)))
        previous = f"t{i}"
    return Graph(f"alternating{n}", tuple(ops), {"x": TensorType((1, 64), "float32")}, (previous,))


def measure(n: int, repeat: int) -> dict[str, Any]:
    """µs per op of a cold untraced `simulate` of both graphs, best of `repeat` rounds."""
    nested, baseline = platform_of(NESTED_TARGET), platform_of(BASELINE_TARGET)
    graphs = {"nested": (alternating(n), nested), "baseline": (chain(n), baseline)}
    best = dict.fromkeys(graphs, float("inf"))
    for _ in range(repeat):
        for name, (graph, platform) in graphs.items():

            def run(graph: Graph = graph, platform: Any = platform) -> Any:
                return simulate(graph, platform, mode="timing", trace=False)

            best[name] = min(best[name], timed(run, cold=True) * 1e6 / n)
    invocations = sum(1 for op in graphs["nested"][0].ops if op.type == "Relu")
    return {
        "ops": n,
        "invocations": invocations,
        "nested_us_per_op": best["nested"],
        "baseline_us_per_op": best["baseline"],
        "ratio": best["nested"] / best["baseline"],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        type=positive,
        nargs="+",
        default=[1000, 4000, 16_000],
        help="ops of each graph measured (default 1000 4000 16000)",
    )
    parser.add_argument(
        "--repeat", type=positive, default=3, help="keep the fastest of N runs (default 3)"
    )
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv)
    print(blas_line() + " (timing mode calls no BLAS)", flush=True)
    rows = [measure(n, args.repeat) for n in args.sizes]
    print(f"{'ops':>8}{'invocations':>13}{'nested':>10}{'chain':>10}{'ratio':>8}   (µs per op)")
    for row in rows:
        print(
            f"{row['ops']:>8}{row['invocations']:>13}{row['nested_us_per_op']:>10.2f}"
            f"{row['baseline_us_per_op']:>10.2f}{row['ratio']:>8.2f}"
        )
    report: dict[str, Any] = {"environment": environment(), "rows": rows}
    for column in ("nested_us_per_op", "baseline_us_per_op"):
        values = [row[column] for row in rows]
        report[f"{column}_max_over_min"] = max(values) / min(values)
        print(f"{column}: max/min over sizes = {max(values) / min(values):.2f}")
    make_parents(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    run_main(main)
