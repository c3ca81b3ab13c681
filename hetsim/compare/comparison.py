"""Comparing CUDA-graph strategies over many iterations: the driver behind ``hetsim compare``.

A comparison runs one model for N iterations under each strategy (`hetsim.runtime.cuda_graph`
`STRATEGIES`), one graph cache per strategy that lives across the iterations, so the first iteration
of a shape pays the capture and later ones replay. The shapes of the iterations come from a *trace*
(`hetsim.compare.traces`). Each iteration is one simulated run (the VM ends it with a SYNC, as a
decode loop waits for its token); the strategy's time is the sum. The result is a frozen
`Comparison`: one table row per strategy, with its speedup over the baseline (eager, ``none``,
when compared, else the first strategy; the table, JSON and plot name it when it is not eager).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hetsim.api import make_inputs, platform_of
from hetsim.compare.traces import (
    DEFAULT_ITERATIONS,
    DEFAULT_SEQ_DIST,
    MAX_ITERATIONS,
    check_iterations,
    dims_trace,
)
from hetsim.errors import (
    HetsimError,
    ModelError,
    PartitionError,
    Problem,
    SimulationError,
    input_values_untaken,
    is_items,
)
from hetsim.ir import Graph, check_graph, check_graph_dims, format_dims, op_label
from hetsim.kernels import Meta, propagate, propagate_costs
from hetsim.models import load_model, naming_model_file
from hetsim.models.inputs import check_seed
from hetsim.partition import partition
from hetsim.partition.context import is_static
from hetsim.partition.folding import dims_of_op, dynamic_ops
from hetsim.platform import Platform
from hetsim.report.arguments import output_path
from hetsim.report.figures import new_figure
from hetsim.runtime import compile_plan
from hetsim.runtime.cuda_graph import (
    DEFAULT_BUCKETS,
    STRATEGIES,
    capture_program,
    check_buckets,
    strategy_problem,
)
from hetsim.sim import MODES, run_program
from hetsim.sim.capture import run_graph_program
from hetsim.sim.graphs import GraphCache, GraphStats
from hetsim.units import counted

__all__ = ["Comparison", "StrategyRun", "check_trace", "compare"]


@dataclass(frozen=True, slots=True)
class StrategyRun:
    """One strategy over every iteration: the time of each, the graph counters (`stats`; its
    `capture_us` is capture and instantiation), and `notes`: why work ran eagerly (the
    strategy's fallbacks, then how many iterations went past every bucket)."""

    strategy: str
    iterations_us: tuple[float, ...]
    stats: GraphStats
    notes: tuple[str, ...] = ()

    @property
    def total_us(self) -> float:
        """Simulated time of all iterations."""
        return float(sum(self.iterations_us))

    @property
    def per_iteration_us(self) -> float:
        """Mean simulated time of one iteration."""
        return self.total_us / max(len(self.iterations_us), 1)


COLUMNS = (
    ("strategy", "strategy"),
    ("total (us)", "total_us"),
    ("per iter (us)", "per_iteration_us"),
    ("speedup", "speedup"),
    ("captures", "captures"),
    ("capture (us)", "capture_us"),
    ("replays", "replays"),
    ("past buckets", "eager_runs"),
    ("graph mem (B)", "graph_memory_bytes"),
    ("padding waste (us)", "padding_waste_us"),
)
"""The table's columns: header, key of `Comparison.rows()` (``capture_us``, `GraphStats`', holds
each capture's ``cudaGraphInstantiate`` too: ``docs/cuda-graphs.md``, "Cost formulas")."""


@dataclass(frozen=True, slots=True)
class Comparison:
    """The strategies compared on one model, target and trace of shapes."""

    model: str
    target: str
    trace: tuple[Mapping[str, int], ...]
    buckets: tuple[int, ...]
    runs: tuple[StrategyRun, ...]
    mode: str = "timing"
    outputs: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        names = [r.strategy for r in self.runs]
        return f"<Comparison {self.model} on {self.target} iterations={len(self.trace)} {names}>"

    @property
    def baseline(self) -> StrategyRun:
        """The run speedups are relative to: ``none`` if compared, else the first."""
        return next((r for r in self.runs if r.strategy == "none"), self.runs[0])

    def rows(self) -> list[dict[str, Any]]:
        """One plain dict per strategy, with the table's columns as keys."""
        base = self.baseline.total_us
        return [
            {
                "strategy": run.strategy,
                "total_us": run.total_us,
                "per_iteration_us": run.per_iteration_us,
                "speedup": base / run.total_us if run.total_us else 0.0,
                **run.stats.to_dict(),
                "notes": list(run.notes),
            }
            for run in self.runs
        ]

    def to_dict(self) -> dict[str, Any]:
        """The comparison as plain JSON values (``baseline``: the strategy speedups are over)."""
        return {
            "model": self.model,
            "target": self.target,
            "mode": self.mode,
            "iterations": len(self.trace),
            "trace": [dict(d) for d in self.trace],
            "buckets": list(self.buckets),
            "baseline": self.baseline.strategy,
            "strategies": self.rows(),
            "iterations_us": {r.strategy: list(r.iterations_us) for r in self.runs},
        }

    def format_table(self) -> str:
        """The comparison as a plain-text table, then the notes: the baseline of the speedups
        when it is not eager, the strategies that fell back, the iterations past every
        bucket."""
        cells = [[header for header, _ in COLUMNS]]
        for row in self.rows():
            cells.append([_cell(row[key]) for _, key in COLUMNS])
        widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
        lines = [
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(line, widths, strict=True))
            )
            for line in cells
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        title = f"{self.model} on {self.target}, {counted(len(self.trace), 'iteration')}"
        notes = [f"note: {run.strategy}: {n}" for run in self.runs for n in run.notes]
        if (baseline := self._baseline_note()) is not None:
            notes.insert(0, f"note: {baseline}")
        return "\n".join([title, *lines, *notes])

    def _baseline_note(self) -> str | None:
        """What the speedups are over when it is not eager (it read as eager, over 'whole'
        for ``whole,buckets``); None when ``none`` was compared."""
        name = self.baseline.strategy
        if name == "none":
            return None
        return f"speedup is over {name}, the first strategy: eager (none) was not compared"

    def plot(self, path: str | Path) -> Path:
        """A bar chart of each strategy's total time (speedup over the baseline on each bar,
        named in the title when it is not eager).

        Raises
        ------
        HetsimError
            When matplotlib is not installed, or `path` is not a file it can write: not a path,
            a suffix other than ``.png``, a directory, a missing directory
            (`hetsim.report.arguments.output_path`).
        OSError
            Writing failed anyway (a read-only folder, a full disk).
        """
        out = output_path(path, "plot", ".png")
        rows = self.rows()
        figure = new_figure("plot", 6, 3.5)
        axes = figure.add_subplot()
        totals = [row["total_us"] for row in rows]
        bars = axes.bar([row["strategy"] for row in rows], totals, color="tab:blue")
        for bar, row in zip(bars, rows, strict=True):
            where = (bar.get_x() + bar.get_width() / 2, bar.get_height())
            label = f"{row['speedup']:.2f}×"
            axes.annotate(label, where, ha="center", va="bottom", fontsize="small")
        axes.set_ylabel(f"simulated time of {counted(len(self.trace), 'iteration')} (µs)")
        title = f"{self.model} on {self.target}: CUDA-graph strategies"
        if self.baseline.strategy != "none":
            title += f"\n(speedup over {self.baseline.strategy}; eager not compared)"
        axes.set_title(title)
        figure.tight_layout()
        figure.savefig(out, format="png")
        return out


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


@naming_model_file
def compare(
    model: Any,
    target: Any,
    strategies: Sequence[str] = tuple(STRATEGIES),
    *,
    iterations: int | None = None,
    trace: Sequence[Mapping[str, int]] | None = None,
    buckets: Sequence[int] = DEFAULT_BUCKETS,
    mode: str = "timing",
    seed: int = 0,
) -> Comparison:
    """Run `model` on `target` for every iteration of `trace` under each strategy.

    Parameters
    ----------
    model, target
        As `hetsim.simulate` takes them.
    strategies
        Names in `STRATEGIES`, in the table's order, each once.
    iterations
        How many iterations, at most `MAX_ITERATIONS` (as ``hetsim compare --iterations``); by
        default the trace's length, else `DEFAULT_ITERATIONS`. A trace shorter than
        `iterations` repeats.
    trace
        The dims of each iteration (`hetsim.ir.check_graph_dims`: the model's symbolic dims,
        each an integer >= 0); by default `DEFAULT_SEQ_DIST` over the model's symbolic dims
        (none for a static model).
    buckets
        Bucket sizes of the ``buckets`` strategy.
    mode
        ``timing`` (shapes only) or ``functional`` (values too; each strategy's last outputs are
        kept in `Comparison.outputs`); times are the same.
    seed
        Seed of the inputs of iteration ``i`` (``seed + i``) in functional mode.

    Raises
    ------
    HetsimError
        No strategy, an unknown one or one given twice, bad buckets, iterations that are not an
        integer from 1 to `MAX_ITERATIONS`, dims in `trace` that are not the model's or not a
        mapping (`ModelError`, naming the iteration), a bad model or target, a failing run.
    """
    if mode not in MODES:
        raise SimulationError(Problem("compare", "expected mode 'functional' or 'timing'",
                                      repr(mode)).message)  # fmt: skip
    check_seed(seed)
    graph = load_model(model)
    platform = platform_of(target)
    bucket_sizes = check_buckets(buckets)
    strategies = _strategies(strategies)
    if trace is not None:
        trace = check_trace(graph, trace)
    shapes = _trace(graph.symbols, trace, iterations)
    _check_root_runs_dynamic_ops(graph, platform)
    # compiled once for every iteration: symbolic dims stay dynamic, their ops on VM levels.
    # The plan's estimate is made at the first iteration's sizes, not at partition's guess of 1
    # for each unbound dim, at which shapes that hold at every size traced may not (a Reshape of
    # [n] to [-1, 2]), and whose refusal asked for dims=, an argument compare does not take
    with _over_dims_only():
        estimate, costs = propagate_costs(graph, shapes[0])
        plan = partition(graph, platform, metas=estimate, costs=costs)
        program = compile_plan(graph, platform, plan)
    metas: dict[tuple[tuple[str, int], ...], Mapping[str, Meta]] = {
        tuple(sorted(shapes[0].items())): estimate
    }
    runs, outputs = [], {}
    captured: dict[str, tuple[tuple[str, int, int], ...]] = {}  # strategy -> its regions
    for name in strategies:
        # 'none' captures nothing: it runs the program as compiled, whatever its root level's
        # executor (a graph executor's root has no VM program to capture from)
        rewritten = (
            None if name == "none" else capture_program(program, platform, name, bucket_sizes)
        )
        if rewritten is not None:
            captured[name] = tuple((r.processor, r.start, r.stop) for r in rewritten.regions)
        cache = GraphCache()
        times, past = [], []
        for index, dims in enumerate(shapes):
            key = tuple(sorted(dims.items()))
            inputs = make_inputs(graph, seed + index, dims) if mode == "functional" else None
            if key not in metas:
                with _over_dims_only():
                    metas[key] = propagate(graph, dims)
            is_functional = mode == "functional"
            try:
                if rewritten is None:
                    record = run_program(
                        program, platform, metas[key], dims=dims, inputs=inputs,
                        is_functional=is_functional, trace=False,
                    )  # fmt: skip
                else:
                    record = run_graph_program(
                        rewritten, platform, metas[key], cache, dims=dims, inputs=inputs,
                        is_functional=is_functional, trace=False,
                    )  # fmt: skip
            except SimulationError as err:  # graphs kept over iterations: which one failed
                # its other args kept, as SimPy rebuilds an error (an OutOfMemoryError's time)
                message = f"{_iteration_label(name, index, dims)}: {err}"
                raise type(err)(message, *err.args[1:]) from err
            times.append(record.makespan_us)
            if rewritten is not None and record.extra["cuda_graph"]["eager_runs"]:
                past.append(index)
            if inputs is not None:
                outputs[name] = dict(record.outputs)
        notes = () if rewritten is None else rewritten.notes
        if past:  # one note for the strategy, not one per iteration as each run's would be
            notes = (*notes, _past_buckets_note(past, shapes, bucket_sizes))
        runs.append(StrategyRun(name, tuple(times), cache.stats(), notes))
    if captured.get("regions") and captured.get("regions") == captured.get("whole"):
        # two rows alike with no word had read as a fault: the root's kernels are one region
        runs = [
            dataclasses.replace(run, notes=(*run.notes, SAME_AS_WHOLE))
            if run.strategy == "regions"
            else run
            for run in runs
        ]
    return Comparison(
        graph.name, _target_name(target), tuple(shapes), bucket_sizes, tuple(runs), mode, outputs
    )


SAME_AS_WHOLE = (
    "captures what whole captures (the root level's kernels make one region), so the two run alike"
)
"""The note of a ``regions`` run whose regions are ``whole``'s (docs/cuda-graphs.md)."""


def _check_root_runs_dynamic_ops(graph: Graph, platform: Platform) -> None:
    """Refuse a root level whose executor runs static shapes only (a graph executor) for a model
    whose ops read its symbolic dims: compare keeps them dynamic (each iteration's come with its
    inputs), and the root runs what no device takes. Partitioning said so with "bind them with
    dims=", an argument compare does not take.

    Raises
    ------
    PartitionError
        Naming the first op that reads a symbolic dim.
    """
    root = platform.levels[""]
    if not graph.symbols or not is_static(root):
        return
    dynamic = dynamic_ops(graph, graph.ops, {})
    op = next((op for op in graph.ops if op.name in dynamic), None)
    if op is None:
        return
    assert root.executor is not None, "is_static reads the executor"
    kind = root.executor.kind
    read = dims_of_op(graph, graph.ops, graph.symbols, op.name)
    raise PartitionError(
        f"compare: expected a root level run by a VM for model {graph.name}, whose symbolic "
        f"dims ({', '.join(graph.symbols)}) stay dynamic over the iterations (each one's come "
        f"with its inputs), got a {kind} executor, which runs static shapes only ({op_label(op)} "
        f"reads {', '.join(read)})"
    )


def _over_dims_only() -> AbstractContextManager[None]:
    """A shape read from a graph input's value (a Reshape's shape, a Resize's scales) said in
    compare's terms: it runs a model over its symbolic dims, not over input values, and has no
    ``inputs`` to pass (the API's "pass it in inputs" named an argument it lacks).

    >>> from hetsim.errors import UnknownValueError
    >>> with _over_dims_only():
    ...     raise UnknownValueError("op r (Reshape): expected a known value", "s").of_graph_input()
    Traceback (most recent call last):
    ...
    hetsim.errors.UnknownValueError: op r (Reshape): expected a known value, got graph input 's', \
whose value compare cannot take: it runs a model over its symbolic dims (simulate's inputs= or \
hetsim run --inputs FILE reads it)
    """
    how = "simulate's inputs= or hetsim run --inputs FILE reads it"
    return input_values_untaken("compare", how, ": it runs a model over its symbolic dims")


def _past_buckets_note(
    past: Sequence[int], shapes: Sequence[Mapping[str, int]], buckets: tuple[int, ...]
) -> str:
    """How many iterations (`past`, indices into `shapes`) fit no bucket and ran eagerly, and
    where the first was.

    >>> _past_buckets_note([5, 6], [{"seq": 60 + i} for i in range(10)], (32, 64))
    '2 of 10 iterations past the largest bucket (64), so their kernels run eagerly, without \
padding (the first: iteration 5, seq=65)'
    >>> _past_buckets_note([0], [{"seq": 3000}], (2048,))
    '1 of 1 iteration past the largest bucket (2048), so its kernels run eagerly, without \
padding (iteration 0, seq=3000)'
    """
    first = past[0]
    share = f"{len(past)} of {counted(len(shapes), 'iteration')}"
    whose, which = ("its", "") if len(past) == 1 else ("their", "the first: ")
    return (
        f"{share} past the largest bucket ({max(buckets)}), so {whose} kernels run eagerly, "
        f"without padding ({which}iteration {first}, {format_dims(shapes[first])})"
    )


def _iteration_label(strategy: str, index: int, dims: Mapping[str, int]) -> str:
    """``strategy whole, iteration 3 (seq=40)``: where in a comparison a run failed.

    >>> _iteration_label("whole", 3, {"seq": 40})
    'strategy whole, iteration 3 (seq=40)'
    """
    shown = f" ({format_dims(dims)})" if dims else ""
    return f"strategy {strategy}, iteration {index}{shown}"


def check_trace(graph: Graph, trace: object) -> tuple[Mapping[str, int], ...]:
    """`trace` as a tuple of dims, each checked for `graph`: its symbolic dims, every one sized
    (a `ModelError` naming the iteration, ``trace[3]: ...``, otherwise), their sizes as Python
    ints (an ``np.int64`` kept had made `Comparison.to_dict` no JSON)."""
    check_graph(graph, "check_trace")
    if not is_items(trace):
        expected = "expected a sequence of dims, one mapping per iteration"
        raise ModelError(Problem("trace", expected, repr(trace)).message)
    found = tuple(trace)
    for index, dims in enumerate(found):
        if dims is None:  # check_dims takes None for no dims; an iteration is one mapping
            expected = "expected a mapping of dim name -> size"
            raise ModelError(Problem(f"trace[{index}]: dims", expected, "None").message)
        try:
            check_graph_dims(graph, dims)
        except ModelError as err:
            raise ModelError(f"trace[{index}]: {err}") from err
        unsized = [name for name in graph.symbols if name not in dims]
        if unsized:
            expected = f"expected a size for each symbolic dim of model {graph.name}"
            got = f"none for {', '.join(map(repr, unsized))}"
            raise ModelError(Problem(f"trace[{index}]", expected, got).message)
    return tuple({name: int(size) for name, size in dims.items()} for dims in found)


def _strategies(strategies: object) -> tuple[str, ...]:
    """`strategies` checked: names in `STRATEGIES`, at least one, each once (a name twice made
    two identical rows)."""
    words = strategies.split(",") if isinstance(strategies, str) else []
    listed = [word.strip() for word in words if word.strip()]
    if listed:  # "whole" is no list of its letters, and was refused as if no name were given
        expected = f"expected a list or tuple of names from {', '.join(STRATEGIES)}"
        got = f"the str {strategies!r} (a list of names: {listed!r})"
        raise SimulationError(Problem("strategies", expected, got).message)
    names: tuple[Any, ...] = tuple(strategies) if is_items(strategies) else ()
    if not names:
        expected = f"expected one or more of {', '.join(STRATEGIES)}"
        raise SimulationError(Problem("strategies", expected, repr(strategies)).message)
    for index, name in enumerate(names):
        if not isinstance(name, str) or name not in STRATEGIES:  # a list: unhashable
            raise SimulationError(strategy_problem(name, f"strategies[{index}]").message)
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        raise SimulationError(f"strategies: expected each strategy once, got {twice!r} twice")
    return names


def _trace(
    symbols: Sequence[str], trace: Sequence[Mapping[str, int]] | None, iterations: int | None
) -> list[dict[str, int]]:
    if iterations is not None:  # 0 used to mean the default
        check_iterations(iterations)
    if trace is None:
        count = iterations or DEFAULT_ITERATIONS
        trace = dims_trace(DEFAULT_SEQ_DIST, count, dims=symbols) if symbols else [{}] * count
    if not trace:
        raise HetsimError("compare: expected at least one iteration, got an empty trace")
    if iterations is None and len(trace) > MAX_ITERATIONS:  # its length is the count: capped too
        raise HetsimError(
            f"compare: expected a trace of at most {MAX_ITERATIONS} iterations (or iterations= "
            f"to take its first ones), got {len(trace)}"
        )
    count = iterations or len(trace)
    return [dict(trace[i % len(trace)]) for i in range(count)]


def _target_name(target: Any) -> str:
    if isinstance(target, str):
        return target
    return str(getattr(target, "name", None) or getattr(target, "tag", None) or "target")
